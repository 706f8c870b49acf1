"""The clock's Kafka loop in-process on a real broker, driven by a controllable clock: an
hour-long turn fires as soon as the test moves the clock an hour, and not a moment before."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from kafka import KafkaProducer
from structlog.testing import capture_logs

from rummy.clock.v1 import events_pb2 as clock_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_clock.adapters.clock import ManualClock
from rummy_clock.application.deadlines import ClockApplication
from rummy_clock.entrypoints.events import ClockLoop
from rummy_platform.envelope import Envelope, type_name
from rummy_platform.eventlog import (
    EVENT_TYPE_HEADER,
    KafkaEventLog,
    Record,
)
from rummy_platform.topics import CLOCK_EVENTS, TABLE_EVENTS, event_topic_specs


@pytest.fixture
def prefixed(kafka_bootstrap: str) -> Iterator[tuple[KafkaEventLog, str]]:
    prefix = f"clockloop-{uuid.uuid4().hex[:10]}-"
    log = KafkaEventLog(kafka_bootstrap, client_id="clock-loop-test")
    log.ensure_topics(event_topic_specs(prefix=prefix))
    yield log, prefix
    log.close()


def run_until(loop: ClockLoop, condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Run the loop until ``condition`` holds; the budget covers a consumer-group join on a
    loaded CI machine (it is a hang detector, not a speed requirement)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        loop.run_once()


class Rig(NamedTuple):
    """A clock loop on the test's topics (its group and writer id under ``prefix``), its
    application and its controllable clock, started at ``start``."""

    log: KafkaEventLog
    prefix: str
    start: datetime
    clock: ManualClock
    app: ClockApplication
    loop: ClockLoop


@pytest.fixture
def rig(prefixed: tuple[KafkaEventLog, str]) -> Iterator[Rig]:
    log, prefix = prefixed
    start = datetime.now(UTC)
    clock = ManualClock(start)
    app = ClockApplication()
    writer = log.transactional_writer(prefix + "clock")
    loop = ClockLoop(
        log,
        app,
        writer,
        clock,
        table_topic=prefix + TABLE_EVENTS,
        clock_topic=prefix + CLOCK_EVENTS,
        group_id=prefix + "clock",
        max_wait_s=0.2,
    )
    yield Rig(log, prefix, start, clock, app, loop)
    loop.close()
    writer.close()


def test_an_hour_long_turn_fires_when_the_injected_clock_moves_an_hour(rig: Rig) -> None:
    log, prefix, start, clock, app, loop = rig
    run_until(loop, lambda: loop.live)
    deadline = Timestamp()
    deadline.FromDatetime(start + timedelta(hours=1))
    started = Envelope.new(
        table_events.TurnStarted(hand_id="h1", seat=2, turn_no=5, deadline=deadline),
        stream_id="table-hour",
        stream_version=12,
        occurred_at=start,
        correlation_id="h1",
    )
    log.append(prefix + TABLE_EVENTS, started)
    run_until(loop, lambda: len(app.pending()) == 1)

    clock.advance(3599.999)
    for _ in range(3):
        loop.run_once()
    assert log.read_stream(prefix + CLOCK_EVENTS, "table-hour") == []

    clock.advance(0.001)
    fired_events: list[Record] = []

    def fired_now() -> bool:
        fired_events[:] = log.read_stream(prefix + CLOCK_EVENTS, "table-hour")
        return bool(fired_events)

    run_until(loop, fired_now)  # the loop may need a pass or two (a rebalance) to publish
    (fired,) = fired_events
    assert isinstance(fired.envelope.payload, clock_events.TurnDeadlinePassed)
    assert fired.envelope.payload.turn_no == 5
    assert fired.envelope.causation_id == started.event_id
    assert app.pending() == []


def test_table_events_the_clock_does_not_use_are_skipped_by_their_header_undecoded(
    rig: Rig, kafka_bootstrap: str
) -> None:
    log, prefix, start, _clock, app, loop = rig
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    try:
        # A card drawn is nothing to the clock: its bytes (not even an envelope here) are never
        # decoded, so nothing is logged as undecodable.
        producer.send(
            prefix + TABLE_EVENTS,
            key=b"table-skip",
            value=b"\xff not an envelope",
            headers=[(EVENT_TYPE_HEADER, type_name(table_events.CardDrawn).encode())],
        ).get(30)
        deadline = Timestamp()
        deadline.FromDatetime(start + timedelta(hours=1))
        log.append(
            prefix + TABLE_EVENTS,
            Envelope.new(
                table_events.TurnStarted(hand_id="h1", seat=1, turn_no=1, deadline=deadline),
                stream_id="table-skip",
                stream_version=2,
                occurred_at=start,
                correlation_id="h1",
            ),
        )
        with capture_logs() as logs:
            run_until(loop, lambda: len(app.pending()) == 1)
        assert [line for line in logs if line["event"] == "undecodable event skipped"] == []
    finally:
        producer.close()


def test_a_table_whose_event_raises_is_parked_while_the_other_tables_deadlines_fire(
    rig: Rig,
) -> None:
    log, prefix, start, clock, app, loop = rig
    schedule = app.on_table_event
    broken = {"table-bad"}

    def flaky(envelope: Envelope, partition: int, offset: int) -> None:
        if envelope.stream_id in broken:
            raise ValueError("a bug only this table's events meet")
        schedule(envelope, partition, offset)

    app.on_table_event = flaky  # type: ignore[method-assign]
    deadline = Timestamp()
    deadline.FromDatetime(start + timedelta(seconds=30))
    for table_id in ("table-bad", "table-good"):
        log.append(
            prefix + TABLE_EVENTS,
            Envelope.new(
                table_events.TurnStarted(hand_id="h", seat=0, turn_no=1, deadline=deadline),
                stream_id=table_id,
                stream_version=7,
                occurred_at=start,
                correlation_id="h",
            ),
        )
    run_until(loop, lambda: loop.live and len(app.pending()) == 1)
    assert loop.isolation.parked == {"table-bad"}
    clock.advance(30)
    run_until(loop, lambda: bool(log.read_stream(prefix + CLOCK_EVENTS, "table-good")))
    assert log.read_stream(prefix + CLOCK_EVENTS, "table-bad") == []
    broken.clear()
    run_until(loop, lambda: bool(log.read_stream(prefix + CLOCK_EVENTS, "table-bad")))
    assert loop.isolation.parked == frozenset()
