"""Every indian13, indian14 and indian-group case of the rules cases, through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rules_cases import cases_path, load_cases, run_cli

from rummy_rules.cards import parse_cards, parse_rank
from rummy_rules.cli import evaluate_stream
from rummy_rules.console import CLOSED_PIPE_STATUS
from rummy_rules.melds import MeldKind, MeldOptions, classify_group
from rummy_rules.wild import card_points

GAMES = ("indian13", "indian14", "indian-group")
#: The CLI's exit status and its answer to each case, by case id.
Results = tuple[int, dict[str, dict[str, Any]]]


@pytest.fixture(scope="module")
def cli_results() -> Results:
    status, out = run_cli(cases_path().read_text(encoding="utf-8"))
    return status, {o["id"]: o for o in out}


def test_the_cases_file_has_cases_of_every_game_this_cli_judges() -> None:
    for game in GAMES:
        assert load_cases(game), game


def test_the_whole_cases_file_parses_so_the_cli_exits_zero(cli_results: Results) -> None:
    status, results = cli_results
    assert status == 0
    assert not [
        o for o in results.values() if "error" in o and "unsupported game" not in o["error"]
    ]


@pytest.mark.parametrize("case", load_cases("indian13"), ids=lambda c: c["id"])
def test_indian13_case_gives_the_expected_validity_and_points(
    cli_results: Results, case: dict[str, Any]
) -> None:
    out = cli_results[1][case["id"]]
    assert set(out) == {"id", "valid", "points", "melds", "deadwood"}
    assert (out["valid"], out["points"]) == (case["expected"]["valid"], case["expected"]["points"])
    # The arrangement shown is consistent: every card once, real melds, deadwood worth the points.
    wild = None if case["wild_rank"] is None else parse_rank(case["wild_rank"])
    shown = [c for m in out["melds"] for c in m] + out["deadwood"]
    assert sorted(shown) == sorted(case["cards"])
    assert all(classify_group(parse_cards(m), wild) is not None for m in out["melds"])
    assert sum(card_points(c, wild) for c in parse_cards(out["deadwood"])) == out["points"]
    assert out["valid"] == (not out["deadwood"] and len(out["melds"]) >= 2)


@pytest.mark.parametrize("case", load_cases("indian14"), ids=lambda c: c["id"])
def test_indian14_case_gives_the_expected_discards(
    cli_results: Results, case: dict[str, Any]
) -> None:
    out = cli_results[1][case["id"]]
    assert out == {
        "id": case["id"],
        "can_declare": case["expected"]["can_declare"],
        "valid_discards": case["expected"]["valid_discards"],
    }


@pytest.mark.parametrize("case", load_cases("indian-group"), ids=lambda c: c["id"])
def test_indian_group_case_gives_the_expected_type(
    cli_results: Results, case: dict[str, Any]
) -> None:
    assert cli_results[1][case["id"]] == {"id": case["id"], "type": case["expected"]["type"]}


def _option_cases(key: str) -> list[dict[str, Any]]:
    return [c for c in load_cases(*GAMES) if key in c]


def _kind_name(kind: MeldKind | None) -> str:
    names = {
        MeldKind.PURE_SEQUENCE: "pure",
        MeldKind.IMPURE_SEQUENCE: "impure",
        MeldKind.SET: "set",
    }
    return "invalid" if kind is None else names[kind]


@pytest.mark.parametrize("case", _option_cases("if_lenient_duplicate_rule"), ids=lambda c: c["id"])
def test_lenient_duplicate_option_gives_the_case_outcome_through_the_api(
    case: dict[str, Any],
) -> None:
    wild = None if case["wild_rank"] is None else parse_rank(case["wild_rank"])
    kind = classify_group(
        parse_cards(case["cards"]), wild, MeldOptions(strict_duplicate_faces=False)
    )
    assert _kind_name(kind) == case["if_lenient_duplicate_rule"]


@pytest.mark.parametrize(
    "case", _option_cases("if_jokers_only_groups_invalid"), ids=lambda c: c["id"]
)
def test_jokers_only_invalid_option_gives_the_case_outcome_through_the_api(
    case: dict[str, Any],
) -> None:
    wild = None if case["wild_rank"] is None else parse_rank(case["wild_rank"])
    options = MeldOptions(jokers_only_group_is_sequence=False)
    kind = classify_group(parse_cards(case["cards"]), wild, options)
    assert _kind_name(kind) == case["if_jokers_only_groups_invalid"]


def test_option_cases_exist_in_the_cases_file() -> None:
    assert _option_cases("if_lenient_duplicate_rule")
    assert _option_cases("if_jokers_only_groups_invalid")


def test_cli_flags_switch_the_options() -> None:
    lines = "".join(
        json.dumps(c) + "\n"
        for c in _option_cases("if_lenient_duplicate_rule")
        + _option_cases("if_jokers_only_groups_invalid")
    )
    _, lenient = run_cli(lines, "--lenient-duplicate-rule")
    _, strict_jokers = run_cli(lines, "--jokers-only-groups-invalid")
    for case, a, b in zip(
        _option_cases("if_lenient_duplicate_rule") + _option_cases("if_jokers_only_groups_invalid"),
        lenient,
        strict_jokers,
        strict=True,
    ):
        if "if_lenient_duplicate_rule" in case:
            assert a["type"] == case["if_lenient_duplicate_rule"]
        if "if_jokers_only_groups_invalid" in case:
            assert b["type"] == case["if_jokers_only_groups_invalid"]


def test_other_games_are_reported_unsupported_and_malformed_lines_get_an_error() -> None:
    import io

    source = io.StringIO(
        '{"id": "g", "game": "canasta", "cards": []}\n'
        "this is not json\n"
        '{"id": "c", "game": "indian13", "cards": ["ZZ"], "wild_rank": "7"}\n'
        '{"id": "n", "game": "indian13", "cards": ["AH"], "wild_rank": "7"}\n'
        '{"id": "d", "game": "indian-group", "cards": ["7H", "7H", "7H"], "wild_rank": "2",'
        ' "decks": 2}\n'
        '{"id": "ok", "game": "indian-group", "cards": ["QH", "KH", "AH"], "wild_rank": null}\n'
    )
    sink = io.StringIO()
    status = evaluate_stream(source, sink)
    out = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert status == 2
    assert out[0] == {"id": "g", "error": "unsupported game: canasta"}
    assert out[1]["id"] is None and out[1]["error"].startswith("invalid JSON")
    assert [o["id"] for o in out[2:5]] == ["c", "n", "d"] and all("error" in o for o in out[2:5])
    assert out[5] == {"id": "ok", "type": "pure"}


def test_unsupported_games_alone_still_exit_zero() -> None:
    status, out = run_cli('{"id": "r", "game": "canasta", "cards": ["AH"]}\n')
    assert status == 0 and out == [{"id": "r", "error": "unsupported game: canasta"}]


def test_json_too_deep_or_a_number_too_long_is_an_error_line_and_the_run_goes_on() -> None:
    import io

    source = io.StringIO(
        "\ufeff"
        + '{"id": "bom", "game": "indian-group", "cards": ["AH", "2H", "3H"], "wild_rank": null}\n'
        + "[" * 100_000
        + "]" * 100_000
        + "\n"
        + '{"id": "big", "game": "indian13", "decks": '
        + "9" * 5000
        + ', "cards": []}\n'
        + '{"id": "ok", "game": "indian-group", "cards": ["QH", "KH", "AH"], "wild_rank": null}\n'
    )
    sink = io.StringIO()
    assert evaluate_stream(source, sink) == 2
    out = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert out[0] == {"id": "bom", "type": "pure"}
    assert [o["id"] for o in out[1:3]] == [None, None]
    assert all(o["error"].startswith("invalid JSON") for o in out[1:3])
    assert out[3] == {"id": "ok", "type": "pure"}


@pytest.mark.integration
def test_a_reader_that_stops_early_ends_the_run_quietly(tmp_path: Path) -> None:
    # `rummy-rules evaluate < cases | head -1`: the pipe closes while answers are still written
    cases = tmp_path / "cases.jsonl"
    cases.write_text(cases_path().read_text(encoding="utf-8") * 200)  # more than a pipe holds
    with cases.open() as stdin:
        process = subprocess.Popen(
            [sys.executable, "-m", "rummy_rules", "evaluate"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline().startswith("{")
        process.stdout.close()  # the reader goes away
        stderr = process.stderr.read()
        process.wait(timeout=120)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert process.returncode == CLOSED_PIPE_STATUS  # cut short, as click and Python's docs say
