"""Every gin case of the rules cases (gin-deadwood, gin-11, gin-score, gin-rule), through the real
CLI, in the shape each is written (docs/rules/gin.md)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from rules_cases import cases_path, load_cases, run_cli

from rummy_rules.cards import parse_cards
from rummy_rules.cli import evaluate_stream
from rummy_rules.gin.arrangement import card_value, classify_meld, deadwood_of

GAMES = ("gin-deadwood", "gin-11", "gin-score", "gin-rule")


@pytest.fixture(scope="module")
def answers() -> dict[str, dict[str, Any]]:
    status, out = run_cli(cases_path().read_text(encoding="utf-8"))
    assert status == 0
    return {o["id"]: o for o in out}


def test_the_cases_file_has_cases_of_every_gin_game() -> None:
    for game in GAMES:
        assert load_cases(game), game


@pytest.mark.parametrize("case", load_cases(*GAMES), ids=lambda c: c["id"])
def test_gin_case_gives_every_expected_field(
    answers: dict[str, dict[str, Any]], case: dict[str, Any]
) -> None:
    out = answers[case["id"]]
    assert "error" not in out, out
    assert {k: out.get(k) for k in case["expected"]} == case["expected"]


@pytest.mark.parametrize("case", load_cases("gin-deadwood"), ids=lambda c: c["id"])
def test_gin_deadwood_answer_shows_an_honest_arrangement(
    answers: dict[str, dict[str, Any]], case: dict[str, Any]
) -> None:
    out = answers[case["id"]]
    shown = [c for m in out["melds"] for c in m] + out["loose"]
    assert sorted(shown) == sorted(case["cards"])
    assert all(classify_meld(parse_cards(m)) is not None for m in out["melds"])
    assert sum(card_value(c) for c in parse_cards(out["loose"])) == out["deadwood"]


@pytest.mark.parametrize("case", load_cases("gin-score"), ids=lambda c: c["id"])
def test_gin_score_answer_uses_the_named_melds_when_the_case_names_them(
    answers: dict[str, dict[str, Any]], case: dict[str, Any]
) -> None:
    out = answers[case["id"]]
    if "knocker_melds" in case:
        assert sorted(map(sorted, out["knocker_melds"])) == sorted(
            map(sorted, case["knocker_melds"])
        )
    laid = [face for face, _ in out["layoffs"]]
    kept = [c for m in out["defender_melds"] for c in m] + out["defender_loose"]
    assert sorted(laid + kept) == sorted(case["defender_hand"])


def test_without_named_melds_the_server_arranges_the_knocker_to_leave_the_defender_most(
    answers: dict[str, dict[str, Any]],
) -> None:
    # docs/rules/gin.md#knocker-melds: the server's arrangement is a best one, and among those the
    # one after which the defender's deadwood is highest, so never below a named best arrangement.
    cases = [c for c in load_cases("gin-score") if "knocker_melds" in c]
    assert cases
    lines = "".join(
        json.dumps({k: v for k, v in c.items() if k != "knocker_melds"}) + "\n" for c in cases
    )
    status, out = run_cli(lines)
    assert status == 0
    for case, server in zip(cases, out, strict=True):
        named = answers[case["id"]]
        assert server["knocker_deadwood"] == deadwood_of(parse_cards(case["knocker_hand"]))
        if named["knocker_deadwood"] == server["knocker_deadwood"]:
            assert (
                server["defender_deadwood_after_layoffs"]
                >= named["defender_deadwood_after_layoffs"]
            ), case["id"]


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        (
            {
                "id": "o",
                "game": "gin-11",
                "oklahoma_upcard": "8S",
                "cards": ["2H", "5H", "6H", "2S", "4S", "6D", "4D", "5S", "3D", "6S", "5D"],
            },
            {"knock_limit": 8, "knock_legal": False, "knock_legal_at_8": False},
        ),
        (
            {
                "id": "b",
                "game": "gin-score",
                "defender_hand": ["KH", "QS", "JC", "9C", "2S", "3H", "10S", "AD", "2D", "9H"],
                "knocker_hand": ["3D", "4D", "5D", "6D", "7D", "5C", "5H", "5S", "8C", "8H", "8S"],
            },
            {"outcome": "big_gin", "winner": "knocker", "points": 66 + 31},
        ),
        (
            {
                "id": "i",
                "game": "gin-score",
                "knock_limit": 3,
                "knocker_hand": ["2C", "3C", "4C", "7H", "7D", "7S", "9S", "10S", "JS", "4D"],
                "defender_hand": ["QH", "QD", "QC", "2H", "3H", "4H", "KS", "6D", "3S", "AD"],
            },
            {"winner": "illegal", "points": None, "knocker_deadwood": 4},
        ),
        (
            {
                "id": "u",
                "game": "gin-rule",
                "input": {"knocker_deadwood": 7, "defender_deadwood": 7},
            },
            {"result": "defender", "points": 25},
        ),
        (
            {"id": "g", "game": "gin-rule", "input": {"gin": True, "defender_deadwood": 30}},
            {"result": "knocker", "points": 55},
        ),
        (
            {
                "id": "s",
                "game": "gin-rule",
                "input": {"hands_won_A": [60, 45], "hands_won_B": [], "target": 100},
            },
            {"result": "A", "points": 105 + 200 + 50},
        ),
    ],
    ids=lambda x: str(x.get("id", "")),
)
def test_gin_cases_in_other_shapes_are_answered(
    line: dict[str, Any], answer: dict[str, Any]
) -> None:
    sink = io.StringIO()
    assert evaluate_stream(io.StringIO(json.dumps(line) + "\n"), sink) == 0
    out = json.loads(sink.getvalue())
    assert {k: out.get(k) for k in answer} == answer


def test_a_malformed_gin_case_is_an_error_line_and_the_run_goes_on() -> None:
    lines: list[dict[str, Any]] = [
        {"id": "short", "game": "gin-11", "cards": ["2C"]},
        {"id": "twice", "game": "gin-deadwood", "cards": ["2C", "2C", "3C"]},
        {"id": "joker", "game": "gin-deadwood", "cards": ["JK", "2C", "3C"]},
        {"id": "meld", "game": "gin-score", "knocker_hand": ["2C"], "defender_hand": []},
        {"id": "rule", "game": "gin-rule", "input": {}},
        {"id": "ok", "game": "gin-deadwood", "cards": ["AH", "2H", "3H"]},
    ]
    status, out = run_cli("".join(json.dumps(x) + "\n" for x in lines))
    assert status == 2
    assert [o["id"] for o in out] == [x["id"] for x in lines]
    assert all("error" in o for o in out[:-1])
    assert out[-1] == {"id": "ok", "deadwood": 0, "melds": [["AH", "2H", "3H"]], "loose": []}
