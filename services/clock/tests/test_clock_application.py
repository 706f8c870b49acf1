"""The application: table events in, clock events out, with ids derived from the cause."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from rummy.clock.v1 import events_pb2 as clock_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_clock.adapters.clock import ManualClock
from rummy_clock.application.deadlines import ClockApplication
from rummy_clock.application.ports import ClockMetrics
from rummy_platform.envelope import Envelope

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def stamp(at: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(at)
    return ts


def turn_started(table: str, hand: str, seat: int, turn_no: int, seconds: float) -> Envelope:
    return Envelope.new(
        table_events.TurnStarted(
            hand_id=hand,
            seat=seat,
            turn_no=turn_no,
            deadline=stamp(T0 + timedelta(seconds=seconds)),
        ),
        stream_id=table,
        stream_version=10 + turn_no,
        occurred_at=T0,
        correlation_id=hand,
    )


def test_a_turn_deadline_is_published_keyed_by_table_and_caused_by_its_turn() -> None:
    app = ClockApplication()
    cause = turn_started("table-1", "hand-1", seat=3, turn_no=7, seconds=30)
    app.on_table_event(cause, partition=2, offset=40)
    (due,) = app.due(T0 + timedelta(seconds=30))
    out = app.publication(due)
    assert out.stream_id == "table-1"
    assert out.correlation_id == "hand-1"
    assert out.causation_id == cause.event_id
    assert out.stream_version == cause.stream_version  # follows from the cause, like the id
    assert isinstance(out.payload, clock_events.TurnDeadlinePassed)
    assert (out.payload.hand_id, out.payload.seat, out.payload.turn_no) == ("hand-1", 3, 7)
    assert out.payload.deadline.ToDatetime(tzinfo=UTC) == T0 + timedelta(seconds=30)


def test_the_published_event_id_is_the_same_whenever_the_same_turn_is_read() -> None:
    cause = turn_started("table-1", "hand-1", seat=1, turn_no=1, seconds=5)
    ids = []
    for _ in range(2):  # two clock processes, e.g. before and after a crash
        app = ClockApplication()
        app.on_table_event(cause, partition=0, offset=0)
        ids.append(app.publication(app.due(T0 + timedelta(seconds=5))[0]).event_id)
    assert ids[0] == ids[1]
    assert uuid.UUID(ids[0]).version == 5
    assert ids[0] != cause.event_id


def test_a_seed_window_closes_with_its_hand_and_deadline() -> None:
    app = ClockApplication()
    opened = Envelope.new(
        table_events.SeedWindowOpened(hand_id="h", deadline=stamp(T0 + timedelta(seconds=8))),
        stream_id="t",
        stream_version=3,
        occurred_at=T0,
    )
    app.on_table_event(opened, partition=0, offset=3)
    out = app.publication(app.due(T0 + timedelta(seconds=8))[0])
    assert isinstance(out.payload, clock_events.SeedWindowClosed)
    assert out.payload.hand_id == "h"
    assert out.causation_id == opened.event_id


def test_a_fast_clock_fires_a_thirty_second_turn_after_three_seconds() -> None:
    clock = ManualClock(T0)
    app = ClockApplication(speed=10)
    app.on_table_event(turn_started("t", "h", 1, 1, seconds=30), partition=0, offset=0)
    clock.advance(2.9)
    assert app.due(clock.now()) == []
    clock.advance(0.1)
    (due,) = app.due(clock.now())
    # The event still carries the table's own deadline.
    passed = app.publication(due).payload
    assert isinstance(passed, clock_events.TurnDeadlinePassed)
    assert passed.deadline.ToDatetime(tzinfo=UTC) == T0 + timedelta(seconds=30)


def test_metrics_count_scheduled_fired_pending_and_lag() -> None:
    seen: dict[str, list[object]] = {"scheduled": [], "fired": [], "pending": [], "lag": []}
    app = ClockApplication(
        metrics=ClockMetrics(
            scheduled=seen["scheduled"].append,
            fired=seen["fired"].append,
            pending=seen["pending"].append,
            lag_seconds=seen["lag"].append,
        ),
    )
    app.on_table_event(turn_started("t", "h", 1, 1, seconds=10), partition=0, offset=0)
    due = app.due(T0 + timedelta(seconds=10))
    app.published(due, [0], now=T0 + timedelta(seconds=10.25))
    assert seen["scheduled"] == ["turn"]
    assert seen["fired"] == ["turn"]
    assert seen["pending"] == [1, 0]
    assert seen["lag"] == [0.25]


def test_a_hand_that_ended_publishes_nothing() -> None:
    app = ClockApplication()
    app.on_table_event(turn_started("t", "h", 1, 4, seconds=10), partition=0, offset=0)
    ended = Envelope.new(
        table_events.HandEnded(hand_id="h"), stream_id="t", stream_version=30, occurred_at=T0
    )
    app.on_table_event(ended, partition=0, offset=1)
    assert app.due(T0 + timedelta(hours=1)) == []
