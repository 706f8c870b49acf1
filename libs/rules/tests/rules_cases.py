"""The rules cases the tests judge: ``libs/rules/tests/data/rules-cases.jsonl``, in the repository.

One JSON object a line, each a worked case with its expected outcome and a one-line reason
(13-card and 14-card Indian hands, single groups, other games the CLI reports unsupported). The
file is the project's own copy of the team's notes (``rules-cases.jsonl`` in the shared notes
folder beside the repository, where new cases arrive first); when new cases appear there, copy
the file over this one by hand, point any reason that cites the team's design at its section of
``docs/rules/`` (``tests/test_rules_docs.py`` fails otherwise), and commit it. Nothing reads the
notes folder at run time: a clone has only this copy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CASES_PATH = Path(__file__).resolve().parent / "data" / "rules-cases.jsonl"


def cases_path() -> Path:
    """The cases file inside the repository (raises FileNotFoundError if it is missing)."""
    if not CASES_PATH.is_file():
        raise FileNotFoundError(f"the rules cases are missing: {CASES_PATH} is not a file")
    return CASES_PATH


def load_cases(*games: str) -> list[dict[str, Any]]:
    """Every case of the given games, in file order."""
    lines = cases_path().read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    return [c for c in cases if c["game"] in games]


def run_cli(stdin: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    """``python -m rummy_rules evaluate *args`` fed ``stdin``: its exit status and the JSON
    object of each line it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "rummy_rules", "evaluate", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]
