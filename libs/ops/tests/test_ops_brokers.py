"""``rummy_ops.stack.brokers``, the benchmarks' one way to their brokers: the environment's when
both are named (nothing run), else the checkout's local ones through ``deploy/local/stack.sh``."""

from __future__ import annotations

from pathlib import Path

import pytest

from rummy_ops.stack import StackError, brokers, free_port


def test_brokers_named_in_the_environment_are_yielded_and_nothing_is_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka-1.example:9092")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@db.example/rummy")
    # tmp_path has no deploy/local/stack.sh: running it would fail
    with brokers(tmp_path) as (kafka, database):
        assert (kafka, database) == ("kafka-1.example:9092", "postgresql://u:p@db.example/rummy")


def test_with_one_broker_named_the_local_brokers_are_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka-1.example:9092")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    # ports nothing holds, so the check of the brokers' ports before a start passes whatever runs
    # on this machine (another checkout's brokers on the defaults, say) and the start is reached
    for variable in ("RUMMY_KAFKA_PORT", "RUMMY_KAFKA_CONTROLLER_PORT", "RUMMY_PG_PORT"):
        monkeypatch.setenv(variable, str(free_port()))
    with pytest.raises(StackError, match=r"deploy/local/stack\.sh"), brokers(tmp_path):
        pass
