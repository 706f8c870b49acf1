"""The gin hand's play, from the deal to the score: state, commands, events, decide/apply, view.

Rules, each a section of ``docs/rules/gin.md``: ``#first-turn`` (the non-dealer may take the
upcard or pass, then the dealer, then the non-dealer draws from the stock); a draw from the stock
or the pile's top; ``#pile-card`` (the card just taken from the pile is not discarded); the
discard; ``#knock`` (one card face down) with ``#knocker-melds`` (optional named melds); ``#gin``
(gin and big gin); ``#wall`` (two stock cards left after the drawer of the third-last discards
without knocking: a draw, no score); ``#timeouts`` (a pass at the offer; otherwise draw from the
stock and discard the highest deadwood card, never a knock; the option's missed turns in a row
forfeit); ``#views`` (never the other hand before the result).

This is the play of one dealt hand (``GinHand``); the hand's life around it (the seats' stakes, the
seeds, the dealer's deal, the settlement of the game) is the host's and the match format's. Pure:
``decide(state, command) -> events`` raises ``RuleViolation``, ``apply(state, event) -> state``
never raises on a history ``decide`` produced, ``fold(events)`` rebuilds the state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum

from rummy_rules import json_form
from rummy_rules.cards import Card
from rummy_rules.commands import Command, Discard, DrawFromDiscardPile, DrawFromStock, TurnTimeout
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import (
    CardDiscarded,
    CardDrawn,
    DrawSource,
    Event,
    ScoredGroup,
    TurnTimedOut,
)

from .arrangement import (
    GinCardError,
    GinMeld,
    arrangement_of,
    best_arrangement,
    card_index,
    card_value,
    hand_mask,
)
from .scoring import HandRules, IllegalKnock, Outcome, score_big_gin, score_knock
from .solver import after_discard

HAND_SIZE = 10
#: The stock count at which a discard without a knock walls the hand (``docs/rules/gin.md#wall``).
WALL_STOCK = 2


class Phase(Enum):
    """Where the hand is: the first-turn offer, a turn's draw, a turn's discard, or over."""

    OFFER = "offer"
    DRAW = "draw"
    DISCARD = "discard"
    ENDED = "ended"


# Commands (the generic DrawFromStock, DrawFromDiscardPile, Discard and TurnTimeout are used too).


@json_form.tag("gin.StartHand")
@dataclass(frozen=True, kw_only=True)
class StartGinHand(Command):
    """Start a dealt gin hand: two seats (the dealer one of them), ten cards each, the upcard,
    the stock (``stock[0]`` drawn first) and the hand's rules (limit, doubling, big gin);
    ``max_missed_turns`` 0 for no forfeit (``docs/rules/gin.md#timeouts``)."""

    hand_id: str
    seats: tuple[int, int]
    dealer_seat: int
    hands: tuple[tuple[Card, ...], tuple[Card, ...]]
    upcard: Card
    stock: tuple[Card, ...]
    rules: HandRules
    max_missed_turns: int = 0
    at_ms: int


@json_form.tag("gin.PassUpcard")
@dataclass(frozen=True, kw_only=True)
class GinPassUpcard(Command):
    """Refuse the upcard at the first-turn offer (``docs/rules/gin.md#first-turn``)."""

    seat: int
    turn_no: int
    at_ms: int


@json_form.tag("gin.Knock")
@dataclass(frozen=True, kw_only=True)
class GinKnock(Command):
    """With eleven cards, lay ``face_down`` aside and knock; ``melds`` the knocker's named melds
    (None: the server arranges; ``docs/rules/gin.md#knocker-melds``). Gin when 0 is left."""

    seat: int
    turn_no: int
    face_down: Card
    melds: tuple[tuple[Card, ...], ...] | None = None
    at_ms: int


@json_form.tag("gin.DeclareGin")
@dataclass(frozen=True, kw_only=True)
class DeclareGin(Command):
    """Knock with ``face_down`` aside and 0 deadwood left (``docs/rules/gin.md#gin``)."""

    seat: int
    turn_no: int
    face_down: Card
    at_ms: int


@json_form.tag("gin.DeclareBigGin")
@dataclass(frozen=True, kw_only=True)
class DeclareBigGin(Command):
    """Show all eleven cards melded, no discard (``docs/rules/gin.md#gin``)."""

    seat: int
    turn_no: int
    at_ms: int


# Events (the generic CardDrawn, CardDiscarded and TurnTimedOut are used too).


@json_form.tag("gin.HandStarted")
@dataclass(frozen=True, kw_only=True)
class GinHandStarted(Event):
    """A dealt gin hand began. Redacted for a seat: the other hand and the stock are empty;
    ``stock_count`` always holds the stock's size."""

    hand_id: str
    seats: tuple[int, int]
    dealer_seat: int
    hands: tuple[tuple[Card, ...], tuple[Card, ...]]
    upcard: Card
    stock: tuple[Card, ...]
    stock_count: int
    rules: HandRules
    max_missed_turns: int
    at_ms: int


@json_form.tag("gin.UpcardPassed")
@dataclass(frozen=True, kw_only=True)
class GinUpcardPassed(Event):
    """``seat`` refused the upcard at the first-turn offer."""

    seat: int
    turn_no: int


@json_form.tag("gin.Knocked")
@dataclass(frozen=True, kw_only=True)
class GinKnocked(Event):
    """``seat`` knocked (``outcome`` knock, gin or big gin): its melds and deadwood are public.
    ``face_down`` (None for big gin) is hidden from the other seat until the score.
    ``melds_named``: the knocker named ``melds`` itself (``GinKnock.melds``; its deadwood is
    then theirs, maybe above its best); False: the server arranged them, among the knocker's best
    arrangements the one leaving the defender the fewest points to lay off (house plan "Gin
    family"; ``docs/rules/gin.md#knocker-melds``). False in records written before the flag."""

    seat: int
    turn_no: int
    outcome: str
    face_down: Card | None
    melds: tuple[ScoredGroup, ...]
    deadwood_cards: tuple[Card, ...]
    deadwood: int
    melds_named: bool = False


@json_form.tag("gin.Layoff")
@dataclass(frozen=True, kw_only=True)
class GinLayoff:
    """One card the defender laid off onto the knocker's meld number ``meld``."""

    card: Card
    meld: int


@json_form.tag("gin.HandScored")
@dataclass(frozen=True, kw_only=True)
class GinHandScored(Event):
    """The hand's score (``docs/rules/gin.md#hand-score``): ``points`` to ``winner_seat``;
    both hands are public now (``defender_cards``, the knocker's in its GinKnocked)."""

    outcome: str
    winner_seat: int
    points: int
    knocker_seat: int
    knocker_deadwood: int
    defender_seat: int
    defender_cards: tuple[Card, ...]
    layoffs: tuple[GinLayoff, ...]
    defender_melds: tuple[ScoredGroup, ...]
    defender_deadwood_cards: tuple[Card, ...]
    defender_deadwood: int


@json_form.tag("gin.WallReached")
@dataclass(frozen=True, kw_only=True)
class GinWallReached(Event):
    """Two stock cards left and no knock: the hand is a draw, no score, the same dealer redeals
    (``docs/rules/gin.md#wall``). Both hands are public."""

    turn_no: int
    hands: tuple[tuple[Card, ...], tuple[Card, ...]]


@json_form.tag("gin.SeatForfeited")
@dataclass(frozen=True, kw_only=True)
class GinSeatForfeited(Event):
    """``seat`` missed ``misses`` turns in a row, the option's limit: it loses the game at the
    cap (the match format settles it; ``docs/rules/gin.md#timeouts``)."""

    seat: int
    turn_no: int
    misses: int


json_form.register(
    StartGinHand,
    GinPassUpcard,
    GinKnock,
    DeclareGin,
    DeclareBigGin,
    GinHandStarted,
    GinUpcardPassed,
    GinKnocked,
    GinLayoff,
    GinHandScored,
    GinWallReached,
    GinSeatForfeited,
)


@json_form.tag("gin.Hand")
@dataclass(frozen=True)
class GinHand:
    """The state of one gin hand. ``hands`` by position (``seats[0]``, ``seats[1]``); ``pile``
    bottom first; ``pile_taken`` the card taken from the pile this turn (not discardable);
    ``offers`` how many seats have passed the upcard; ``misses`` each position's timed-out turns
    in a row; ``ending`` the event that closed the hand."""

    hand_id: str = ""
    phase: Phase | None = None
    seats: tuple[int, int] = (0, 1)
    dealer_seat: int = 0
    hands: tuple[tuple[Card, ...], tuple[Card, ...]] = ((), ())
    upcard: Card | None = None
    stock: tuple[Card, ...] = ()
    pile: tuple[Card, ...] = ()
    rules: HandRules = HandRules()
    max_missed_turns: int = 0
    turn_seat: int | None = None
    turn_no: int = 0
    pile_taken: Card | None = None
    offers: int = 0
    misses: tuple[int, int] = (0, 0)
    knocked: GinKnocked | None = None
    ending: GinHandScored | GinWallReached | GinSeatForfeited | None = None
    timed_out_turn: int = 0

    def position(self, seat: int) -> int:
        return self.seats.index(seat)

    def other(self, seat: int) -> int:
        return self.seats[1 - self.position(seat)]

    def hand_of(self, seat: int) -> tuple[Card, ...]:
        return self.hands[self.position(seat)]


def _refuse(code: ErrorCode, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def _check_turn(state: GinHand, seat: int, turn_no: int, phases: tuple[Phase, ...]) -> None:
    if state.phase is None or state.phase is Phase.ENDED:
        raise _refuse(ErrorCode.WRONG_PHASE, "no hand is being played")
    if seat not in state.seats:
        raise _refuse(ErrorCode.NOT_IN_HAND, f"seat {seat} is not in this hand")
    if seat != state.turn_seat:
        raise _refuse(ErrorCode.NOT_YOUR_TURN, f"it is seat {state.turn_seat}'s turn")
    if turn_no != state.turn_no:
        raise _refuse(ErrorCode.STALE_TURN, f"turn {turn_no} is over (now {state.turn_no})")
    if state.phase not in phases:
        if state.phase is Phase.DISCARD:
            raise _refuse(ErrorCode.ALREADY_DRAWN, "this turn has drawn already")
        if state.phase is Phase.DRAW:
            raise _refuse(ErrorCode.NOT_DRAWN, "draw first")
        raise _refuse(ErrorCode.WRONG_PHASE, "the first-turn offer: take the upcard or pass")


def _start(command: StartGinHand) -> tuple[Event, ...]:
    seats, hands = command.seats, command.hands
    if len(set(seats)) != 2 or command.dealer_seat not in seats:
        raise _refuse(ErrorCode.INVALID_DEAL, "two seats, the dealer one of them")
    if any(len(h) != HAND_SIZE for h in hands):
        raise _refuse(ErrorCode.INVALID_DEAL, "ten cards each")
    try:
        every = hand_mask((*hands[0], *hands[1], command.upcard, *command.stock))
    except GinCardError as exc:
        raise _refuse(ErrorCode.INVALID_DEAL, str(exc)) from None
    if every != (1 << 52) - 1:
        raise _refuse(ErrorCode.INVALID_DEAL, "the deal is not one whole 52-card deck")
    return (
        GinHandStarted(
            hand_id=command.hand_id,
            seats=seats,
            dealer_seat=command.dealer_seat,
            hands=hands,
            upcard=command.upcard,
            stock=command.stock,
            stock_count=len(command.stock),
            rules=command.rules,
            max_missed_turns=command.max_missed_turns,
            at_ms=command.at_ms,
        ),
    )


def _groups(melds: Iterable[GinMeld]) -> tuple[ScoredGroup, ...]:
    return tuple(ScoredGroup(m.shape.value, m.cards) for m in melds)


def _knock(
    state: GinHand,
    seat: int,
    face_down: Card | None,
    melds: tuple[tuple[Card, ...], ...] | None,
    want: Outcome | None,
) -> tuple[Event, ...]:
    hand = state.hand_of(seat)
    defender_seat = state.other(seat)
    defender = state.hand_of(defender_seat)
    try:
        if face_down is None:
            if not state.rules.big_gin:
                raise _refuse(ErrorCode.INVALID_COMMAND, "big gin is not played at this table")
            score = score_big_gin(hand, defender, state.rules)
        else:
            if face_down not in hand:
                raise _refuse(ErrorCode.NOT_IN_HAND, f"{face_down.face} is not in the hand")
            if face_down == state.pile_taken:
                raise _refuse(
                    ErrorCode.INVALID_CARD, "the card taken from the pile cannot be laid down now"
                )
            ten = tuple(c for c in hand if c != face_down)
            if want is Outcome.GIN and best_arrangement(ten).deadwood != 0:
                raise _refuse(ErrorCode.INVALID_COMMAND, "not gin: deadwood is left")
            if melds is not None:
                named = arrangement_of(ten, melds)
                if want is Outcome.GIN and named.deadwood:
                    raise _refuse(
                        ErrorCode.INVALID_COMMAND, "not gin: the named melds leave deadwood"
                    )
            score = score_knock(ten, defender, state.rules, melds)
    except IllegalKnock as exc:
        raise _refuse(ErrorCode.INVALID_COMMAND, str(exc)) from None
    except GinCardError as exc:
        raise _refuse(ErrorCode.INVALID_CARD, str(exc)) from None
    knocked = GinKnocked(
        seat=seat,
        turn_no=state.turn_no,
        outcome=score.outcome.value if score.outcome is not Outcome.UNDERCUT else "knock",
        face_down=face_down,
        melds=_groups(score.knocker.melds),
        deadwood_cards=score.knocker.loose,
        deadwood=score.knocker_deadwood,
        melds_named=melds is not None,
    )
    winner = seat if score.winner.value == "knocker" else defender_seat
    scored = GinHandScored(
        outcome=score.outcome.value,
        winner_seat=winner,
        points=score.points,
        knocker_seat=seat,
        knocker_deadwood=score.knocker_deadwood,
        defender_seat=defender_seat,
        defender_cards=defender,
        layoffs=tuple(GinLayoff(card=lay.card, meld=lay.meld) for lay in score.layoffs),
        defender_melds=_groups(score.defender.melds),
        defender_deadwood_cards=score.defender.loose,
        defender_deadwood=score.defender_deadwood,
    )
    return knocked, scored


def timeout_discard(hand: tuple[Card, ...], pile_taken: Card | None) -> Card:
    """The card a timed-out turn discards from eleven: the highest deadwood card of the best
    arrangement (ties: the greatest in the fixed card order, rank then suit), never the card just
    taken from the pile; with no deadwood card, the highest card so chosen
    (``docs/rules/gin.md#timeouts``)."""
    loose = [c for c in best_arrangement(hand).loose if c != pile_taken]
    pool = loose or [c for c in hand if c != pile_taken]
    return max(pool, key=lambda c: (card_value(c), card_index(c) % 13, card_index(c) // 13))


def _after_discard(state: GinHand, events: list[Event]) -> None:
    """Append the wall when the turn's ``events`` (from ``state``, a discard last) leave two stock
    cards (``docs/rules/gin.md#wall``)."""
    after = fold(events, state)
    if len(after.stock) <= WALL_STOCK:
        events.append(GinWallReached(turn_no=state.turn_no, hands=after.hands))


def _timeout(state: GinHand, command: TurnTimeout) -> tuple[Event, ...]:
    if state.phase in (None, Phase.ENDED) or command.turn_no != state.turn_no:
        return ()  # a stale timeout
    seat = state.turn_seat
    assert seat is not None
    misses = state.misses[state.position(seat)] + 1
    events: list[Event] = [TurnTimedOut(seat=seat, turn_no=state.turn_no, misses_in_a_row=misses)]
    if state.max_missed_turns and misses >= state.max_missed_turns:
        events.append(GinSeatForfeited(seat=seat, turn_no=state.turn_no, misses=misses))
        return tuple(events)
    if state.phase is Phase.OFFER:
        events.append(GinUpcardPassed(seat=seat, turn_no=state.turn_no))
        return tuple(events)
    hand, taken = state.hand_of(seat), state.pile_taken
    if state.phase is Phase.DRAW:
        card = state.stock[0]
        events.append(
            CardDrawn(seat=seat, turn_no=state.turn_no, source=DrawSource.STOCK, card=card)
        )
        hand = (*hand, card)
    discard = timeout_discard(hand, taken)
    events.append(CardDiscarded(seat=seat, turn_no=state.turn_no, card=discard))
    _after_discard(state, events)
    return tuple(events)


def decide(state: GinHand, command: Command) -> tuple[Event, ...]:
    """The events ``command`` causes; ``()`` for a stale timeout. Raises RuleViolation."""
    if isinstance(command, StartGinHand):
        if state.phase is not None:
            raise _refuse(ErrorCode.WRONG_PHASE, "the hand has started")
        return _start(command)
    if isinstance(command, TurnTimeout):
        return _timeout(state, command)
    if isinstance(command, GinPassUpcard):
        _check_turn(state, command.seat, command.turn_no, (Phase.OFFER,))
        return (GinUpcardPassed(seat=command.seat, turn_no=command.turn_no),)
    if isinstance(command, DrawFromDiscardPile):
        _check_turn(state, command.seat, command.turn_no, (Phase.OFFER, Phase.DRAW))
        if state.phase is Phase.DRAW and state.offers == 2 and state.turn_no == 3:
            raise _refuse(
                ErrorCode.INVALID_COMMAND,
                "both passed the upcard: the non-dealer draws from the stock",
            )
        if not state.pile:
            raise _refuse(ErrorCode.EMPTY_PILE, "the discard pile is empty")
        return (
            CardDrawn(
                seat=command.seat,
                turn_no=command.turn_no,
                source=DrawSource.DISCARD_PILE,
                card=state.pile[-1],
            ),
        )
    if isinstance(command, DrawFromStock):
        _check_turn(state, command.seat, command.turn_no, (Phase.DRAW,))
        return (
            CardDrawn(
                seat=command.seat,
                turn_no=command.turn_no,
                source=DrawSource.STOCK,
                card=state.stock[0],
            ),
        )
    if isinstance(command, Discard):
        _check_turn(state, command.seat, command.turn_no, (Phase.DISCARD,))
        if command.card not in state.hand_of(command.seat):
            raise _refuse(ErrorCode.NOT_IN_HAND, f"{command.card.face} is not in the hand")
        if command.card == state.pile_taken:
            raise _refuse(
                ErrorCode.INVALID_CARD, "the card taken from the pile cannot be discarded this turn"
            )
        events: list[Event] = [
            CardDiscarded(seat=command.seat, turn_no=command.turn_no, card=command.card)
        ]
        _after_discard(state, events)
        return tuple(events)
    if isinstance(command, GinKnock):
        _check_turn(state, command.seat, command.turn_no, (Phase.DISCARD,))
        return _knock(state, command.seat, command.face_down, command.melds, None)
    if isinstance(command, DeclareGin):
        _check_turn(state, command.seat, command.turn_no, (Phase.DISCARD,))
        return _knock(state, command.seat, command.face_down, None, Outcome.GIN)
    if isinstance(command, DeclareBigGin):
        _check_turn(state, command.seat, command.turn_no, (Phase.DISCARD,))
        return _knock(state, command.seat, None, None, Outcome.BIG_GIN)
    raise _refuse(ErrorCode.INVALID_COMMAND, f"not a gin command: {type(command).__name__}")


def _set_hand(state: GinHand, seat: int, cards: tuple[Card, ...]) -> GinHand:
    hands = list(state.hands)
    hands[state.position(seat)] = cards
    return replace(state, hands=(hands[0], hands[1]))


def _end_turn(state: GinHand, seat: int) -> GinHand:
    """A seat's turn is over: its misses in a row reset unless this turn timed out."""
    if state.timed_out_turn != state.turn_no:
        state = _with_miss(state, seat, 0)
    return state


def _next_turn(state: GinHand, seat: int) -> GinHand:
    return replace(
        _end_turn(state, seat),
        turn_seat=state.other(seat),
        turn_no=state.turn_no + 1,
        phase=Phase.DRAW,
        pile_taken=None,
    )


def _with_miss(state: GinHand, seat: int, misses: int) -> GinHand:
    values = list(state.misses)
    values[state.position(seat)] = misses
    return replace(state, misses=(values[0], values[1]))


def apply(state: GinHand, event: Event) -> GinHand:
    """The state after ``event`` (never raises on a history ``decide`` produced)."""
    if isinstance(event, GinHandStarted):
        non_dealer = event.seats[1 - event.seats.index(event.dealer_seat)]
        return GinHand(
            hand_id=event.hand_id,
            phase=Phase.OFFER,
            seats=event.seats,
            dealer_seat=event.dealer_seat,
            hands=event.hands,
            upcard=event.upcard,
            stock=event.stock,
            pile=(event.upcard,),
            rules=event.rules,
            max_missed_turns=event.max_missed_turns,
            turn_seat=non_dealer,
            turn_no=1,
        )
    if isinstance(event, GinUpcardPassed):
        offers = state.offers + 1
        nxt = state.other(event.seat)
        phase = Phase.OFFER if offers < 2 else Phase.DRAW
        return replace(
            _end_turn(state, event.seat),
            offers=offers,
            turn_seat=nxt,
            turn_no=state.turn_no + 1,
            phase=phase,
        )
    if isinstance(event, CardDrawn):
        assert event.card is not None
        hand = (*state.hand_of(event.seat), event.card)
        new = _set_hand(state, event.seat, hand)
        if event.source is DrawSource.STOCK:
            return replace(new, stock=state.stock[1:], phase=Phase.DISCARD, pile_taken=None)
        return replace(new, pile=state.pile[:-1], phase=Phase.DISCARD, pile_taken=event.card)
    if isinstance(event, CardDiscarded):
        hand = tuple(c for c in state.hand_of(event.seat) if c != event.card)
        new = replace(_set_hand(state, event.seat, hand), pile=(*state.pile, event.card))
        return _next_turn(new, event.seat)
    if isinstance(event, TurnTimedOut):
        return replace(
            _with_miss(state, event.seat, event.misses_in_a_row), timed_out_turn=event.turn_no
        )
    if isinstance(event, GinKnocked):
        return replace(state, knocked=event)
    if isinstance(event, GinHandScored | GinWallReached | GinSeatForfeited):
        return replace(state, phase=Phase.ENDED, ending=event, turn_seat=None)
    return state


def fold(events: Iterable[Event], state: GinHand | None = None) -> GinHand:
    """``apply`` each event in order from ``state`` (default: before the hand)."""
    current = GinHand() if state is None else state
    for event in events:
        current = apply(current, event)
    return current


@dataclass(frozen=True)
class GinView:
    """What one seat sees (``docs/rules/gin.md#views``): its own cards, the pile's top, the stock
    count, the other hand's size, the hand's knock limit and doubling, whose turn it is; after a
    knock the knocker's melds and deadwood; at the end the result (both hands public).
    ``pile_taken``: the card this seat took from the pile this turn (not discardable), else None;
    ``knocked``'s ``face_down`` is None for the other seat (and a spectator) until ``ending``."""

    hand_id: str
    seat: int
    phase: str
    cards: tuple[Card, ...]
    pile_top: Card | None
    stock_count: int
    other_card_count: int
    knock_limit: int
    doubled: bool
    turn_seat: int | None
    turn_no: int
    may_take_upcard: bool
    pile_taken: Card | None
    knocked: GinKnocked | None
    ending: GinHandScored | GinWallReached | GinSeatForfeited | None


def view(state: GinHand, seat: int) -> GinView:
    """What ``seat`` may see of ``state`` (a spectator: any seat not in the hand sees no cards).
    Never the other hand, the stock order or the face-down knock card before the result."""
    mine = state.hand_of(seat) if seat in state.seats else ()
    other = state.hands[1 - state.position(seat)] if seat in state.seats else ()
    knocked = state.knocked
    if knocked is not None and knocked.seat != seat and state.ending is None:
        knocked = replace(knocked, face_down=None)
    return GinView(
        hand_id=state.hand_id,
        seat=seat,
        phase="none" if state.phase is None else state.phase.value,
        cards=mine,
        pile_top=state.pile[-1] if state.pile else None,
        stock_count=len(state.stock),
        other_card_count=len(other),
        knock_limit=state.rules.knock_limit,
        doubled=state.rules.doubled,
        turn_seat=state.turn_seat,
        turn_no=state.turn_no,
        may_take_upcard=state.phase is Phase.OFFER,
        pile_taken=state.pile_taken if seat == state.turn_seat else None,
        knocked=knocked,
        ending=state.ending,
    )


def redact(event: Event, seat: int) -> Event:
    """The copy of ``event`` that ``seat`` may see: the other hand and the stock order removed
    from the start, a stock card drawn by the other seat hidden, a face-down knock card hidden
    from the defender (the score that follows makes the hands public)."""
    if isinstance(event, GinHandStarted):
        hands = tuple(h if s == seat else () for s, h in zip(event.seats, event.hands, strict=True))
        return replace(event, hands=(hands[0], hands[1]), stock=())
    if isinstance(event, CardDrawn) and event.source is DrawSource.STOCK and event.seat != seat:
        return replace(event, card=None)
    if isinstance(event, GinKnocked) and event.seat != seat:
        return replace(event, face_down=None)
    return event


def legal_commands(state: GinHand, seat: int, at_ms: int = 0) -> tuple[Command, ...]:
    """Every command ``seat`` may send now (knocks: one per face-down card that leaves deadwood
    within the limit, server-arranged; gin: one per card leaving 0)."""
    if state.phase in (None, Phase.ENDED) or seat != state.turn_seat:
        return ()
    n = state.turn_no
    if state.phase is Phase.OFFER:
        return (
            DrawFromDiscardPile(seat=seat, turn_no=n, at_ms=at_ms),
            GinPassUpcard(seat=seat, turn_no=n, at_ms=at_ms),
        )
    if state.phase is Phase.DRAW:
        out: list[Command] = [DrawFromStock(seat=seat, turn_no=n, at_ms=at_ms)]
        if state.pile and not (state.offers == 2 and n == 3):
            out.append(DrawFromDiscardPile(seat=seat, turn_no=n, at_ms=at_ms))
        return tuple(out)
    hand = state.hand_of(seat)
    out = []
    for card in hand:
        if card == state.pile_taken:
            continue
        out.append(Discard(seat=seat, turn_no=n, card=card, at_ms=at_ms))
        left = best_arrangement(tuple(c for c in hand if c != card)).deadwood
        if left == 0:
            out.append(DeclareGin(seat=seat, turn_no=n, face_down=card, at_ms=at_ms))
        if left <= state.rules.knock_limit:
            out.append(GinKnock(seat=seat, turn_no=n, face_down=card, at_ms=at_ms))
    if state.rules.big_gin and after_discard(hand_mask(hand))[1] == 0:
        out.append(DeclareBigGin(seat=seat, turn_no=n, at_ms=at_ms))
    return tuple(out)
