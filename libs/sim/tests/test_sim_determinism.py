"""The simulator is replayable: the same seed gives the same trace and the same log, byte for
byte, in one process and in two processes with different PYTHONHASHSEED."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rummy_sim.run import run_seed

#: The environment's `rummy` command, beside its interpreter.
RUMMY = Path(sys.executable).with_name("rummy")


def test_the_same_seed_gives_the_same_trace_and_log() -> None:
    first, second = run_seed(11), run_seed(11)
    assert first.trace == second.trace
    assert first.trace_hash == second.trace_hash
    assert first.steps > 0 and first.hands == 3


def test_another_seed_gives_another_world() -> None:
    assert run_seed(11).trace_hash != run_seed(12).trace_hash


def _hash_in_process(seed: int, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [str(RUMMY), "sim", "--seed", str(seed), "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    summary = json.loads(out.strip().splitlines()[-1])
    trace_hash: str = summary["trace_hash"]
    return trace_hash


@pytest.mark.integration
def test_two_processes_with_different_hash_seeds_give_the_same_trace_hash() -> None:
    # integration: it starts two Python processes (the `rummy sim` command)
    assert _hash_in_process(5, "1") == _hash_in_process(5, "2") == run_seed(5).trace_hash
