"""``rummy-rules evaluate``: judge rules cases, one JSON object a line, from stdin to stdout.

Input lines have the fields of the rules cases the tests use: ``id``, ``game``, ``cards`` in the
notation of ``docs/rules/cards.md#notation`` (``["AH", "10S", "JK", ...]``), ``wild_rank``
(``"7"``, ``"A"`` ... or ``null`` for a printed-joker cut) and ``decks`` (optional; no face may
appear more often than that); other fields are ignored.
Output, one object a line:

- ``indian13`` (13 cards): ``{"id", "valid", "points", "melds": [[cards]...], "deadwood": [cards]}``
- ``indian14`` (14 cards): ``{"id", "can_declare", "valid_discards": [cards]}`` (faces, hand order,
  each face once)
- ``indian-group`` (any cards): ``{"id", "type": "pure" | "impure" | "set" | "invalid"}``
- ``gin-deadwood``, ``gin-11``, ``gin-score``, ``gin-rule``: the answers of
  ``rummy_rules.gin.cases`` (their own fields; ``wild_rank`` not needed)
- another game: ``{"id", "error": "unsupported game: ..."}``; a malformed line:
  ``{"id", "error": "..."}`` (``id`` null when unknown), and the run goes on.

Exit status 0 when every line parsed, 2 otherwise. Points are uncapped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, TextIO

from rummy_rules.cards import CardParseError, format_cards, parse_cards, parse_rank
from rummy_rules.gin.cases import GAMES as GIN_GAMES
from rummy_rules.gin.cases import GinCaseError, evaluate_gin_case
from rummy_rules.indian.arrangement import best_arrangement, valid_discards
from rummy_rules.melds import MeldKind, MeldOptions, classify_group
from rummy_rules.wild import WildRank

_TYPE_NAMES = {
    MeldKind.PURE_SEQUENCE: "pure",
    MeldKind.IMPURE_SEQUENCE: "impure",
    MeldKind.SET: "set",
}
_HAND_SIZES = {"indian13": 13, "indian14": 14}


class CaseError(ValueError):
    """A case line that cannot be judged (bad JSON, fields, cards or wild rank)."""


def evaluate_case(case: Any, options: MeldOptions) -> dict[str, Any]:
    """The output object for one decoded case. Raises CaseError for a malformed case."""
    if not isinstance(case, dict):
        raise CaseError("a case must be a JSON object")
    case_id = case.get("id")
    game = case.get("game")
    if not isinstance(game, str):
        raise CaseError("missing or non-string field 'game'")
    if game in GIN_GAMES:  # the gin family: rummy_rules.gin.cases (docs/rules/gin.md)
        try:
            return evaluate_gin_case(case)
        except GinCaseError as exc:
            raise CaseError(str(exc)) from None
    if game not in (*_HAND_SIZES, "indian-group"):
        return {"id": case_id, "error": f"unsupported game: {game}"}
    cards_field = case.get("cards")
    if not isinstance(cards_field, list) or not all(isinstance(c, str) for c in cards_field):
        raise CaseError("field 'cards' must be a list of card strings")
    try:
        cards = parse_cards(cards_field)
    except CardParseError as exc:
        raise CaseError(str(exc)) from None
    if "wild_rank" not in case:
        raise CaseError("missing field 'wild_rank' (a rank, or null for a printed-joker cut)")
    wild = _wild_rank(case["wild_rank"])
    _check_decks(case.get("decks"), cards_field)
    size = _HAND_SIZES.get(game)
    if size is not None and len(cards) != size:
        raise CaseError(f"{game} needs {size} cards, got {len(cards)}")
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


def _wild_rank(value: Any) -> WildRank:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CaseError("field 'wild_rank' must be a rank string or null")
    try:
        return parse_rank(value)
    except CardParseError as exc:
        raise CaseError(str(exc)) from None


def _check_decks(decks: Any, cards: list[str]) -> None:
    if decks is None:
        return
    if not isinstance(decks, int) or isinstance(decks, bool) or decks < 1:
        raise CaseError("field 'decks' must be a positive integer")
    face, count = Counter(c.strip().upper() for c in cards).most_common(1)[0] if cards else ("", 0)
    if count > decks:
        raise CaseError(f"{face} appears {count} times but the shoe has {decks} decks")


def evaluate_stream(source: TextIO, sink: TextIO, options: MeldOptions) -> int:
    """Judge every non-blank line of source into sink. Returns the exit status (0 or 2)."""
    status = 0
    for number, line in enumerate(source):
        if number == 0:
            line = line.removeprefix("\ufeff")  # a byte order mark is not part of the JSON
        if not line.strip():
            continue
        case_id = None
        try:
            case = json.loads(line)
        except (ValueError, RecursionError) as exc:  # also nesting or numbers too big to read
            sink.write(json.dumps({"id": None, "error": f"invalid JSON: {exc}"}) + "\n")
            status = 2
            continue
        if isinstance(case, dict) and isinstance(case.get("id"), str | int | float | bool):
            case_id = case.get("id")
        try:
            out = evaluate_case(case, options)
        except CaseError as exc:
            out = {"id": case_id, "error": str(exc)}
            status = 2
        sink.write(json.dumps(out) + "\n")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rummy-rules`` / ``python -m rummy_rules``. Returns the exit status."""
    parser = argparse.ArgumentParser(prog="rummy-rules", description="Rummy rules tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate = commands.add_parser(
        "evaluate", help="judge rules cases (JSON lines on stdin) and print results (JSON lines)"
    )
    evaluate.add_argument(
        "--lenient-duplicate-rule",
        action="store_true",
        help="let a wild stand-in share its face with another card of the group",
    )
    evaluate.add_argument(
        "--jokers-only-groups-invalid",
        action="store_true",
        help="a group made only of jokers is no meld (default: an impure sequence)",
    )
    args = parser.parse_args(argv)
    options = MeldOptions(
        jokers_only_group_is_sequence=not args.jokers_only_groups_invalid,
        strict_duplicate_faces=not args.lenient_duplicate_rule,
    )
    return evaluate_stream(sys.stdin, sys.stdout, options)
