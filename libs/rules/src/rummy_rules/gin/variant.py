"""The gin family behind the variant interface: :data:`GIN` (``rummy_rules.variant.Variant``).

The hand's life is the one every variant follows (``docs/rules/hand-flow.md``): ``HandStarted``
(two seats, the dealer, the rule set), the ledger's ``StakeReserved`` for each seat and the
fairness service's ``SeedCommitted``, the seed window (``SeedWindowOpened``, client seeds,
``SeedsLocked``), the dealer's ``HandDealt`` (ten cards each, no cut, the upcard as the first
open card, the stock), then turns (``TurnStarted`` with the clock's deadline) played by the gin
hand's state machine (``rummy_rules.gin.hand``: the first-turn offer, draws, discards, knock,
gin, big gin, the wall, timeouts), and ``HandEnded``: every seat's outcome word and points and
the settlement. A match format reads it as a ``DealResult`` (``formats.messages.deal_result``):
the loser is charged the hand's score, the wall is a drawn deal (both seats ``drawn``, charged
0), a seat that forfeits on missed turns is ``timed_out`` and one that leaves is ``left`` (both
charged 0: the format takes the game from them at the cap).

Seat outcomes (``SeatResult.outcome``): the hand's winner ``knock``, ``undercut``, ``gin`` or
``big_gin``; its loser ``lost``; at the wall both ``drawn``; ``timed_out`` / ``left`` and the
other seat ``won``. ``docs/rules/gin.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum

from .. import codec
from ..bot import VariantBot
from ..commands import (
    AbortHand,
    Command,
    ContributeClientSeed,
    Deal,
    LeaveHand,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
    TurnTimeout,
)
from ..errors import ErrorCode, RuleViolation
from ..events import (
    CardDrawn,
    ClientSeedContributed,
    Event,
    HandAborted,
    HandDealt,
    HandEnded,
    HandStarted,
    SeatAccount,
    SeatResult,
    SeatSeed,
    SeedCommitted,
    SeedsLocked,
    SeedWindowOpened,
    StakeReserved,
    TurnStarted,
)
from ..formats.messages import DRAWN_OUTCOME, LEFT_OUTCOME, TIMED_OUT_OUTCOME, DealRules
from ..rules import RuleSet, RuleSetError, VariantOptions
from ..settlement import settle
from ..shuffle import MAX_CLIENT_SEED_BYTES, deal_order
from ..variant import Deadline, Variant, VariantRules, clock_deadline, fold_with
from ..view import PlayerView, SeatView
from . import hand
from .hand import (
    GinHand,
    GinHandScored,
    GinHandStarted,
    GinKnocked,
    GinSeatForfeited,
    GinWallReached,
)
from .rules import (
    GIN_RULES_VERSION,
    GIN_RUMMY_NAME,
    GIN_SHOE,
    GIN_VARIANT,
    OKLAHOMA_GIN_NAME,
    GinOptions,
    gin_options,
    gin_rule_set,
)
from .scoring import HandRules

_MS_PER_SECOND = 1000
WON_OUTCOME = "won"
LOST_OUTCOME = "lost"


class GinPhase(Enum):
    NOT_STARTED = "not_started"
    PREPARING = "preparing"  # waiting for the stakes and the seed commitment
    SEED_WINDOW = "seed_window"
    AWAITING_DEAL = "awaiting_deal"
    PLAYING = "playing"
    ENDED = "ended"
    ABORTED = "aborted"


@dataclass(frozen=True)
class GinState:
    """One gin hand around its play: the seats (ascending) and their accounts, the seats whose
    stake is recorded (``staked``), the seed commitment and window (``seed_deadline_ms``), the
    client seeds (``seeds``), the play itself (``play``, the gin hand's state machine, from the
    deal), the clock's deadline of the turn on (``turn_deadline_ms``) and the closing event."""

    phase: GinPhase = GinPhase.NOT_STARTED
    hand_id: str = ""
    rule_set: RuleSet | None = None
    dealer_seat: int = -1
    seats: tuple[SeatAccount, ...] = ()
    staked: tuple[int, ...] = ()
    commitment: str | None = None
    seed_deadline_ms: int | None = None
    seeds: tuple[SeatSeed, ...] = ()
    play: GinHand = GinHand()
    turn_deadline_ms: int | None = None
    result: HandEnded | HandAborted | None = None

    def account(self, seat: int) -> SeatAccount | None:
        return next((s for s in self.seats if s.seat == seat), None)

    @property
    def options(self) -> GinOptions:
        assert self.rule_set is not None
        return gin_options(self.rule_set)


