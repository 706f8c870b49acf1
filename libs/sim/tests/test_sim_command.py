"""`rummy sim`: one seed's line and its trace, a range's JSON summary, the usage errors."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rummy_ops.cli import main
from rummy_sim.run import run_seed


def test_one_seed_prints_its_line_with_the_trace_hash() -> None:
    result = CliRunner().invoke(main, ["sim", "--seed", "3", "--hands", "1"])
    assert result.exit_code == 0, result.output
    run = run_seed(3, hands=1)
    assert result.output.startswith(f"seed 3: {run.hands} hands in {run.steps} steps")
    assert result.output.rstrip().endswith(f"trace {run.trace_hash}")


def test_a_range_prints_one_json_summary() -> None:
    result = CliRunner().invoke(main, ["sim", "--seeds", "1-2", "--hands", "1", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["seeds"] == 2 and summary["hands"] == 2 and summary["violations"] == []
    assert set(summary) >= {"steps", "endings", "faults", "hands_per_cpu_s", "trace_hash"}


def test_it_wants_one_seed_or_one_range() -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["sim"]).exit_code == 2
    assert runner.invoke(main, ["sim", "--seed", "1", "--seeds", "1-2"]).exit_code == 2
    assert runner.invoke(main, ["sim", "--seeds", "3-1"]).exit_code == 2
    assert runner.invoke(main, ["sim", "--seeds", "a-b"]).exit_code == 2
    assert runner.invoke(main, ["sim", "--seeds", "1-"]).exit_code == 2
