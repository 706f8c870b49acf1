"""The checkout's own files, for the tests that read the whole tree (links, citations, ports)."""

from __future__ import annotations

import subprocess
from pathlib import Path

#: The repository's root.
ROOT = Path(__file__).resolve().parents[3]


def checkout_files() -> list[Path]:
    """Every file of the checkout: tracked, plus new files git does not ignore, sorted."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    names = sorted({name for name in listed.decode().split("\0") if name})
    return [ROOT / name for name in names if (ROOT / name).is_file()]
