"""The shared rules cases (``shared/notes/rules-cases.jsonl``), read in place, never copied."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

CASES_NAME = "rules-cases.jsonl"


@cache
def cases_path() -> Path:
    """Walk up from this file to the first shared/notes/rules-cases.jsonl; fail loudly if none."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        candidate = folder / "shared" / "notes" / CASES_NAME
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"{CASES_NAME} not found in a shared/notes folder above {here}; the rules tests read the "
        "shared cases in place (expected at ../shared/notes/ next to the repository)"
    )


def load_cases(*games: str) -> list[dict[str, Any]]:
    """Every case of the given games, in file order."""
    lines = cases_path().read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    return [c for c in cases if c["game"] in games]
