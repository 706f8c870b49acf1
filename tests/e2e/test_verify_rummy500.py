"""The verifier page's own Rummy 500 rules (web/verify/rummy500.js: digs, melds, lay-offs, the
round's scores) on rounds played in-process (tests/e2e/rummy500_bundles.py), in a real headless
Chromium and under Node: a genuine round passes every step; each tamper (a dig that is not the
pile's top, a meld that is no meld, a lay-off onto the wrong meld, a score, a timed-out discard
that is not the highest card) is caught at the step that first differs
(docs/rules/rummy500.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rummy500_bundles import rummy500_round
from test_verify_page import (
    assert_money_shown,
    browser_page,
    events_of,
    first_failing,
    in_browser,
    in_node,
)

from rummy_game.proof import canonical_json
from rummy_rules import json_form
from rummy_rules.rummy500.melds import card_points
from rummy_rules.rummy500.variant import RUMMY500

Bundle = dict[str, Any]
__all__ = ["browser_page"]  # the page fixture, shared with the other verifier tests


@pytest.mark.parametrize(("name", "seats", "sleeper"), [("a", 3, None), ("b", 6, 2), ("d", 4, 1)])
def test_a_genuine_round_verifies_every_step_in_chromium_and_under_node(
    browser_page: Any, name: str, seats: int, sleeper: int | None, tmp_path: Path
) -> None:
    bundle, _ = rummy500_round(name, seats, sleeper=sleeper)
    assert bundle["variant"] == "rummy500"
    assert events_of(bundle, "rummy500.PileTaken") and events_of(bundle, "rummy500.LaidOff")
    shown = in_browser(browser_page, canonical_json(bundle))
    assert shown["verdict"] == "passed", shown
    assert all(s["ok"] for s in shown["steps"]), shown["steps"]
    scores = next(s for s in shown["steps"] if s["id"] == "scores")["text"]
    assert "went out by seat" in scores or "stock empty" in scores
    code, result = in_node(bundle, tmp_path)
    assert code == 0 and result["known"] and result["verdict"] == "passed"
    assert_money_shown(shown, result, bundle)  # a round moves no money: every net +0.00
    assert all(amount == "+0.00" for _, amount in shown["money"][:-1]), shown["money"]


def _dig_not_the_top(b: Bundle) -> None:
    taken = events_of(b, "rummy500.PileTaken")[0]
    taken["cards"] = list(reversed(taken["cards"])) if len(taken["cards"]) > 1 else ["KS:1"]


def _no_meld(b: Bundle) -> None:
    melded = events_of(b, "rummy500.Melded")[0]
    melded["cards"][-1], held = "2C:0", melded["cards"][-1]
    assert held != "2C:0"


def _wrong_meld_id(b: Bundle) -> None:
    events_of(b, "rummy500.Melded")[-1]["meld_id"] += 1


def _lay_off_elsewhere(b: Bundle) -> None:
    laid = events_of(b, "rummy500.LaidOff")[0]
    melds = events_of(b, "rummy500.Melded")
    laid["meld_id"] = len(melds) + 5


def _score(b: Bundle) -> None:
    events_of(b, "rummy500.RoundEnded")[0]["scores"][0]["score"] += 1


def _result_score(b: Bundle) -> None:
    events_of(b, "table.HandEnded")[0]["results"][0]["score"] += 15


TAMPERS: list[tuple[str, Callable[[Bundle], None], str]] = [
    ("a dig of other cards than the pile's top", _dig_not_the_top, "moves"),
    ("a meld that is no set or run", _no_meld, "moves"),
    ("a meld id that is not the next ordinal", _wrong_meld_id, "moves"),
    ("a lay-off onto a meld not on the table", _lay_off_elsewhere, "moves"),
    ("a round score", _score, "moves"),
    ("a result's score", _result_score, "scores"),
]


@pytest.mark.parametrize(("what", "tamper", "step"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_a_tampered_round_is_refused_at_the_step_that_first_differs(
    browser_page: Any, what: str, tamper: Callable[[Bundle], None], step: str, tmp_path: Path
) -> None:
    genuine, _ = rummy500_round("d", 4, sleeper=1)
    bundle = copy.deepcopy(genuine)
    tamper(bundle)
    shown = in_browser(browser_page, canonical_json(bundle))
    assert shown["verdict"] == "failed", (what, shown)
    assert first_failing(shown["steps"]) == step, (what, shown["steps"])
    code, result = in_node(bundle, tmp_path)
    assert code != 0 and result["verdict"] == "failed"


def test_a_timed_out_discard_that_is_not_the_highest_card_is_refused(tmp_path: Path) -> None:
    bundle, _ = rummy500_round("d", 4, sleeper=1)
    rows = bundle["events"]
    timed = {e["turn_no"] for e in events_of(bundle, "table.TurnTimedOut")}
    k = next(
        i
        for i, row in enumerate(rows)
        if row["event"]["type"] == "table.CardDiscarded" and row["event"]["turn_no"] in timed
    )
    discard = rows[k]["event"]
    before = RUMMY500.fold(json_form.from_dict(row["event"]) for row in rows[:k])
    held = before.play.hand_of(discard["seat"])
    lowest = min((c for c in held if json_form.card_to_str(c) != discard["card"]), key=card_points)
    discard["card"] = json_form.card_to_str(lowest)
    code, result = in_node(bundle, tmp_path)
    assert code != 0 and result["verdict"] == "failed"
    moves = next(s for s in result["steps"] if s["id"] == "moves")
    assert not moves["ok"] and "highest card" in moves["problem"], moves
