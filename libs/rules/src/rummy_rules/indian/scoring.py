"""The end of an Indian points hand: every seat's points and arrangement, and the settlement.

The declarer (or the last seat left) scores 0. A seat still playing is scored under the best
arrangement of its cards (``rummy_rules.indian.arrangement``), capped only if the rule set has
a cap.
A seat that dropped, left, timed out or declared wrongly is charged its penalty instead.
Money comes from ``rummy_rules.settlement.settle``. Rules: ``docs/rules/scoring.md#outcomes``.
"""

from __future__ import annotations

from ..cards import Card
from ..events import HandEnded, ScoredGroup, SeatResult
from ..settlement import settle
from .arrangement import Arrangement, best_arrangement
from .events import DropKind
from .rules import indian_rules
from .state import HandState, SeatState, SeatStatus

_OUTCOME_OF_DROP = {
    DropKind.FIRST: "first_drop",
    DropKind.MIDDLE: "middle_drop",
    DropKind.LEAVE: "left",
    DropKind.TIMEOUT: "timed_out",
}


def arrangement_of(state: HandState, cards: tuple[Card, ...]) -> Arrangement:
    """The best arrangement of ``cards`` under the hand's wild rank and meld options."""
    assert state.rule_set is not None
    return best_arrangement(cards, state.wild_rank, indian_rules(state.rule_set).meld_options)


def _groups(arrangement: Arrangement) -> tuple[ScoredGroup, ...]:
    return tuple(ScoredGroup(m.kind.name.lower(), m.cards) for m in arrangement.melds)


def _result(state: HandState, seat: SeatState, winner_seat: int) -> SeatResult:
    assert state.rule_set is not None
    if seat.seat == winner_seat:
        if seat.status is SeatStatus.DECLARED:
            arr = arrangement_of(state, seat.cards)
            return SeatResult(
                seat.seat, seat.account_id, "won", 0, seat.cards, _groups(arr), arr.deadwood
            )
        return SeatResult(seat.seat, seat.account_id, "won", 0, seat.cards, (), ())
    if seat.status is SeatStatus.PLAYING:
        arr = arrangement_of(state, seat.cards)
        points = indian_rules(state.rule_set).capped(arr.points)
        return SeatResult(
            seat.seat, seat.account_id, "counted", points, seat.cards, _groups(arr), arr.deadwood
        )
    if seat.status is SeatStatus.WRONG_DECLARE:
        outcome = "wrong_declare"
    else:
        assert seat.drop_kind is not None
        outcome = _OUTCOME_OF_DROP[seat.drop_kind]
    return SeatResult(seat.seat, seat.account_id, outcome, seat.penalty_points, seat.cards, (), ())


def hand_ended(state: HandState, winner_seat: int, at_ms: int) -> HandEnded:
    """The HandEnded for ``state`` won by ``winner_seat`` (after its Declared, if it declared)."""
    assert state.rule_set is not None
    results = tuple(_result(state, s, winner_seat) for s in state.seats)
    settlement = settle(state.rule_set, winner_seat, {r.seat: r.points for r in results})
    return HandEnded(winner_seat=winner_seat, results=results, settlement=settlement, at_ms=at_ms)
