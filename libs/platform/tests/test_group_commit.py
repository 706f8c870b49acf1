"""The group-commit writer over the in-memory log: callers that arrive while a transaction is in
flight share the next one, and a failed transaction fails exactly the callers whose events it
held (the contract suite runs the writer on Kafka too)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pytest

from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import (
    EventLogError,
    GroupCommitWriter,
    InMemoryEventLog,
    Position,
    TopicPartition,
    TransactionalWriter,
)
from rummy_platform.topics import TABLE_EVENTS, event_topic_specs


def seated(table: str, version: int) -> Envelope:
    return Envelope.new(
        table_events.TablePlayerSeated(seat=version, account_id=f"acct-{version}"),
        stream_id=table,
        stream_version=version,
        occurred_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


class GatedWriter(TransactionalWriter):
    """The fake's writer, holding each transaction until the test opens the gate, and counting
    how many callers' events each transaction carried."""

    def __init__(
        self, log: InMemoryEventLog, inner: TransactionalWriter, fail: frozenset[int] = frozenset()
    ) -> None:
        self.log = log
        self.fail = fail  # the transactions (counted from 0) the log fails
        self.inner = inner
        self.transactional_id = inner.transactional_id
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.sizes: list[int] = []

    def append_batch(
        self,
        events: Sequence[tuple[str, Envelope]],
        *,
        consumed: Mapping[TopicPartition, int] | None = None,
        group_id: str | None = None,
        group_metadata: object | None = None,
    ) -> list[Position]:
        self.entered.set()
        assert self.gate.wait(10)
        if len(self.sizes) in self.fail:
            self.log.fail_next_commit(EventLogError("the broker refused the transaction"))
        self.sizes.append(len(events))
        return self.inner.append_batch(events, consumed=consumed, group_id=group_id)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics(event_topic_specs(partitions=2))
    return log


def run_all(targets: list[threading.Thread]) -> None:
    for t in targets:
        t.start()


def test_callers_arriving_during_a_transaction_share_the_next_one(log: InMemoryEventLog) -> None:
    gated = GatedWriter(log, log.transactional_writer("w"))
    writer = GroupCommitWriter(gated)
    sent = [seated(f"t{i}", 1) for i in range(11)]
    first = threading.Thread(target=writer.append, args=(TABLE_EVENTS, sent[0]))
    first.start()
    assert gated.entered.wait(5)  # t0's transaction is in flight, held at the gate
    others = [
        threading.Thread(target=writer.append, args=(TABLE_EVENTS, sent[i])) for i in range(1, 11)
    ]
    run_all(others)
    while len(writer._queue) < 10:  # all ten queued behind the one in flight
        threading.Event().wait(0.01)
    gated.gate.set()
    for t in [first, *others]:
        t.join(10)

    assert gated.sizes == [1, 10]
    for i in range(11):
        assert [r.envelope for r in log.read_stream(TABLE_EVENTS, f"t{i}")] == [sent[i]]


def test_a_transaction_carries_at_most_max_events(log: InMemoryEventLog) -> None:
    gated = GatedWriter(log, log.transactional_writer("w"))
    writer = GroupCommitWriter(gated, max_events=4)
    first = threading.Thread(target=writer.append, args=(TABLE_EVENTS, seated("t0", 1)))
    first.start()
    assert gated.entered.wait(5)
    others = [
        threading.Thread(target=writer.append, args=(TABLE_EVENTS, seated(f"t{i}", 1)))
        for i in range(1, 11)
    ]
    run_all(others)
    while len(writer._queue) < 10:
        threading.Event().wait(0.01)
    gated.gate.set()
    for t in [first, *others]:
        t.join(10)

    assert gated.sizes == [1, 4, 4, 2]


def test_a_failed_transaction_fails_exactly_its_callers_and_appends_nothing_of_theirs(
    log: InMemoryEventLog,
) -> None:
    gated = GatedWriter(log, log.transactional_writer("w"), fail=frozenset({1}))
    writer = GroupCommitWriter(gated)
    outcome: dict[str, BaseException | None] = {}

    def append(table: str) -> None:
        try:
            writer.append(TABLE_EVENTS, seated(table, 1))
            outcome[table] = None
        except EventLogError as exc:
            outcome[table] = exc

    first = threading.Thread(target=append, args=("first",))
    first.start()
    assert gated.entered.wait(5)
    failing = [threading.Thread(target=append, args=(f"f{i}",)) for i in range(5)]
    run_all(failing)
    while len(writer._queue) < 5:
        threading.Event().wait(0.01)
    gated.gate.set()
    first.join(10)
    for t in failing:
        t.join(10)
    after = threading.Thread(target=append, args=("after",))
    after.start()
    after.join(10)

    assert gated.sizes == [1, 5, 1]
    assert outcome["first"] is None and outcome["after"] is None
    assert all(isinstance(outcome[f"f{i}"], EventLogError) for i in range(5))
    for i in range(5):
        assert log.read_stream(TABLE_EVENTS, f"f{i}") == []
    for table in ("first", "after"):
        assert [r.envelope.stream_id for r in log.read_stream(TABLE_EVENTS, table)] == [table]


def test_one_transaction_carries_the_highest_offset_consumed_per_partition(
    log: InMemoryEventLog,
) -> None:
    gated = GatedWriter(log, log.transactional_writer("w"))
    writer = GroupCommitWriter(gated)
    tp = TopicPartition("ledger-events", 0)
    group = f"g-{uuid.uuid4()}"
    first = threading.Thread(target=writer.append, args=(TABLE_EVENTS, seated("t0", 1)))
    first.start()
    assert gated.entered.wait(5)
    callers = [
        threading.Thread(
            target=writer.append_batch,
            args=([(TABLE_EVENTS, seated(f"t{i}", 1))],),
            kwargs={"consumed": {tp: offset}, "group_id": group},
        )
        for i, offset in ((1, 7), (2, 9), (3, 8))
    ]
    run_all(callers)
    while len(writer._queue) < 3:
        threading.Event().wait(0.01)
    gated.gate.set()
    for t in [first, *callers]:
        t.join(10)

    assert gated.sizes == [1, 3]
    assert log.consumer(group, ["ledger-events"]).committed(tp) == 9
