"""Every rummy500 case of the rules cases through the real rules CLI, in the shape each is written
(docs/rules/rummy500.md#rules-cases), and more digs, melds and scores than the file holds."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest
from rules_cases import cases_path, load_cases

from rummy_rules import cases
from rummy_rules.cli import evaluate_stream
from rummy_rules.rummy500.cases import RUMMY500_CASES

cases.register(RUMMY500_CASES)  # in this process, as the Rummy 500 bundle's install() does


def answer(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    sink = io.StringIO()
    evaluate_stream(io.StringIO("".join(json.dumps(x) + "\n" for x in lines)), sink)
    return [json.loads(line) for line in sink.getvalue().splitlines()]


@pytest.fixture(scope="module")
def answers() -> dict[str, dict[str, Any]]:
    """The whole cases file through the real CLI (``python -m rummy_rules evaluate``: the
    Rummy 500 bundle is found by its entry point)."""
    done = subprocess.run(
        [sys.executable, "-m", "rummy_rules", "evaluate"],
        input=cases_path().read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0
    return {o["id"]: o for o in map(json.loads, done.stdout.splitlines())}


def test_the_cases_file_has_rummy500_cases() -> None:
    assert load_cases("rummy500")


@pytest.mark.parametrize("case", load_cases("rummy500"), ids=lambda c: c["id"])
def test_rummy500_case_gives_the_expected_result(
    answers: dict[str, dict[str, Any]], case: dict[str, Any]
) -> None:
    assert answers[case["id"]]["result"] == case["expected"]


def case(**given: Any) -> dict[str, Any]:
    (out,) = answer({"id": "x", "game": "rummy500", "input": given})
    return out


def test_a_dig_is_legal_when_the_taken_card_lays_off_on_a_table_meld() -> None:
    out = case(
        discard_pile_bottom_to_top=["9C", "4H", "KD", "6S", "2D"],
        hand=["4S", "4C", "8H"],
        take="KD",
        table_melds=["QD JD 10D"],
    )
    assert out == {
        "id": "x",
        "result": "legal",
        "depth": 3,
        "taken": ["KD", "6S", "2D"],
        "lay_off_on": 0,
    }


def test_a_dig_may_meld_the_deepest_card_with_cards_taken_above_it() -> None:
    out = case(discard_pile_bottom_to_top=["5H", "9S", "5D", "5C"], hand=["2H"], take="9S")
    assert out["result"] == "illegal"
    out = case(discard_pile_bottom_to_top=["9S", "5D", "5C"], hand=["5H"], take="5D")
    assert out["result"] == "legal" and sorted(out["meld"]) == ["5C", "5D", "5H"]


def test_a_meld_case_refuses_one_card_twice_even_with_two_decks() -> None:
    assert case(meld="7H 7H 7S", decks=2)["result"] is None
    assert case(meld="7H 7S 7D 7C")["result"] == "set"


def test_a_score_case_takes_the_low_ace_option_and_lay_offs() -> None:
    assert case(melded=["AH 2H 3H"], in_hand=["AS"])["result"] == 20 - 15
    assert case(melded=["AH 2H 3H"], in_hand=["AS"], low_ace_one=True)["result"] == 6 - 15
    assert (
        case(melded=["2H 3H 4H"], laid_off=[["AH", 0]], in_hand=[], low_ace_one=True)["result"]
        == 9 + 1
    )


def test_a_standing_case_names_the_highest_over_the_target_or_a_tie_break() -> None:
    assert case(totals={"A": 480, "B": 470}, round={"A": 40, "B": 60})["result"] == "B"
    assert case(totals={"A": 520, "B": 520})["result"] == "tie_break"
    assert case(totals={"A": -20, "B": 499})["result"] is None


def test_a_malformed_rummy500_case_is_an_error_line() -> None:
    (out,) = answer({"id": "bad", "game": "rummy500", "input": {"meld": "ZZ"}})
    assert out["id"] == "bad" and "error" in out
