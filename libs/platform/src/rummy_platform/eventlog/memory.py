"""An in-memory event log for unit tests: same contract as the Kafka adapter, one process only.

Events are stored encoded (the same bytes as on Kafka), each with its event-type header, and
partitioned with Kafka's partitioner, so offsets and ordering match what the real log would give;
a consumer of some types drops the others by that header without decoding them, as on Kafka.
Differences, by design: a consumer group has a single member (it owns every partition), and
:meth:`GroupConsumer.poll` never waits. Writes and reads are serialized by one lock (writers may
be used from several threads); a group consumer belongs to one thread.
:meth:`InMemoryEventLog.fail_next_commit` makes the next transaction fail, for tests of what a
failed or unconfirmed commit does; :meth:`InMemoryEventLog.hold_commits` holds transactions until
the test lets them go.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from rummy_platform.envelope import Envelope, PayloadRegistry, encode, event_payloads
from rummy_platform.topics import TopicSpec

from .base import (
    ConsumerOptions,
    EventLog,
    EventLogError,
    GroupConsumer,
    OffsetCommit,
    OnAssigned,
    OnRevoked,
    Position,
    Record,
    TopicDescription,
    TopicMismatch,
    TopicPartition,
    TransactionalWriter,
    UnknownTopic,
    WriterFenced,
    decode_consumed,
    decode_known,
    offsets_to_commit,
)
from .partitioner import partition_for


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One record as the fake keeps it: the value bytes and the event-type header (None for a
    record written without it, as by builds before the header existed)."""

    value: bytes
    event_type: str | None


@dataclass
class _Topic:
    partitions: list[list[StoredRecord]]
    config: dict[str, str]


class CommitGate:
    """Holds every transaction of a log at its start until :meth:`open` (from
    :meth:`InMemoryEventLog.hold_commits`), so a test can line callers up behind a transaction in
    flight. ``sizes``: the event count of each transaction that went through, in order; ``fail``:
    the transactions (counted from 0) that fail, with their error (nothing written)."""

    def __init__(self, fail: Mapping[int, EventLogError] | None = None) -> None:
        self._opened = threading.Event()
        self.entered = threading.Event()
        self.fail = dict(fail or {})
        self.sizes: list[int] = []

    def open(self) -> None:
        self._opened.set()

    def _pass(self, events: int) -> EventLogError | None:
        self.entered.set()
        if not self._opened.wait(30):
            raise EventLogError("the test's commit gate was never opened")
        error = self.fail.get(len(self.sizes))
        self.sizes.append(events)
        return error


@dataclass
class _State:
    topics: dict[str, _Topic] = field(default_factory=dict)
    epochs: dict[str, int] = field(default_factory=dict)
    group_offsets: dict[tuple[str, TopicPartition], int] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: The failures the next transactions raise, and whether each one's events were written.
    failures: list[tuple[EventLogError, bool]] = field(default_factory=list)
    gate: CommitGate | None = None

    def topic(self, name: str) -> _Topic:
        try:
            return self.topics[name]
        except KeyError:
            raise UnknownTopic(f"topic {name!r} does not exist") from None

    def end_offset(self, tp: TopicPartition) -> int:
        partitions = self.topic(tp.topic).partitions
        if not 0 <= tp.partition < len(partitions):
            raise UnknownTopic(f"topic {tp.topic!r} has no partition {tp.partition}")
        return len(partitions[tp.partition])

    def write(self, topic: str, envelope: Envelope) -> Position:
        stored = StoredRecord(encode(envelope), envelope.type)
        return self.write_stored(topic, envelope.stream_id, stored)

    def write_stored(self, topic: str, stream_id: str, record: StoredRecord) -> Position:
        partitions = self.topic(topic).partitions
        partition = partition_for(stream_id, len(partitions))
        partitions[partition].append(record)
        return Position(topic, partition, len(partitions[partition]) - 1)


