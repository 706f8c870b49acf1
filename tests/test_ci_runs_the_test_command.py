"""CI runs README's test command and nothing else around it that the tests could read: ``.ci/run``
exports no variable, and no test reads ``CI`` (the variable CI systems set), so a user's
``bash deploy/local/test.sh`` and CI's are the same run (issue 26)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A read of ``CI`` from the environment: ``os.environ.get("CI")``, ``os.environ["CI"]``,
#: ``getenv("CI")``, ``"CI" in os.environ`` (a write, ``env["CI"] = ...``, is not a read).
READS_CI = re.compile(
    r"""environ\.get\(\s*["']CI["']|environ\[\s*["']CI["']\s*\](?!\s*=[^=])|getenv\(\s*["']CI["']"""
    r"""|["']CI["']\s+(not\s+)?in\s+(os\.)?environ"""
)


def test_dot_ci_run_exports_nothing_and_runs_the_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert not re.findall(r"^\s*(?:export|eval|declare -x)\b.*$", script, re.M)
    assert "bash .ci/test-in-clone" in script
    clone = (ROOT / ".ci" / "test-in-clone").read_text()
    assert 'bash deploy/local/test.sh "$@"' in clone
    assert not re.findall(r"^\s*(?:export|eval)\b.*$", clone, re.M)


def test_no_test_reads_the_ci_variable() -> None:
    sources = [
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("libs/*/tests/**/*.py"),
        *ROOT.glob("services/*/tests/**/*.py"),
        *ROOT.glob("services/*/conftest.py"),
    ]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted(sources)
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if READS_CI.search(line)
    ]
    assert found == []


def test_the_scan_finds_a_read_of_the_ci_variable() -> None:
    for line in (
        'os.environ.get("CI", "")',
        "os.environ['CI']",
        'getenv("CI")',
        'if "CI" in os.environ:',
    ):
        assert READS_CI.search(line), line
    for line in ('env["CI"] = "true"', 'monkeypatch.setenv("CI", ci)', 'k != "CI"'):
        assert not READS_CI.search(line), line
