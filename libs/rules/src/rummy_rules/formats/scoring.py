"""Game-end scoring: what a game's winner and every seat add once a game to N ends.

The variant supplies its game-end scoring as data (a :class:`GameScoring` among the format's
options), so a host builds and replays it without knowing the game, and a format without it
(all zeros, the default) scores as it always did. The gin family's (house plan "Gin family";
rulebook "Gin Rummy", "Game Scoring"): the player who reaches the target wins the game bonus 100
(200 if the loser scored no points in the game: shutout); each player adds 25 per hand won in
that game (boxes); the game's result is the difference of the two totals. That is
``GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25)``, declared by the gin
bundle, not here (no format names a variant). ``docs/rules/formats.md#game-scoring``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..rules import check_bounds

#: The largest bonus a game-end scoring may award (points).
MAX_BONUS_POINTS = 100_000


@dataclass(frozen=True)
class GameScoring:
    """Points added at a game's end (0 everywhere: nothing added).

    - ``game_bonus``: to the game's winner;
    - ``shutout_game_bonus``: to the winner instead of ``game_bonus`` when every other seat of
      the game scored no points from hands in it (0: no shutout rule);
    - ``box_points``: to every seat, per hand it won in that game.

    Raises RuleSetError for an amount outside 0..:data:`MAX_BONUS_POINTS`."""

    game_bonus: int = 0
    shutout_game_bonus: int = 0
    box_points: int = 0

    def __post_init__(self) -> None:
        for option in ("game_bonus", "shutout_game_bonus", "box_points"):
            check_bounds(option, getattr(self, option), 0, MAX_BONUS_POINTS, "points")

    @property
    def adds_nothing(self) -> bool:
        return not (self.game_bonus or self.shutout_game_bonus or self.box_points)

    def most_added(self, most_hands: int) -> int:
        """The most one seat can add at a game's end having won ``most_hands`` hands in it."""
        return max(self.game_bonus, self.shutout_game_bonus) + self.box_points * most_hands


def is_shutout(points: Mapping[int, int], winner: int) -> bool:
    """Whether every seat of ``points`` (hand points scored in the game) but ``winner`` scored
    none: the rulebook's "the loser scored zero points during the entire game"."""
    return all(p == 0 for seat, p in points.items() if seat != winner)


def game_end_totals(
    scoring: GameScoring,
    points: Mapping[int, int],
    boxes: Mapping[int, int],
    winner: int,
) -> dict[int, int]:
    """Each seat's game total once the game ends won by ``winner``: its hand ``points`` plus
    ``box_points x`` its ``boxes`` (hands won in the game), and the winner's game bonus
    (``shutout_game_bonus`` when :func:`is_shutout` and the scoring has one).

    Worked example (gin): A 104 points from 3 hands, B 0 points and no hand: A
    ``104 + 200 + 3 x 25 = 379``, B ``0``. Raises ValueError if ``winner`` has no points."""
    if winner not in points:
        raise ValueError(f"the winner (seat {winner}) played no part in this game")
    shutout = scoring.shutout_game_bonus > 0 and is_shutout(points, winner)
    bonus = scoring.shutout_game_bonus if shutout else scoring.game_bonus
    return {
        seat: p + scoring.box_points * boxes.get(seat, 0) + (bonus if seat == winner else 0)
        for seat, p in points.items()
    }
