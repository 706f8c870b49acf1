"""Match formats: the layer above variants that wraps a variant's hands ("deals") into a match.

``single`` (a points table: one hand), ``pool-101`` / ``pool-201``, ``deals-2/3/6``,
``best-of-N``, ``game-to-N`` (with the variant's game-end scoring: gin's game),
``hollywood-N`` (three columns at once) and ``race-to-N`` (every seat scores every deal, signed:
Rummy 500): each a state machine over one
:class:`~rummy_rules.formats.state.MatchState` (``rummy_rules.formats.base.MatchFormat``), fed
each deal's generic result, owning the match's money (``rummy_rules.formats.money``). A host
builds one with :func:`make_format` from a table's options. Nothing here imports a variant's
package. ``docs/rules/formats.md``.
"""

from __future__ import annotations

from typing import Any

from ..rules import RuleSetError
from .base import MatchFormat, MatchRules
from .best_of import BestOf
from .deals import Deals
from .game_to import GameTo
from .hollywood import Hollywood
from .messages import DealResult, DealRules, deal_result
from .pool import Pool
from .race_to import RaceTo
from .scoring import GameScoring
from .single import Single
from .state import GameSheet, MatchPhase, MatchState
from .view import MatchSeatView, MatchView, SheetSeatView, SheetView, match_view

#: Format kind -> its class (options are the class's fields).
FORMAT_KINDS: dict[str, type[MatchRules]] = {
    "single": Single,
    "pool": Pool,
    "deals": Deals,
    "best-of": BestOf,
    "game-to": GameTo,
    "hollywood": Hollywood,
    "race-to": RaceTo,
}


def make_format(kind: str, **options: Any) -> MatchFormat:
    """The format of ``kind`` (a key of :data:`FORMAT_KINDS`) with ``options`` (its fields:
    ``make_format("pool", target=201, entry_hundredths=500, commission_bps=1000, split=True)``).
    Raises RuleSetError for an unknown kind or option, or an option out of bounds."""
    cls = FORMAT_KINDS.get(kind)
    if cls is None:
        raise RuleSetError("format", f"one of {', '.join(sorted(FORMAT_KINDS))}", repr(kind))
    try:
        made: MatchFormat = cls(**options)
    except TypeError as exc:
        raise RuleSetError("format options", f"options of a {kind} format", str(exc)) from None
    return made


__all__ = [
    "FORMAT_KINDS",
    "BestOf",
    "DealResult",
    "DealRules",
    "Deals",
    "GameScoring",
    "GameSheet",
    "GameTo",
    "Hollywood",
    "MatchFormat",
    "MatchPhase",
    "MatchRules",
    "MatchSeatView",
    "MatchState",
    "MatchView",
    "SheetSeatView",
    "SheetView",
    "Pool",
    "RaceTo",
    "Single",
    "deal_result",
    "make_format",
    "match_view",
]
