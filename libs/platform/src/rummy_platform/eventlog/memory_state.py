"""What the in-memory event log (:mod:`.memory`) holds: its topics' records, the transactions
that wrote them, the groups' committed offsets and the faults a test or simulator set up.

A partition is a list of entries; an entry written in a transaction points at it, and a
``read_committed`` reader sees an entry only once its transaction committed, never one of an
aborted transaction, and nothing at or after the first entry of a transaction still open (the
partition's *last stable offset*, Kafka's end of a partition for such readers). Unlike Kafka, a
transaction's commit or abort marker takes no offset.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from rummy_platform.envelope import Envelope, encode

from .base import EventLogError, Position, TopicPartition, UnknownTopic
from .partitioner import partition_for

if TYPE_CHECKING:
    from .memory_group import Group
    from .memory_writer import CommitGate


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One record as the fake keeps it: the value bytes and the event-type header (None for a
    record written without it, as by builds before the header existed)."""

    value: bytes
    event_type: str | None


class TxnState(Enum):
    OPEN = "open"
    COMMITTED = "committed"
    ABORTED = "aborted"


@dataclass(eq=False)
class Txn:
    """One transaction of ``transactional_id``: its records' places, the consumed offsets it
    stores for ``group_id`` when it commits, and ``lands``: whether it commits (True) or aborts
    when it is resolved while open (see :meth:`MemoryState.resolve`)."""

    transactional_id: str
    consumed: Mapping[TopicPartition, int]
    group_id: str | None
    lands: bool = False
    state: TxnState = TxnState.OPEN
    positions: list[Position] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Entry:
    record: StoredRecord
    txn: Txn | None  # None: a plain append, visible at once

    @property
    def visible(self) -> bool:
        return self.txn is None or self.txn.state is TxnState.COMMITTED


@dataclass
class Partition:
    entries: list[Entry] = field(default_factory=list)
    #: The first offset of each open transaction holding records here.
    open_from: dict[int, int] = field(default_factory=dict)

    @property
    def stable_end(self) -> int:
        """The last stable offset: nothing at or after it is read yet."""
        return min(self.open_from.values(), default=len(self.entries))


@dataclass
class Topic:
    partitions: list[Partition]
    config: dict[str, str]


@dataclass(frozen=True, slots=True)
class Failure:
    """A fault the next matching transaction meets (see :meth:`InMemoryEventLog.fail_next_commit`
    and :meth:`InMemoryEventLog.interrupt_next_commit`)."""

    error: EventLogError | None  # None: an interrupted commit (left open)
    #: Whether the transaction's events and offsets are in the log all the same; for an
    #: interrupted commit: whether it commits (else aborts) when it is resolved.
    written: bool
    transactional_id: str | None

    def matches(self, transactional_id: str) -> bool:
        return self.transactional_id in (None, transactional_id)


@dataclass
class MemoryState:
    topics: dict[str, Topic] = field(default_factory=dict)
    epochs: dict[str, int] = field(default_factory=dict)
    group_offsets: dict[tuple[str, TopicPartition], int] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    failures: list[Failure] = field(default_factory=list)
    #: Open transactions, by transactional id (a producer has at most one).
    open_txns: dict[str, Txn] = field(default_factory=dict)
    #: Clients (writers, consumers) cut off from the log: every call of theirs fails.
    cut_off: set[object] = field(default_factory=set)
    #: The consumer groups of a log with ``groups=True``, by group id.
    groups: dict[str, Group] = field(default_factory=dict)
    #: Holds transactions at their start (:meth:`InMemoryEventLog.hold_commits`).
    gate: CommitGate | None = None
    #: Numbers the members that join a group (member ids).
    members_joined: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def topic(self, name: str) -> Topic:
        try:
            return self.topics[name]
        except KeyError:
            raise UnknownTopic(f"topic {name!r} does not exist") from None

    def partition(self, tp: TopicPartition) -> Partition:
        partitions = self.topic(tp.topic).partitions
        if not 0 <= tp.partition < len(partitions):
            raise UnknownTopic(f"topic {tp.topic!r} has no partition {tp.partition}")
        return partitions[tp.partition]

    def end_offset(self, tp: TopicPartition) -> int:
        return self.partition(tp).stable_end

    def take_failure(self, transactional_id: str) -> Failure | None:
        for i, failure in enumerate(self.failures):
            if failure.matches(transactional_id):
                return self.failures.pop(i)
        return None

    def write(self, topic: str, envelope: Envelope, txn: Txn | None = None) -> Position:
        stored = StoredRecord(encode(envelope), envelope.type)
        return self.write_stored(topic, envelope.stream_id, stored, txn)

    def write_stored(
        self, topic: str, stream_id: str, record: StoredRecord, txn: Txn | None = None
    ) -> Position:
        partitions = self.topic(topic).partitions
        number = partition_for(stream_id, len(partitions))
        partition = partitions[number]
        offset = len(partition.entries)
        partition.entries.append(Entry(record, txn))
        if txn is not None and txn.state is TxnState.OPEN:
            partition.open_from.setdefault(id(txn), offset)
        position = Position(topic, number, offset)
        if txn is not None:
            txn.positions.append(position)
        return position

    def open_transaction(
        self,
        transactional_id: str,
        events: Sequence[tuple[str, Envelope]],
        consumed: Mapping[TopicPartition, int],
        group_id: str | None,
    ) -> Txn:
        """Write ``events`` in a new open transaction of ``transactional_id`` (call with the lock
        held, after checking the topics exist)."""
        txn = Txn(transactional_id, dict(consumed), group_id)
        for topic, envelope in events:
            self.write(topic, envelope, txn)
        self.open_txns[transactional_id] = txn
        return txn

    def finish(self, txn: Txn, *, commit: bool) -> None:
        """Commit or abort ``txn`` (nothing if it is no longer open)."""
        if txn.state is not TxnState.OPEN:
            return
        txn.state = TxnState.COMMITTED if commit else TxnState.ABORTED
        for position in txn.positions:
            self.partition(TopicPartition(position.topic, position.partition)).open_from.pop(
                id(txn), None
            )
        if self.open_txns.get(txn.transactional_id) is txn:
            del self.open_txns[txn.transactional_id]
        if commit:
            for tp, offset in txn.consumed.items():
                self.group_offsets[(txn.group_id or "", tp)] = offset

    def resolve(self, transactional_id: str) -> None:
        """Finish the open transaction of ``transactional_id``, if any, as it ``lands`` (what the
        coordinator does when a new producer with that id initialises)."""
        txn = self.open_txns.get(transactional_id)
        if txn is not None:
            self.finish(txn, commit=txn.lands)