class InMemoryEventLog(EventLog):
    """The fake event log. ``registry`` decodes payloads (default: every event payload)."""

    def __init__(self, registry: PayloadRegistry | None = None) -> None:
        self._state = _State()
        self._registry = registry or event_payloads()

    def ensure_topics(self, specs: Iterable[TopicSpec]) -> None:
        for spec in specs:
            existing = self._state.topics.get(spec.name)
            if existing is None:
                self._state.topics[spec.name] = _Topic(
                    [[] for _ in range(spec.partitions)], dict(spec.config)
                )
                continue
            if len(existing.partitions) != spec.partitions:
                raise TopicMismatch(
                    f"topic {spec.name} has {len(existing.partitions)} partitions, "
                    f"spec says {spec.partitions}"
                )
            for key, value in spec.config.items():
                found = existing.config.get(key)
                if found != value:
                    raise TopicMismatch(f"topic {spec.name}: {key}={found!r}, spec says {value!r}")

    def describe_topic(self, name: str) -> TopicDescription:
        topic = self._state.topic(name)
        return TopicDescription(name, len(topic.partitions), dict(topic.config))

    def append(self, topic: str, envelope: Envelope) -> Position:
        with self._state.lock:
            return self._state.write(topic, envelope)

    def fail_next_commit(self, error: EventLogError, *, written: bool = False) -> None:
        """Make the next transaction (of any writer of this log) raise ``error``; with
        ``written`` its events and offsets are in the log all the same (a commit that landed but
        whose confirmation was lost, as a CommitOutcomeUnknown may be)."""
        with self._state.lock:
            self._state.failures.append((error, written))

    def hold_commits(self, fail: Mapping[int, EventLogError] | None = None) -> CommitGate:
        """Hold every later transaction at its start (outside the log's lock: reads go on) until
        the gate returned is opened; ``fail`` as :class:`CommitGate`."""
        gate = CommitGate(fail)
        self._state.gate = gate
        return gate

    def append_stored(self, topic: str, stream_id: str, record: StoredRecord) -> Position:
        """Append ``record`` as it is, on ``stream_id``'s partition (tests: records without
        the event-type header, or whose value is not an envelope)."""
        with self._state.lock:
            return self._state.write_stored(topic, stream_id, record)

    def transactional_writer(self, transactional_id: str) -> TransactionalWriter:
        epoch = self._state.epochs.get(transactional_id, 0) + 1
        self._state.epochs[transactional_id] = epoch
        return _InMemoryWriter(self._state, transactional_id, epoch)

    def read_stream(self, topic: str, stream_id: str, from_offset: int = 0) -> list[Record]:
        with self._state.lock:
            partitions = self._state.topic(topic).partitions
            partition = partition_for(stream_id, len(partitions))
            stored = list(enumerate(partitions[partition]))
        records = (
            (offset, decode_known(data.value, self._registry, "stream-reader", topic=topic))
            for offset, data in stored
            if offset >= from_offset
        )
        return [
            Record(topic, partition, offset, envelope)
            for offset, envelope in records
            if envelope is not None and envelope.stream_id == stream_id
        ]

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        with self._state.lock:
            return {tp: self._state.end_offset(tp) for tp in partitions}

    def consumer(
        self,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None = None,
        **options: Unpack[ConsumerOptions],
    ) -> GroupConsumer:
        # One member per group here: it owns every partition until it closes (on_revoked is
        # called then); there are no sessions to time out.
        for name in topics:
            self._state.topic(name)
        return _InMemoryConsumer(
            self._state,
            self._registry,
            group_id,
            tuple(topics),
            on_assigned,
            None if (types := options.get("types")) is None else frozenset(types),
            options.get("on_revoked"),
            skip_undecodable=options.get("skip_undecodable", False),
        )

    def close(self) -> None:
        pass


