"""The shared broker fixtures never let a missing broker pass silently, and ``CI`` changes nothing.

Each test runs pytest in a subprocess, with the repository's configuration, on a one-test file that
asks for ``kafka_bootstrap`` while ``KAFKA_BOOTSTRAP_SERVERS`` names a port where nothing listens.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: slow and integration: pytest run as a process, waiting for a broker that never answers
#: (docs/testing.md#tests).
pytestmark = [pytest.mark.slow, pytest.mark.integration]
NOTHING_LISTENS = "127.0.0.1:9"


def run_pytest_on_a_kafka_test(
    tmp_path: Path, *args: str, ci: bool
) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_needs_kafka.py"
    test_file.write_text("def test_needs_kafka(kafka_bootstrap):\n    assert kafka_bootstrap\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"KAFKA_BOOTSTRAP_SERVERS": NOTHING_LISTENS, "RUMMY_BROKER_READY_TIMEOUT": "0"}
    if ci:
        env["CI"] = "true"
    command = [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml")]
    command += ["--rootdir", str(REPO), "-p", "no:cacheprovider", "-q", *args, str(test_file)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("ci", [False, True], ids=["CI-unset", "CI=true"])
def test_a_missing_kafka_broker_fails_the_test_wherever_it_runs(tmp_path: Path, ci: bool) -> None:
    run = run_pytest_on_a_kafka_test(tmp_path, "-rs", ci=ci)
    assert run.returncode == 1, run.stdout
    assert "1 error" in run.stdout and "skipped" not in run.stdout
    assert "no Kafka broker" in run.stdout


def test_a_test_using_a_broker_fixture_is_marked_integration(tmp_path: Path) -> None:
    run = run_pytest_on_a_kafka_test(tmp_path, "-m", "not integration", ci=True)
    assert run.returncode == 5, run.stdout  # pytest: no tests ran
    assert "1 deselected" in run.stdout
