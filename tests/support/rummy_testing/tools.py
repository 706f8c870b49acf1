"""Executables some tests need beside Python (node, chromium): found, or the test is skipped
locally and failed under ``CI=true`` (CI installs them)."""

from __future__ import annotations

import os
import shutil

import pytest


def required_executable(name: str, why: str) -> str:
    """The path of executable ``name`` (``PATH`` lookup, or an absolute path that exists); when
    missing, skips the test, or fails it under ``CI=true``, saying ``why`` it is needed."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{name} is required in CI {why}")
        pytest.skip(f"{name} is not installed")
    return found
