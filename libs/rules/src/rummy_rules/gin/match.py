"""The gin family's match formats: a game to 100 (150, 250) with the game bonus, boxes and
shutout, or Hollywood's three columns (house plan "Gin family", "Money by format"; rulebook "Gin
Rummy", "Game Scoring", "Hollywood Gin").

The formats are the generic ones (``rummy_rules.formats``: ``GameTo``, ``Hollywood``); what is
gin's is their game-end scoring (:data:`GIN_GAME_SCORING`), the targets a gin table offers
(:data:`GIN_TARGETS`) and that a seat dropped on missed turns loses the game at the cap.
``docs/rules/formats.md#game-scoring``.
"""

from __future__ import annotations

from ..formats.game_to import GameTo
from ..formats.hollywood import Hollywood
from ..formats.scoring import GameScoring
from ..rules import RuleSetError

#: Gin's game-end scoring: game bonus 100 (200 on a shutout), 25 a box (rulebook "Game Scoring").
GIN_GAME_SCORING = GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25)

#: The targets a gin game is played to (points): 100, and the options 150 and 250.
GIN_TARGETS = (100, 150, 250)


def check_target(target: int) -> None:
    """Raise RuleSetError (option ``target``) unless ``target`` is one of :data:`GIN_TARGETS`."""
    if target not in GIN_TARGETS:
        raise RuleSetError("target", "one of " + "/".join(map(str, GIN_TARGETS)), target)


def gin_game(
    target: int = 100,
    *,
    games: int = 1,
    point_value_hundredths: int = 0,
    max_game_points: int = 100,
    commission_bps: int = 0,
) -> GameTo:
    """A gin table's games: ``games`` games to ``target`` points at two seats, gin's game-end
    scoring, a seat dropped on missed turns losing the game at the cap; money in hundredths of a
    House Token a point, each game's loss capped at ``max_game_points``. Raises RuleSetError."""
    check_target(target)
    return GameTo(
        target=target,
        games=games,
        point_value_hundredths=point_value_hundredths,
        max_game_points=max_game_points,
        commission_bps=commission_bps,
        missed_turns_lose_game=True,
        scoring=GIN_GAME_SCORING,
        min_seats=2,
        max_seats=2,
    )


def hollywood_game(
    target: int = 100,
    *,
    point_value_hundredths: int = 0,
    max_game_points: int = 100,
    commission_bps: int = 0,
) -> Hollywood:
    """A Hollywood match: three columns to ``target`` with gin's game-end scoring, each column's
    loss capped at ``max_game_points``. Raises RuleSetError."""
    check_target(target)
    return Hollywood(
        target=target,
        point_value_hundredths=point_value_hundredths,
        max_game_points=max_game_points,
        commission_bps=commission_bps,
        missed_turns_lose_game=True,
        scoring=GIN_GAME_SCORING,
    )
