"""``decide``: the events a command causes in an Indian points hand, or a RuleViolation.

One function per command. Each checks the command against the state, then builds its events
with a small accumulator that applies them as it goes, so that later steps (the next turn, the
end of the hand) are computed from the state the earlier events leave. Nothing is mutated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from .. import lifecycle
from ..cards import SUITS, Card
from ..commands import (
    AbortHand,
    Command,
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromDiscardPile,
    DrawFromStock,
    LeaveHand,
    RecordSeedCommitment,
    RecordStakeReserved,
    RecordStockReshuffled,
    StartHand,
    TurnTimeout,
)
from ..errors import ErrorCode
from ..events import (
    CardDiscarded,
    CardDrawn,
    DrawSource,
    Event,
    HandDealt,
    StockExhausted,
    StockReshuffled,
    TurnTimedOut,
)
from ..lifecycle import fail as _fail
from ..lifecycle import require_phase as _require_phase
from ..rules import RuleSet
from ..wild import card_points
from .commands import Declare, Drop
from .events import DeclarationRejected, Declared, DropKind, PlayerDropped
from .rules import INDIAN_POINTS_VARIANT, IndianPointsRules, indian_rules
from .scoring import arrangement_of, hand_ended
from .state import HandState, Phase, SeatState, apply


class _Batch:
    """Events decided so far and the state they lead to."""

    def __init__(self, state: HandState) -> None:
        self.state = state
        self.events: list[Event] = []

    def add(self, event: Event) -> None:
        self.events.append(event)
        self.state = apply(self.state, event)

    @property
    def rules(self) -> RuleSet:
        assert self.state.rule_set is not None
        return self.state.rule_set


def _seated(state: HandState, seat: int) -> SeatState:
    lifecycle.require_seated(state, seat)
    found = state.seat_state(seat)
    assert found is not None
    return found


def _on_turn(state: HandState, seat: int, turn_no: int) -> SeatState:
    """The seat playing turn ``turn_no``, checked: hand in play, seat in it and still playing,
    the turn current, the seat on turn."""
    _require_phase(state, Phase.PLAYING)
    found = _seated(state, seat)
    if not found.is_active:
        raise _fail(ErrorCode.WRONG_PHASE, f"seat {seat} is out of this hand")
    if turn_no != state.turn_no:
        raise _fail(
            ErrorCode.STALE_TURN, f"the command is for turn {turn_no}; turn {state.turn_no} is on"
        )
    if seat != state.turn_seat:
        raise _fail(ErrorCode.NOT_YOUR_TURN, f"turn {turn_no} is seat {state.turn_seat}'s")
    return found


# --- before the deal --------------------------------------------------------------------------


def _check_rule_set(rules: RuleSet) -> None:
    if rules.variant != INDIAN_POINTS_VARIANT or not isinstance(rules.options, IndianPointsRules):
        raise _fail(ErrorCode.INVALID_COMMAND, f"rule set is for variant {rules.variant!r}")


def _start_hand(state: HandState, c: StartHand) -> list[Event]:
    return [lifecycle.start_hand(state, c, _check_rule_set)]


def _record_stake(state: HandState, c: RecordStakeReserved) -> list[Event]:
    return lifecycle.record_stake(state, c, apply)


def _record_commitment(state: HandState, c: RecordSeedCommitment) -> list[Event]:
    return lifecycle.record_commitment(state, c, apply)


def _contribute_seed(state: HandState, c: ContributeClientSeed) -> list[Event]:
    return lifecycle.contribute_seed(state, c, apply)


def _deal(state: HandState, c: Deal) -> list[Event]:
    lifecycle.check_deal(state, c, IndianPointsRules.deal_shape)
    batch = _Batch(state)
    hands = tuple(sorted(c.hands, key=lambda h: h.seat))
    batch.add(
        HandDealt(
            hands=hands,
            wild_cut=c.wild_cut,
            first_open=c.first_open,
            stock=c.stock,
            stock_count=len(c.stock),
        )
    )
    _start_turn(batch, state.play_order[0], c.at_ms)
    return batch.events


# --- turns -------------------------------------------------------------------------------------


def _start_turn(batch: _Batch, seat: int, at_ms: int) -> None:
    batch.add(lifecycle.turn_started(batch.rules, seat, batch.state.turn_no + 1, at_ms))


def _next_seat(state: HandState, after: int) -> int:
    order = state.play_order
    i = order.index(after)
    for k in range(1, len(order) + 1):
        seat = order[(i + k) % len(order)]
        if state.seat_state(seat).is_active:  # type: ignore[union-attr]
            return seat
    raise AssertionError("no seat left playing")


def _after_turn_or_exit(batch: _Batch, seat: int, at_ms: int) -> None:
    """After ``seat`` ended its turn or went out: end the hand if one seat is left, else start the
    next turn if ``seat`` was on turn."""
    active = batch.state.active_seats()
    if len(active) == 1:
        batch.add(hand_ended(batch.state, active[0], at_ms))
    elif seat == batch.state.turn_seat:
        _start_turn(batch, _next_seat(batch.state, seat), at_ms)


def _draw(batch: _Batch, seat: int, source: DrawSource) -> Card:
    s = batch.state
    card = s.stock[0] if source is DrawSource.STOCK else s.discard_pile[-1]
    batch.add(CardDrawn(seat=seat, turn_no=s.turn_no, source=source, card=card))
    _exhaust_if_empty(batch)
    return card


def _exhaust_if_empty(batch: _Batch) -> None:
    """Once the stock is empty (and no reshuffle is awaited), set the discard pile but its top
    aside for the dealer to reshuffle; checked after every draw and discard."""
    s = batch.state
    if not s.stock and not s.awaiting_reshuffle and len(s.discard_pile) > 1:
        batch.add(
            StockExhausted(
                turn_no=s.turn_no, reshuffle_no=s.reshuffles + 1, cards=s.discard_pile[:-1]
            )
        )


def _draw_from_stock(state: HandState, c: DrawFromStock) -> list[Event]:
    _on_turn(state, c.seat, c.turn_no)
    if state.drawn_card is not None:
        raise _fail(ErrorCode.ALREADY_DRAWN, "one draw per turn; discard now")
    if not state.stock:
        raise _fail(ErrorCode.EMPTY_PILE, "the stock is empty until it is reshuffled")
    batch = _Batch(state)
    _draw(batch, c.seat, DrawSource.STOCK)
    return batch.events


def _draw_from_pile(state: HandState, c: DrawFromDiscardPile) -> list[Event]:
    _on_turn(state, c.seat, c.turn_no)
    if state.drawn_card is not None:
        raise _fail(ErrorCode.ALREADY_DRAWN, "one draw per turn; discard now")
    if not state.discard_pile:
        raise _fail(ErrorCode.EMPTY_PILE, "the discard pile is empty")
    batch = _Batch(state)
    _draw(batch, c.seat, DrawSource.DISCARD_PILE)
    return batch.events


def _kept_from_pile(state: HandState, card: Card) -> bool:
    """Whether ``card`` was taken from the discard pile this turn and the rule set forbids it to
    leave the hand the same turn."""
    assert state.rule_set is not None
    return (
        indian_rules(state.rule_set).no_discard_of_card_taken_from_pile
        and state.drawn_source is DrawSource.DISCARD_PILE
        and card == state.drawn_card
    )


def _check_card_leaves(state: HandState, seat: SeatState, card: Card, what: str) -> None:
    if state.drawn_card is None:
        raise _fail(ErrorCode.NOT_DRAWN, f"draw a card before you {what}")
    if card not in seat.cards:
        raise _fail(ErrorCode.INVALID_CARD, f"{card.face} (copy {card.copy}) is not in your hand")
    if _kept_from_pile(state, card):
        raise _fail(
            ErrorCode.INVALID_CARD,
            f"{card.face} was taken from the discard pile this turn and cannot leave your hand",
        )


def _discard(state: HandState, c: Discard) -> list[Event]:
    seat = _on_turn(state, c.seat, c.turn_no)
    _check_card_leaves(state, seat, c.card, "discard")
    batch = _Batch(state)
    batch.add(CardDiscarded(seat=c.seat, turn_no=c.turn_no, card=c.card))
    _exhaust_if_empty(batch)
    _start_turn(batch, _next_seat(batch.state, c.seat), c.at_ms)
    return batch.events


def _declare(state: HandState, c: Declare) -> list[Event]:
    seat = _on_turn(state, c.seat, c.turn_no)
    _check_card_leaves(state, seat, c.face_down, "declare")
    i = seat.cards.index(c.face_down)
    shown = seat.cards[:i] + seat.cards[i + 1 :]
    batch = _Batch(state)
    if arrangement_of(state, shown).valid:
        batch.add(Declared(seat=c.seat, turn_no=c.turn_no, face_down=c.face_down, shown=shown))
        batch.add(hand_ended(batch.state, c.seat, c.at_ms))
        return batch.events
    points = indian_rules(batch.rules).wrong_declare_points
    batch.add(
        DeclarationRejected(
            seat=c.seat, turn_no=c.turn_no, face_down=c.face_down, shown=shown, points=points
        )
    )
    _after_turn_or_exit(batch, c.seat, c.at_ms)
    return batch.events


def _drop(state: HandState, c: Drop) -> list[Event]:
    seat = _on_turn(state, c.seat, c.turn_no)
    if state.drawn_card is not None:
        raise _fail(ErrorCode.ALREADY_DRAWN, "drop before drawing, or discard to end the turn")
    indian = indian_rules(state.rule_set)  # type: ignore[arg-type]
    if seat.has_drawn:
        kind, points = DropKind.MIDDLE, indian.middle_drop_points
    else:
        kind, points = DropKind.FIRST, indian.first_drop_points
    batch = _Batch(state)
    batch.add(PlayerDropped(seat=c.seat, turn_no=c.turn_no, kind=kind, points=points))
    _after_turn_or_exit(batch, c.seat, c.at_ms)
    return batch.events


def _leave(state: HandState, c: LeaveHand) -> list[Event]:
    aborted = lifecycle.leave_before_deal(state, c)
    if aborted is not None:
        return aborted
    _require_phase(state, Phase.PLAYING)
    seat = _seated(state, c.seat)
    if not seat.is_active:
        raise _fail(ErrorCode.WRONG_PHASE, f"seat {c.seat} is already out of this hand")
    batch = _Batch(state)
    points = indian_rules(batch.rules).leave_points
    batch.add(PlayerDropped(seat=c.seat, turn_no=state.turn_no, kind=DropKind.LEAVE, points=points))
    _after_turn_or_exit(batch, c.seat, c.at_ms)
    return batch.events


def fixed_card_order(card: Card) -> tuple[int, int, int]:
    """The tie-break order among cards of equal points: by rank (ace low, printed joker lowest),
    then suit (clubs, diamonds, hearts, spades), then copy; the greatest is chosen
    (``docs/rules/hand-flow.md#timeouts``)."""
    rank = 0 if card.rank is None else int(card.rank)
    suit = -1 if card.suit is None else SUITS.index(card.suit)
    return (rank, suit, card.copy)


def auto_discard(state: HandState) -> Card:
    """The card a timed-out seat that has drawn discards: the card it drew from the stock; if it
    drew from the discard pile, its highest-point card (ties by ``fixed_card_order``), not the
    card it took when the rule set forbids discarding that card
    (``docs/rules/hand-flow.md#timeouts``)."""
    seat = state.seat_state(state.turn_seat)  # type: ignore[arg-type]
    assert seat is not None and state.drawn_card is not None and state.rule_set is not None
    if state.drawn_source is DrawSource.STOCK:
        return state.drawn_card
    candidates = list(seat.cards)
    if indian_rules(state.rule_set).no_discard_of_card_taken_from_pile:
        candidates.remove(state.drawn_card)
    return max(candidates, key=lambda c: (card_points(c, state.wild_rank), fixed_card_order(c)))


def _timeout(state: HandState, c: TurnTimeout) -> list[Event]:
    if lifecycle.closes_seed_window(state, c):
        return [lifecycle.seeds_locked(state)]
    if state.phase is not Phase.PLAYING or c.turn_no != state.turn_no:
        return []  # stale: its turn has moved on (or the window has closed)
    seat_no = state.turn_seat
    assert seat_no is not None
    seat = _seated(state, seat_no)
    batch = _Batch(state)
    misses = seat.misses_in_a_row + 1
    batch.add(TurnTimedOut(seat=seat_no, turn_no=c.turn_no, misses_in_a_row=misses))
    if misses >= batch.rules.max_missed_turns:
        points = indian_rules(batch.rules).middle_drop_points
        batch.add(
            PlayerDropped(seat=seat_no, turn_no=c.turn_no, kind=DropKind.TIMEOUT, points=points)
        )
        _after_turn_or_exit(batch, seat_no, c.at_ms)
        return batch.events
    if batch.state.drawn_card is None:
        if batch.state.stock:
            _draw(batch, seat_no, DrawSource.STOCK)
        elif batch.state.discard_pile:
            _draw(batch, seat_no, DrawSource.DISCARD_PILE)
    if batch.state.drawn_card is not None:
        card = auto_discard(batch.state)
        batch.add(CardDiscarded(seat=seat_no, turn_no=c.turn_no, card=card))
        _exhaust_if_empty(batch)
    _start_turn(batch, _next_seat(batch.state, seat_no), c.at_ms)
    return batch.events


def _record_reshuffle(state: HandState, c: RecordStockReshuffled) -> list[Event]:
    _require_phase(state, Phase.PLAYING)
    if not state.awaiting_reshuffle or c.reshuffle_no != state.reshuffles:
        raise _fail(
            ErrorCode.STALE_TURN,
            f"reshuffle {c.reshuffle_no} is not awaited (awaiting: "
            f"{state.reshuffles if state.awaiting_reshuffle else 'none'})",
        )
    if Counter(c.stock) != Counter(state.awaiting_reshuffle):
        raise _fail(ErrorCode.INVALID_DEAL, "the new stock must be exactly the set-aside cards")
    return [StockReshuffled(reshuffle_no=c.reshuffle_no, stock=c.stock, stock_count=len(c.stock))]


_DECIDERS: dict[type, Callable[[HandState, Any], list[Event]]] = {
    StartHand: _start_hand,
    RecordStakeReserved: _record_stake,
    RecordSeedCommitment: _record_commitment,
    ContributeClientSeed: _contribute_seed,
    Deal: _deal,
    DrawFromStock: _draw_from_stock,
    DrawFromDiscardPile: _draw_from_pile,
    Discard: _discard,
    Declare: _declare,
    Drop: _drop,
    LeaveHand: _leave,
    TurnTimeout: _timeout,
    RecordStockReshuffled: _record_reshuffle,
    AbortHand: lifecycle.abort,
}


def legal_commands(state: HandState, seat: int) -> tuple[Command, ...]:
    """The moves ``seat`` may make now, each one ``decide`` accepts (``at_ms`` 0: a host stamps
    its own time): on its turn before drawing, draw from the stock (when it holds cards), from
    the discard pile (when it holds one), drop; after drawing, discard each card it may let go
    and declare laying each such card face down (a declare the shown cards do not make valid is
    accepted as a wrong declare). ``()`` when it is not the seat's turn or no hand is in play.
    Leaving (``LeaveHand``), seeds and timeouts are not moves. Rules:
    ``docs/rules/hand-flow.md#turns``, ``docs/rules/declaration.md#declaring``,
    ``docs/rules/scoring.md#drops``; the checks are ``decide``'s own."""
    if state.phase is not Phase.PLAYING or seat != state.turn_seat:
        return ()
    me = state.seat_state(seat)
    if me is None or not me.is_active:
        return ()
    turn = state.turn_no
    if state.drawn_card is None:
        moves: list[Command] = []
        if state.stock:
            moves.append(DrawFromStock(seat=seat, turn_no=turn, at_ms=0))
        if state.discard_pile:
            moves.append(DrawFromDiscardPile(seat=seat, turn_no=turn, at_ms=0))
        moves.append(Drop(seat=seat, turn_no=turn, at_ms=0))
        return tuple(moves)
    leaving = [card for card in me.cards if not _kept_from_pile(state, card)]
    return (
        *(Discard(seat=seat, turn_no=turn, card=card, at_ms=0) for card in leaving),
        *(Declare(seat=seat, turn_no=turn, face_down=card, at_ms=0) for card in leaving),
    )


def decide(state: HandState, command: Command) -> tuple[Event, ...]:
    """The events ``command`` causes; ``()`` for a stale timeout. Raises RuleViolation.

    Rules: ``docs/rules/hand-flow.md`` (phases, turns, timeouts, leaving, refusals),
    ``docs/rules/declaration.md#declaring``, ``docs/rules/scoring.md#drops``.
    """
    decider = _DECIDERS.get(type(command))
    if decider is None:
        raise _fail(
            ErrorCode.INVALID_COMMAND,
            f"{type(command).__name__} is not a command of Indian points rummy",
        )
    return tuple(decider(state, command))
