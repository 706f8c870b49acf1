"""The supervisor: services as processes with their environment, SERVING before start() returns,
logs per service, a crash reported with its log, a taken port refused, everything stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from rummy_ops.restart_policy import RestartPolicy
from rummy_ops.stack import (
    Stack,
    StackConfig,
    StackError,
    _parse_exports,
    check_health,
    free_port,
    repository_root,
)
from rummy_ops.supervisor import Supervisor
from rummy_platform.port_check import PortInUse
from rummy_testing.token_keys import suite_key_files

#: slow: the five services as processes, their supervisor killed (docs/testing.md#tests).
pytestmark = pytest.mark.slow

FAKES = Path(__file__).parent / "fake_services"


def config(tmp_path: Path, *services: str, **overrides: object) -> StackConfig:
    fields: dict[str, object] = dict(
        root=repository_root(),
        token_keys=suite_key_files(),
        log_dir=tmp_path / "logs",
        services=services,
        ports={name: (free_port(), free_port()) for name in services},
        clock_speed=20.0,
        kafka_bootstrap_servers="kafka.example:9092",
        database_url="postgresql://u:p@db.example/rummy",
        extra_env={"PYTHONPATH": str(FAKES), "RUMMY_TOPIC_PREFIX": "t1-"},
        health_timeout_seconds=30,
        stop_grace_seconds=5,
    )
    return StackConfig(**(fields | overrides))  # type: ignore[arg-type]


def test_a_service_gets_the_brokers_ports_key_files_speed_and_every_services_address(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, "fakehealthy", "fakecrash")
    base = {"PATH": "/bin", "RUMMY_TOKEN_SIGNING_KEY_FILE": "/the/issuers/key.pem"}
    env = cfg.service_env("fakehealthy", "k:1", "postgresql://x", base)
    grpc_port, metrics_port = cfg.ports["fakehealthy"]
    assert env["KAFKA_BOOTSTRAP_SERVERS"] == "k:1" and env["DATABASE_URL"] == "postgresql://x"
    assert env["RUMMY_GRPC_PORT"] == str(grpc_port)
    assert env["RUMMY_METRICS_PORT"] == str(metrics_port)
    keys = suite_key_files()
    assert env["RUMMY_TOKEN_PUBLIC_KEYS_FILE"] == str(keys.issuer_public_keys)
    assert env["RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE"] == str(keys.service_public_keys)
    assert env["RUMMY_SERVICE_TOKEN_KEY_FILE"] == str(keys.service_key)
    assert "RUMMY_TOKEN_SIGNING_KEY_FILE" not in env  # the issuer's private key: never a service's
    assert float(env["RUMMY_CLOCK_SPEED"]) == 20.0
    assert env["RUMMY_FAKECRASH_ADDRESS"] == f"127.0.0.1:{cfg.ports['fakecrash'][0]}"
    assert env["RUMMY_TOPIC_PREFIX"] == "t1-" and env["PATH"] == "/bin"


def test_a_stack_without_token_keys_starts_no_service(tmp_path: Path) -> None:
    cfg = config(tmp_path, "fakehealthy", token_keys=None)
    with pytest.raises(StackError, match="no token keys"):
        cfg.service_env("fakehealthy", "k:1", "postgresql://x", {})


def test_a_supervised_stack_gives_each_service_its_own_pid_and_an_unsupervised_one_none(
    tmp_path: Path,
) -> None:
    supervised = config(tmp_path, "fakehealthy")
    env = supervised.service_env("fakehealthy", "k:1", "postgresql://x", {})
    assert env["RUMMY_SUPERVISOR_PID"] == str(os.getpid())
    unsupervised = config(tmp_path, "fakehealthy", supervised=False)
    inherited = {"RUMMY_SUPERVISOR_PID": "1"}
    env = unsupervised.service_env("fakehealthy", "k:1", "postgresql://x", inherited)
    assert "RUMMY_SUPERVISOR_PID" not in env


@pytest.mark.integration
def test_a_supervised_stack_refuses_to_be_left_running(tmp_path: Path) -> None:
    with (
        Stack(config(tmp_path, "fakehealthy")) as stack,
        pytest.raises(StackError, match="supervised=False"),
    ):
        stack.detach()


def test_stack_sh_env_output_is_read_with_its_shell_quoting() -> None:
    text = (
        "export KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:19092\nexport DATABASE_URL='postgresql://a b'\n"
    )
    assert _parse_exports(text) == {
        "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:19092",
        "DATABASE_URL": "postgresql://a b",
    }


@pytest.mark.integration
def test_start_returns_with_the_service_serving_and_stop_ends_it(tmp_path: Path) -> None:
    stack = Stack(config(tmp_path, "fakehealthy"))
    with stack:
        assert stack.health() == {"fakehealthy": "SERVING"}
        address = stack.address("fakehealthy")
    assert check_health(address, timeout=0.5) == "no answer"
    log = stack.log_path("fakehealthy").read_text()
    assert "KAFKA_BOOTSTRAP_SERVERS=kafka.example:9092" in log
    assert "RUMMY_TOPIC_PREFIX=t1-" in log
    assert "stopped on SIGTERM" in log


@pytest.mark.integration
def test_a_service_that_exits_while_starting_fails_the_start_with_its_log_and_stops_the_rest(
    tmp_path: Path,
) -> None:
    stack = Stack(config(tmp_path, "fakehealthy", "fakecrash"))
    with pytest.raises(StackError, match="fakecrash exited with status 3") as failure:
        stack.start()
    assert "configuration error: nothing works" in str(failure.value)
    assert check_health(stack.address("fakehealthy"), timeout=0.5) == "no answer"
    assert stack.health() == {}


@pytest.mark.integration
def test_a_port_already_taken_is_refused_naming_it_its_holder_and_its_variable(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, "fakehealthy")
    grpc_port = cfg.ports["fakehealthy"][0]
    with Stack(cfg) as first:
        holder = first.pids["fakehealthy"]
        with pytest.raises(PortInUse) as refused:
            Stack(cfg).start()
    assert str(refused.value) == (
        f"port {grpc_port}, wanted by the fakehealthy service's gRPC server, is in use by pid "
        f"{holder} ({sys.executable} -m rummy_fakehealthy): stop that process or set "
        "RUMMY_FAKEHEALTHY_GRPC_PORT to a free port"
    )


SUPERVISOR = """
import sys, time
from pathlib import Path
from rummy_ops.stack import Stack, StackConfig, interrupt_on_sigterm, shielded_from_interrupts
from rummy_platform.token_keys import key_files
config = StackConfig(
    root=Path(sys.argv[1]), token_keys=key_files(Path(sys.argv[6])), log_dir=Path(sys.argv[2]),
    services=("fakehealthy",), ports={"fakehealthy": (int(sys.argv[3]), int(sys.argv[4]))},
    kafka_bootstrap_servers="k:1", database_url="postgresql://x",
    extra_env={"PYTHONPATH": sys.argv[5]}, stop_grace_seconds=5,
)
stack = Stack(config)
with interrupt_on_sigterm():
    try:
        stack.start()
        print("up", flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        with shielded_from_interrupts():
            stack.stop()
"""


@pytest.mark.integration
def test_sigterm_to_the_supervisor_stops_the_services_it_started(tmp_path: Path) -> None:
    grpc_port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SUPERVISOR,
            str(repository_root()),
            str(tmp_path),
            str(grpc_port),
            str(free_port()),
            str(FAKES),
            str(suite_key_files().issuer_key.parent),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "up"
        assert check_health(f"127.0.0.1:{grpc_port}") == "SERVING"
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        assert "interrupted" in process.stdout.read()
    finally:
        process.kill()
    assert check_health(f"127.0.0.1:{grpc_port}", timeout=0.5) == "no answer"
    assert "stopped on SIGTERM" in (tmp_path / "fakehealthy.log").read_text()


@pytest.mark.integration
def test_a_service_that_dies_later_is_named_by_broken(tmp_path: Path) -> None:
    with Stack(config(tmp_path, "fakehealthy")) as stack:
        assert stack.broken() is None
        os.kill(stack.pids["fakehealthy"], signal.SIGKILL)
        deadline = time.monotonic() + 10
        while stack.broken() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "fakehealthy exited with status -9" in (stack.broken() or "")
        assert stack.health() == {"fakehealthy": "exited (-9)"}


@pytest.mark.integration
def test_a_supervised_service_killed_is_respawned_serving_and_killed_once_too_often_given_up(
    tmp_path: Path,
) -> None:
    said: list[str] = []
    policy = RestartPolicy(first_delay_s=0.1, max_delay_s=0.2, max_restarts=2)
    with Stack(config(tmp_path, "fakehealthy")) as stack:
        supervisor = Supervisor(stack, said.append, policy=policy)
        address = stack.address("fakehealthy")
        for restart in (1, 2):
            old = stack.pids["fakehealthy"]
            os.kill(old, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while not (stack.pids["fakehealthy"] != old and check_health(address) == "SERVING"):
                assert time.monotonic() < deadline, said
                supervisor.tick()
                time.sleep(0.05)
            assert (
                said[-1]
                == f"restarted fakehealthy (pid {stack.pids['fakehealthy']}, restart {restart})"
            )
        assert "(restarts 2, last exit -9 (SIGKILL))" in supervisor.status()
        os.kill(stack.pids["fakehealthy"], signal.SIGKILL)
        deadline = time.monotonic() + 30
        with pytest.raises(StackError, match=r"fakehealthy exited 3 times within 10 minutes"):
            while time.monotonic() < deadline:
                supervisor.tick()
                time.sleep(0.05)


def test_brokers_named_in_the_environment_are_used_and_never_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka-1.example:9092")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@db.example/rummy")
    cfg = StackConfig.from_env(clock_speed=4.0)
    assert cfg.external_infrastructure
    assert cfg.kafka_bootstrap_servers == "kafka-1.example:9092"
    assert cfg.clock_speed == 4.0
    assert cfg.keys.issuer_key == repository_root() / ".local" / "token-keys" / "issuer.key.pem"
    assert cfg.log_dir == repository_root() / ".local" / "logs"


def test_with_only_one_broker_named_the_local_brokers_are_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "kafka-1.example:9092")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert not StackConfig.from_env().external_infrastructure


REAL_SUPERVISOR = """
import json, sys, time
from pathlib import Path
from rummy_ops.stack import stack_for_tests
stack = stack_for_tests(
    Path(sys.argv[1]), sys.argv[2], sys.argv[3], topic_prefix=sys.argv[4], clock_speed=10.0,
    log_dir=Path(sys.argv[5]), services=("dealer", "clock"),
)
stack.start()
print(json.dumps({"pids": stack.pids, "addresses": {s: stack.address(s) for s in stack.pids}}),
      flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (absent, or a zombie its new parent has not reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def test_real_services_stop_on_their_own_when_their_supervisor_is_sigkilled(
    tmp_path: Path, kafka_bootstrap: str, database_url: str
) -> None:
    supervisor = subprocess.Popen(
        [
            sys.executable,
            "-c",
            REAL_SUPERVISOR,
            str(repository_root()),
            kafka_bootstrap,
            database_url,
            f"orphans-{uuid.uuid4().hex[:8]}-",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert supervisor.stdout is not None
    started = json.loads(supervisor.stdout.readline() or "{}")
    pids: dict[str, int] = started.get("pids", {})
    try:
        assert set(pids) == {"dealer", "clock"}, "the stack did not start"
        assert all(check_health(a) == "SERVING" for a in started["addresses"].values())
        supervisor.kill()
        supervisor.wait(10)
        deadline = time.monotonic() + 30  # a watch period, then the normal graceful shutdown
        while not all(_gone(pid) for pid in pids.values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert {s for s, pid in pids.items() if not _gone(pid)} == set()
        for service, address in started["addresses"].items():
            assert check_health(address, timeout=0.5) == "no answer"
            log = (tmp_path / f"{service}.log").read_text()
            assert "supervisor gone; shutting down" in log and "service stopped" in log
    finally:
        supervisor.kill()
        for pid in pids.values():
            if not _gone(pid):
                os.killpg(pid, signal.SIGKILL)
