"""The state of an Indian points hand and ``apply``: one small function per event.

``apply`` trusts its input: it is only ever given events ``decide`` produced (live, or read back
from the table stream), and it never raises on such a history. It needs the unredacted events
(a player's redacted copy lacks the cards a fold needs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from .. import json_form
from ..cards import Card, Rank
from ..events import (
    CardDiscarded,
    CardDrawn,
    ClientSeedContributed,
    DrawSource,
    Event,
    HandAborted,
    HandDealt,
    HandEnded,
    HandStarted,
    SeedCommitted,
    SeedsLocked,
    SeedWindowOpened,
    StakeReserved,
    StockExhausted,
    StockReshuffled,
    TurnStarted,
    TurnTimedOut,
)
from ..lifecycle import HandPhase, apply_lifecycle
from ..rules import RuleSet
from ..shuffle import deal_order
from .events import DeclarationRejected, Declared, DropKind, PlayerDropped

Phase = HandPhase  # the hand's phases are every variant's (``rummy_rules.lifecycle``)


class SeatStatus(Enum):
    PLAYING = "playing"
    DROPPED = "dropped"  # first or middle drop
    LEFT = "left"
    TIMED_OUT = "timed_out"
    WRONG_DECLARE = "wrong_declare"
    DECLARED = "declared"


_STATUS_OF_DROP = {
    DropKind.FIRST: SeatStatus.DROPPED,
    DropKind.MIDDLE: SeatStatus.DROPPED,
    DropKind.LEAVE: SeatStatus.LEFT,
    DropKind.TIMEOUT: SeatStatus.TIMED_OUT,
}


@dataclass(frozen=True)
class SeatState:
    """One seat in the hand.

    ``cards``: what it holds (kept, now out of play, once it is out). ``penalty_points``: a drop or
    wrong-declare penalty (0 while playing). ``drop_kind``: why it dropped, if it did.
    ``has_drawn``: drew at least once this hand. ``misses_in_a_row``: turns timed out in a row.
    ``seed_hex``: its client seed, None until contributed (``""`` = none sent by the lock).
    """

    seat: int
    account_id: str
    cards: tuple[Card, ...] = ()
    status: SeatStatus = SeatStatus.PLAYING
    penalty_points: int = 0
    drop_kind: DropKind | None = None
    has_drawn: bool = False
    misses_in_a_row: int = 0
    stake_reserved: bool = False
    seed_hex: str | None = None

    @property
    def is_active(self) -> bool:
        return self.status is SeatStatus.PLAYING


@json_form.tag("indian.HandState")
@dataclass(frozen=True)
class HandState:
    """Everything about one hand. ``stock[0]`` is the next card drawn; ``discard_pile[-1]`` is
    the top. ``set_aside`` holds the face-down cards of wrong declares (out of play);
    ``awaiting_reshuffle`` the cards sent to the dealer after the stock ran out. ``drawn_card`` /
    ``drawn_source``: what the seat on turn drew this turn (None before it draws)."""

    phase: Phase = Phase.NOT_STARTED
    hand_id: str = ""
    rule_set: RuleSet | None = None
    dealer_seat: int = -1
    seats: tuple[SeatState, ...] = ()
    play_order: tuple[int, ...] = ()
    commitment: str | None = None
    seed_deadline_ms: int | None = None
    wild_cut: Card | None = None
    stock: tuple[Card, ...] = ()
    discard_pile: tuple[Card, ...] = ()
    set_aside: tuple[Card, ...] = ()
    awaiting_reshuffle: tuple[Card, ...] = ()
    reshuffles: int = 0
    turn_seat: int | None = None
    turn_no: int = 0
    turn_deadline_ms: int | None = None
    drawn_card: Card | None = None
    drawn_source: DrawSource | None = None
    turn_timed_out: bool = False
    result: HandEnded | HandAborted | None = None

    @property
    def wild_rank(self) -> Rank | None:
        """The wild rank from the cut card; None before the deal or when a printed joker was cut."""
        return None if self.wild_cut is None else self.wild_cut.rank

    def seat_numbers(self) -> tuple[int, ...]:
        """The seats dealt in, ascending."""
        return tuple(s.seat for s in self.seats)

    def stake_recorded(self, seat: int) -> bool:
        found = self.seat_state(seat)
        return found is not None and found.stake_reserved

    def client_seed(self, seat: int) -> str | None:
        found = self.seat_state(seat)
        return None if found is None else found.seed_hex

    def seat_state(self, seat: int) -> SeatState | None:
        for s in self.seats:
            if s.seat == seat:
                return s
        return None

    def active_seats(self) -> tuple[int, ...]:
        """Seats still playing, in play order."""
        return tuple(s for s in self.play_order if self._seat(s).is_active)

    def _seat(self, seat: int) -> SeatState:
        found = self.seat_state(seat)
        assert found is not None, seat
        return found

    def with_seat(self, seat: int, **changes: Any) -> HandState:
        return replace(
            self, seats=tuple(replace(s, **changes) if s.seat == seat else s for s in self.seats)
        )


# A hand's state is written to JSON exactly (``json_form.to_dict`` / ``json_form.from_dict``), so a
# table service can keep a snapshot of a hand in play instead of folding its events again.
json_form.register(HandState)


def _remove(cards: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    i = cards.index(card)
    return cards[:i] + cards[i + 1 :]


def _hand_started(state: HandState, e: HandStarted) -> HandState:
    seats = tuple(SeatState(s.seat, s.account_id) for s in sorted(e.seats, key=lambda s: s.seat))
    return replace(
        state,
        phase=Phase.PREPARING,
        hand_id=e.hand_id,
        rule_set=e.rule_set,
        dealer_seat=e.dealer_seat,
        seats=seats,
        play_order=deal_order([s.seat for s in seats], e.dealer_seat),
    )


def _stake_reserved(state: HandState, e: StakeReserved) -> HandState:
    return state.with_seat(e.seat, stake_reserved=True)


def _lifecycle(state: HandState, e: Event) -> HandState:
    after = apply_lifecycle(state, e)
    assert after is not None
    return after


def _client_seed(state: HandState, e: ClientSeedContributed) -> HandState:
    return state.with_seat(e.seat, seed_hex=e.seed_hex)


def _seeds_locked(state: HandState, e: SeedsLocked) -> HandState:
    for s in e.client_seeds:
        state = state.with_seat(s.seat, seed_hex=s.seed_hex)
    return replace(state, phase=Phase.AWAITING_DEAL, seed_deadline_ms=None)


def _hand_dealt(state: HandState, e: HandDealt) -> HandState:
    for h in e.hands:
        state = state.with_seat(h.seat, cards=h.cards)
    return replace(
        state,
        phase=Phase.PLAYING,
        wild_cut=e.wild_cut,
        discard_pile=(e.first_open,),
        stock=e.stock,
    )


def _turn_started(state: HandState, e: TurnStarted) -> HandState:
    return replace(
        state,
        turn_seat=e.seat,
        turn_no=e.turn_no,
        turn_deadline_ms=e.deadline_ms,
        drawn_card=None,
        drawn_source=None,
        turn_timed_out=False,
    )


def _card_drawn(state: HandState, e: CardDrawn) -> HandState:
    assert e.card is not None, "a redacted CardDrawn cannot be folded"
    if e.source is DrawSource.STOCK:
        state = replace(state, stock=state.stock[1:])
    else:
        state = replace(state, discard_pile=state.discard_pile[:-1])
    seat = state._seat(e.seat)
    state = state.with_seat(e.seat, cards=seat.cards + (e.card,), has_drawn=True)
    return replace(state, drawn_card=e.card, drawn_source=e.source)


def _card_discarded(state: HandState, e: CardDiscarded) -> HandState:
    seat = state._seat(e.seat)
    misses = seat.misses_in_a_row if state.turn_timed_out else 0
    state = state.with_seat(e.seat, cards=_remove(seat.cards, e.card), misses_in_a_row=misses)
    return replace(state, discard_pile=state.discard_pile + (e.card,))


def _turn_timed_out(state: HandState, e: TurnTimedOut) -> HandState:
    state = state.with_seat(e.seat, misses_in_a_row=e.misses_in_a_row)
    return replace(state, turn_timed_out=True)


def _stock_exhausted(state: HandState, e: StockExhausted) -> HandState:
    return replace(
        state,
        discard_pile=state.discard_pile[len(e.cards) :],
        awaiting_reshuffle=e.cards,
        reshuffles=e.reshuffle_no,
    )


def _stock_reshuffled(state: HandState, e: StockReshuffled) -> HandState:
    return replace(state, stock=state.stock + e.stock, awaiting_reshuffle=())


def _player_dropped(state: HandState, e: PlayerDropped) -> HandState:
    return state.with_seat(
        e.seat, status=_STATUS_OF_DROP[e.kind], penalty_points=e.points, drop_kind=e.kind
    )


def _declared(state: HandState, e: Declared) -> HandState:
    state = state.with_seat(e.seat, cards=e.shown, status=SeatStatus.DECLARED)
    return replace(state, set_aside=state.set_aside + (e.face_down,))


def _declaration_rejected(state: HandState, e: DeclarationRejected) -> HandState:
    state = state.with_seat(
        e.seat, cards=e.shown, status=SeatStatus.WRONG_DECLARE, penalty_points=e.points
    )
    return replace(state, set_aside=state.set_aside + (e.face_down,))


def _closed(state: HandState, e: HandEnded | HandAborted) -> HandState:
    return replace(_lifecycle(state, e), turn_seat=None)


_APPLIERS: dict[type, Callable[[HandState, Any], HandState]] = {
    HandStarted: _hand_started,
    StakeReserved: _stake_reserved,
    SeedCommitted: _lifecycle,
    SeedWindowOpened: _lifecycle,
    ClientSeedContributed: _client_seed,
    SeedsLocked: _seeds_locked,
    HandDealt: _hand_dealt,
    TurnStarted: _turn_started,
    CardDrawn: _card_drawn,
    CardDiscarded: _card_discarded,
    TurnTimedOut: _turn_timed_out,
    StockExhausted: _stock_exhausted,
    StockReshuffled: _stock_reshuffled,
    PlayerDropped: _player_dropped,
    Declared: _declared,
    DeclarationRejected: _declaration_rejected,
    HandEnded: _closed,
    HandAborted: _closed,
}


def apply(state: HandState, event: Event) -> HandState:
    """The state after ``event``. Raises TypeError only for an event of another variant."""
    applier = _APPLIERS.get(type(event))
    if applier is None:
        raise TypeError(f"{type(event).__name__} is not an event of Indian points rummy")
    return applier(state, event)
