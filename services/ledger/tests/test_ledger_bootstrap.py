"""Starting the ledger: configuration errors end the process with status 2 and say what is
missing; the crash-test fault points are off unless RUMMY_FAULT_POINT names them."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from rummy_ledger.bootstrap import SETTLEMENT_BEFORE_PUBLISH, settlement_fault
from rummy_testing.token_keys import token_environment


def _start(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RUMMY_", "DATABASE_URL"))}
    base.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    return subprocess.run(
        [sys.executable, "-m", "rummy_ledger"],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.integration
def test_the_ledger_without_the_token_public_keys_exits_2_naming_the_variable() -> None:
    done = _start({})
    assert done.returncode == 2
    assert "RUMMY_TOKEN_PUBLIC_KEYS_FILE is not set" in done.stderr


@pytest.mark.integration
def test_the_ledger_without_its_brokers_exits_2_naming_them() -> None:
    done = _start(token_environment())
    assert done.returncode == 2
    assert done.stderr == (
        "rummy ledger: configuration error: DATABASE_URL and KAFKA_BOOTSTRAP_SERVERS must be set\n"
    )


def test_no_fault_point_is_armed_unless_the_setting_names_it() -> None:
    no_pool: Any = None
    for armed in (None, "outbox-before-append"):
        assert settlement_fault(no_pool, SETTLEMENT_BEFORE_PUBLISH, armed) is None
    assert settlement_fault(no_pool, SETTLEMENT_BEFORE_PUBLISH, SETTLEMENT_BEFORE_PUBLISH)
