"""The clock as its own process (``python -m rummy_clock``) on a real Kafka broker.

The test plays the table: it appends ``TurnStarted`` / ``SeedWindowOpened`` / ``HandEnded``
events (built with the protos, as the table service does) to table-events, and reads what the
clock publishes on clock-events. The clock runs ten times faster than real time
(``RUMMY_CLOCK_SPEED=10``), so a 30-second turn passes in 3 seconds.
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
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kafka import KafkaAdminClient
from kafka import TopicPartition as KafkaTopicPartition

from rummy.clock.v1 import clock_service_pb2 as clock_pb
from rummy.clock.v1 import clock_service_pb2_grpc as clock_grpc
from rummy.clock.v1 import events_pb2 as clock_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_clock.domain.speed import due_time
from rummy_platform.auth import Role, bearer_metadata
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import KafkaEventLog, Record, partition_for
from rummy_platform.topics import CLOCK_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_testing.events import table_event
from rummy_testing.token_keys import issuer_authority, token_environment
from rummy_testing.waiting import wait_for_count

#: slow: clock processes, one killed and restarted (docs/testing.md#tests).
pytestmark = pytest.mark.slow

SPEED = 10.0
START_TIMEOUT_S = 30.0
CATCH_UP_TIMEOUT_S = 40.0  # a SIGKILLed member's session (6 s) must lapse first
LISTED_WITHIN_S = 15.0  # a running clock lists a deadline appended to table-events within this


@dataclass
class ClockProcess:
    process: subprocess.Popen[str]
    grpc_port: int = 0
    metrics_port: int = 0
    log_lines: list[dict[str, object]] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    caught_up: threading.Event = field(default_factory=threading.Event)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"


def start_clock(bootstrap: str, prefix: str) -> ClockProcess:
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        "RUMMY_TOPIC_PREFIX": prefix,
        "RUMMY_CLOCK_SPEED": str(SPEED),
        "RUMMY_LOG_LEVEL": "debug",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "rummy_clock"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    clock = ClockProcess(process)

    def read_stderr() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            clock.log_lines.append(line)
            if line.get("event") == "service started":
                clock.grpc_port = int(line["grpc_port"])
                clock.metrics_port = int(line["metrics_port"])
                clock.started.set()
            elif line.get("event") == "caught up; firing deadlines":
                clock.caught_up.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    if not clock.started.wait(START_TIMEOUT_S):
        kill(clock)
        raise AssertionError(f"the clock did not start: {clock.log_lines}")
    if not clock.caught_up.wait(CATCH_UP_TIMEOUT_S):
        kill(clock)
        raise AssertionError(f"the clock never caught up: {clock.log_lines}")
    return clock


def kill(clock: ClockProcess) -> None:
    if clock.process.poll() is None:
        clock.process.send_signal(signal.SIGKILL)
    clock.process.wait(10)


@pytest.fixture
def topics(kafka_bootstrap: str) -> Iterator[tuple[KafkaEventLog, str]]:
    prefix = f"clocktest-{uuid.uuid4().hex[:10]}-"
    log = KafkaEventLog(kafka_bootstrap, client_id="clock-test")
    log.ensure_topics(event_topic_specs(prefix=prefix))
    yield log, prefix
    log.close()


def stamp(at: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(at)
    return ts


def turn_started(
    table_id: str, hand_id: str, version: int, *, seat: int, turn_no: int, seconds: float
) -> Envelope:
    deadline = datetime.now(UTC) + timedelta(seconds=seconds)
    return table_event(
        table_id,
        version,
        table_events.TurnStarted(
            hand_id=hand_id, seat=seat, turn_no=turn_no, deadline=stamp(deadline)
        ),
    )


def resume_offset(bootstrap: str, group: str, topic: str, partition: int) -> int:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","))
    try:
        offsets = admin.list_group_offsets({group: None})[group]
    finally:
        admin.close()
    return int(offsets[KafkaTopicPartition(topic, partition)].offset)


def pending(clock: ClockProcess, role: Role = Role.OPERATOR) -> list[clock_pb.PendingDeadline]:
    token = issuer_authority().issue("ops-1", role, 60)
    with grpc.insecure_channel(clock.target) as channel:
        stub = clock_grpc.ClockServiceStub(channel)
        answer = stub.ListPendingDeadlines(
            clock_pb.ListPendingDeadlinesRequest(), metadata=bearer_metadata(token), timeout=5
        )
    return list(answer.deadlines)


def test_turn_and_seed_deadlines_fire_once_keyed_by_table_and_never_for_an_ended_hand(
    topics: tuple[KafkaEventLog, str], kafka_bootstrap: str
) -> None:
    log, prefix = topics
    table_topic, clock_topic = prefix + TABLE_EVENTS, prefix + CLOCK_EVENTS
    clock = start_clock(kafka_bootstrap, prefix)
    try:
        seeds = table_event(
            "table-s",
            1,
            table_events.SeedWindowOpened(
                hand_id="hand-s", deadline=stamp(datetime.now(UTC) + timedelta(seconds=10))
            ),
        )
        log.append(table_topic, seeds)
        # Turn 1 is superseded by turn 2 before its deadline: only turn 2 fires.
        first = turn_started("table-a", "hand-a", 1, seat=2, turn_no=1, seconds=30)
        second = turn_started("table-a", "hand-a", 2, seat=3, turn_no=2, seconds=20)
        log.append(table_topic, first)
        log.append(table_topic, second)
        # Hand b ends before its deadline (10 s, i.e. 1 s at this speed): nothing fires.
        ended = turn_started("table-b", "hand-b", 1, seat=1, turn_no=4, seconds=10)
        log.append(table_topic, ended)
        log.append(
            table_topic,
            table_event("table-b", 2, table_events.HandEnded(hand_id="hand-b")),
        )

        def of(table: str) -> Callable[[], list[Record]]:
            return lambda: log.read_stream(clock_topic, table)

        (seed_closed,) = wait_for_count("seed window closed", of("table-s"), 1, 20)
        assert isinstance(seed_closed.envelope.payload, clock_events.SeedWindowClosed)
        assert seed_closed.envelope.causation_id == seeds.event_id
        assert seed_closed.envelope.correlation_id == "hand-s"

        (turn_passed,) = wait_for_count("turn 2 deadline", of("table-a"), 1, 20)
        payload = turn_passed.envelope.payload
        assert isinstance(payload, clock_events.TurnDeadlinePassed)
        assert (payload.hand_id, payload.seat, payload.turn_no) == ("hand-a", 3, 2)
        assert payload.deadline == second.payload.deadline  # type: ignore[attr-defined]
        assert turn_passed.envelope.stream_id == "table-a"  # the Kafka key
        assert turn_passed.envelope.causation_id == second.event_id
        assert turn_passed.envelope.stream_version == second.stream_version
        assert turn_passed.envelope.correlation_id == "hand-a"

        # Turn 1's deadline (3 s) is long past too: still only one event on table-a, none on b.
        time.sleep(1.5)
        assert len(log.read_stream(clock_topic, "table-a")) == 1
        assert log.read_stream(clock_topic, "table-b") == []
        assert pending(clock) == []

        with grpc.insecure_channel(clock.target) as channel:
            health = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
                health_pb2.HealthCheckRequest(service="rummy.clock.v1.ClockService"), timeout=5
            )
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        with urllib.request.urlopen(f"http://127.0.0.1:{clock.metrics_port}/metrics") as r:
            exposed = r.read().decode()
        assert 'rummy_clock_deadlines_fired_total{kind="turn"} 1.0' in exposed
        assert 'rummy_clock_deadlines_fired_total{kind="seed_window"} 1.0' in exposed
        assert 'rummy_clock_deadlines_scheduled_total{kind="turn"} 3.0' in exposed
        assert "rummy_clock_deadlines_pending 0.0" in exposed
        assert "rummy_clock_firing_lag_seconds_count 2.0" in exposed
        fired_logs = [line for line in clock.log_lines if line.get("event") == "deadline fired"]
        assert {(line["table_id"], line["hand_id"]) for line in fired_logs} == {
            ("table-a", "hand-a"),
            ("table-s", "hand-s"),
        }
        assert any(line.get("seat") == 3 for line in fired_logs)
    finally:
        kill(clock)


def test_pending_deadlines_are_for_operators_and_services_only(
    topics: tuple[KafkaEventLog, str], kafka_bootstrap: str
) -> None:
    log, prefix = topics
    clock = start_clock(kafka_bootstrap, prefix)
    try:
        started = turn_started("table-p", "hand-p", 1, seat=4, turn_no=9, seconds=600)
        log.append(prefix + TABLE_EVENTS, started)
        deadline = time.monotonic() + 15
        while not (listed := pending(clock, Role.SERVICE)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [(d.table_id, d.hand_id, d.seat, d.turn_no) for d in listed] == [
            ("table-p", "hand-p", 4, 9)
        ]
        assert listed[0].kind == clock_pb.DEADLINE_KIND_TURN
        assert listed[0].deadline == started.payload.deadline  # type: ignore[attr-defined]
        with pytest.raises(grpc.RpcError) as refused:
            pending(clock, Role.PLAYER)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    finally:
        kill(clock)


def test_a_deadline_that_passes_while_the_clock_is_killed_fires_once_after_restart(
    topics: tuple[KafkaEventLog, str], kafka_bootstrap: str
) -> None:
    log, prefix = topics
    table_topic, clock_topic = prefix + TABLE_EVENTS, prefix + CLOCK_EVENTS
    clock = start_clock(kafka_bootstrap, prefix)
    # Due LISTED_WITHIN_S + 5 s from now (200 s at speed 10): the clock lists it and is killed
    # before it is due however long that takes within the wait below; then the test waits out
    # the rest, so it falls due while no clock runs.
    started = turn_started(
        "table-k", "hand-k", 1, seat=5, turn_no=3, seconds=(LISTED_WITHIN_S + 5) * SPEED
    )
    due = due_time(
        started.occurred_at,
        started.payload.deadline.ToDatetime(UTC),  # type: ignore[attr-defined]
        SPEED,
    )
    # A later deadline on another table keeps the table-events resume offset behind the first
    # one after it fired, so the second restart re-reads table-k's turn and must not fire it.
    later = turn_started("table-8", "hand-l", 1, seat=1, turn_no=1, seconds=900)
    assert partition_for("table-8", 8) == partition_for("table-k", 8)
    try:
        log.append(table_topic, later)
        started_at = log.append(table_topic, started)
        deadline = time.monotonic() + LISTED_WITHIN_S
        while len(pending(clock)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert {d.table_id for d in pending(clock)} == {"table-k", "table-8"}
    finally:
        kill(clock)  # SIGKILL before the deadline
    left_s = (due - datetime.now(UTC)).total_seconds()
    print(f"killed {left_s:.1f} s before table-k's turn was due")
    assert left_s > 0, f"the clock was killed {-left_s:.1f} s after table-k's turn was due"
    assert log.read_stream(clock_topic, "table-k") == []
    time.sleep(left_s + 0.5)  # the deadline passes while no clock runs

    clock = start_clock(kafka_bootstrap, prefix)
    try:
        (fired,) = wait_for_count(
            "the deadline after restart", lambda: log.read_stream(clock_topic, "table-k"), 1, 20
        )
        assert fired.envelope.payload.turn_no == 3  # type: ignore[attr-defined]
        assert fired.envelope.causation_id == started.event_id
        lag = [line for line in clock.log_lines if line.get("event") == "deadline fired"]
        assert lag and lag[0]["table_id"] == "table-k"
    finally:
        kill(clock)  # SIGKILL after it fired

    clock = start_clock(kafka_bootstrap, prefix)
    try:
        time.sleep(2.0)  # caught up: anything it would fire again is due at once
        assert len(log.read_stream(clock_topic, "table-k")) == 1
        assert [d.table_id for d in pending(clock)] == ["table-8"]
        # It did re-read table-k's turn: the group resumes table-events from before it.
        assert resume_offset(
            kafka_bootstrap, prefix + "clock", table_topic, started_at.partition
        ) <= (started_at.offset)
    finally:
        kill(clock)
