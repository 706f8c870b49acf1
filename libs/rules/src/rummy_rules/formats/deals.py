"""Deals rummy: 2, 3 or 6 deals for chips (``docs/rules/formats.md#deals``).

Each seat starts with ``80 x deals`` chips (match-internal, not tokens: a count may go below 0 in
tie-break deals, nobody runs out). After each deal every loser pays its points, capped at 80, in
chips to the deal's winner (several winners share them, the remainder one each to the earliest
seats). After the last deal the most chips wins the pool less the commission; a tie at the top
plays one more deal among the tied seats, until it is broken. Each deal is on the variant's rule
set for deals (Indian points: drops 20/40, wrong declare 80, cap 80).
``docs/rules/formats.md#deals``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..rules import RuleSetError
from .entry import RankedFormat
from .messages import DealResult, DealScored
from .state import MatchState, pairs

CHIPS_PER_DEAL = 80
#: The most chips a loser pays for one deal.
CHIPS_CAP = 80
DEALS_ALLOWED = (2, 3, 6)


def chips_after(chips: Mapping[int, int], result: DealResult, cap: int) -> dict[int, int]:
    """``chips`` once each loser of ``result`` paid ``min(points, cap)`` to the winners."""
    out = dict(chips)
    paid = 0
    for seat, p in result.points:
        if seat not in result.winners:
            owed = min(p, cap)
            out[seat] -= owed
            paid += owed
    share, remainder = divmod(paid, len(result.winners))
    for i, seat in enumerate(sorted(result.winners)):
        out[seat] += share + (1 if i < remainder else 0)
    return out


@dataclass(frozen=True)
class Deals(RankedFormat):
    """``deals`` (2, 3 or 6) deals for ``entry_hundredths`` a seat. Raises RuleSetError."""

    deals: int = 2
    entry_hundredths: int = 0
    commission_bps: int = 0
    ranked_reason: ClassVar[str] = "most_chips"
    kind: ClassVar[str] = "deals"

    def __post_init__(self) -> None:
        if self.deals not in DEALS_ALLOWED:
            raise RuleSetError("deals", "2, 3 or 6", self.deals)
        self._check_money()

    @property
    def name(self) -> str:
        return f"deals-{self.deals}"

    def chips(self, state: MatchState) -> dict[int, int] | None:
        """Each seat's chips now (``80 x deals`` before the first deal)."""
        return self._chips(state)

    def _standing(self, state: MatchState) -> Mapping[int, int]:
        return self._chips(state)

    def _chips(self, state: MatchState) -> dict[int, int]:
        if state.chips:
            return dict(state.chips)
        return {seat: CHIPS_PER_DEAL * self.deals for seat in state.seat_numbers}

    def _deal_scored(self, state: MatchState, result: DealResult) -> DealScored:
        chips = pairs(chips_after(self._chips(state), result, CHIPS_CAP))
        return self._scored(state, result, chips=chips)
