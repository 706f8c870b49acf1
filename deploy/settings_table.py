"""Write docs/configuration.md's table of environment variables from the five services'
settings classes (``rummy_<service>.config``, over ``rummy_platform.config.Settings``): the
one place of truth.

    .venv/bin/python deploy/settings_table.py           # rewrite the table in docs/configuration.md
    .venv/bin/python deploy/settings_table.py --check   # exit 1 if docs/configuration.md differs

``tests/test_settings_sources.py`` runs ``--check``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rummy_clock.config import ClockSettings
from rummy_dealer.config import DealerSettings
from rummy_fairness.config import FairnessSettings
from rummy_ledger.config import LedgerSettings
from rummy_platform.settings_doc import markdown_table, splice, variable_rows
from rummy_table.config import TableSettings

DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
PROCESSES = (
    ("table", TableSettings),
    ("dealer", DealerSettings),
    ("ledger", LedgerSettings),
    ("fairness", FairnessSettings),
    ("clock", ClockSettings),
)


def rendered(document: str) -> str:
    """``document`` (docs/configuration.md's text) with the generated table in place."""
    names = [name for name, _ in PROCESSES]
    return splice(document, markdown_table(variable_rows(PROCESSES), names))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 on a difference")
    args = parser.parse_args()
    document = DOCUMENT.read_text(encoding="utf-8")
    wanted = rendered(document)
    if args.check:
        if wanted != document:
            print(
                "docs/configuration.md's table of variables differs from the settings classes: run "
                ".venv/bin/python deploy/settings_table.py",
                file=sys.stderr,
            )
            return 1
        return 0
    DOCUMENT.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
