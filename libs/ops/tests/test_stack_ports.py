"""The ports ``rummy demo``/``rummy up`` listen on: the table's (``rummy_platform.ports``), each
moved by its own variable; a malformed one refuses the start with status 2 before anything
runs, naming it; the free ports of a second stack (``RUMMY_FREE_PORTS``); the secured local
broker's principals (``RUMMY_KAFKA_SECURE=1``). (A taken port, through real processes:
tests/integration/test_port_in_use.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rummy_ops.certs import TLS_VARIABLES
from rummy_ops.cli import main
from rummy_ops.stack import (
    FREE_PORTS_VARIABLE,
    SERVICES,
    Stack,
    StackConfig,
    StackError,
    broker_ports,
    free_port,
    stack_ports,
)
from rummy_platform.eventlog import KAFKA_SECURITY_VARIABLES, KafkaCredentials
from rummy_platform.ports import DEFAULT_PORTS, KAFKA_CONTROLLER_PORT, KAFKA_PORT, POSTGRES_PORT
from rummy_testing.token_keys import suite_key_files


def test_the_stack_listens_on_the_tables_ports_unless_a_variable_moves_one() -> None:
    assert stack_ports({}) == dict(DEFAULT_PORTS)
    moved = stack_ports({"RUMMY_LEDGER_METRICS_PORT": "21103", "RUMMY_TABLE_GRPC_PORT": ""})
    assert moved == {**DEFAULT_PORTS, "ledger": (DEFAULT_PORTS["ledger"][0], 21103)}


def test_the_stack_names_each_port_with_its_listener_and_variable() -> None:
    config = StackConfig.from_env(token_keys=suite_key_files(), ports=stack_ports({}))
    listed = {(p.port, p.listener, p.variable) for p in Stack(config).listening_ports()}
    table_grpc, clock_metrics = DEFAULT_PORTS["table"][0], DEFAULT_PORTS["clock"][1]
    assert (table_grpc, "the table service's gRPC server", "RUMMY_TABLE_GRPC_PORT") in listed
    clock = "the clock service's metrics (/metrics) server"
    assert (clock_metrics, clock, "RUMMY_CLOCK_METRICS_PORT") in listed
    assert len(listed) == 2 * len(DEFAULT_PORTS)


def test_the_brokers_ports_are_the_tables_unless_deploy_locals_variables_move_them() -> None:
    ports = {kind: [p.port for p in listed] for kind, listed in broker_ports({}).items()}
    assert ports == {"kafka": [KAFKA_PORT, KAFKA_CONTROLLER_PORT], "postgres": [POSTGRES_PORT]}
    (postgres,) = broker_ports({"RUMMY_PG_PORT": "21432"})["postgres"]
    assert (postgres.port, postgres.variable) == (21432, "RUMMY_PG_PORT")


@pytest.mark.parametrize("raw", ["http", "0", "65536", "-1", "15051.5"])
def test_a_port_variable_that_is_no_port_is_refused_naming_it(raw: str) -> None:
    with pytest.raises(
        StackError, match=rf"^RUMMY_TABLE_GRPC_PORT='{raw}': a TCP port 1\.\.65535$"
    ):
        stack_ports({"RUMMY_TABLE_GRPC_PORT": raw})
    with pytest.raises(StackError, match="^RUMMY_KAFKA_PORT="):
        broker_ports({"RUMMY_KAFKA_PORT": raw})


@pytest.mark.parametrize("command", ["up", "demo"])
def test_rummy_refuses_a_malformed_port_variable_with_status_2_before_starting(
    command: str,
) -> None:
    result = CliRunner().invoke(main, [command], env={"RUMMY_DEALER_GRPC_PORT": "x"})
    assert result.exit_code == 2
    assert result.output == "Error: RUMMY_DEALER_GRPC_PORT='x': a TCP port 1..65535\n"


def test_the_stacks_topic_prefix_is_its_own_variable_else_the_one_its_services_inherit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The demo replays the topics its services wrote: a prefix exported in the shell (the
    # services inherit it) is the stack's too, unless the stack's own variables set one.
    monkeypatch.setenv("RUMMY_TOPIC_PREFIX", "shell-")
    inherited = StackConfig.from_env(token_keys=suite_key_files(), ports=stack_ports({}))
    assert Stack(inherited).topic_prefix == "shell-"
    own = StackConfig.from_env(
        token_keys=suite_key_files(),
        ports=stack_ports({}),
        extra_env={"RUMMY_TOPIC_PREFIX": "own-"},
    )
    assert Stack(own).topic_prefix == "own-"
    monkeypatch.delenv("RUMMY_TOPIC_PREFIX")
    assert Stack(inherited).topic_prefix == ""


def test_free_ports_come_from_rummy_free_ports_when_it_names_a_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(FREE_PORTS_VARIABLE, "34900-34909")
    drawn = {free_port() for _ in range(5)}
    assert len(drawn) == 5 and drawn <= set(range(34900, 34910))


@pytest.mark.parametrize("raw", ["34000", "x-y", "35000-34000", "0-10", "34000-70000"])
def test_a_free_ports_range_that_is_none_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(FREE_PORTS_VARIABLE, raw)
    with pytest.raises(StackError, match=f"^RUMMY_FREE_PORTS='{raw}': expected low-high"):
        free_port()


def test_on_the_secured_local_broker_each_service_connects_as_its_own_principal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL", "RUMMY_STATE_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("RUMMY_CERTS_DIR", str(tmp_path / "certs"))
    plain = StackConfig.from_env(tmp_path, token_keys=suite_key_files(), ports=stack_ports({}))
    assert plain.kafka_credentials is None
    leftover = {"RUMMY_KAFKA_USERNAME": "ops", "RUMMY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL"}
    env = plain.service_env("dealer", "127.0.0.1:1", "postgresql://x", leftover)
    assert not set(KAFKA_SECURITY_VARIABLES) & set(env)  # plaintext: none is inherited
    monkeypatch.setenv("RUMMY_KAFKA_SECURE", "1")
    secured = StackConfig.from_env(tmp_path, token_keys=suite_key_files(), ports=stack_ports({}))
    credentials = secured.kafka_credentials
    assert credentials == KafkaCredentials(
        tmp_path / ".local" / "kafka" / "credentials", tmp_path / "certs" / "ca.pem"
    )
    for service in SERVICES:
        env = secured.service_env(service, "127.0.0.1:1", "postgresql://x", leftover)
        assert {v: env[v] for v in KAFKA_SECURITY_VARIABLES} == {
            "RUMMY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "RUMMY_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "RUMMY_KAFKA_USERNAME": service,
            "RUMMY_KAFKA_PASSWORD_FILE": str(credentials.directory / f"{service}.password"),
            "RUMMY_KAFKA_CA_FILE": str(tmp_path / "certs" / "ca.pem"),
        }
    # Brokers named in the environment are used as given: the local broker's users are not theirs.
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")
    monkeypatch.setenv("DATABASE_URL", "postgresql://x")
    external = StackConfig.from_env(tmp_path, token_keys=suite_key_files(), ports=stack_ports({}))
    assert external.kafka_credentials is None


def test_the_stack_serves_mutual_tls_unless_rummy_insecure_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("RUMMY_INSECURE", raising=False)
    secure = StackConfig.from_env(tmp_path, token_keys=suite_key_files(), ports=stack_ports({}))
    assert secure.tls_dir == tmp_path / ".local" / "certs"
    env = secure.service_env("ledger", "127.0.0.1:1", "postgresql://x", {})
    assert env["RUMMY_TLS_CERT_FILE"] == str(tmp_path / ".local" / "certs" / "ledger.pem")
    monkeypatch.setenv("RUMMY_INSECURE", "1")
    plain = StackConfig.from_env(tmp_path, token_keys=suite_key_files(), ports=stack_ports({}))
    assert plain.tls_dir is None
    leftover = dict.fromkeys(TLS_VARIABLES, "leftover.pem")
    env = plain.service_env("ledger", "127.0.0.1:1", "postgresql://x", leftover)
    assert not set(TLS_VARIABLES) & set(env)  # plaintext: none is inherited
    monkeypatch.setenv("RUMMY_INSECURE", "maybe")
    with pytest.raises(StackError, match="RUMMY_INSECURE"):
        StackConfig.from_env(tmp_path, token_keys=suite_key_files(), ports=stack_ports({}))
