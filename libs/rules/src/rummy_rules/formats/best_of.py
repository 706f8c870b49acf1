"""Best of N (the rulebook's "Scoring Across Games"; ``docs/rules/formats.md#best-of``).

N deals with running point totals; the lowest total wins the pool less the commission; a tie at
the top plays one more deal among the tied seats, until it is broken. Each deal is on the
variant's rule set for best of N (Indian points: drops 20/40, wrong declare 80, cap 80).
``docs/rules/formats.md#best-of``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..rules import check_bounds
from .base import added_totals
from .entry import RankedFormat
from .messages import DealResult, DealScored
from .state import MatchState

#: The deal counts a best-of table may play.
BEST_OF_DEALS = (2, 10)


@dataclass(frozen=True)
class BestOf(RankedFormat):
    """``deals`` (2..10) deals for ``entry_hundredths`` a seat. Raises RuleSetError."""

    deals: int = 3
    entry_hundredths: int = 0
    commission_bps: int = 0
    ranked_reason: ClassVar[str] = "lowest_total"
    kind: ClassVar[str] = "best-of"

    def __post_init__(self) -> None:
        check_bounds("deals", self.deals, *BEST_OF_DEALS)
        self._check_money()

    @property
    def name(self) -> str:
        return f"best-of-{self.deals}"

    def _standing(self, state: MatchState) -> Mapping[int, int]:
        return {seat: -total for seat, total in state.totals}

    def _deal_scored(self, state: MatchState, result: DealResult) -> DealScored:
        return self._scored(state, result, totals=added_totals(state, result))
