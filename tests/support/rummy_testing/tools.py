"""Executables some tests need beside Python (node, chromium, prometheus, promtool): found, or
the test fails saying how to install it.

README's test command (``bash deploy/local/test.sh``) installs them from Debian's packages before
any test that may need one runs (``deploy/local/{node,chromium,prometheus}.sh install``), so a
missing one is a broken install, never a reason to skip: the test fails, the same everywhere (no
variable such as ``CI`` changes that).
"""

from __future__ import annotations

import shutil

import pytest


def required_executable(name: str, install: str) -> str:
    """The path of executable ``name`` (``PATH`` lookup, or an absolute path that exists); when
    missing, fails the test with ``name is not installed`` and ``install``, the command that
    installs it (e.g. ``bash deploy/local/node.sh install``)."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"{name} is not installed: as root, {install} (bash deploy/local/test.sh installs it "
            "before the tests that need it)",
            pytrace=False,
        )
    return found
