"""The consumer loop's core driven record by record, with no consumer, thread or sleep (as a
simulator drives it), and the loop seeking back to what a step did not finish."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.consumer_loop import ConsumerLoop, EachRecord, Step
from rummy_platform.eventlog import EventLogError, InMemoryEventLog, Record, TopicPartition
from rummy_platform.isolation import StreamIsolation
from rummy_platform.topics import TopicSpec
from rummy_testing.events import FIXED_TIME, table_event

TOPIC = "table-events"
TP = TopicPartition(TOPIC, 0)


def record(offset: int, table_id: str) -> Record:
    payload = table_events.HandStarted(hand_id=f"h{offset}")
    return Record(
        TOPIC, 0, offset, table_event(table_id, offset + 1, payload, occurred_at=FIXED_TIME)
    )


class Seconds:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Units:
    """The service's unit of work: what it was given, with the offset stored beside it."""

    def __init__(self) -> None:
        self.done: list[tuple[str, int]] = []
        self.failing: set[str] = set()
        self.outage_at: int | None = None

    def __call__(self, record: Record, store_offset: int) -> None:
        if record.offset == self.outage_at:
            raise EventLogError("the log went away")
        if record.envelope.stream_id in self.failing:
            raise ValueError("a bug only this table meets")
        self.done.append((record.envelope.payload.hand_id, store_offset))  # type: ignore[attr-defined]


def each_record(units: Units, seconds: Seconds) -> EachRecord:
    isolation = StreamIsolation("core-test", first_s=1.0, clock=seconds)
    return EachRecord(isolation, units, outages=(EventLogError,))


def test_a_failing_table_is_held_record_by_record_and_its_offset_stops_at_its_first() -> None:
    units, seconds = Units(), Seconds()
    core = each_record(units, seconds)
    units.failing = {"bad"}
    assert core.step([record(0, "good")]) == Step(1)
    assert core.step([record(1, "bad")]) == Step(0)
    assert core.step([record(2, "bad")]) == Step(0)  # held behind the failed one, not tried
    assert core.step([record(3, "good")]) == Step(1)
    assert core.isolation.parked == {"bad"}
    # The good table's record is stored with an offset that stops at the parked table's first.
    assert units.done == [("h0", 1), ("h3", 1)]
    units.failing.clear()
    assert core.retry_due() == 0  # its delay has not passed
    seconds.now += 1.0
    assert core.retry_due() == 2
    assert units.done[2:] == [("h1", 2), ("h2", 4)]
    assert core.isolation.parked == frozenset()


def test_an_outage_stops_the_step_and_says_where_to_read_again() -> None:
    units, seconds = Units(), Seconds()
    core = each_record(units, seconds)
    units.outage_at = 1
    step = core.step([record(2, "c"), record(0, "a"), record(1, "b")])  # taken in log order
    assert (step.handled, dict(step.rewind)) == (1, {TP: 1})
    assert isinstance(step.error, EventLogError)
    assert units.done == [("h0", 1)]


class Scripted:
    """A core whose first step fails after taking nothing, the next ones take everything."""

    def __init__(self) -> None:
        self.isolation = StreamIsolation("loop-test", first_s=0)
        self.seen: list[list[int]] = []

    def retry_due(self) -> int:
        return 0

    def step(self, records: Sequence[Record]) -> Step:
        offsets = sorted(r.offset for r in records)
        self.seen.append(offsets)
        if len(self.seen) == 1:
            return Step(rewind={TP: offsets[0]}, error=EventLogError("the log went away"))
        return Step(len(records))


def test_the_loop_seeks_back_to_what_a_step_did_not_do_and_raises_its_error() -> None:
    log = InMemoryEventLog()
    log.ensure_topics([TopicSpec(TOPIC, 1)])
    for n in range(3):
        log.append(TOPIC, table_event("t", n + 1, table_events.HandStarted(hand_id=f"h{n}")))
    core = Scripted()
    loop = ConsumerLoop(
        log,
        core,
        group_id="loop-test",
        topics=[TOPIC],
        poll_timeout_s=0.01,
        pause_s=0,
        failed="round failed",
    )
    try:
        with pytest.raises(EventLogError):
            loop.run_once()
        assert loop.run_once() == 3  # delivered again from the first offset
        assert core.seen == [[0, 1, 2], [0, 1, 2]]
    finally:
        loop.close()
