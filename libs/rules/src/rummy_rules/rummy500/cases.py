"""The ``rummy500`` cases of ``rummy-rules evaluate``: one decoded case in, its answer out.

A case's ``input`` says what is asked (cards in ``docs/rules/cards.md#notation``; a group is one
space-separated string or a list of cards); the answer's ``result`` is comparable with the
case's ``expected`` (``docs/rules/rummy500.md#rules-cases``):

- a **score** (``melded``: groups, ``in_hand``: cards; optional ``laid_off``: cards, or
  ``[card, index of the meld in melded]`` pairs; optional ``low_ace_one``): ``result`` the round
  score in points (melded and laid-off cards minus cards in hand, ace 15, a low ace 1 under the
  option), with ``table_points``, ``hand_points`` and each meld's ``kind`` and ``points``;
- a **meld** (``meld``: one group; optional ``decks``): ``result`` ``"set"``, ``"run"`` or null;
- a **dig** (``discard_pile_bottom_to_top``, ``hand``, ``take``: a card of the pile; optional
  ``table_melds``: groups on the table): ``result`` ``"legal"`` when taking that card with every
  card above it can meld or lay off the taken card at once, else ``"illegal"``; with ``depth``
  (cards taken), ``taken`` and how (``meld`` or ``lay_off_on``, an index of ``table_melds``);
- a **standing** (``totals``: name -> points; optional ``round``: name -> points added first,
  ``target`` default 500): ``result`` the winner's name, ``"tie_break"`` (with ``tied``) or
  null when nobody has reached the target.

Raises ``CaseError`` for a malformed case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..cards import Card, CardParseError, format_cards, parse_card, parse_cards
from ..cases import CaseError, CaseGames, check_decks
from . import play
from .melds import Rummy500Layoff, TableMeld, card_points, group_kind, hand_points, laid_out

GAMES = ("rummy500",)
TARGET = 500
_LOW_ACE_KEYS = ("low_ace_one", "low_ace_counts_one", "ace_low_one")


def _group(value: object, what: str) -> tuple[Card, ...]:
    try:
        if isinstance(value, str):
            return parse_cards(value)
        if isinstance(value, list) and all(isinstance(c, str) for c in value):
            return parse_cards(value)
    except CardParseError as exc:
        raise CaseError(f"{what}: {exc}") from None
    raise CaseError(f"{what} must be a string of cards or a list of card strings")


def _groups(value: object, what: str) -> list[tuple[Card, ...]]:
    if not isinstance(value, list):
        raise CaseError(f"{what} must be a list of groups")
    return [_group(g, f"{what}[{k}]") for k, g in enumerate(value)]


def _distinct(groups: Sequence[tuple[Card, ...]]) -> list[tuple[Card, ...]]:
    """The groups with a second copy of a face (a second deck) numbered apart across groups."""
    seen: dict[str, int] = {}
    out = []
    for group in groups:
        cards = []
        for card in group:
            copy = seen.get(card.face, 0)
            seen[card.face] = copy + 1
            cards.append(replace(card, copy=copy))
        out.append(tuple(cards))
    return out


def _low_ace(given: Mapping[str, Any]) -> bool:
    if any(given.get(k) is True for k in _LOW_ACE_KEYS):
        return True
    return given.get("low_ace_points") == 1 or given.get("ace_low_points") == 1


def _score(given: Mapping[str, Any]) -> dict[str, Any]:
    low = _low_ace(given)
    melded = _groups(given["melded"], "melded")
    in_hand = _group(given.get("in_hand", []), "in_hand")
    melds = []
    for k, group in enumerate(melded):
        kind = group_kind(group)
        if kind is None:
            raise CaseError(f"melded[{k}] is not a set or a run: {' '.join(format_cards(group))}")
        melds.append(TableMeld(k + 1, 0, kind, laid_out(kind, group)))
    laid_points = 0
    for k, item in enumerate(given.get("laid_off") or []):
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], int):
            card = _group([item[0]], f"laid_off[{k}]")[0]
            if not 0 <= item[1] < len(melds) or not melds[item[1]].takes(card):
                raise CaseError(f"laid_off[{k}]: {card.face} does not extend meld {item[1]}")
            meld = melds[item[1]]
            laid_points += replace(meld, layoffs=(Rummy500Layoff(card, 0),)).points_of(card, low)
        elif isinstance(item, str):
            laid_points += card_points(_group([item], f"laid_off[{k}]")[0])
        else:
            raise CaseError(f"laid_off[{k}] must be a card or [card, meld index]")
    table = sum(m.points_for(0, low) for m in melds) + laid_points
    held = hand_points(in_hand)
    return {
        "result": table - held,
        "table_points": table,
        "hand_points": held,
        "melds": [
            {"cards": format_cards(m.cards), "kind": m.kind, "points": m.points_for(0, low)}
            for m in melds
        ],
    }


def _meld(given: Mapping[str, Any]) -> dict[str, Any]:
    group = _group(given["meld"], "meld")
    check_decks({"decks": given.get("decks"), "cards": format_cards(group)})
    return {"result": group_kind(group)}


def _dig(given: Mapping[str, Any]) -> dict[str, Any]:
    pile_faces = _group(given["discard_pile_bottom_to_top"], "discard_pile_bottom_to_top")
    hand_faces = _group(given.get("hand", []), "hand")
    table_faces = _groups(given.get("table_melds", given.get("melds_on_table", [])), "table_melds")
    if not isinstance(given.get("take"), str):
        raise CaseError("take must be a card of the pile")
    try:
        want = parse_card(given["take"]).face
    except CardParseError as exc:
        raise CaseError(f"take: {exc}") from None
    pile, hand, *on_table = _distinct([pile_faces, hand_faces, *table_faces])
    melds = []
    for k, group in enumerate(on_table):
        kind = group_kind(group)
        if kind is None:
            raise CaseError(f"table_melds[{k}] is not a set or a run")
        melds.append(TableMeld(k + 1, 1, kind, laid_out(kind, group)))
    depths = [len(pile) - i for i, c in enumerate(pile) if c.face == want]
    if not depths:
        raise CaseError(f"{want} is not in the discard pile")
    state = play.Rummy500Play(
        phase=play.Phase.DRAW,
        seats=(0, 1),
        hands=(hand, ()),
        pile=pile,
        melds=tuple(melds),
        turn_seat=0,
        turn_no=1,
        misses=(0, 0),
    )
    digs = [
        c
        for c in play.legal_commands(state, 0)
        if isinstance(c, play.Rummy500TakeFromPile) and c.depth in depths
    ]
    if not digs:
        return {"result": "illegal", "depth": None}
    best = min(digs, key=lambda c: (c.depth, c.lay_off_on is None))
    out: dict[str, Any] = {
        "result": "legal",
        "depth": best.depth,
        "taken": format_cards(pile[-best.depth :]),
    }
    if best.lay_off_on is not None:
        out["lay_off_on"] = best.lay_off_on - 1
    else:
        out["meld"] = format_cards(best.meld)
    return out


def _standing(given: Mapping[str, Any]) -> dict[str, Any]:
    totals = given["totals"]
    added = given.get("round") or {}
    target = given.get("target", TARGET)
    ok = isinstance(totals, dict) and isinstance(added, dict) and isinstance(target, int)
    values = [*totals.values(), *added.values()] if ok else []
    if not ok or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise CaseError("totals and round map names to integer points; target is an integer")
    now = {name: points + added.get(name, 0) for name, points in totals.items()}
    if not now or max(now.values()) < target:
        return {"result": None, "totals": now}
    top = max(now.values())
    tied = [name for name, points in now.items() if points == top]
    if len(tied) > 1:
        return {"result": "tie_break", "tied": tied, "totals": now}
    return {"result": tied[0], "totals": now}


def evaluate_rummy500_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to one ``rummy500`` case (see the module). Raises CaseError."""
    given = case.get("input")
    if not isinstance(given, dict):
        raise CaseError("a rummy500 case has an 'input' object")
    if "melded" in given:
        answer = _score(given)
    elif "meld" in given:
        answer = _meld(given)
    elif "discard_pile_bottom_to_top" in given:
        answer = _dig(given)
    elif "totals" in given:
        answer = _standing(given)
    else:
        raise CaseError(f"a rummy500 input this CLI does not know: {sorted(given)}")
    return {"id": case.get("id"), **answer}


def _judge(game: str, case: Mapping[str, Any], flags: frozenset[str]) -> dict[str, Any]:
    return evaluate_rummy500_case(case)


#: The rules cases Rummy 500 judges (registered by its bundle's ``install()``).
RUMMY500_CASES = CaseGames(games=GAMES, judge=_judge)
