"""The group-commit writer over the in-memory log: callers that arrive while a transaction is in
flight share the next one, and a failed transaction fails exactly the callers whose events it
held (the contract suite runs the writer on Kafka too)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial

import pytest
from prometheus_client import CollectorRegistry

from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import (
    EventLogError,
    GroupCommitMetrics,
    GroupCommitWriter,
    InMemoryEventLog,
    TopicPartition,
)
from rummy_platform.eventlog.memory import CommitGate
from rummy_platform.topics import TABLE_EVENTS, event_topic_specs


def seated(table: str) -> Envelope:
    return Envelope.new(
        table_events.TablePlayerSeated(seat=0, account_id="acct"),
        stream_id=table,
        stream_version=1,
        occurred_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


@pytest.fixture
def log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics(event_topic_specs(partitions=2))
    return log


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def behind_one_in_flight(
    gate: CommitGate,
    writer: GroupCommitWriter,
    first: Callable[[], object],
    others: Sequence[Callable[[], object]],
) -> list[threading.Thread]:
    """Start ``first`` (its transaction waits at the log's gate), then ``others``, and return
    once all of those queued behind it."""
    threads = [threading.Thread(target=first)]
    threads[0].start()
    assert gate.entered.wait(10)
    for call in others:
        threads.append(threading.Thread(target=call))
        threads[-1].start()
    until(lambda: len(writer._queue) == len(others))
    return threads


def test_callers_arriving_during_a_transaction_share_the_next_one(log: InMemoryEventLog) -> None:
    gate = log.hold_commits()
    writer = GroupCommitWriter(log.transactional_writer("w"))
    sent = [seated(f"t{i}") for i in range(11)]
    calls = [lambda e=e: writer.append(TABLE_EVENTS, e) for e in sent]
    threads = behind_one_in_flight(gate, writer, calls[0], calls[1:])
    gate.open()
    for t in threads:
        t.join(10)

    assert gate.sizes == [1, 10]
    for i in range(11):
        assert [r.envelope for r in log.read_stream(TABLE_EVENTS, f"t{i}")] == [sent[i]]


def test_the_histograms_count_the_commands_events_and_partitions_each_transaction_carried(
    log: InMemoryEventLog,
) -> None:
    registry = CollectorRegistry()
    gate = log.hold_commits()
    writer = GroupCommitWriter(
        log.transactional_writer("w"), metrics=GroupCommitMetrics.create(registry)
    )
    calls = [lambda: writer.append(TABLE_EVENTS, seated("t0"))] + [
        lambda i=i: writer.append_batch([(TABLE_EVENTS, seated(f"t{i}"))] * 2) for i in range(1, 4)
    ]
    threads = behind_one_in_flight(gate, writer, calls[0], calls[1:])
    gate.open()
    for t in threads:
        t.join(10)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert gate.sizes == [1, 6]
    assert sample("rummy_eventlog_transaction_appends_count") == 2
    assert sample("rummy_eventlog_transaction_appends_sum") == 1 + 3
    assert sample("rummy_eventlog_transaction_events_sum") == 1 + 6
    assert sample("rummy_eventlog_transaction_appends_bucket", le="1.0") == 1
    assert sample("rummy_eventlog_transaction_appends_bucket", le="2.0") == 1
    assert sample("rummy_eventlog_transaction_appends_bucket", le="4.0") == 2
    # The partitions each transaction wrote to: t0's alone, then those of t1, t2 and t3.
    partition = {f"t{i}": log.read_stream(TABLE_EVENTS, f"t{i}")[0].partition for i in range(4)}
    second = len({partition[f"t{i}"] for i in range(1, 4)})
    assert sample("rummy_eventlog_transaction_partitions_count") == 2
    assert sample("rummy_eventlog_transaction_partitions_sum") == 1 + second
    assert sample("rummy_eventlog_transaction_partitions_bucket", le="1.0") == 1 + (second == 1)


def test_a_transaction_carries_at_most_max_events(log: InMemoryEventLog) -> None:
    gate = log.hold_commits()
    writer = GroupCommitWriter(log.transactional_writer("w"), max_events=4)
    calls = [lambda i=i: writer.append(TABLE_EVENTS, seated(f"t{i}")) for i in range(11)]
    threads = behind_one_in_flight(gate, writer, calls[0], calls[1:])
    gate.open()
    for t in threads:
        t.join(10)

    assert gate.sizes == [1, 4, 4, 2]


def test_a_failed_transaction_fails_exactly_its_callers_and_appends_nothing_of_theirs(
    log: InMemoryEventLog,
) -> None:
    gate = log.hold_commits(fail={1: EventLogError("the broker refused the transaction")})
    writer = GroupCommitWriter(log.transactional_writer("w"))
    outcome: dict[str, BaseException | None] = {}

    def append(table: str) -> None:
        try:
            writer.append(TABLE_EVENTS, seated(table))
            outcome[table] = None
        except EventLogError as exc:
            outcome[table] = exc

    threads = behind_one_in_flight(
        gate, writer, lambda: append("first"), [partial(append, f"f{i}") for i in range(5)]
    )
    gate.open()
    for t in threads:
        t.join(10)
    append("after")

    assert gate.sizes == [1, 5, 1]
    assert outcome["first"] is None and outcome["after"] is None
    assert all(isinstance(outcome[f"f{i}"], EventLogError) for i in range(5))
    for i in range(5):
        assert log.read_stream(TABLE_EVENTS, f"f{i}") == []
    for table in ("first", "after"):
        assert [r.envelope.stream_id for r in log.read_stream(TABLE_EVENTS, table)] == [table]


def test_one_transaction_carries_the_highest_offset_consumed_per_partition(
    log: InMemoryEventLog,
) -> None:
    gate = log.hold_commits()
    writer = GroupCommitWriter(log.transactional_writer("w"))
    tp = TopicPartition("ledger-events", 0)
    group = f"g-{uuid.uuid4()}"
    calls = [
        lambda i=i, offset=offset: writer.append_batch(
            [(TABLE_EVENTS, seated(f"t{i}"))], consumed={tp: offset}, group_id=group
        )
        for i, offset in ((1, 7), (2, 9), (3, 8))
    ]
    threads = behind_one_in_flight(
        gate, writer, lambda: writer.append(TABLE_EVENTS, seated("t0")), calls
    )
    gate.open()
    for t in threads:
        t.join(10)

    assert gate.sizes == [1, 3]
    assert log.consumer(group, ["ledger-events"]).committed(tp) == 9
