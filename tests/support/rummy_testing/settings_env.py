"""Give a test exactly the settings variables it names: the process's own ``RUMMY_*``,
``KAFKA_BOOTSTRAP_SERVERS`` and ``DATABASE_URL`` are removed first (through pytest's
``monkeypatch``, restored after the test), so a settings class reads only what the test set."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pytest

#: Variables that are settings without the ``RUMMY_`` prefix.
UNPREFIXED = ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL")


def use_settings_environment(monkeypatch: pytest.MonkeyPatch, env: Mapping[str, str]) -> None:
    """Make ``env`` the only settings variables of this process for the rest of the test."""
    for name in list(os.environ):
        if name.startswith("RUMMY_") or name in UNPREFIXED:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
