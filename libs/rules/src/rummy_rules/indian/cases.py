"""The Indian rules cases of ``rummy-rules evaluate`` (``rummy_rules.cases``):

- ``indian13`` (13 cards): ``{"id", "valid", "points", "melds": [[cards]...], "deadwood": [cards]}``
- ``indian14`` (14 cards): ``{"id", "can_declare", "valid_discards": [cards]}`` (faces, hand
  order, each face once)
- ``indian-group`` (any cards): ``{"id", "type": "pure" | "impure" | "set" | "invalid"}``

A case holds ``cards``, ``wild_rank`` (``"7"``, ``"A"`` ... or ``null`` for a printed-joker cut)
and ``decks`` (optional). Points are uncapped. Switches: ``--lenient-duplicate-rule`` (a wild
stand-in may share its face with another card of the group), ``--jokers-only-groups-invalid`` (a
group made only of jokers is no meld). Rules: ``docs/rules/melds.md``,
``docs/rules/declaration.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cards import CardParseError, format_cards, parse_rank
from ..cases import CaseError, CaseFlag, CaseGames, case_cards, check_decks
from ..melds import MeldKind, MeldOptions, classify_group
from ..wild import WildRank
from .arrangement import best_arrangement, valid_discards

_TYPE_NAMES = {
    MeldKind.PURE_SEQUENCE: "pure",
    MeldKind.IMPURE_SEQUENCE: "impure",
    MeldKind.SET: "set",
}
_HAND_SIZES = {"indian13": 13, "indian14": 14}
LENIENT = "lenient-duplicate-rule"
JOKERS_ONLY_INVALID = "jokers-only-groups-invalid"


def meld_options(flags: frozenset[str]) -> MeldOptions:
    """The meld options the CLI switches ask for."""
    return MeldOptions(
        jokers_only_group_is_sequence=JOKERS_ONLY_INVALID not in flags,
        strict_duplicate_faces=LENIENT not in flags,
    )


def _wild_rank(case: Mapping[str, Any]) -> WildRank:
    if "wild_rank" not in case:
        raise CaseError("missing field 'wild_rank' (a rank, or null for a printed-joker cut)")
    value = case["wild_rank"]
    if value is None:
        return None
    if not isinstance(value, str):
        raise CaseError("field 'wild_rank' must be a rank string or null")
    try:
        return parse_rank(value)
    except CardParseError as exc:
        raise CaseError(str(exc)) from None


def judge(game: str, case: Mapping[str, Any], flags: frozenset[str]) -> dict[str, Any]:
    """The answer to one Indian case. Raises CaseError for a malformed one."""
    options = meld_options(flags)
    cards = case_cards(case)
    wild = _wild_rank(case)
    check_decks(case)
    size = _HAND_SIZES.get(game)
    if size is not None and len(cards) != size:
        raise CaseError(f"{game} needs {size} cards, got {len(cards)}")
    case_id = case.get("id")
    if game == "indian13":
        arrangement = best_arrangement(cards, wild, options)
        return {
            "id": case_id,
            "valid": arrangement.valid,
            "points": arrangement.points,
            "melds": [format_cards(m.cards) for m in arrangement.melds],
            "deadwood": format_cards(arrangement.deadwood),
        }
    if game == "indian14":
        faces = list(dict.fromkeys(format_cards(valid_discards(cards, wild, options))))
        return {"id": case_id, "can_declare": bool(faces), "valid_discards": faces}
    kind = classify_group(cards, wild, options)
    return {"id": case_id, "type": "invalid" if kind is None else _TYPE_NAMES[kind]}


INDIAN_CASES = CaseGames(
    games=("indian13", "indian14", "indian-group"),
    judge=judge,
    flags=(
        CaseFlag(LENIENT, "let a wild stand-in share its face with another card of the group"),
        CaseFlag(
            JOKERS_ONLY_INVALID,
            "a group made only of jokers is no meld (default: an impure sequence)",
        ),
    ),
)
"""The Indian variant's rules cases (its bundle's ``cli_cases``)."""
