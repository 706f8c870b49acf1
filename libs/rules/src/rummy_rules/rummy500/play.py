"""A Rummy 500 round's play, from the deal to the scores: state, commands, events, decide/apply.

Rules, each a section of ``docs/rules/rummy500.md``: ``#turns`` (draw the stock's top card, or
dig: take a card of the discard pile with every card above it, in one command that melds or lays
off the deepest card taken, refused otherwise with nothing changed; then any melds and lay-offs,
each its own event; then a discard), ``#melds`` and ``#lay-offs`` (``rummy500.melds``),
``#going-out`` (the last card melded, laid off or discarded ends the round at once),
``#empty-stock`` (the stock empty and the seat on turn takes nothing: the round ends as it
stands), ``#timeouts`` (draw from the stock, discard the highest card, never meld),
``#leavers`` (the seat is out of the turns, its melds stay and count for it), ``#scores``.

Pure: ``decide(state, command) -> events`` raises ``RuleViolation`` and changes nothing,
``apply(state, event) -> state`` never raises on a history ``decide`` produced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from .. import json_form
from ..cards import Card
from ..commands import Command, Discard, DrawFromStock, TurnTimeout
from ..errors import ErrorCode, RuleViolation
from ..events import CardDiscarded, CardDrawn, DrawSource, Event, TurnTimedOut
from .melds import (
    Rummy500Layoff,
    TableMeld,
    card_points,
    fixed_order,
    group_kind,
    hand_points,
    laid_out,
    table_points,
)

#: Why a round ended (``Rummy500RoundEnded.reason``).
WENT_OUT = "went_out"
STOCK_EMPTY = "stock_empty"
PLAYERS_LEFT = "players_left"


class Phase(Enum):
    """Where the round is: a turn's draw, the rest of the turn, or over."""

    DRAW = "draw"
    PLAY = "play"
    ENDED = "ended"


# -- commands (the generic DrawFromStock, Discard and TurnTimeout are used too) --------------------


@json_form.tag("rummy500.TakeFromPile")
@dataclass(frozen=True, kw_only=True)
class Rummy500TakeFromPile(Command):
    """Dig: take the discard pile's top ``depth`` cards (1: the top card alone) and, in the same
    command, meld the deepest of them in ``meld`` (cards of the hand and of those taken, the
    deepest among them) or lay it off on meld ``lay_off_on`` (its id). Exactly one of the two."""

    seat: int
    turn_no: int
    depth: int
    meld: tuple[Card, ...] = ()
    lay_off_on: int | None = None
    at_ms: int


@json_form.tag("rummy500.Meld")
@dataclass(frozen=True, kw_only=True)
class Rummy500Meld(Command):
    """Lay one or more ``groups`` (each a set or a run) face up, each a meld of its own."""

    seat: int
    turn_no: int
    groups: tuple[tuple[Card, ...], ...]
    at_ms: int


@json_form.tag("rummy500.LayOff")
@dataclass(frozen=True, kw_only=True)
class Rummy500LayOff(Command):
    """Lay ``card`` off on the meld ``meld_id`` (anyone's)."""

    seat: int
    turn_no: int
    card: Card
    meld_id: int
    at_ms: int


@json_form.tag("rummy500.LayoffTarget")
@dataclass(frozen=True, kw_only=True)
class Rummy500LayoffTarget:
    """One lay-off of a going out: ``card`` onto meld ``meld_id``."""

    card: Card
    meld_id: int


@json_form.tag("rummy500.GoOut")
@dataclass(frozen=True, kw_only=True)
class Rummy500GoOut(Command):
    """Go out without a discard: meld ``groups`` and make ``layoffs`` so that no card is left
    (refused, nothing changed, if one would be)."""

    seat: int
    turn_no: int
    groups: tuple[tuple[Card, ...], ...] = ()
    layoffs: tuple[Rummy500LayoffTarget, ...] = ()
    at_ms: int


# -- events (the generic CardDrawn, CardDiscarded and TurnTimedOut are used too) ------------------


