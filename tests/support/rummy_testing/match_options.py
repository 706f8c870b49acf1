"""The tests' gin-family match options: the family's game-end scoring and a game-to match under
it (docs/rules/formats.md#game-end-scoring)."""

from __future__ import annotations

from rummy.match.v1 import match_pb2 as mpb

#: The gin family's game-end scoring on the wire: game bonus 100, shutout 200, box 25.
GIN_SCORING = mpb.GameScoring(game_bonus_points=100, shutout_bonus_points=200, box_points=25)


def gin_game_to(
    *, target: int, games: int, point_value_hundredths: int, max_game_points: int
) -> mpb.MatchOptions:
    """A game-to match of ``games`` games to ``target`` game points, ``point_value_hundredths``
    a game point, a game's loss capped at ``max_game_points``, a seat that misses its turns
    losing the game, scored as :data:`GIN_SCORING`."""
    return mpb.MatchOptions(
        game_to=mpb.GameToOptions(
            target=target,
            games=games,
            point_value_hundredths=point_value_hundredths,
            max_game_points=max_game_points,
            missed_turns_lose_game=True,
            scoring=GIN_SCORING,
        )
    )
