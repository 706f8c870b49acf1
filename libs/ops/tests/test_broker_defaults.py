"""The brokers an ops command reads by default (rummy_ops.broker_defaults): KAFKA_BOOTSTRAP_SERVERS
/ DATABASE_URL when set, else the local brokers on RUMMY_KAFKA_PORT / RUMMY_PG_PORT (as
``deploy/local`` starts them), else the table of ports; ``--help`` shows the default in force."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rummy_ops.broker_defaults import default_database_url, default_kafka_bootstrap
from rummy_ops.cli import main
from rummy_platform.ports import KAFKA_PORT, POSTGRES_PORT

KAFKA_COMMANDS = [
    ["replay", "--all"],
    ["export", "--all", "-o", "{tmp}/out.jsonl"],
    ["proof", "--hand", "h-1", "-o", "{tmp}/proof.json"],
    ["audit"],
]
#: Moved brokers: nothing listens on port 1.
MOVED = {"RUMMY_KAFKA_PORT": "1", "RUMMY_PG_PORT": "2"}
UNSET = {"KAFKA_BOOTSTRAP_SERVERS": None, "DATABASE_URL": None}


def test_the_defaults_follow_the_port_variables_and_yield_to_the_addresses_given() -> None:
    assert default_kafka_bootstrap({}) == f"127.0.0.1:{KAFKA_PORT}"
    assert default_database_url({}) == f"postgresql://rummy:rummy@127.0.0.1:{POSTGRES_PORT}/rummy"
    assert default_kafka_bootstrap(MOVED) == "127.0.0.1:1"
    assert default_database_url(MOVED) == "postgresql://rummy:rummy@127.0.0.1:2/rummy"
    given = {**MOVED, "KAFKA_BOOTSTRAP_SERVERS": "k:9", "DATABASE_URL": "postgresql://x/y"}
    assert default_kafka_bootstrap(given) == "k:9"
    assert default_database_url(given) == "postgresql://x/y"


@pytest.mark.parametrize("command", KAFKA_COMMANDS, ids=lambda c: c[0])
def test_a_command_reads_the_broker_moved_by_rummy_kafka_port(
    command: list[str], tmp_path: Path
) -> None:
    args = [a.format(tmp=tmp_path) for a in command]
    result = CliRunner(env={**MOVED, **UNSET}).invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "Error: cannot reach Kafka at 127.0.0.1:1: " in result.output, result.output


@pytest.mark.parametrize(
    "command", [*(c[:1] for c in KAFKA_COMMANDS), ["backup"], ["restore"]], ids=lambda c: c[0]
)
def test_the_help_shows_the_default_in_force(command: list[str]) -> None:
    moved = " ".join(
        CliRunner(env={**MOVED, **UNSET}).invoke(main, [*command, "--help"]).output.split()
    )
    assert "default: 127.0.0.1:1]" in moved, moved
    given = {"KAFKA_BOOTSTRAP_SERVERS": "k:9", "DATABASE_URL": "postgresql://u:secret@x/y"}
    shown = " ".join(CliRunner(env=given).invoke(main, [*command, "--help"]).output.split())
    assert "default: k:9]" in shown, shown
    if command[0] in ("backup", "restore"):
        assert "default: postgresql://rummy:***@127.0.0.1:2/rummy]" in moved, moved
        assert "default: postgresql://u:***@x/y]" in shown, shown
    assert ":secret@" not in shown