codec.register(GinState, GinHand, HandRules)


def _fail(code: ErrorCode, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def _require(state: GinState, *phases: GinPhase) -> None:
    if state.phase not in phases:
        wanted = " or ".join(p.value for p in phases)
        raise _fail(
            ErrorCode.WRONG_PHASE, f"the hand is {state.phase.value}; this needs it {wanted}"
        )


def _seated(state: GinState, seat: int) -> SeatAccount:
    found = state.account(seat)
    if found is None:
        raise _fail(ErrorCode.NOT_IN_HAND, f"seat {seat} is not dealt into this hand")
    return found


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


# --- before the deal ----------------------------------------------------------------------------


def _start(state: GinState, c: StartHand) -> list[Event]:
    _require(state, GinPhase.NOT_STARTED)
    try:
        GIN.check_rule_set(c.rule_set)
    except RuleSetError as exc:
        raise _fail(ErrorCode.INVALID_COMMAND, str(exc)) from None
    if not c.hand_id:
        raise _fail(ErrorCode.INVALID_COMMAND, "a hand needs an id")
    seats = [s.seat for s in c.seats]
    accounts = [s.account_id for s in c.seats]
    if len(seats) != 2 or len(set(seats)) != 2 or len(set(accounts)) != 2:
        raise _fail(ErrorCode.INVALID_COMMAND, "a gin hand is two seats of two accounts")
    if any(not 0 <= s < c.rule_set.seats for s in seats):
        raise _fail(ErrorCode.INVALID_COMMAND, f"seats are numbered 0..{c.rule_set.seats - 1}")
    if c.dealer_seat not in seats:
        raise _fail(ErrorCode.INVALID_COMMAND, f"the dealer (seat {c.dealer_seat}) is not seated")
    return [
        HandStarted(
            hand_id=c.hand_id,
            seats=tuple(sorted(c.seats, key=lambda s: s.seat)),
            dealer_seat=c.dealer_seat,
            rule_set=c.rule_set,
            at_ms=c.at_ms,
        )
    ]


def _window_if_ready(state: GinState, events: list[Event], at_ms: int) -> list[Event]:
    after = _fold(events, state)
    if after.commitment is not None and len(after.staked) == len(after.seats):
        assert after.rule_set is not None
        deadline = at_ms + after.rule_set.seed_window_seconds * _MS_PER_SECOND
        events.append(SeedWindowOpened(deadline_ms=deadline))
    return events


def _stake(state: GinState, c: RecordStakeReserved) -> list[Event]:
    _require(state, GinPhase.PREPARING)
    _seated(state, c.seat)
    if c.seat in state.staked:
        raise _fail(ErrorCode.DUPLICATE, f"seat {c.seat}'s stake is already recorded")
    return _window_if_ready(
        state, [StakeReserved(seat=c.seat, amount_cents=c.amount_cents)], c.at_ms
    )


def _commitment(state: GinState, c: RecordSeedCommitment) -> list[Event]:
    _require(state, GinPhase.PREPARING)
    if state.commitment is not None:
        raise _fail(ErrorCode.DUPLICATE, "the seed commitment is already recorded")
    if len(c.commitment) != 64 or not _is_hex(c.commitment):
        raise _fail(ErrorCode.INVALID_COMMAND, "a commitment is a SHA-256 as 64 hex digits")
    return _window_if_ready(state, [SeedCommitted(commitment=c.commitment.lower())], c.at_ms)


def _locked(state: GinState) -> SeedsLocked:
    assert state.commitment is not None
    sent = {s.seat: s.seed_hex for s in state.seeds}
    return SeedsLocked(
        commitment=state.commitment,
        client_seeds=tuple(SeatSeed(s.seat, sent.get(s.seat, "")) for s in state.seats),
    )


def _seed(state: GinState, c: ContributeClientSeed) -> list[Event]:
    _require(state, GinPhase.SEED_WINDOW)
    _seated(state, c.seat)
    if any(s.seat == c.seat for s in state.seeds):
        raise _fail(ErrorCode.DUPLICATE, f"seat {c.seat} already contributed its seed")
    if not _is_hex(c.seed_hex) or len(c.seed_hex) > 2 * MAX_CLIENT_SEED_BYTES:
        raise _fail(
            ErrorCode.INVALID_COMMAND,
            f"a client seed is hex, at most {MAX_CLIENT_SEED_BYTES} bytes",
        )
    events: list[Event] = [ClientSeedContributed(seat=c.seat, seed_hex=c.seed_hex.lower())]
    after = _fold(events, state)
    if len(after.seeds) == len(after.seats):
        events.append(_locked(after))
    return events


def _deal(state: GinState, c: Deal) -> list[Event]:
    _require(state, GinPhase.AWAITING_DEAL)
    if c.wild_cut is not None:
        raise _fail(ErrorCode.INVALID_DEAL, "gin cuts no wild card")
    if sorted(h.seat for h in c.hands) != [s.seat for s in state.seats]:
        raise _fail(ErrorCode.INVALID_DEAL, "the deal must give one hand to each seat in the hand")
    every = [card for h in c.hands for card in h.cards] + [c.first_open, *c.stock]
    if len(every) != GIN_SHOE.size or set(every) != set(GIN_SHOE.cards):
        raise _fail(ErrorCode.INVALID_DEAL, "the deal must use every card of the deck once")
    hands = tuple(sorted(c.hands, key=lambda h: h.seat))
    dealt = HandDealt(
        hands=hands, wild_cut=None, first_open=c.first_open, stock=c.stock, stock_count=len(c.stock)
    )
    return [dealt, *_next(apply(state, dealt), c.at_ms)]


# --- play ---------------------------------------------------------------------------------------


def _ended(state: GinState, at_ms: int) -> HandEnded:
    """The HandEnded of a hand whose play has ended (``state.play.ending``)."""
    assert state.rule_set is not None
    play, ending = state.play, state.play.ending
    assert ending is not None
    seats = [s.seat for s in state.seats]

    def line(seat: int, outcome: str, points: int, knocked: GinKnocked | None = None) -> SeatResult:
        account = _seated(state, seat).account_id
        cards = play.hand_of(seat)
        if isinstance(ending, GinHandScored) and seat == ending.defender_seat:
            return SeatResult(
                seat,
                account,
                outcome,
                points,
                ending.defender_cards,
                ending.defender_melds,
                ending.defender_deadwood_cards,
            )
        if knocked is not None and seat == knocked.seat:
            return SeatResult(
                seat, account, outcome, points, cards, knocked.melds, knocked.deadwood_cards
            )
        return SeatResult(seat, account, outcome, points, cards, (), ())

    if isinstance(ending, GinHandScored):
        winner = ending.winner_seat
        loser = next(s for s in seats if s != winner)
        outcomes = {winner: ending.outcome, loser: LOST_OUTCOME}
        points = {winner: 0, loser: ending.points}
    elif isinstance(ending, GinWallReached):
        winner = play.dealer_seat
        outcomes = {s: DRAWN_OUTCOME for s in seats}
        points = {s: 0 for s in seats}
    else:
        assert isinstance(ending, GinSeatForfeited)
        winner = next(s for s in seats if s != ending.seat)
        outcomes = {winner: WON_OUTCOME, ending.seat: TIMED_OUT_OUTCOME}
        points = {s: 0 for s in seats}
    results = tuple(line(s, outcomes[s], points[s], play.knocked) for s in seats)
    return HandEnded(
        winner_seat=winner,
        results=results,
        settlement=settle(state.rule_set, winner, points),
        at_ms=at_ms,
    )


def _next(state: GinState, at_ms: int) -> list[Event]:
    """What follows the play's events just applied: the HandEnded once the play has ended, the
    next TurnStarted when the turn moved on, else nothing."""
    play = state.play
    if play.ending is not None:
        return [_ended(state, at_ms)]
    assert state.rule_set is not None and play.turn_seat is not None
    deadline = at_ms + state.rule_set.turn_seconds * _MS_PER_SECOND
    return [TurnStarted(seat=play.turn_seat, turn_no=play.turn_no, deadline_ms=deadline)]


def _play(state: GinState, c: Command) -> list[Event]:
    if isinstance(c, TurnTimeout) and state.phase is not GinPhase.PLAYING:
        if state.phase is GinPhase.SEED_WINDOW and c.turn_no == 0:
            return [_locked(state)]
        return []  # stale
    _require(state, GinPhase.PLAYING)
    events = list(hand.decide(state.play, c))
    if not events:
        return []
    after = _fold(events, state)
    if after.play.ending is None and after.play.turn_no == state.play.turn_no:
        return events  # a draw: the same turn goes on
    return [*events, *_next(after, getattr(c, "at_ms", 0))]


def _leave(state: GinState, c: LeaveHand) -> list[Event]:
    _seated(state, c.seat)
    if state.phase in (GinPhase.PREPARING, GinPhase.SEED_WINDOW, GinPhase.AWAITING_DEAL):
        return [HandAborted(reason=f"seat {c.seat} left before the deal", at_ms=c.at_ms)]
    _require(state, GinPhase.PLAYING)
    assert state.rule_set is not None
    winner = next(s.seat for s in state.seats if s.seat != c.seat)
    points = {s.seat: 0 for s in state.seats}
    results = tuple(
        SeatResult(
            s.seat,
            s.account_id,
            LEFT_OUTCOME if s.seat == c.seat else WON_OUTCOME,
            0,
            state.play.hand_of(s.seat),
            (),
            (),
        )
        for s in state.seats
    )
    return [
        HandEnded(
            winner_seat=winner,
            results=results,
            settlement=settle(state.rule_set, winner, points),
            at_ms=c.at_ms,
        )
    ]


def _abort(state: GinState, c: AbortHand) -> list[Event]:
    _require(
        state, GinPhase.PREPARING, GinPhase.SEED_WINDOW, GinPhase.AWAITING_DEAL, GinPhase.PLAYING
    )
    return [HandAborted(reason=c.reason, at_ms=c.at_ms)]


def decide(state: GinState, command: Command) -> tuple[Event, ...]:
    """The events ``command`` causes in ``state``; ``()`` for a stale timeout. Raises
    RuleViolation."""
    if isinstance(command, StartHand):
        return tuple(_start(state, command))
    if isinstance(command, RecordStakeReserved):
        return tuple(_stake(state, command))
    if isinstance(command, RecordSeedCommitment):
        return tuple(_commitment(state, command))
    if isinstance(command, ContributeClientSeed):
        return tuple(_seed(state, command))
    if isinstance(command, Deal):
        return tuple(_deal(state, command))
    if isinstance(command, LeaveHand):
        return tuple(_leave(state, command))
    if isinstance(command, AbortHand):
        return tuple(_abort(state, command))
    return tuple(_play(state, command))


def legal_commands(state: GinState, seat: int) -> tuple[Command, ...]:
    """The moves ``seat`` may make now (the gin hand's ``legal_commands``); none outside play."""
    if state.phase is not GinPhase.PLAYING:
        return ()
    return hand.legal_commands(state.play, seat)


# --- apply --------------------------------------------------------------------------------------


def apply(state: GinState, event: Event) -> GinState:
    """The state after ``event`` (never raises on a history ``decide`` produced)."""
    if isinstance(event, HandStarted):
        return GinState(
            phase=GinPhase.PREPARING,
            hand_id=event.hand_id,
            rule_set=event.rule_set,
            dealer_seat=event.dealer_seat,
            seats=tuple(sorted(event.seats, key=lambda s: s.seat)),
        )
    if isinstance(event, StakeReserved):
        return replace(state, staked=(*state.staked, event.seat))
    if isinstance(event, SeedCommitted):
        return replace(state, commitment=event.commitment)
    if isinstance(event, SeedWindowOpened):
        return replace(state, phase=GinPhase.SEED_WINDOW, seed_deadline_ms=event.deadline_ms)
    if isinstance(event, ClientSeedContributed):
        return replace(state, seeds=(*state.seeds, SeatSeed(event.seat, event.seed_hex)))
    if isinstance(event, SeedsLocked):
        return replace(
            state, phase=GinPhase.AWAITING_DEAL, seed_deadline_ms=None, seeds=event.client_seeds
        )
    if isinstance(event, HandDealt):
        assert state.rule_set is not None
        order = deal_order([s.seat for s in state.seats], state.dealer_seat)
        by_seat = {h.seat: h.cards for h in event.hands}
        seats = (order[0], order[1])
        started = GinHandStarted(
            hand_id=state.hand_id,
            seats=seats,
            dealer_seat=state.dealer_seat,
            hands=(by_seat[seats[0]], by_seat[seats[1]]),
            upcard=event.first_open,
            stock=event.stock,
            stock_count=len(event.stock),
            rules=state.options.hand_rules(event.first_open),
            max_missed_turns=(
                state.rule_set.max_missed_turns if state.options.missed_turns_forfeit else 0
            ),
            at_ms=0,
        )
        return replace(state, phase=GinPhase.PLAYING, play=hand.apply(state.play, started))
    if isinstance(event, TurnStarted):
        return replace(state, turn_deadline_ms=event.deadline_ms)
    if isinstance(event, HandEnded):
        return replace(state, phase=GinPhase.ENDED, result=event, turn_deadline_ms=None)
    if isinstance(event, HandAborted):
        return replace(
            state,
            phase=GinPhase.ABORTED,
            result=event,
            turn_deadline_ms=None,
            seed_deadline_ms=None,
        )
    return replace(state, play=hand.apply(state.play, event))


def _fold(events: Iterable[Event], state: GinState) -> GinState:
    for event in events:
        state = apply(state, event)
    return state


# --- views --------------------------------------------------------------------------------------


def _status(state: GinState, seat: int) -> str:
    if state.phase in (GinPhase.NOT_STARTED, GinPhase.PREPARING, GinPhase.SEED_WINDOW):
        return "waiting"
    if state.phase is GinPhase.AWAITING_DEAL:
        return "waiting"
    if isinstance(state.result, HandEnded):
        return next(r.outcome for r in state.result.results if r.seat == seat)
    knocked = state.play.knocked
    if knocked is not None and knocked.seat == seat:
        return "knocked"
    return "playing"


def player_view(state: GinState, seat: int) -> PlayerView:
    """What ``seat`` may see (any other number: a spectator's, with no cards of its own): its own
    cards, the discard pile, each seat's card count, the stock's size, the turn; once the hand
    has ended, ``result`` holds both hands and their arrangements. Never the other hand or the
    stock order before that (``docs/rules/gin.md#views``). Once dealt, ``variant_view`` is the
    gin hand's own view (:func:`gin_view`: the knock limit, the doubling, the knocker's melds
    and deadwood once it has knocked, the score with the lay-offs at the end)."""
    play = state.play
    dealt = (
        state.phase in (GinPhase.PLAYING, GinPhase.ENDED, GinPhase.ABORTED)
        and play.phase is not None
    )
    mine = play.hand_of(seat) if dealt and seat in play.seats else ()
    playing = state.phase is GinPhase.PLAYING
    return PlayerView(
        hand_id=state.hand_id,
        seat=seat,
        phase=state.phase.value,
        cards=mine,
        discard_pile=play.pile,
        stock_count=len(play.stock),
        wild_cut=None,
        wild_rank=None,
        seats=tuple(
            SeatView(
                s.seat,
                s.account_id,
                len(play.hand_of(s.seat)) if dealt else 0,
                _status(state, s.seat),
                play.misses[play.position(s.seat)] if dealt else 0,
            )
            for s in state.seats
        ),
        turn_seat=play.turn_seat if playing else None,
        turn_no=play.turn_no,
        turn_deadline_ms=state.turn_deadline_ms if playing else None,
        has_drawn=play.phase is hand.Phase.DISCARD,
        result=state.result,
        commitment=state.commitment,
        variant_view=gin_view(state, seat) if dealt else None,
    )


def gin_view(state: GinState, seat: int) -> hand.GinView:
    """The gin hand's own view of ``seat`` (``rummy_rules.gin.hand.view``): the knock limit, the
    doubling, the knocker's melds and deadwood after a knock, the score at the end."""
    return hand.view(state.play, seat)


def redact(event: Event, seat: int) -> Event:
    """The copy of ``event`` that ``seat`` may see: the other hand and the stock of the deal, a
    stock card the other seat drew, the face-down knock card (until the result) removed."""
    from ..events import redact as generic

    if isinstance(event, GinKnocked | CardDrawn):
        return hand.redact(event, seat)
    return generic(event, seat)


class Gin(VariantRules):
    """Gin Rummy, Oklahoma Gin and Hollywood Gin's hands (one variant, see
    ``rummy_rules.gin.rules``). Stateless: every method is a pure function of its inputs."""

    name = GIN_VARIANT
    rules_versions = frozenset(
        {f"{GIN_RUMMY_NAME}/{GIN_RULES_VERSION}", f"{OKLAHOMA_GIN_NAME}/{GIN_RULES_VERSION}"}
    )
    options_type: type[VariantOptions] = GinOptions
    deal_shape = GinOptions.deal_shape

    @property
    def bot(self) -> VariantBot | None:
        from .bot import GIN_BOT  # the strategy reads this package's hand

        return GIN_BOT

    def check_rule_set(self, rule_set: RuleSet) -> None:
        """As every variant's, and the rule set's name says whether it is Oklahoma's."""
        super().check_rule_set(rule_set)
        oklahoma = rule_set.name == OKLAHOMA_GIN_NAME
        if gin_options(rule_set).oklahoma != oklahoma:
            raise RuleSetError(
                "oklahoma", f"{oklahoma} under rule set {rule_set.name!r}", not oklahoma
            )

    def house_rule_set(self, seats: int, point_value_cents: int, commission_bps: int) -> RuleSet:
        """Gin Rummy (``gin-rummy/1``) at two seats. Raises RuleSetError for another seat
        count."""
        if seats != 2:
            raise RuleSetError("seats", "2", seats, "gin is for two players")
        return gin_rule_set(point_value_cents, commission_bps)

    def deal_rule_set(self, table_rule_set: RuleSet, deal_rules: DealRules) -> RuleSet:
        """A gin table's rule set, free (the format holds the money): a gin hand has no drops,
        wrong declares or cap, so ``deal_rules`` changes nothing of it."""
        self.check_rule_set(table_rule_set)
        return replace(table_rule_set, point_value_cents=0, commission_bps=0)

    def initial_state(self) -> GinState:
        return GinState()

    def decide(self, state: GinState, command: Command) -> tuple[Event, ...]:
        return decide(state, command)

    def legal_commands(self, state: GinState, seat: int) -> tuple[Command, ...]:
        return legal_commands(state, seat)

    def apply(self, state: GinState, event: Event) -> GinState:
        return apply(state, event)

    def fold(self, events: Iterable[Event], state: GinState | None = None) -> GinState:
        return fold_with(self, events, state)

    def view(self, state: GinState, seat: int) -> PlayerView:
        return player_view(state, seat)

    def redact(self, event: Event, seat: int) -> Event:
        return redact(event, seat)

    def deadline(self, state: GinState) -> Deadline | None:
        return clock_deadline(
            state.seed_deadline_ms if state.phase is GinPhase.SEED_WINDOW else None,
            state.play.turn_no,
            state.turn_deadline_ms if state.phase is GinPhase.PLAYING else None,
        )

    def is_over(self, state: GinState) -> bool:
        return state.phase in (GinPhase.ENDED, GinPhase.ABORTED)

    def result(self, state: GinState) -> HandEnded | HandAborted | None:
        return state.result


GIN: Variant[GinState] = Gin()
"""The gin family's variant, typed as the interface hosts use."""
