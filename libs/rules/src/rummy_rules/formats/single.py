"""One deal per match: today's points table (``docs/rules/formats.md#single``).

The match is the hand: it starts with the seats, deals once, and ends with that hand. The money
is the variant's own (the hand's reservation at the deal and its ``Settlement``), so the format
moves nothing itself: a leave before the deal stands the seat up (two seats must remain), a
leave mid-deal is the variant's middle drop, an aborted deal aborts the match (the variant
released its holds). ``docs/rules/formats.md#single``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Event
from .base import MatchRules
from .messages import DealResult, MatchAborted, MatchEnded, RecordDealAborted
from .state import MatchState


@dataclass(frozen=True)
class Single(MatchRules):
    """A points table's match: one hand, 2..8 seats."""

    min_seats: int = 2
    max_seats: int = 8

    @property
    def name(self) -> str:
        return "single"

    def deals_left(self, state: MatchState) -> int | None:
        return 1 - state.deals_scored

    def _score(self, state: MatchState, result: DealResult, at_ms: int) -> tuple[Event, ...]:
        scored = self._scored(state, result, totals=result.points)
        ended = MatchEnded(
            winners=result.winners, reason="hand_ended", settlement=None, at_ms=at_ms
        )
        return (scored, *self._left_mid_deal(state, result), ended)

    def _void(self, state: MatchState, command: RecordDealAborted) -> tuple[Event, ...]:
        return (MatchAborted(reason=command.reason, released=(), at_ms=command.at_ms),)

    def _after_leave(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        if len(state.active) < 2:
            return (MatchAborted(reason="fewer than two seats left", released=(), at_ms=at_ms),)
        return ()
