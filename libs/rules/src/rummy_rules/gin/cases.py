"""The gin cases of ``rummy-rules evaluate``: one decoded case in, its answer out.

``evaluate_gin_case(case)`` answers the ``gin-*`` games of the rules cases
(``libs/rules/tests/data/rules-cases.jsonl``), each in the shape it is written (cards in the
notation of ``docs/rules/cards.md#notation``; points everywhere):

- ``gin-deadwood`` (``cards``): ``{"id", "deadwood", "melds": [[cards]...], "loose": [cards]}``
  (``docs/rules/gin.md#deadwood``).
- ``gin-11`` (eleven ``cards``; optional ``knock_limit`` or ``oklahoma_upcard``):
  ``{"id", "best_after_discard", "discards", "big_gin", "gin", "knock_legal_at_10"}`` and
  ``"knock_legal_at_<n>"`` for every limit 1..9 an Oklahoma upcard can set, plus ``"knock_limit"``,
  ``"knock_legal"`` and ``"knock_legal_at_<limit>"`` when the case sets a limit
  (``docs/rules/gin.md#eleven-cards``).
- ``gin-score`` (``knocker_hand`` of ten, or eleven for big gin or with a ``discard``;
  ``defender_hand``; optional ``knocker_melds``, ``oklahoma_upcard``, ``knock_limit``):
  ``{"id", "outcome", "winner", "points", "knocker_deadwood", "defender_deadwood_after_layoffs",
  "knocker_melds", "layoffs": [[card, meld index]...], "laid_off": [cards], "defender_melds",
  "defender_loose", "undercut", "gin", "big_gin"}``;
  a knock over the limit: ``winner`` ``"illegal"``, ``points`` null
  (``docs/rules/gin.md#hand-score``, ``docs/rules/gin.md#layoffs``).
- ``gin-rule`` (``input``): ``{"id", "result", "points"}``. A hand: ``knocker_deadwood``,
  ``defender_deadwood``, ``gin`` / ``big_gin``, ``knock_limit`` / ``oklahoma_upcard``; ``result``
  ``"knocker"``, ``"defender"``, ``"illegal"`` (points null) or ``"legal"`` (a legality question,
  no defender given). A game (``hands_won_A``, ``hands_won_B`` or ``hands_won: {A, B}``,
  ``target``): the winner's name and
  the game's net with the game bonus, shutout and boxes (``docs/rules/formats.md#game-to``).
  Hollywood (``hollywood_sequence`` of ``[player, points]``, ``target``): ``"columns"`` and each
  player's hand points per column (``docs/rules/formats.md#game-to``).

Raises ``GinCaseError`` (a ``ValueError``) for a malformed case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rummy_rules.cards import Card, CardParseError, format_cards, parse_card, parse_cards
from rummy_rules.cases import CaseError, CaseGames
from rummy_rules.formats.hollywood import COLUMNS, enter_win
from rummy_rules.formats.scoring import game_end_totals
from rummy_rules.formats.state import new_sheet

from .arrangement import (
    KNOCK_LIMIT,
    Arrangement,
    GinCardError,
    best_arrangement,
    card_index,
    card_value,
    evaluate_eleven,
    hand_mask,
)
from .match import GIN_GAME_SCORING
from .scoring import (
    HandRules,
    IllegalKnock,
    Outcome,
    hand_points,
    oklahoma_rules,
    score_big_gin,
    score_knock,
)
from .solver import deadwood as mask_deadwood

GAMES = ("gin-deadwood", "gin-11", "gin-score", "gin-rule")
DEFAULT_TARGET = 100


class GinCaseError(CaseError):
    """A gin case that cannot be judged (missing or malformed fields, bad cards)."""


def evaluate_gin_case(case: dict[str, Any]) -> dict[str, Any]:
    """The answer to one gin case (see the module). Raises GinCaseError."""
    game = case.get("game")
    try:
        if game == "gin-deadwood":
            return {"id": case.get("id"), **_deadwood(_cards(case, "cards"))}
        if game == "gin-11":
            return {"id": case.get("id"), **_eleven(case)}
        if game == "gin-score":
            return {"id": case.get("id"), **_score(case)}
        if game == "gin-rule":
            rule_input = case.get("input")
            if not isinstance(rule_input, dict):
                raise GinCaseError("field 'input' must be an object")
            return {"id": case.get("id"), **_rule(rule_input)}
    except (GinCardError, CardParseError) as exc:
        raise GinCaseError(str(exc)) from None
    raise GinCaseError(f"not a gin game: {game!r}")


def _cards(case: dict[str, Any], key: str) -> tuple[Card, ...]:
    value = case.get(key)
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise GinCaseError(f"field {key!r} must be a list of card strings")
    return parse_cards(value)


def _shown(arrangement: Arrangement) -> dict[str, Any]:
    return {
        "melds": [format_cards(m.cards) for m in arrangement.melds],
        "loose": format_cards(arrangement.loose),
    }


def _deadwood(cards: tuple[Card, ...]) -> dict[str, Any]:
    arrangement = best_arrangement(cards)
    return {"deadwood": arrangement.deadwood, **_shown(arrangement)}


def _rules(fields: dict[str, Any]) -> HandRules:
    upcard = fields.get("oklahoma_upcard")
    if upcard is None and (fields.get("oklahoma") is True or fields.get("variant") == "oklahoma"):
        upcard = fields.get("upcard")
    big_gin = fields.get("big_gin_allowed", True)
    if not isinstance(big_gin, bool):
        raise GinCaseError("field 'big_gin_allowed' must be a boolean")
    if upcard is not None:
        if not isinstance(upcard, str):
            raise GinCaseError("field 'oklahoma_upcard' must be a card string")
        return oklahoma_rules(parse_card(upcard), big_gin=big_gin)
    limit = fields.get("knock_limit", KNOCK_LIMIT)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise GinCaseError("field 'knock_limit' must be a non-negative integer")
    return HandRules(knock_limit=limit, big_gin=big_gin)


def _eleven(case: dict[str, Any]) -> dict[str, Any]:
    cards = _cards(case, "cards")
    if len(cards) != 11:
        raise GinCaseError(f"gin-11 needs 11 cards, got {len(cards)}")
    value = evaluate_eleven(cards)
    out: dict[str, Any] = {
        "best_after_discard": value.best_after_discard,
        "discards": format_cards(value.discards),
        "big_gin": value.big_gin,
        "gin": value.gin,
        "knock_legal_at_10": value.knock_legal(KNOCK_LIMIT),
    }
    # every limit an Oklahoma upcard can set (ace 1 .. face cards 10)
    out |= {f"knock_legal_at_{n}": value.knock_legal(n) for n in range(1, KNOCK_LIMIT)}
    if "knock_limit" in case or "oklahoma_upcard" in case:
        limit = _rules(case).knock_limit
        out |= {
            "knock_limit": limit,
            "knock_legal": value.knock_legal(limit),
            f"knock_legal_at_{limit}": value.knock_legal(limit),
        }
    return out


def _score(case: dict[str, Any]) -> dict[str, Any]:
    knocker = _cards(case, "knocker_hand")
    defender = _cards(case, "defender_hand")
    rules = _rules(case)
    named = case.get("knocker_melds")
    melds = None
    if named is not None:
        if not isinstance(named, list) or not all(isinstance(m, list) for m in named):
            raise GinCaseError("field 'knocker_melds' must be a list of card lists")
        melds = [_cards({"m": m}, "m") for m in named]
    if len(knocker) == 11:
        discard = case.get("discard")
        if discard is None:
            if mask_deadwood(hand_mask(knocker)) == 0:
                return _scored(score_big_gin(knocker, defender, rules))
            # the best discard of the highest value, then the last in canonical order
            best = evaluate_eleven(knocker).discards
            discard = max(best, key=lambda c: (card_value(c), card_index(c))).face
        if not isinstance(discard, str):
            raise GinCaseError("field 'discard' must be a card string")
        card = parse_card(discard)
        if card not in knocker:
            raise GinCaseError(f"the discard {discard} is not in the knocker's hand")
        knocker = tuple(c for c in knocker if c != card)
    try:
        return _scored(score_knock(knocker, defender, rules, melds))
    except IllegalKnock:
        dead = (
            mask_deadwood(hand_mask(knocker))
            if melds is None
            else sum(card_value(c) for c in knocker if not any(c in m for m in melds))
        )
        return {
            "outcome": None,
            "winner": "illegal",
            "points": None,
            "knocker_deadwood": dead,
            "defender_deadwood_after_layoffs": None,
        }


def _scored(score: Any) -> dict[str, Any]:
    return {
        "outcome": score.outcome.value,
        "winner": score.winner.value,
        "points": score.points,
        "knocker_deadwood": score.knocker_deadwood,
        "defender_deadwood_after_layoffs": score.defender_deadwood,
        "knocker_melds": [format_cards(m.cards) for m in score.knocker.melds],
        "layoffs": [[lay.card.face, lay.meld] for lay in score.layoffs],
        "laid_off": [lay.card.face for lay in score.layoffs],
        "defender_melds": [format_cards(m.cards) for m in score.defender.melds],
        "defender_loose": format_cards(score.defender.loose),
        "undercut": score.outcome is Outcome.UNDERCUT,
        "gin": score.outcome is Outcome.GIN,
        "big_gin": score.outcome is Outcome.BIG_GIN,
    }


def _points(fields: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        if key in fields:
            value = fields[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise GinCaseError(f"field {key!r} must be a non-negative integer")
            return value
    return None


def _rule(fields: dict[str, Any]) -> dict[str, Any]:
    if "hollywood_sequence" in fields:
        return _hollywood(fields)
    if isinstance(fields.get("hands_won"), dict):
        return _game({**fields, **{f"hands_won_{k}": v for k, v in fields["hands_won"].items()}})
    if any(k.startswith("hands_won_") for k in fields):
        return _game(fields)
    rules = _rules(fields)
    defender = _points(fields, "defender_deadwood", "defender_deadwood_after_layoffs")
    if fields.get("big_gin") is True:
        outcome, knocker = Outcome.BIG_GIN, 0
    elif fields.get("gin") is True:
        outcome, knocker = Outcome.GIN, 0
    else:
        given = _points(fields, "knocker_deadwood")
        if given is None:
            raise GinCaseError("a hand rule needs 'knocker_deadwood', 'gin' or 'big_gin'")
        outcome, knocker = Outcome.KNOCK, given
    legal = outcome is not Outcome.KNOCK or knocker <= rules.knock_limit or knocker == 0
    if outcome is Outcome.BIG_GIN and not rules.big_gin:
        legal = False
    if not legal:
        return {"result": "illegal", "points": None}
    if defender is None:
        return {"result": "legal", "points": None}
    try:
        result = hand_points(outcome, knocker, defender, rules)
    except IllegalKnock:
        return {"result": "illegal", "points": None}
    return {"result": result.winner.value, "points": result.points}


def _target(fields: dict[str, Any]) -> int:
    target = _points(fields, "target")
    return DEFAULT_TARGET if target is None else target


def _game(fields: dict[str, Any]) -> dict[str, Any]:
    """A game to the target from each player's won hands (``docs/rules/formats.md#game-to``), by
    the formats' game-end scoring (:data:`~rummy_rules.gin.match.GIN_GAME_SCORING` through
    ``rummy_rules.formats.scoring.game_end_totals``): the player who reached the target wins the
    game bonus (the shutout bonus when the other scored nothing); each adds its boxes; the result
    is the difference of the totals (uncapped: a case asks for points, not money)."""
    won: dict[str, list[int]] = {}
    for key, value in fields.items():
        if key.startswith("hands_won_") and key != "hands_won":
            if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
            ):
                raise GinCaseError(f"field {key!r} must be a list of non-negative integers")
            won[key.removeprefix("hands_won_")] = value
    target = _target(fields)
    names = list(won)
    points = {seat: sum(won[name]) for seat, name in enumerate(names)}
    reached = [seat for seat in points if points[seat] >= target]
    if not reached or len(won) != 2:
        return {"result": "unfinished", "points": None}
    winner = max(reached, key=lambda seat: points[seat])
    boxes = {seat: len(won[name]) for seat, name in enumerate(names)}
    totals = game_end_totals(GIN_GAME_SCORING, points, boxes, winner)
    (loser,) = [seat for seat in totals if seat != winner]
    return {"result": names[winner], "points": totals[winner] - totals[loser]}


def _hollywood(fields: dict[str, Any]) -> dict[str, Any]:
    """Hollywood's three columns from the hands won in order, entered as the format enters them
    (``rummy_rules.formats.hollywood.enter_win``: a player's n-th win in the first min(n, 3)
    columns still running; a column ends when a player reaches the target in it;
    ``docs/rules/formats.md#hollywood``): each player's hand points per column, no bonus."""
    sequence = fields["hollywood_sequence"]
    if not isinstance(sequence, list):
        raise GinCaseError("field 'hollywood_sequence' must be a list of [player, points]")
    target = _target(fields)
    entries: list[tuple[str, int]] = []
    for item in sequence:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or not isinstance(item[1], int)
            or isinstance(item[1], bool)
            or item[1] < 0
        ):
            raise GinCaseError("each hollywood_sequence item must be [player, points]")
        entries.append((item[0], item[1]))
    names = list(dict.fromkeys(["A", "B", *(name for name, _ in entries)]))
    seat_of = {name: seat for seat, name in enumerate(names)}
    sheets = tuple(new_sheet(column, seat_of.values()) for column in range(1, COLUMNS + 1))
    wins: dict[str, int] = {}
    for name, points in entries:
        wins[name] = wins.get(name, 0) + 1
        sheets = enter_win(
            sheets, seat_of[name], points, wins[name], target=target, scoring=GIN_GAME_SCORING
        )
    columns = {name: [dict(sheet.points)[seat_of[name]] for sheet in sheets] for name in names}
    return {"result": "columns", "points": columns}


def judge(game: str, case: Mapping[str, Any], flags: frozenset[str]) -> dict[str, Any]:
    """``rummy_rules.cases``' judge: :func:`evaluate_gin_case` (no switches). Raises
    CaseError (a :class:`GinCaseError`)."""
    return evaluate_gin_case(dict(case))


GIN_CASES = CaseGames(games=GAMES, judge=judge)
"""The gin family's rules cases (its bundle's ``cli_cases``)."""
