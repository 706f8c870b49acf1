"""A service process built on ServiceHost, run for real (``python -m probe_service``).

It must answer gRPC health and reflection without a token, serve Prometheus ``/metrics`` with
the gRPC series, reject calls without a valid token (UNAUTHENTICATED) or with the wrong role
(PERMISSION_DENIED), write JSON logs carrying the call's context, and on SIGTERM finish the
calls in flight and exit 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import jwt
import pytest
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from prometheus_client.parser import text_string_to_metric_families

from rummy.ledger.v1 import ledger_service_pb2 as ledger_pb2
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy_platform.auth import (
    AUDIENCE,
    ISSUER,
    Role,
    TokenAuthority,
    authorized_channel,
    bearer_metadata,
)
from rummy_platform.token_keys import public_pem, read_signing_key
from rummy_testing.token_keys import (
    hs256_token,
    issuer_authority,
    stranger_authority,
    suite_key_files,
    token_environment,
)

#: slow and integration: a server process, stopped by signals (docs/testing.md#tests).
pytestmark = [pytest.mark.slow, pytest.mark.integration]

TESTS_DIR = Path(__file__).resolve().parent
LEDGER = "rummy.ledger.v1.LedgerService"
PROBE = "rummy.probe.v1.ProbeService"
START_TIMEOUT_SECONDS = 20


@dataclass
class ProbeProcess:
    """A running probe service and everything it has written to stderr so far."""

    process: subprocess.Popen[str]
    grpc_port: int = 0
    metrics_port: int = 0
    log_lines: list[dict[str, Any]] = field(default_factory=list)
    other_stderr: list[str] = field(default_factory=list)  # e.g. gRPC core's own warnings
    stdout_lines: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def logs_where(self, **expected: object) -> list[dict[str, Any]]:
        return [
            line
            for line in list(self.log_lines)
            if all(line.get(key) == value for key, value in expected.items())
        ]


#: The two servers a ServiceHost runs: every test here runs against both.
SERVERS = ["sync", "aio"]


def start_probe(server: str = "sync", **extra_env: str) -> ProbeProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]),
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        "RUMMY_LOG_LEVEL": "debug",
        "PROBE_AIO": "1" if server == "aio" else "0",
        **extra_env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "probe_service"],
        cwd=TESTS_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    probe = ProbeProcess(process)
    started = threading.Event()

    def read_stderr() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                probe.other_stderr.append(raw)
                continue
            probe.log_lines.append(line)
            if line.get("event") == "service started":
                probe.grpc_port, probe.metrics_port = line["grpc_port"], line["metrics_port"]
                started.set()

    def read_stdout() -> None:
        assert process.stdout is not None
        probe.stdout_lines.extend(line.rstrip("\n") for line in process.stdout)

    probe.readers = [
        threading.Thread(target=read_stderr, daemon=True),
        threading.Thread(target=read_stdout, daemon=True),
    ]
    for reader in probe.readers:
        reader.start()
    if not started.wait(START_TIMEOUT_SECONDS):
        stop_probe(probe)
        raise AssertionError(f"probe did not start: {probe.log_lines} {probe.other_stderr}")
    return probe


def stop_probe(probe: ProbeProcess) -> None:
    if probe.process.poll() is None:
        probe.process.kill()
    probe.process.wait(5)
    for reader in probe.readers:
        reader.join(5)  # they end at EOF, once the process is gone
    for pipe in (probe.process.stdout, probe.process.stderr):
        if pipe is not None:
            pipe.close()


@pytest.fixture(scope="module", params=SERVERS)
def probe(request: pytest.FixtureRequest) -> Iterator[ProbeProcess]:
    running = start_probe(request.param)
    yield running
    stop_probe(running)


@pytest.fixture(scope="module")
def channel(probe: ProbeProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(probe.target) as opened:
        grpc.channel_ready_future(opened).result(timeout=10)
        yield opened


def token(role: Role, account: str, authority: TokenAuthority | None = None) -> str:
    """A token of ``authority`` (default: the test issuer, whose public keys the probe has)."""
    return (authority or issuer_authority()).issue(account, role)


def call_probe(channel: grpc.Channel, method: str, request: bytes, **kwargs: Any) -> bytes:
    probe: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(f"/{PROBE}/{method}")
    return probe(request, timeout=10, **kwargs)


def wait_for_logs(probe: ProbeProcess, **expected: object) -> list[dict[str, Any]]:
    """The log lines matching ``expected``, waiting up to 5 s for at least one."""
    deadline = time.monotonic() + 5
    while not probe.logs_where(**expected) and time.monotonic() < deadline:
        time.sleep(0.05)
    return probe.logs_where(**expected)


def rpc_error(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value


def test_health_reports_serving_for_the_server_and_each_service_without_a_token(
    channel: grpc.Channel,
) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", LEDGER, PROBE):
        response = health.Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
        assert response.status == health_pb2.HealthCheckResponse.SERVING, service


def test_reflection_lists_every_service_and_describes_generated_ones_without_a_token(
    channel: grpc.Channel,
) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {LEDGER, PROBE, "grpc.health.v1.Health"} <= services
    assert {
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    } <= services
    ledger = DescriptorPool(database).FindServiceByName(LEDGER)  # what `grpcurl describe` does
    assert {method.name for method in ledger.methods} >= {"GetBalance", "Grant"}


def test_a_call_without_a_token_is_unauthenticated(channel: grpc.Channel) -> None:
    stub = ledger_grpc.LedgerServiceStub(channel)
    error = rpc_error(lambda: stub.GetBalance(ledger_pb2.GetBalanceRequest(), timeout=5))
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "authorization" in (error.details() or "")


@pytest.mark.parametrize("secret", ["public-key", "any-secret"])
def test_an_hs256_token_is_unauthenticated_even_keyed_with_the_issuers_public_key(
    channel: grpc.Channel, secret: str
) -> None:
    # HS256 was the old scheme; keyed with the public key's PEM it is the alg-confusion attack.
    now = int(time.time())
    claims = {"sub": "mallory", "role": "operator", "iat": now, "exp": now + 600,
              "iss": ISSUER, "aud": AUDIENCE}  # fmt: skip
    issuer_key = read_signing_key(suite_key_files().issuer_key, "issuer key")
    key = public_pem(issuer_key) if secret == "public-key" else b"s" * 64
    forged = hs256_token(claims, key, {"kid": issuer_authority().key_id})
    error = rpc_error(lambda: call_probe(channel, "Sleep", b"0", metadata=bearer_metadata(forged)))
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "signed with 'HS256'; only EdDSA tokens are accepted" in (error.details() or "")


def test_an_unsigned_token_is_unauthenticated(channel: grpc.Channel) -> None:
    now = int(time.time())
    claims = {"sub": "mallory", "role": "operator", "iat": now, "exp": now + 600,
              "iss": ISSUER, "aud": AUDIENCE}  # fmt: skip
    unsigned = jwt.encode(claims, "", algorithm="none", headers={"kid": issuer_authority().key_id})
    error = rpc_error(
        lambda: call_probe(channel, "Sleep", b"0", metadata=bearer_metadata(unsigned))
    )
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "'none'; only EdDSA" in (error.details() or "")


def test_a_token_signed_by_an_unknown_key_is_unauthenticated(channel: grpc.Channel) -> None:
    forged = token(Role.OPERATOR, "mallory", stranger_authority())
    stub = ledger_grpc.LedgerServiceStub(channel)
    error = rpc_error(
        lambda: stub.GetBalance(
            ledger_pb2.GetBalanceRequest(), metadata=bearer_metadata(forged), timeout=5
        )
    )
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "key this service does not know" in (error.details() or "")


def test_an_expired_token_is_unauthenticated(channel: grpc.Channel) -> None:
    expired = issuer_authority().issue("alice", Role.PLAYER, 60, now=time.time() - 3600)
    stub = ledger_grpc.LedgerServiceStub(channel)
    error = rpc_error(
        lambda: stub.GetBalance(
            ledger_pb2.GetBalanceRequest(), metadata=bearer_metadata(expired), timeout=5
        )
    )
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "expired" in (error.details() or "")


def test_a_player_token_reaches_the_handler_as_that_players_account(probe: ProbeProcess) -> None:
    with authorized_channel(grpc.insecure_channel(probe.target), token(Role.PLAYER, "alice")) as ch:
        response = ledger_grpc.LedgerServiceStub(ch).GetBalance(
            ledger_pb2.GetBalanceRequest(), timeout=5
        )
    assert (response.account_id, response.balance_hundredths) == ("alice", 100_00)


def test_a_player_calling_an_operator_only_method_is_permission_denied(probe: ProbeProcess) -> None:
    with authorized_channel(grpc.insecure_channel(probe.target), token(Role.PLAYER, "alice")) as ch:
        stub = ledger_grpc.LedgerServiceStub(ch)
        error = rpc_error(
            lambda: stub.Grant(
                ledger_pb2.GrantRequest(account_id="alice", amount_hundredths=5_00), timeout=5
            )
        )
    assert error.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "operator" in (error.details() or "")


def test_an_operator_token_may_call_the_operator_only_method(probe: ProbeProcess) -> None:
    with authorized_channel(grpc.insecure_channel(probe.target), token(Role.OPERATOR, "ops")) as ch:
        response = ledger_grpc.LedgerServiceStub(ch).Grant(
            ledger_pb2.GrantRequest(account_id="bob", amount_hundredths=5_00, idempotency_key="g1"),
            timeout=5,
        )
    assert response.balance_hundredths == 5_00


def test_a_domain_error_raised_by_a_handler_ends_the_call_with_its_mapped_code(
    channel: grpc.Channel,
) -> None:
    stub = ledger_grpc.LedgerServiceStub(channel)
    metadata = bearer_metadata(token(Role.OPERATOR, "ops"))
    error = rpc_error(
        lambda: stub.GetBalance(
            ledger_pb2.GetBalanceRequest(account_id="nobody"), metadata=metadata, timeout=5
        )
    )
    assert error.code() is grpc.StatusCode.NOT_FOUND
    assert error.details() == "no account nobody"


def test_a_response_stream_needs_a_token_and_sees_the_callers_principal(
    channel: grpc.Channel,
) -> None:
    count: grpc.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(f"/{PROBE}/Count")
    error = rpc_error(lambda: list(count(b"3", timeout=5)))
    assert error.code() is grpc.StatusCode.UNAUTHENTICATED
    messages = list(count(b"3", timeout=5, metadata=bearer_metadata(token(Role.PLAYER, "bo"))))
    assert messages == [b"bo:0", b"bo:1", b"bo:2"]


def test_log_lines_are_json_carrying_table_hand_seat_and_the_callers_account(
    channel: grpc.Channel, probe: ProbeProcess
) -> None:
    metadata = bearer_metadata(token(Role.PLAYER, "carol"))
    assert call_probe(channel, "LogSeat", b"t-7,h-42,3", metadata=metadata) == b"logged"
    [line] = wait_for_logs(probe, event="probe seat logged")
    assert (line["table_id"], line["hand_id"], line["seat"]) == ("t-7", "h-42", 3)
    assert (line["account_id"], line["role"]) == ("carol", "player")
    assert line["rpc"] == f"/{PROBE}/LogSeat"
    assert line["level"] == "info" and line["timestamp"].endswith("Z")
    [stdlib_line] = wait_for_logs(probe, event="probe stdlib line")  # standard logging too
    assert (stdlib_line["logger"], stdlib_line["table_id"]) == ("probe.stdlib", "t-7")
    [finished] = wait_for_logs(probe, event="rpc finished", rpc=f"/{PROBE}/LogSeat")
    assert "table_id" not in finished  # the block's context ended with the block


def test_an_unexpected_exception_is_internal_to_the_caller_and_logged_with_its_traceback(
    channel: grpc.Channel, probe: ProbeProcess
) -> None:
    metadata = bearer_metadata(token(Role.PLAYER, "dave"))
    error = rpc_error(lambda: call_probe(channel, "Crash", b"", metadata=metadata))
    assert error.code() is grpc.StatusCode.INTERNAL
    assert "probe bug" not in (error.details() or "")  # internals stay in the server log
    [logged] = wait_for_logs(probe, event="unexpected error in handler", rpc=f"/{PROBE}/Crash")
    assert "RuntimeError: probe bug" in logged["exception"]
    assert logged["account_id"] == "dave"
    [finished] = wait_for_logs(probe, event="rpc finished", rpc=f"/{PROBE}/Crash")
    assert (finished["code"], finished["level"]) == ("INTERNAL", "warning")


def test_metrics_endpoint_counts_calls_by_code_and_times_them(
    channel: grpc.Channel, probe: ProbeProcess
) -> None:
    stub = ledger_grpc.LedgerServiceStub(channel)
    rpc_error(lambda: stub.GetBalance(ledger_pb2.GetBalanceRequest(), timeout=5))
    with urllib.request.urlopen(f"http://127.0.0.1:{probe.metrics_port}/metrics", timeout=5) as r:
        assert r.status == 200
        text = r.read().decode()
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    unauthenticated = (
        "grpc_requests_total",
        (("code", "UNAUTHENTICATED"), ("method", "GetBalance"), ("service", LEDGER)),
    )
    assert samples[unauthenticated] >= 1
    latency_count = ("grpc_request_seconds_count", (("method", "GetBalance"), ("service", LEDGER)))
    assert samples[latency_count] >= 1
    health_ok = (
        "grpc_requests_total",
        (("code", "OK"), ("method", "Check"), ("service", "grpc.health.v1.Health")),
    )
    assert samples[health_ok] >= 1


@pytest.mark.parametrize("server", SERVERS)
def test_sigterm_reports_not_serving_finishes_the_call_in_flight_and_exits_zero(
    server: str,
) -> None:
    grace_seconds = 5.0
    probe = start_probe(server, RUMMY_SHUTDOWN_GRACE_SECONDS=str(grace_seconds))
    try:
        metadata = bearer_metadata(token(Role.PLAYER, "alice"))
        result: dict[str, object] = {}
        watched: list[int] = []
        with grpc.insecure_channel(probe.target) as ch:
            grpc.channel_ready_future(ch).result(timeout=10)
            watch = health_pb2_grpc.HealthStub(ch).Watch(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
                health_pb2.HealthCheckRequest(service=LEDGER), timeout=30
            )

            def slow_call() -> None:
                result["reply"] = call_probe(ch, "Sleep", b"1.5", metadata=metadata)

            first_status = threading.Event()

            def watch_health() -> None:
                for response in watch:  # ends when closed
                    watched.append(response.status)
                    first_status.set()

            threads = [threading.Thread(target=slow_call), threading.Thread(target=watch_health)]
            for thread in threads:
                thread.start()
            # The watch's first answer (SERVING) must be out before the signal: a status that
            # changes before a watcher was first answered reaches it only as the new status.
            assert first_status.wait(30), "the health watch was never answered"
            time.sleep(0.5)  # the slow call is now in the servicer
            signalled = time.monotonic()
            probe.process.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            with grpc.insecure_channel(probe.target) as fresh:
                refused = rpc_error(lambda: call_probe(fresh, "Sleep", b"0", metadata=metadata))
            assert refused.code() is grpc.StatusCode.UNAVAILABLE
            for thread in threads:
                thread.join(10)
        assert result["reply"] == b"slept"
        assert watched == [
            health_pb2.HealthCheckResponse.SERVING,
            health_pb2.HealthCheckResponse.NOT_SERVING,
        ]
        assert probe.process.wait(grace_seconds + 5) == 0
        assert time.monotonic() - signalled < grace_seconds  # the watch did not hold the drain
        assert probe.stdout_lines == ["probe stopping hook ran", "probe shutdown hook ran"]
        assert probe.logs_where(event="service stopped")
    finally:
        stop_probe(probe)


@pytest.mark.parametrize(
    ("keys_file", "expected"),
    [
        ("", "RUMMY_TOKEN_PUBLIC_KEYS_FILE is not set"),
        ("/nonexistent/keys.pem", "RUMMY_TOKEN_PUBLIC_KEYS_FILE: cannot read /nonexistent"),
        (__file__, "holds no PEM public key"),
    ],
)
def test_a_service_refuses_to_start_without_a_readable_public_keys_file(
    keys_file: str, expected: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(TESTS_DIR), "RUMMY_TOKEN_PUBLIC_KEYS_FILE": keys_file,
           "RUMMY_GRPC_PORT": "0", "RUMMY_METRICS_PORT": "0"}  # fmt: skip
    finished = subprocess.run(
        [sys.executable, "-m", "probe_service"],
        cwd=TESTS_DIR, env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert finished.returncode == 2
    assert expected in finished.stderr
