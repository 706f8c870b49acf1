"""The table service as a process on the real Kafka broker: it opens tables and starts hands
from gRPC calls, is rebuilt from table-events after SIGKILL, and is fenced by a second instance
with the same writer id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, TokenAuthority, authorized_channel
from rummy_platform.eventlog import KafkaEventLog
from rummy_platform.topics import TABLE_EVENTS

SECRET = "table-process-test-secret-0123456789abcdef"
TIMEOUT_S = 60.0


@dataclass
class Process:
    process: subprocess.Popen[str]
    port: int = 0
    lines: list[str] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)

    def read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "service started":
                self.port = entry["grpc_port"]
                self.started.set()

    def stub(self, account: str, role: Role) -> api_grpc.TableServiceStub:
        token = TokenAuthority(SECRET).issue(account, role)
        channel = authorized_channel(grpc.insecure_channel(f"127.0.0.1:{self.port}"), token)
        return api_grpc.TableServiceStub(channel)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start(env: dict[str, str]) -> Process:
    popen = subprocess.Popen(
        [sys.executable, "-m", "rummy_table"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc = Process(popen)
    threading.Thread(target=proc.read, daemon=True).start()
    deadline = time.monotonic() + TIMEOUT_S
    while not proc.started.wait(0.2):
        if popen.poll() is not None or time.monotonic() > deadline:
            proc.stop()
            raise AssertionError("table did not start:\n" + "".join(proc.lines[-30:]))
    return proc


def wait_for(predicate: object, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def env(kafka_bootstrap: str) -> Iterator[dict[str, str]]:
    yield {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "RUMMY_JWT_SECRET": SECRET,
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        "RUMMY_TOPIC_PREFIX": f"tbl{uuid.uuid4().hex[:8]}-",
        "RUMMY_CLOCK_SPEED": "10",
    }


def test_the_service_starts_hands_survives_sigkill_and_is_fenced_by_a_second_instance(
    env: dict[str, str], kafka_bootstrap: str
) -> None:
    first = start(env)
    processes = [first]
    log = KafkaEventLog(kafka_bootstrap)
    topic = env["RUMMY_TOPIC_PREFIX"] + TABLE_EVENTS
    try:
        with grpc.insecure_channel(f"127.0.0.1:{first.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING  # no token needed

        operator = first.stub("op-1", Role.OPERATOR)
        table_id = operator.OpenTable(
            api.OpenTableRequest(
                client_request_id="open-1",
                seat_count=6,
                point_value_hundredths=50,
                commission_bps=500,
                rule_set=cards_pb2.RuleSet(start_delay_seconds=1),
            )
        ).table_id
        with pytest.raises(grpc.RpcError) as denied:
            first.stub("alice", Role.PLAYER).OpenTable(
                api.OpenTableRequest(client_request_id="x", seat_count=6)
            )
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        for account in ("alice", "bob"):
            first.stub(account, Role.PLAYER).TakeSeat(
                api.TakeSeatRequest(table_id=table_id, client_request_id=f"sit-{account}")
            )

        def started() -> list[pb.HandStarted]:
            return [
                r.envelope.payload
                for r in log.read_stream(topic, table_id)
                if isinstance(r.envelope.payload, pb.HandStarted)
            ]

        wait_for(started, "HandStarted on table-events")
        (hand,) = started()
        assert [s.account_id for s in hand.seats] == ["alice", "bob"]
        assert hand.reservation_hundredths == 130 * 50

        first.process.send_signal(signal.SIGKILL)
        first.process.wait(10)
        second = start(env)
        processes.append(second)
        alice = second.stub("alice", Role.PLAYER)
        view = next(iter(alice.WatchTable(api.WatchTableRequest(table_id=table_id)))).view
        assert view.hand_id == hand.hand_id and view.my_seat == 0
        assert view.phase == api.HAND_PHASE_RESERVING
        again = alice.TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id="sit-alice")
        )
        assert again.seat == 0  # a retried request id answered from the rebuilt table

        third = start(env)  # same writer id: fences the second
        processes.append(third)
        with pytest.raises(grpc.RpcError) as fenced:
            second.stub("carol", Role.PLAYER).TakeSeat(
                api.TakeSeatRequest(table_id=table_id, client_request_id="sit-carol")
            )
        assert fenced.value.code() == grpc.StatusCode.UNAVAILABLE
        wait_for(lambda: second.process.poll() is not None, "the fenced instance to exit")
        carol = third.stub("carol", Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id="sit-carol")
        )
        assert carol.seat == 2
        assert len(started()) == 1
    finally:
        for proc in processes:
            proc.stop()
        log.close()
