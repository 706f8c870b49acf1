"""``.ci/test-in-clone``, the step of ``.ci/run`` that runs the suite from a clone in an empty
folder: the tests that need the repository's own files pass there, a run that collects no tests
fails, and the folder is removed afterwards. Each test clones this checkout's HEAD (committed work
only) and syncs the clone's own .venv from uv's cache: a few seconds."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: slow and integration: a git clone, and pytest run in it as a process (docs/testing.md#tests).
pytestmark = [pytest.mark.slow, pytest.mark.integration]

SCRIPT = ROOT / ".ci" / "test-in-clone"


def run_in_clone(*pytest_args: str) -> tuple[int, str, Path]:
    """Run the script with ``pytest_args``; returns its status, its output and the clone's path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        ["bash", str(SCRIPT), "-p", "no:randomly", "-q", *pytest_args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    output = done.stdout + done.stderr
    found = re.search(r"into an empty folder \((.+)\)", output)
    assert found, output
    return done.returncode, output, Path(found.group(1))


def test_the_rules_cases_and_the_readme_example_pass_from_a_clone_with_nothing_beside_it() -> None:
    status, output, clone = run_in_clone(
        "libs/rules/tests/test_cli_cases.py", "tests/test_self_contained.py"
    )
    assert status == 0, output
    assert re.search(r"\d+ passed", output) and "failed" not in output, output
    assert not clone.parent.exists()


def test_a_run_that_collects_no_tests_fails() -> None:
    status, output, clone = run_in_clone("tests/test_self_contained.py", "-k", "no_such_test")
    assert status == 5, output
    assert "pytest collected no tests (exit 5): that is a failure" in output
    assert not clone.parent.exists()