@json_form.tag("rummy500.PileTaken")
@dataclass(frozen=True, kw_only=True)
class Rummy500PileTaken(Event):
    """``seat`` took ``cards`` (bottom first; ``cards[0]`` the deepest) off the discard pile,
    to meld the deepest in ``meld`` or lay it off on meld ``lay_off_on`` (the command's input;
    the Melded or LaidOff with ``from_pile`` that follows does it)."""

    seat: int
    turn_no: int
    cards: tuple[Card, ...]
    meld: tuple[Card, ...] = ()
    lay_off_on: int | None = None


@json_form.tag("rummy500.Melded")
@dataclass(frozen=True, kw_only=True)
class Rummy500Melded(Event):
    """``seat`` laid meld ``meld_id`` (``set`` or ``run``) of ``cards`` face up; ``from_pile``:
    the meld of a dig's deepest card."""

    seat: int
    turn_no: int
    meld_id: int
    kind: str
    cards: tuple[Card, ...]
    from_pile: bool = False


@json_form.tag("rummy500.LaidOff")
@dataclass(frozen=True, kw_only=True)
class Rummy500LaidOff(Event):
    """``seat`` laid ``card`` off on meld ``meld_id``; it scores for ``seat``. ``from_pile``: the
    lay-off of a dig's deepest card."""

    seat: int
    turn_no: int
    card: Card
    meld_id: int
    from_pile: bool = False


@json_form.tag("rummy500.TookNothing")
@dataclass(frozen=True, kw_only=True)
class Rummy500TookNothing(Event):
    """The stock is empty and ``seat`` took nothing from the pile (a draw from the empty stock,
    or its turn timed out): the round ends as it stands (``docs/rules/rummy500.md#empty-stock``)."""

    seat: int
    turn_no: int


@json_form.tag("rummy500.SeatLeft")
@dataclass(frozen=True, kw_only=True)
class Rummy500SeatLeft(Event):
    """``seat`` left the round: out of the turns; its melds stay and count for it."""

    seat: int
    turn_no: int


@json_form.tag("rummy500.SeatScore")
@dataclass(frozen=True)
class Rummy500SeatScore:
    """One seat's round: ``table_points`` (its melds and lay-offs), ``hand_points`` (its cards
    in hand, ``cards``) and ``score`` = the first minus the second (may be < 0)."""

    seat: int
    table_points: int
    hand_points: int
    score: int
    cards: tuple[Card, ...]


@json_form.tag("rummy500.RoundEnded")
@dataclass(frozen=True, kw_only=True)
class Rummy500RoundEnded(Event):
    """The round is over (``reason``: ``went_out`` by ``out_seat``, ``stock_empty``,
    ``players_left``): every seat's score, every hand public."""

    turn_no: int
    reason: str
    out_seat: int | None
    scores: tuple[Rummy500SeatScore, ...]


json_form.register(
    Rummy500TakeFromPile,
    Rummy500Meld,
    Rummy500LayOff,
    Rummy500LayoffTarget,
    Rummy500GoOut,
    Rummy500PileTaken,
    Rummy500Melded,
    Rummy500LaidOff,
    Rummy500TookNothing,
    Rummy500SeatLeft,
    Rummy500SeatScore,
    Rummy500RoundEnded,
    Rummy500Layoff,
    TableMeld,
)


@json_form.tag("rummy500.Play")
@dataclass(frozen=True)
class Rummy500Play:
    """One round in play. ``seats`` in turn order (the seat after the dealer first); ``hands``
    by position; ``pile`` bottom first; ``melds`` by id; ``left`` seats out of the turns;
    ``misses`` each position's timed-out turns in a row; ``ending`` the event that closed it."""

    phase: Phase | None = None
    seats: tuple[int, ...] = ()
    dealer_seat: int = -1
    hands: tuple[tuple[Card, ...], ...] = ()
    stock: tuple[Card, ...] = ()
    pile: tuple[Card, ...] = ()
    melds: tuple[TableMeld, ...] = ()
    low_ace_one: bool = False
    turn_seat: int | None = None
    turn_no: int = 0
    left: frozenset[int] = frozenset()
    misses: tuple[int, ...] = ()
    timed_out_turn: int = 0
    ending: Rummy500RoundEnded | None = None

    def position(self, seat: int) -> int:
        return self.seats.index(seat)

    def hand_of(self, seat: int) -> tuple[Card, ...]:
        return self.hands[self.position(seat)] if seat in self.seats else ()

    def meld(self, meld_id: int) -> TableMeld | None:
        return self.melds[meld_id - 1] if 1 <= meld_id <= len(self.melds) else None

    def playing(self) -> tuple[int, ...]:
        """Seats still in the turns, in turn order."""
        return tuple(s for s in self.seats if s not in self.left)

    def next_seat(self, seat: int) -> int:
        """The next seat in the turns after ``seat``."""
        n = len(self.seats)
        k = self.position(seat)
        for step in range(1, n + 1):
            candidate = self.seats[(k + step) % n]
            if candidate not in self.left:
                return candidate
        return seat