class _InMemoryWriter(TransactionalWriter):
    def __init__(self, state: _State, transactional_id: str, epoch: int) -> None:
        self._state = state
        self.transactional_id = transactional_id
        self._epoch = epoch

    def append_batch(
        self, events: Sequence[tuple[str, Envelope]], **commit: Unpack[OffsetCommit]
    ) -> list[Position]:
        gate = self._state.gate
        gated_error = gate._pass(len(events)) if gate is not None else None
        with self._state.lock:
            if gated_error is not None:
                raise gated_error
            if self._state.epochs[self.transactional_id] != self._epoch:
                raise WriterFenced(
                    f"writer {self.transactional_id!r} was fenced by a newer writer with the "
                    "same id"
                )
            consumed, group_id, _generation = offsets_to_commit(commit)
            for topic, _ in events:
                self._state.topic(topic)
            failure = self._state.failures.pop(0) if self._state.failures else None
            if failure is not None and not failure[1]:
                raise failure[0]
            positions = [self._state.write(topic, envelope) for topic, envelope in events]
            for partition, offset in consumed.items():
                self._state.group_offsets[(group_id or "", partition)] = offset
            if failure is not None:
                raise failure[0]
            return positions

    def close(self) -> None:
        pass


class _InMemoryConsumer(GroupConsumer):
    def __init__(
        self,
        state: _State,
        registry: PayloadRegistry,
        group_id: str,
        topics: tuple[str, ...],
        on_assigned: OnAssigned | None,
        types: frozenset[str] | None,
        on_revoked: OnRevoked | None = None,
        *,
        skip_undecodable: bool = False,
    ) -> None:
        self._skip_undecodable = skip_undecodable
        self._on_revoked = on_revoked
        self._state = state
        self._registry = registry
        self._group_id = group_id
        self._topics = topics
        self._on_assigned = on_assigned
        self._types = types
        self._positions: dict[TopicPartition, int] | None = None

    def _assign(self) -> dict[TopicPartition, int]:
        if self._positions is None:
            owned = frozenset(
                TopicPartition(name, p)
                for name in self._topics
                for p in range(len(self._state.topic(name).partitions))
            )
            resume = dict(self._on_assigned(owned)) if self._on_assigned else {}
            self._positions = {tp: resume.get(tp, self.committed(tp) or 0) for tp in sorted(owned)}
        return self._positions

    def poll(self, timeout_s: float = 1.0, max_records: int = 500) -> list[Record]:
        with self._state.lock:
            positions = self._assign()
            stored: list[tuple[TopicPartition, int, StoredRecord]] = []
            for tp, position in positions.items():
                log = self._state.topic(tp.topic).partitions[tp.partition]
                for offset in range(position, len(log)):
                    if len(stored) >= max_records:
                        break
                    positions[tp] = offset + 1
                    stored.append((tp, offset, log[offset]))
        records: list[Record] = []
        for tp, offset, record in stored:
            envelope = decode_consumed(
                record.value,
                record.event_type,
                self._registry,
                self._types,
                self._group_id,
                skip_undecodable=self._skip_undecodable,
                topic=tp.topic,
                partition=tp.partition,
                offset=offset,
            )
            if envelope is not None:
                records.append(Record(tp.topic, tp.partition, offset, envelope))
        return records

    def assignment(self) -> frozenset[TopicPartition]:
        return frozenset(self._positions or ())

    def seek(self, partition: TopicPartition, offset: int) -> None:
        positions = self._assign()
        if partition not in positions:
            raise ValueError(f"{partition} is not assigned to this consumer")
        positions[partition] = offset

    def position(self, partition: TopicPartition) -> int:
        positions = self._assign()
        if partition not in positions:
            raise ValueError(f"{partition} is not assigned to this consumer")
        return positions[partition]

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            self._state.group_offsets[(self._group_id, tp)] = offset

    def committed(self, partition: TopicPartition) -> int | None:
        return self._state.group_offsets.get((self._group_id, partition))

    def lag(self) -> dict[TopicPartition, int]:
        return {
            tp: max(0, self._state.end_offset(tp) - position)
            for tp, position in (self._positions or {}).items()
        }

    def close(self) -> None:
        if self._positions is not None and self._on_revoked is not None:
            self._on_revoked(frozenset(self._positions))
        self._positions = None
