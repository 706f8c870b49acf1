"""Five-card knock: a toy variant registered in the test suite only.

Unlike Indian points in every way a host might assume: 2 or 3 seats, 5 cards each from one
52-card deck (no printed jokers), no wild cut, no stakes step, its own command
(:class:`Knock`) and event (:class:`Knocked`), a hand whose lowest totals all win and share the
pot, and a maximum loss of its own (``ToyOptions.max_points``, 25 by default, not 130).

The hand: ``StartHand`` -> HandStarted; ``ContributeClientSeed`` from then until the seeds
lock; the fairness service's ``RecordSeedCommitment`` -> SeedCommitted + SeedWindowOpened (the
window opens once the hand is committed, so a lock always carries the commitment the dealer
checks the server seed against); ``TurnTimeout(0)`` closes it (SeedsLocked); ``Deal`` (no cut;
an upcard) ->
HandDealt + TurnStarted. On its turn a seat draws from the stock and discards, or knocks instead
of drawing; a turn's timeout passes the turn (TurnTimedOut). A knock, or ``max_turns`` turns
played, ends the hand: every seat's total is the sum of its cards (ace 1, faces 10); the seats
with the lowest total win and share the pot, listed by seat number (the earliest seat first: it
is the hand's ``winner_seat`` and the first to get a remainder hundredth); when every seat ties,
the lowest seat number wins alone and nobody pays; every other seat is charged
``min(its total - the lowest total, max_points)`` points (its maximum loss, not Indian 130).
With the ``wall`` option, ``max_turns`` turns played without a knock end the hand **drawn**
instead (gin's wall): every seat's outcome is ``drawn`` and nobody is charged, a deal a game to
N or Hollywood counts for nobody (and whose dealer deals again).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import ClassVar

from rummy_rules import json_form
from rummy_rules.bot import VariantBot
from rummy_rules.cards import Card
from rummy_rules.commands import (
    Command,
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromStock,
    RecordSeedCommitment,
    StartHand,
    TurnTimeout,
)
from rummy_rules.deck import Shoe
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import (
    CardDiscarded,
    CardDrawn,
    ClientSeedContributed,
    DrawSource,
    Event,
    HandAborted,
    HandDealt,
    HandEnded,
    HandStarted,
    SeatResult,
    SeatSeed,
    SeedCommitted,
    SeedsLocked,
    SeedWindowOpened,
    TurnStarted,
    TurnTimedOut,
    redact,
)
from rummy_rules.formats.messages import DRAWN_OUTCOME
from rummy_rules.rules import (
    DealShape,
    RuleSet,
    RuleSetError,
    VariantOptions,
    check_bounds,
)
from rummy_rules.settlement import settle_shared
from rummy_rules.shuffle import deal_order
from rummy_rules.variant import Deadline, Variant, VariantRules, clock_deadline, fold_with
from rummy_rules.view import PlayerView, SeatView

TOY_NAME = "toy-knock"
TOY_RULES = "toy-knock-house"
HAND_SIZE = 5
SHOE = Shoe(decks=1, printed_jokers=0)


@json_form.tag("toy.Options")
@dataclass(frozen=True)
class ToyOptions(VariantOptions):
    """The toy's options: ``max_points`` (1..50, 25) the most a loser is charged;
    ``max_turns`` (1..the stock's size, 6) turns before the hand ends on its own; ``wall``
    (False): a hand that ends on its own is drawn (``drawn`` outcomes, nobody charged)."""

    deal_shape: ClassVar[DealShape] = DealShape(wild_cut=False, upcard=True)

    max_points: int = 25
    max_turns: int = 6
    wall: bool = False

    def check(self, rule_set: RuleSet) -> None:
        check_bounds("max_points", self.max_points, 1, rule_set.hand_size * 10)
        stock = rule_set.shoe.size - rule_set.layout.cards_needed(rule_set.seats) + 1
        check_bounds("max_turns", self.max_turns, 1, stock, "every turn may draw from the stock")

    def max_loss_points(self, rule_set: RuleSet) -> int:
        return self.max_points


json_form.register(ToyOptions)


def toy_rule_set(
    seats: int,
    point_value_hundredths: int,
    commission_bps: int,
    *,
    max_points: int = 25,
    max_turns: int = 6,
    wall: bool = False,
) -> RuleSet:
    """The toy's rule set for 2 or 3 seats. Raises RuleSetError."""
    return RuleSet(
        name=TOY_RULES,
        version=1,
        variant=TOY_NAME,
        seats=seats,
        shoes=((2, SHOE), (3, SHOE)),
        hand_size=HAND_SIZE,
        min_players=2,
        max_missed_turns=3,
        turn_seconds=20,
        seed_window_seconds=3,
        point_value_hundredths=point_value_hundredths,
        commission_bps=commission_bps,
        options=ToyOptions(max_points=max_points, max_turns=max_turns, wall=wall),
    )


@json_form.tag("toy.Knock")
@dataclass(frozen=True, kw_only=True)
class Knock(Command):
    """The seat on turn ends the hand instead of drawing."""

    seat: int
    turn_no: int
    at_ms: int


@json_form.tag("toy.Knocked")
@dataclass(frozen=True, kw_only=True)
class Knocked(Event):
    seat: int
    turn_no: int


json_form.register(Knock, Knocked)


class ToyPhase(Enum):
    NOT_STARTED = "not_started"
    SEED_WINDOW = "seed_window"
    AWAITING_DEAL = "awaiting_deal"
    PLAYING = "playing"
    ENDED = "ended"


@dataclass(frozen=True)
class ToySeat:
    seat: int
    account_id: str
    cards: tuple[Card, ...] = ()
    misses_in_a_row: int = 0


@json_form.tag("toy.State")
@dataclass(frozen=True)
class ToyState:
    phase: ToyPhase = ToyPhase.NOT_STARTED
    hand_id: str = ""
    rule_set: RuleSet | None = None
    dealer_seat: int = 0
    seats: tuple[ToySeat, ...] = ()
    seeds: tuple[SeatSeed, ...] = ()
    commitment: str = ""
    seed_deadline_ms: int | None = None
    stock: tuple[Card, ...] = ()
    discard_pile: tuple[Card, ...] = ()
    turn_seat: int | None = None
    turn_no: int = 0
    turn_deadline_ms: int | None = None
    drawn: bool = False
    result: HandEnded | None = None

    def seat(self, seat: int) -> ToySeat | None:
        return next((s for s in self.seats if s.seat == seat), None)


json_form.register(ToyState)  # the table service snapshots a hand's state through the codec


def card_value(card: Card) -> int:
    """Ace 1, two to ten their number, faces 10."""
    assert card.rank is not None
    return min(int(card.rank), 10)


def _fail(code: ErrorCode, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def _rules(state: ToyState) -> RuleSet:
    assert state.rule_set is not None
    return state.rule_set


def _options(state: ToyState) -> ToyOptions:
    options = _rules(state).options
    assert isinstance(options, ToyOptions)
    return options


def _next_seat(state: ToyState, seat: int) -> int:
    order = [s.seat for s in state.seats]
    return order[(order.index(seat) + 1) % len(order)]


def _showdown(state: ToyState, at_ms: int) -> HandEnded:
    totals = {s.seat: sum(card_value(c) for c in s.cards) for s in state.seats}
    low = min(totals.values())
    winners = tuple(seat for seat in sorted(totals) if totals[seat] == low)
    if len(winners) == len(totals):  # every seat ties: the lowest seat wins, nobody pays
        winners = winners[:1]
    cap = _options(state).max_points
    points = {seat: min(total - low, cap) for seat, total in totals.items()}
    results = tuple(
        SeatResult(
            s.seat,
            s.account_id,
            "won" if s.seat in winners else "counted",
            points[s.seat],
            s.cards,
            (),
            s.cards,
        )
        for s in state.seats
    )
    settlement = settle_shared(_rules(state), winners, points)
    return HandEnded(winner_seat=winners[0], results=results, settlement=settlement, at_ms=at_ms)


def _wall(state: ToyState, at_ms: int) -> HandEnded:
    """The hand drawn (the ``wall`` option): every seat ``drawn``, nobody charged; the
    settlement names the lowest seat and moves nothing."""
    results = tuple(
        SeatResult(s.seat, s.account_id, DRAWN_OUTCOME, 0, s.cards, (), s.cards)
        for s in state.seats
    )
    first = min(s.seat for s in state.seats)
    settlement = settle_shared(_rules(state), (first,), {s.seat: 0 for s in state.seats})
    return HandEnded(winner_seat=first, results=results, settlement=settlement, at_ms=at_ms)


def _after_turn(state: ToyState, at_ms: int) -> list[Event]:
    """The next TurnStarted, or the showdown (the wall) once ``max_turns`` turns were
    played."""
    assert state.turn_seat is not None
    if state.turn_no >= _options(state).max_turns:
        return [_wall(state, at_ms) if _options(state).wall else _showdown(state, at_ms)]
    deadline = at_ms + _rules(state).turn_seconds * 1000
    return [
        TurnStarted(
            seat=_next_seat(state, state.turn_seat), turn_no=state.turn_no + 1, deadline_ms=deadline
        )
    ]


def _on_turn(state: ToyState, seat: int, turn_no: int) -> None:
    if state.phase is not ToyPhase.PLAYING:
        raise _fail(ErrorCode.WRONG_PHASE, f"the hand is {state.phase.value}")
    if state.seat(seat) is None:
        raise _fail(ErrorCode.NOT_IN_HAND, f"seat {seat} is not in this hand")
    if turn_no != state.turn_no:
        raise _fail(ErrorCode.STALE_TURN, f"turn {turn_no} is over; it is turn {state.turn_no}")
    if seat != state.turn_seat:
        raise _fail(ErrorCode.NOT_YOUR_TURN, f"it is seat {state.turn_seat}'s turn")


def decide(state: ToyState, command: Command) -> tuple[Event, ...]:  # noqa: C901 - one per command
    """The events ``command`` causes. Raises RuleViolation."""
    if isinstance(command, StartHand):
        if state.phase is not ToyPhase.NOT_STARTED:
            raise _fail(ErrorCode.WRONG_PHASE, "the hand has started")
        TOY.check_rule_set(command.rule_set)
        seats = [s.seat for s in command.seats]
        if len(set(seats)) != len(seats) or not 2 <= len(seats) <= command.rule_set.seats:
            raise _fail(ErrorCode.INVALID_COMMAND, "2 or 3 distinct seats")
        if command.dealer_seat not in seats:
            raise _fail(ErrorCode.INVALID_COMMAND, "the dealer must be seated")
        started = HandStarted(
            hand_id=command.hand_id,
            seats=tuple(sorted(command.seats, key=lambda s: s.seat)),
            dealer_seat=command.dealer_seat,
            rule_set=command.rule_set,
            at_ms=command.at_ms,
        )
        return (started,)
    if isinstance(command, ContributeClientSeed):
        if state.phase is not ToyPhase.SEED_WINDOW:
            raise _fail(ErrorCode.WRONG_PHASE, "the seed window is closed")
        if state.seat(command.seat) is None:
            raise _fail(ErrorCode.NOT_IN_HAND, f"seat {command.seat} is not in this hand")
        if any(s.seat == command.seat for s in state.seeds):
            raise _fail(ErrorCode.DUPLICATE, "this seat sent its seed")
        return (ClientSeedContributed(seat=command.seat, seed_hex=command.seed_hex),)
    if isinstance(command, RecordSeedCommitment):
        if state.phase is not ToyPhase.SEED_WINDOW:
            raise _fail(ErrorCode.WRONG_PHASE, "commitments are recorded in the seed window")
        if state.commitment:
            raise _fail(ErrorCode.DUPLICATE, "the hand has its commitment")
        window = command.at_ms + _rules(state).seed_window_seconds * 1000
        return SeedCommitted(commitment=command.commitment), SeedWindowOpened(deadline_ms=window)
    if isinstance(command, TurnTimeout):
        if state.phase is ToyPhase.SEED_WINDOW and command.turn_no == 0:
            if not state.commitment:
                return ()  # the window is not open yet
            sent = {s.seat: s.seed_hex for s in state.seeds}
            seeds = tuple(SeatSeed(s.seat, sent.get(s.seat, "")) for s in state.seats)
            return (SeedsLocked(commitment=state.commitment, client_seeds=seeds),)
        if state.phase is not ToyPhase.PLAYING or command.turn_no != state.turn_no:
            return ()  # stale
        assert state.turn_seat is not None
        seat = state.seat(state.turn_seat)
        assert seat is not None
        timed_out = TurnTimedOut(
            seat=seat.seat, turn_no=state.turn_no, misses_in_a_row=seat.misses_in_a_row + 1
        )
        after = apply(state, timed_out)
        return (timed_out, *_after_turn(after, command.at_ms))
    if isinstance(command, Deal):
        if state.phase is not ToyPhase.AWAITING_DEAL:
            raise _fail(ErrorCode.WRONG_PHASE, "not waiting for the deal")
        if command.wild_cut is not None:
            raise _fail(ErrorCode.INVALID_DEAL, "this game cuts no wild card")
        if sorted(h.seat for h in command.hands) != sorted(s.seat for s in state.seats):
            raise _fail(ErrorCode.INVALID_DEAL, "one hand per seat dealt in")
        if any(len(h.cards) != HAND_SIZE for h in command.hands):
            raise _fail(ErrorCode.INVALID_DEAL, f"each seat is dealt {HAND_SIZE} cards")
        every = [c for h in command.hands for c in h.cards] + [command.first_open, *command.stock]
        if len(every) != SHOE.size or set(every) != set(SHOE.cards):
            raise _fail(ErrorCode.INVALID_DEAL, "the deal must use every card of the deck once")
        first = deal_order([s.seat for s in state.seats], state.dealer_seat)[0]
        dealt = HandDealt(
            hands=command.hands,
            wild_cut=None,
            first_open=command.first_open,
            stock=command.stock,
            stock_count=len(command.stock),
        )
        deadline = command.at_ms + _rules(state).turn_seconds * 1000
        return dealt, TurnStarted(seat=first, turn_no=1, deadline_ms=deadline)
    if isinstance(command, Knock):
        _on_turn(state, command.seat, command.turn_no)
        if state.drawn:
            raise _fail(ErrorCode.ALREADY_DRAWN, "knock instead of drawing, not after")
        knocked = Knocked(seat=command.seat, turn_no=command.turn_no)
        return knocked, _showdown(apply(state, knocked), command.at_ms)
    if isinstance(command, DrawFromStock):
        _on_turn(state, command.seat, command.turn_no)
        if state.drawn:
            raise _fail(ErrorCode.ALREADY_DRAWN, "one draw a turn")
        return (
            CardDrawn(
                seat=command.seat,
                turn_no=command.turn_no,
                source=DrawSource.STOCK,
                card=state.stock[0],
            ),
        )
    if isinstance(command, Discard):
        _on_turn(state, command.seat, command.turn_no)
        if not state.drawn:
            raise _fail(ErrorCode.NOT_DRAWN, "draw first")
        own = state.seat(command.seat)
        assert own is not None
        if command.card not in own.cards:
            raise _fail(ErrorCode.INVALID_CARD, "that card is not in the seat's hand")
        discarded = CardDiscarded(seat=command.seat, turn_no=command.turn_no, card=command.card)
        return (discarded, *_after_turn(apply(state, discarded), command.at_ms))
    raise _fail(ErrorCode.INVALID_COMMAND, f"{type(command).__name__} is not a move of this game")


def _with_seat(state: ToyState, seat: int, **changes: object) -> tuple[ToySeat, ...]:
    return tuple(replace(s, **changes) if s.seat == seat else s for s in state.seats)  # type: ignore[arg-type]


def apply(state: ToyState, event: Event) -> ToyState:  # noqa: C901 - one branch per event
    """The state after ``event``."""
    if isinstance(event, HandStarted):
        return replace(
            state,
            phase=ToyPhase.SEED_WINDOW,
            hand_id=event.hand_id,
            rule_set=event.rule_set,
            dealer_seat=event.dealer_seat,
            seats=tuple(ToySeat(s.seat, s.account_id) for s in event.seats),
        )
    if isinstance(event, SeedWindowOpened):
        return replace(state, seed_deadline_ms=event.deadline_ms)
    if isinstance(event, ClientSeedContributed):
        return replace(state, seeds=(*state.seeds, SeatSeed(event.seat, event.seed_hex)))
    if isinstance(event, SeedCommitted):
        return replace(state, commitment=event.commitment)
    if isinstance(event, SeedsLocked):
        return replace(state, phase=ToyPhase.AWAITING_DEAL, seed_deadline_ms=None)
    if isinstance(event, HandDealt):
        cards = {h.seat: h.cards for h in event.hands}
        return replace(
            state,
            seats=tuple(replace(s, cards=cards[s.seat]) for s in state.seats),
            stock=event.stock,
            discard_pile=(event.first_open,),
        )
    if isinstance(event, TurnStarted):
        return replace(
            state,
            phase=ToyPhase.PLAYING,
            turn_seat=event.seat,
            turn_no=event.turn_no,
            turn_deadline_ms=event.deadline_ms,
            drawn=False,
        )
    if isinstance(event, CardDrawn):
        own = state.seat(event.seat)
        assert own is not None and event.card is not None
        return replace(
            state,
            stock=state.stock[1:],
            drawn=True,
            seats=_with_seat(state, event.seat, cards=(*own.cards, event.card)),
        )
    if isinstance(event, CardDiscarded):
        own = state.seat(event.seat)
        assert own is not None
        kept = tuple(c for c in own.cards if c != event.card)
        return replace(
            state,
            discard_pile=(*state.discard_pile, event.card),
            seats=_with_seat(state, event.seat, cards=kept, misses_in_a_row=0),
        )
    if isinstance(event, TurnTimedOut):
        return replace(
            state, seats=_with_seat(state, event.seat, misses_in_a_row=event.misses_in_a_row)
        )
    if isinstance(event, Knocked):
        return state
    if isinstance(event, HandEnded):
        return replace(
            state, phase=ToyPhase.ENDED, result=event, turn_seat=None, turn_deadline_ms=None
        )
    return state


class ToyKnock(VariantRules):
    """Five-card knock behind the Variant interface."""

    name = TOY_NAME
    rules_versions = frozenset({f"{TOY_RULES}/1"})
    options_type: type[VariantOptions] = ToyOptions
    deal_shape = ToyOptions.deal_shape

    @property
    def bot(self) -> VariantBot:
        from .bot import TOY_BOT  # the strategy imports this module

        return TOY_BOT

    def house_rule_set(
        self, seats: int, point_value_hundredths: int, commission_bps: int
    ) -> RuleSet:
        return toy_rule_set(seats, point_value_hundredths, commission_bps)

    def deadwood_points(
        self, rule_set: RuleSet, wild_cut: Card | None, deadwood: Sequence[Card]
    ) -> int:
        """The toy's card values (:func:`card_value`: ace 1, faces 10), uncapped."""
        return sum(map(card_value, deadwood))

    def initial_state(self) -> ToyState:
        return ToyState()

    def decide(self, state: ToyState, command: Command) -> tuple[Event, ...]:
        try:
            return decide(state, command)
        except RuleSetError as exc:
            raise _fail(ErrorCode.INVALID_COMMAND, str(exc)) from None

    def legal_commands(self, state: ToyState, seat: int) -> tuple[Command, ...]:
        """On its turn: draw (while the stock holds cards) or knock; after drawing, discard
        any card."""
        own = state.seat(seat)
        if state.phase is not ToyPhase.PLAYING or seat != state.turn_seat or own is None:
            return ()
        turn = state.turn_no
        if state.drawn:
            return tuple(Discard(seat=seat, turn_no=turn, card=c, at_ms=0) for c in own.cards)
        draw = (DrawFromStock(seat=seat, turn_no=turn, at_ms=0),) if state.stock else ()
        return (*draw, Knock(seat=seat, turn_no=turn, at_ms=0))

    def apply(self, state: ToyState, event: Event) -> ToyState:
        return apply(state, event)

    def fold(self, events: Iterable[Event], state: ToyState | None = None) -> ToyState:
        return fold_with(self, events, state)

    def view(self, state: ToyState, seat: int) -> PlayerView:
        own = state.seat(seat)
        ended = state.result
        return PlayerView(
            hand_id=state.hand_id,
            seat=seat,
            phase=state.phase.value,
            cards=own.cards if own is not None else (),
            discard_pile=state.discard_pile,
            stock_count=len(state.stock),
            wild_cut=None,
            wild_rank=None,
            seats=tuple(
                SeatView(
                    s.seat,
                    s.account_id,
                    len(s.cards),
                    "won"
                    if ended is not None and s.seat in ended.settlement.winner_seats
                    else "playing",
                    s.misses_in_a_row,
                )
                for s in state.seats
            ),
            turn_seat=state.turn_seat if state.phase is ToyPhase.PLAYING else None,
            turn_no=state.turn_no,
            turn_deadline_ms=state.turn_deadline_ms if state.phase is ToyPhase.PLAYING else None,
            has_drawn=state.drawn,
            result=ended,
        )

    def redact(self, event: Event, seat: int) -> Event:
        return redact(event, seat)

    def deadline(self, state: ToyState) -> Deadline | None:
        return clock_deadline(
            state.seed_deadline_ms if state.phase is ToyPhase.SEED_WINDOW else None,
            state.turn_no,
            state.turn_deadline_ms if state.phase is ToyPhase.PLAYING else None,
        )

    def is_over(self, state: ToyState) -> bool:
        return state.phase is ToyPhase.ENDED

    def result(self, state: ToyState) -> HandEnded | HandAborted | None:
        return state.result


TOY: Variant[ToyState] = ToyKnock()