def start(
    seats: Sequence[int],
    dealer_seat: int,
    hands: Sequence[tuple[Card, ...]],
    upcard: Card,
    stock: tuple[Card, ...],
    low_ace_one: bool,
) -> Rummy500Play:
    """The round just dealt: ``seats`` in turn order with their ``hands``, the upcard starting
    the pile, the first seat on turn 1."""
    return Rummy500Play(
        phase=Phase.DRAW,
        seats=tuple(seats),
        dealer_seat=dealer_seat,
        hands=tuple(hands),
        stock=stock,
        pile=(upcard,),
        low_ace_one=low_ace_one,
        turn_seat=seats[0],
        turn_no=1,
        misses=tuple(0 for _ in seats),
    )


# -- decide ----------------------------------------------------------------------------------------


def _refuse(code: ErrorCode, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def _check_turn(state: Rummy500Play, seat: int, turn_no: int, phase: Phase) -> None:
    if state.phase in (None, Phase.ENDED):
        raise _refuse(ErrorCode.WRONG_PHASE, "no round is being played")
    if seat not in state.seats or seat in state.left:
        raise _refuse(ErrorCode.NOT_IN_HAND, f"seat {seat} is not playing this round")
    if seat != state.turn_seat:
        raise _refuse(ErrorCode.NOT_YOUR_TURN, f"it is seat {state.turn_seat}'s turn")
    if turn_no != state.turn_no:
        raise _refuse(ErrorCode.STALE_TURN, f"turn {turn_no} is over (now {state.turn_no})")
    if state.phase is not phase:
        if state.phase is Phase.PLAY:
            raise _refuse(ErrorCode.ALREADY_DRAWN, "this turn has drawn already")
        raise _refuse(ErrorCode.NOT_DRAWN, "draw from the stock or take from the pile first")


def _take_out(hand: Sequence[Card], cards: Iterable[Card], what: str) -> tuple[Card, ...]:
    """``hand`` without ``cards`` (each exactly once). Raises RuleViolation(NOT_IN_HAND)."""
    rest = list(hand)
    for card in cards:
        if card not in rest:
            raise _refuse(ErrorCode.NOT_IN_HAND, f"{card.face} is not in the hand ({what})")
        rest.remove(card)
    return tuple(rest)


def _meld_events(
    state: Rummy500Play,
    seat: int,
    hand: tuple[Card, ...],
    groups: Sequence[tuple[Card, ...]],
    first_id: int,
) -> tuple[list[Rummy500Melded], tuple[Card, ...]]:
    """The Melded events of ``groups`` from ``hand`` (ids from ``first_id``) and the hand left.
    Raises RuleViolation for a group that is no meld or a card not in the hand."""
    events: list[Rummy500Melded] = []
    for k, group in enumerate(groups):
        if len(set(group)) != len(group):
            raise _refuse(ErrorCode.INVALID_CARD, "a group names the same card twice")
        kind = group_kind(group)
        if kind is None:
            raise _refuse(
                ErrorCode.INVALID_COMMAND, f"not a set or a run: {' '.join(c.face for c in group)}"
            )
        hand = _take_out(hand, group, "meld")
        events.append(
            Rummy500Melded(
                seat=seat,
                turn_no=state.turn_no,
                meld_id=first_id + k,
                kind=kind,
                cards=laid_out(kind, group),
            )
        )
    return events, hand


def _layoff_event(
    melds: Sequence[TableMeld], seat: int, turn_no: int, card: Card, meld_id: int
) -> Rummy500LaidOff:
    target = melds[meld_id - 1] if 1 <= meld_id <= len(melds) else None
    if target is None:
        raise _refuse(ErrorCode.INVALID_COMMAND, f"no meld {meld_id} is on the table")
    if not target.takes(card):
        raise _refuse(
            ErrorCode.INVALID_COMMAND, f"{card.face} does not extend meld {meld_id} ({target.kind})"
        )
    return Rummy500LaidOff(seat=seat, turn_no=turn_no, card=card, meld_id=meld_id)


def _scores(state: Rummy500Play) -> tuple[Rummy500SeatScore, ...]:
    out = []
    for seat in state.seats:
        hand = state.hand_of(seat)
        table = table_points(state.melds, seat, state.low_ace_one)
        held = hand_points(hand)
        out.append(Rummy500SeatScore(seat, table, held, table - held, hand))
    return tuple(sorted(out, key=lambda s: s.seat))


def _ended(state: Rummy500Play, reason: str, out_seat: int | None) -> Rummy500RoundEnded:
    return Rummy500RoundEnded(
        turn_no=state.turn_no, reason=reason, out_seat=out_seat, scores=_scores(state)
    )


def _close(state: Rummy500Play, seat: int, events: list[Event]) -> list[Event]:
    """``events`` and, when they leave ``seat`` without a card, the round's end (going out)."""
    after = fold(events, state)
    if not after.hand_of(seat):
        events.append(_ended(after, WENT_OUT, seat))
    return events


def _dig(state: Rummy500Play, c: Rummy500TakeFromPile) -> list[Event]:
    _check_turn(state, c.seat, c.turn_no, Phase.DRAW)
    if not state.pile:
        raise _refuse(ErrorCode.EMPTY_PILE, "the discard pile is empty")
    if not 1 <= c.depth <= len(state.pile):
        raise _refuse(
            ErrorCode.INVALID_COMMAND, f"the pile holds {len(state.pile)} cards, not {c.depth}"
        )
    if bool(c.meld) == (c.lay_off_on is not None):
        raise _refuse(
            ErrorCode.INVALID_COMMAND,
            "taking from the pile melds or lays off the deepest card taken (one of the two)",
        )
    taken = state.pile[-c.depth :]
    deepest = taken[0]
    events: list[Event] = [
        Rummy500PileTaken(
            seat=c.seat, turn_no=c.turn_no, cards=taken, meld=c.meld, lay_off_on=c.lay_off_on
        )
    ]
    hand = (*state.hand_of(c.seat), *taken)
    if c.meld:
        if deepest not in c.meld:
            raise _refuse(
                ErrorCode.INVALID_COMMAND, f"the meld must hold the deepest card taken, {deepest}"
            )
        melded, _ = _meld_events(state, c.seat, hand, (c.meld,), len(state.melds) + 1)
        events += [replace(e, from_pile=True) for e in melded]
    else:
        assert c.lay_off_on is not None
        laid = _layoff_event(state.melds, c.seat, c.turn_no, deepest, c.lay_off_on)
        events.append(replace(laid, from_pile=True))
    return _close(state, c.seat, events)


def _draw(state: Rummy500Play, seat: int, turn_no: int) -> list[Event]:
    if not state.stock:  # the seat takes nothing from the pile: the round ends as it stands
        return [Rummy500TookNothing(seat=seat, turn_no=turn_no), _ended(state, STOCK_EMPTY, None)]
    return [CardDrawn(seat=seat, turn_no=turn_no, source=DrawSource.STOCK, card=state.stock[0])]


def _go_out(state: Rummy500Play, c: Rummy500GoOut) -> list[Event]:
    _check_turn(state, c.seat, c.turn_no, Phase.PLAY)
    melded, hand = _meld_events(
        state, c.seat, state.hand_of(c.seat), c.groups, len(state.melds) + 1
    )
    events: list[Event] = list(melded)
    melds = fold(events, state).melds
    for lay in c.layoffs:
        hand = _take_out(hand, (lay.card,), "lay-off")
        laid = _layoff_event(melds, c.seat, c.turn_no, lay.card, lay.meld_id)
        events.append(laid)
        melds = apply(replace(state, melds=melds), laid).melds
    if hand:
        raise _refuse(
            ErrorCode.INVALID_COMMAND,
            f"going out leaves no card; {' '.join(x.face for x in hand)} would be left",
        )
    return _close(state, c.seat, events)


def timeout_discard(hand: Sequence[Card]) -> Card:
    """The card a timed-out turn discards: the highest value, ties the greatest in the fixed
    card order (rank, suit C-D-H-S, deck copy)."""
    return max(hand, key=lambda c: (card_points(c), fixed_order(c)))


def _timeout(state: Rummy500Play, c: TurnTimeout) -> list[Event]:
    if state.phase in (None, Phase.ENDED) or c.turn_no != state.turn_no:
        return []  # stale
    seat = state.turn_seat
    assert seat is not None
    misses = state.misses[state.position(seat)] + 1
    events: list[Event] = [TurnTimedOut(seat=seat, turn_no=state.turn_no, misses_in_a_row=misses)]
    hand = state.hand_of(seat)
    if state.phase is Phase.DRAW:
        drawn = _draw(state, seat, state.turn_no)
        events += drawn
        if isinstance(drawn[0], Rummy500TookNothing):
            return events
        card = drawn[0].card if isinstance(drawn[0], CardDrawn) else None
        assert card is not None
        hand = (*hand, card)
    events.append(CardDiscarded(seat=seat, turn_no=state.turn_no, card=timeout_discard(hand)))
    return _close(state, seat, events)


def leave(state: Rummy500Play, seat: int) -> list[Event]:
    """A seat leaving mid-round: out of the turns (its turn, if on, passes); the round ends as
    it stands once fewer than two seats are left in it. Raises RuleViolation."""
    if state.phase in (None, Phase.ENDED):
        raise _refuse(ErrorCode.WRONG_PHASE, "no round is being played")
    if seat not in state.seats or seat in state.left:
        raise _refuse(ErrorCode.NOT_IN_HAND, f"seat {seat} is not playing this round")
    events: list[Event] = [Rummy500SeatLeft(seat=seat, turn_no=state.turn_no)]
    after = fold(events, state)
    if len(after.playing()) < 2:
        events.append(_ended(after, PLAYERS_LEFT, None))
    return events


def decide(state: Rummy500Play, command: Command) -> tuple[Event, ...]:
    """The events ``command`` causes; ``()`` for a stale timeout. Raises RuleViolation."""
    if isinstance(command, TurnTimeout):
        return tuple(_timeout(state, command))
    if isinstance(command, DrawFromStock):
        _check_turn(state, command.seat, command.turn_no, Phase.DRAW)
        return tuple(_draw(state, command.seat, command.turn_no))
    if isinstance(command, Rummy500TakeFromPile):
        return tuple(_dig(state, command))
    if isinstance(command, Rummy500Meld):
        _check_turn(state, command.seat, command.turn_no, Phase.PLAY)
        if not command.groups:
            raise _refuse(ErrorCode.INVALID_COMMAND, "a meld names at least one group")
        melded, _ = _meld_events(
            state, command.seat, state.hand_of(command.seat), command.groups, len(state.melds) + 1
        )
        return tuple(_close(state, command.seat, list(melded)))
    if isinstance(command, Rummy500LayOff):
        _check_turn(state, command.seat, command.turn_no, Phase.PLAY)
        _take_out(state.hand_of(command.seat), (command.card,), "lay-off")
        laid = _layoff_event(
            state.melds, command.seat, command.turn_no, command.card, command.meld_id
        )
        return tuple(_close(state, command.seat, [laid]))
    if isinstance(command, Rummy500GoOut):
        return tuple(_go_out(state, command))
    if isinstance(command, Discard):
        _check_turn(state, command.seat, command.turn_no, Phase.PLAY)
        _take_out(state.hand_of(command.seat), (command.card,), "discard")
        discarded = CardDiscarded(seat=command.seat, turn_no=command.turn_no, card=command.card)
        return tuple(_close(state, command.seat, [discarded]))
    raise _refuse(ErrorCode.INVALID_COMMAND, f"not a Rummy 500 command: {type(command).__name__}")


# -- apply -----------------------------------------------------------------------------------------


def _set_hand(state: Rummy500Play, seat: int, cards: tuple[Card, ...]) -> Rummy500Play:
    hands = list(state.hands)
    hands[state.position(seat)] = cards
    return replace(state, hands=tuple(hands))


def _set_miss(state: Rummy500Play, seat: int, misses: int) -> Rummy500Play:
    values = list(state.misses)
    values[state.position(seat)] = misses
    return replace(state, misses=tuple(values))


def _without(hand: tuple[Card, ...], cards: Iterable[Card]) -> tuple[Card, ...]:
    gone = Counter(cards)
    out = []
    for card in hand:
        if gone[card]:
            gone[card] -= 1
        else:
            out.append(card)
    return tuple(out)


def _next_turn(state: Rummy500Play, seat: int) -> Rummy500Play:
    if state.timed_out_turn != state.turn_no:
        state = _set_miss(state, seat, 0)
    return replace(
        state, turn_seat=state.next_seat(seat), turn_no=state.turn_no + 1, phase=Phase.DRAW
    )


def apply(state: Rummy500Play, event: Event) -> Rummy500Play:
    """The state after ``event`` (never raises on a history ``decide`` produced)."""
    if isinstance(event, CardDrawn):
        assert event.card is not None
        new = _set_hand(state, event.seat, (*state.hand_of(event.seat), event.card))
        return replace(new, stock=state.stock[1:], phase=Phase.PLAY)
    if isinstance(event, Rummy500PileTaken):
        new = _set_hand(state, event.seat, (*state.hand_of(event.seat), *event.cards))
        return replace(new, pile=state.pile[: len(state.pile) - len(event.cards)], phase=Phase.PLAY)
    if isinstance(event, Rummy500Melded):
        new = _set_hand(state, event.seat, _without(state.hand_of(event.seat), event.cards))
        meld = TableMeld(event.meld_id, event.seat, event.kind, event.cards)
        return replace(new, melds=(*state.melds, meld))
    if isinstance(event, Rummy500LaidOff):
        new = _set_hand(state, event.seat, _without(state.hand_of(event.seat), (event.card,)))
        melds = list(state.melds)
        target = melds[event.meld_id - 1]
        melds[event.meld_id - 1] = replace(
            target, layoffs=(*target.layoffs, Rummy500Layoff(event.card, event.seat))
        )
        return replace(new, melds=tuple(melds))
    if isinstance(event, CardDiscarded):
        new = _set_hand(state, event.seat, _without(state.hand_of(event.seat), (event.card,)))
        return _next_turn(replace(new, pile=(*state.pile, event.card)), event.seat)
    if isinstance(event, TurnTimedOut):
        return replace(
            _set_miss(state, event.seat, event.misses_in_a_row), timed_out_turn=event.turn_no
        )
    if isinstance(event, Rummy500SeatLeft):
        new = replace(state, left=state.left | {event.seat})
        if state.turn_seat == event.seat:
            new = replace(
                new,
                turn_seat=new.next_seat(event.seat),
                turn_no=state.turn_no + 1,
                phase=Phase.DRAW,
            )
        return new
    if isinstance(event, Rummy500RoundEnded):
        return replace(state, phase=Phase.ENDED, ending=event, turn_seat=None)
    return state


def fold(events: Iterable[Event], state: Rummy500Play) -> Rummy500Play:
    """``apply`` each event in order from ``state``."""
    for event in events:
        state = apply(state, event)
    return state


# -- legal moves -----------------------------------------------------------------------------------


def groups_with(cards: Sequence[Card], card: Card | None) -> list[tuple[Card, ...]]:
    """Every set (3 or 4, one card per suit) and every run window of ``cards`` (one copy of a
    face: the first), holding ``card`` when it is given; a finite list, no duplicates."""
    firsts: dict[str, Card] = {}
    for c in cards:
        firsts.setdefault(c.face, c)
    if card is not None:
        firsts[card.face] = card
    pool = list(firsts.values())
    found: list[tuple[Card, ...]] = []
    by_rank: dict[object, list[Card]] = {}
    by_suit: dict[object, list[Card]] = {}
    for c in pool:
        by_rank.setdefault(c.rank, []).append(c)
        by_suit.setdefault(c.suit, []).append(c)
    from itertools import combinations

    for same in by_rank.values():
        for size in (3, 4):
            for combo in combinations(sorted(same, key=fixed_order), size):
                found.append(combo)
    for suited in by_suit.values():
        places: dict[int, Card] = {}
        for c in suited:
            assert c.rank is not None
            places[int(c.rank)] = c
            if int(c.rank) == 1:
                places[14] = c
        for low in range(1, 13):
            for high in range(low + 2, 15):
                window = [places.get(p) for p in range(low, high + 1)]
                if any(w is None for w in window):
                    break
                group = tuple(w for w in window if w is not None)
                if len(set(group)) == len(group):
                    found.append(group)
    out = [g for g in found if (card is None or card in g) and group_kind(g) is not None]
    return list(dict.fromkeys(out))


def legal_commands(state: Rummy500Play, seat: int, at_ms: int = 0) -> tuple[Command, ...]:
    """The moves ``seat`` may make now: at the draw, the stock (also when empty: the round then
    ends) and each dig (every depth, the deepest card laid off on each meld it extends or melded
    in each set and run window it completes); after it, each meld group, each lay-off and each
    discard. ``()`` when it is not the seat's turn."""
    if state.phase in (None, Phase.ENDED) or seat != state.turn_seat:
        return ()
    n = state.turn_no
    hand = state.hand_of(seat)
    out: list[Command] = []
    if state.phase is Phase.DRAW:
        out.append(DrawFromStock(seat=seat, turn_no=n, at_ms=at_ms))
        for depth in range(1, len(state.pile) + 1):
            taken = state.pile[-depth:]
            deepest = taken[0]
            for meld in state.melds:
                if meld.takes(deepest):
                    out.append(
                        Rummy500TakeFromPile(
                            seat=seat, turn_no=n, depth=depth, lay_off_on=meld.meld_id, at_ms=at_ms
                        )
                    )
            for group in groups_with((*hand, *taken), deepest):
                out.append(
                    Rummy500TakeFromPile(seat=seat, turn_no=n, depth=depth, meld=group, at_ms=at_ms)
                )
        return tuple(out)
    for group in groups_with(hand, None):
        out.append(Rummy500Meld(seat=seat, turn_no=n, groups=(group,), at_ms=at_ms))
    for card in dict.fromkeys(hand):
        for meld in state.melds:
            if meld.takes(card):
                out.append(
                    Rummy500LayOff(
                        seat=seat, turn_no=n, card=card, meld_id=meld.meld_id, at_ms=at_ms
                    )
                )
    for card in dict.fromkeys(hand):
        out.append(Discard(seat=seat, turn_no=n, card=card, at_ms=at_ms))
    return tuple(out)


# -- views -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rummy500SeatCount:
    """A seat as everyone sees it in the round: its card count, its points on the table so
    far (melds and lay-offs), whether it left."""

    seat: int
    card_count: int
    table_points: int
    left: bool


@dataclass(frozen=True)
class Rummy500View:
    """The round's public part (``docs/rules/rummy500.md#views``), the same for every seat and
    a spectator: every meld on the table with its owner and lay-offs, the whole discard pile
    (bottom first), the stock's size, each seat's card count and table points, whose turn, the
    low-ace option, and at the end every seat's score (every hand public then). A seat's own
    cards are the generic view's (``rummy_rules.view.PlayerView.cards``), so a host may build
    and serialise this part once per change for all its watchers."""

    phase: str
    melds: tuple[TableMeld, ...]
    pile: tuple[Card, ...]
    stock_count: int
    seats: tuple[Rummy500SeatCount, ...]
    turn_seat: int | None
    turn_no: int
    low_ace_one: bool
    ending: Rummy500RoundEnded | None


def view(state: Rummy500Play) -> Rummy500View:
    """The round's public part (every seat's and a spectator's alike)."""
    return Rummy500View(
        phase="none" if state.phase is None else state.phase.value,
        melds=state.melds,
        pile=state.pile,
        stock_count=len(state.stock),
        seats=tuple(
            Rummy500SeatCount(
                s,
                len(state.hand_of(s)),
                table_points(state.melds, s, state.low_ace_one),
                s in state.left,
            )
            for s in sorted(state.seats)
        ),
        turn_seat=state.turn_seat,
        turn_no=state.turn_no,
        low_ace_one=state.low_ace_one,
        ending=state.ending,
    )
