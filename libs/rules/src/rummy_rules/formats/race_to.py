"""Race to N: every seat scores every deal, signed, and the first to the target wins the game
(Rummy 500; house plan "Rummy 500", "Money by format"; ``docs/rules/formats.md#race-to``).

Unlike a game to N, where a deal's winner scores what its losers were charged, here each seat
dealt in adds its own signed score of the deal (``DealResult.scores``: Rummy 500's melds and
lay-offs minus its cards in hand), so totals may go negative. After a deal, when a seat still in
the game has reached the ``target``: the highest total wins; a tie at the top plays one more
deal among the tied seats (a normal deal, added to their totals), again until the tie is broken;
a tie-break deal is decided among the seats that played it (the highest of them wins, whatever
the others' totals). One seat left in the game wins it.

Money is game stakes, as a game to N's (this class extends ``GameTo`` for them):
``max_game_points x point_value_hundredths`` reserved from each seat at the game start; at its end
each loser pays ``min(winner's total - its total, cap) x point value`` to the winner (a seat that
left: the cap), less the commission (``rummy_rules.formats.money.settle_game``). A seat that
misses turns stays in (its turns are played for). A deal's winner (the seat that went out, or
the round's top score) only counts hands won; it scores nothing more.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ..errors import ErrorCode
from ..events import Event
from .base import refuse
from .game_to import GameTo
from .messages import DealResult, TieBreakDue
from .state import MatchState


@dataclass(frozen=True)
class RaceTo(GameTo):
    """Games to ``target`` (500) points where every seat scores every deal; the options are a
    game to N's (``point_value_hundredths`` hundredths of a House Token a point, each loser's loss
    capped at ``max_game_points``). Raises RuleSetError for an option out of bounds."""

    target: int = 500
    max_game_points: int = 500

    @property
    def name(self) -> str:
        return f"race-to-{self.target}"

    @property
    def takes_drawn_deals(self) -> bool:
        return False

    def _deal_totals(self, state: MatchState, result: DealResult) -> dict[int, int]:
        """Each seat dealt in adds its own signed score (``result.scores``; none given: 0).
        Raises RuleViolation(INVALID_DEAL) for scores of other seats than those dealt in."""
        scores = dict(result.scores)
        if result.scores and sorted(scores) != sorted(state.deal_seats):
            raise refuse(
                ErrorCode.INVALID_DEAL,
                f"a deal scores every seat dealt in {list(state.deal_seats)}, not {sorted(scores)}",
            )
        totals = dict(state.totals)
        for seat in state.deal_seats:
            totals[seat] = totals.get(seat, 0) + scores.get(seat, 0)
        return totals

    def _after_deal(self, played: MatchState, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        contenders = played.deal_seats if played.tie_break else ()
        return self._race_decided(state, contenders, at_ms)

    def _race_decided(
        self, state: MatchState, contenders: Collection[int], at_ms: int
    ) -> tuple[Event, ...]:
        """After a tie-break deal, the highest of the seats that played it still in the game
        wins (tied again: another tie-break among them); after any other deal, as a game to
        N decides."""
        playing = self.in_game(state)
        pool = tuple(seat for seat in playing if seat in contenders)
        if not pool or len(playing) < 2:
            return self._decided(state, at_ms)
        top = max(state.total(seat) for seat in pool)
        tied = tuple(seat for seat in pool if state.total(seat) == top)
        if len(tied) > 1:
            return (TieBreakDue(seats=tied),)
        return self._won(state, tied[0], at_ms)
