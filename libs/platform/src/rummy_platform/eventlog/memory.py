"""An in-memory event log for unit tests and the simulator: the Kafka adapter's contract, in one
process, deterministic (no thread, clock or randomness of its own: every fault and every
rebalance happens at an explicit call).

Events are stored encoded (the same bytes as on Kafka), each with its event-type header, and
partitioned with Kafka's partitioner, so offsets and ordering match what the real log would give
(except that transaction markers take no offset here); a consumer of some types drops the others
by that header without decoding them, as on Kafka. Readers see only committed records, as
``read_committed`` ones do (:mod:`.memory_state`). :meth:`GroupConsumer.poll` never waits.
Writes and reads are serialized by one lock (writers may be used from several threads); a group
consumer belongs to one thread.

Consumer groups: by default (``InMemoryEventLog()``) a consumer is the one member of its group
and owns every partition of its topics until it closes; with ``groups=True`` the consumers of
a group share its partitions and rebalance as on Kafka, with generations and KIP-447 fencing
(:mod:`.memory_group`).

Faults, each at an explicit call (documented on its method):

- :meth:`InMemoryEventLog.fail_next_commit`: a transaction fails, applied or not (a lost
  commit outcome); :meth:`~InMemoryEventLog.interrupt_next_commit`: one is left open, its caller
  told its outcome is unknown, until it is resolved;
- :meth:`~InMemoryEventLog.open_transaction`: a transaction held open (to commit or abort);
- :meth:`~InMemoryEventLog.cut_off` / :meth:`~InMemoryEventLog.reconnect`: a client loses the
  log for a while;
- :meth:`~InMemoryEventLog.rebalance`, :meth:`~InMemoryEventLog.expire_member`: a group
  rebalances, a member is dropped from it;
- :meth:`~InMemoryEventLog.hold_commits`: transactions held (for tests with threads only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Unpack

from rummy_platform.envelope import Envelope, PayloadRegistry, event_payloads
from rummy_platform.topics import TopicSpec

from .base import (
    ConsumerOptions,
    EventLog,
    EventLogError,
    GroupConsumer,
    OffsetCommit,
    OnAssigned,
    Position,
    Record,
    TopicDescription,
    TopicMismatch,
    TopicPartition,
    TransactionalWriter,
    decode_known,
    offsets_to_commit,
)
from .memory_group import (
    Group,
    GroupView,
    InMemoryConsumer,
    MemberMetadata,
    check_generation,
)
from .memory_state import Failure, MemoryState, Partition, StoredRecord, Topic
from .memory_writer import CommitGate, InMemoryWriter, OpenTransaction
from .partitioner import partition_for

__all__ = [
    "CommitGate",
    "GroupView",
    "InMemoryConsumer",
    "InMemoryEventLog",
    "MemberMetadata",
    "OpenTransaction",
    "StoredRecord",
]


class InMemoryEventLog(EventLog):
    """The fake event log. ``registry`` decodes payloads (default: every event payload);
    ``groups``: consumers of one group share its partitions and rebalance (see the module doc)."""

    def __init__(self, registry: PayloadRegistry | None = None, *, groups: bool = False) -> None:
        self._state = MemoryState()
        self._registry = registry or event_payloads()
        self._groups = groups

    def ensure_topics(self, specs: Iterable[TopicSpec]) -> None:
        for spec in specs:
            existing = self._state.topics.get(spec.name)
            if existing is None:
                self._state.topics[spec.name] = Topic(
                    [Partition() for _ in range(spec.partitions)], dict(spec.config)
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

    # -- faults --------------------------------------------------------------------------------

    def fail_next_commit(
        self, error: EventLogError, *, written: bool = False, transactional_id: str | None = None
    ) -> None:
        """Make the next transaction (of the writer ``transactional_id``; None: of any writer of
        this log) raise ``error``; with ``written`` its events and offsets are in the log all
        the same (a commit that landed but whose confirmation was lost, as a
        CommitOutcomeUnknown may be), else nothing of it is. Faults queue up in call order."""
        with self._state.lock:
            self._state.failures.append(Failure(error, written, transactional_id))

    def interrupt_next_commit(
        self, *, lands: bool = False, transactional_id: str | None = None
    ) -> None:
        """Leave the next transaction (of ``transactional_id``; None: of any writer) open, and
        raise CommitOutcomeUnknown to its caller: its records take their offsets but no reader
        sees them, nor anything after them on their partitions (the last stable offset stops
        there), and its offsets are not stored. It is resolved, committed if ``lands`` (its
        EndTxn reached the coordinator) else aborted, by its writer's next append or
        :meth:`~TransactionalWriter.ready` (the real writer recreates its producer then), by a
        new writer of its id, or by :meth:`complete_transaction`."""
        with self._state.lock:
            self._state.failures.append(Failure(None, lands, transactional_id))

    def open_transaction(
        self,
        transactional_id: str,
        events: Sequence[tuple[str, Envelope]],
        **commit: Unpack[OffsetCommit],
    ) -> OpenTransaction:
        """Write ``events`` (and ``commit``'s offsets, refused as
        :meth:`~TransactionalWriter.append_batch` refuses them) in a transaction of a new
        producer ``transactional_id`` (fencing earlier writers of the id, as creating a writer
        does) and leave it open, for the caller to commit or abort. Raises as ``append_batch``."""
        consumed, group_id, metadata = offsets_to_commit(commit)
        with self._state.lock:
            self._fence_earlier(transactional_id)
            for topic, _ in events:
                self._state.topic(topic)
            check_generation(self._state, metadata)
            txn = self._state.open_transaction(transactional_id, events, consumed, group_id)
            return OpenTransaction(self._state, txn)

    def open_transactions(self) -> frozenset[str]:
        """The transactional ids with a transaction open now."""
        with self._state.lock:
            return frozenset(self._state.open_txns)

    def complete_transaction(self, transactional_id: str, *, commit: bool) -> None:
        """Commit or abort the open transaction of ``transactional_id`` (nothing when none is
        open): its coordinator finishing an interrupted commit, or aborting a transaction whose
        timeout ran out."""
        with self._state.lock:
            txn = self._state.open_txns.get(transactional_id)
            if txn is not None:
                self._state.finish(txn, commit=commit)

    def cut_off(self, client: TransactionalWriter | GroupConsumer) -> None:
        """Cut ``client`` (a writer or consumer of this log) off from the log until
        :meth:`reconnect`: a writer's appends and :meth:`~TransactionalWriter.ready` raise
        EventLogError (nothing written); a consumer's polls return nothing (the real adapter
        backs off), its commits, ``committed``, ``position`` and ``lag`` raise EventLogError,
        and its group waits for it in a rebalance until it comes back or is expired."""
        with self._state.lock:
            self._state.cut_off.add(client)

    def reconnect(self, client: TransactionalWriter | GroupConsumer) -> None:
        """End :meth:`cut_off` of ``client``."""
        with self._state.lock:
            self._state.cut_off.discard(client)

    def rebalance(self, group_id: str) -> None:
        """Start a rebalance of ``group_id`` (``groups=True``): every member gives up its
        partitions at its next poll; once all have, the next generation is assigned."""
        with self._state.lock:
            self._group(group_id).rebalance()

    def expire_member(self, consumer: InMemoryConsumer) -> None:
        """Drop ``consumer`` from its group at once (its session or poll interval ran out; a
        member cut off is dropped only this way) and rebalance the others. The member learns it
        at its next poll, see :mod:`.memory_group`; until then its metadata is refused."""
        with self._state.lock:
            self._group(consumer.group_id).leave(consumer.member_id)

    def group(self, group_id: str) -> GroupView:
        """``group_id`` as its coordinator sees it (``groups=True``). Raises KeyError."""
        with self._state.lock:
            return self._group(group_id).view()

    def _group(self, group_id: str) -> Group:
        try:
            return self._state.groups[group_id]
        except KeyError:
            raise KeyError(f"no group {group_id!r} (or the log was made without groups)") from None

    def hold_commits(self, fail: Mapping[int, EventLogError] | None = None) -> CommitGate:
        """Hold every later transaction at its start (outside the log's lock: reads go on) until
        the gate returned is opened; ``fail`` as :class:`CommitGate`. For tests with threads: it
        waits up to 30 s of wall time."""
        gate = CommitGate(fail)
        self._state.gate = gate
        return gate

    def append_stored(self, topic: str, stream_id: str, record: StoredRecord) -> Position:
        """Append ``record`` as it is, on ``stream_id``'s partition (tests: records without
        the event-type header, or whose value is not an envelope)."""
        with self._state.lock:
            return self._state.write_stored(topic, stream_id, record)

    # -- writers and readers -------------------------------------------------------------------

    def _fence_earlier(self, transactional_id: str) -> int:
        """A new producer's ``init_transactions``: the id's epoch goes up (fencing the earlier
        writers) and its open transaction is resolved. Returns the new epoch."""
        epoch = self._state.epochs.get(transactional_id, 0) + 1
        self._state.epochs[transactional_id] = epoch
        self._state.resolve(transactional_id)
        return epoch

    def transactional_writer(self, transactional_id: str) -> TransactionalWriter:
        with self._state.lock:
            epoch = self._fence_earlier(transactional_id)
        return InMemoryWriter(self._state, transactional_id, epoch)

    def read_stream(self, topic: str, stream_id: str, from_offset: int = 0) -> list[Record]:
        with self._state.lock:
            partitions = self._state.topic(topic).partitions
            number = partition_for(stream_id, len(partitions))
            partition = partitions[number]
            stored = [
                (offset, partition.entries[offset].record)
                for offset in range(max(0, from_offset), partition.stable_end)
                if partition.entries[offset].visible
            ]
        records = (
            (offset, decode_known(data.value, self._registry, "stream-reader", topic=topic))
            for offset, data in stored
        )
        return [
            Record(topic, number, offset, envelope)
            for offset, envelope in records
            if envelope is not None and envelope.stream_id == stream_id
        ]

    def committed_values(self, partition: TopicPartition) -> list[tuple[int, bytes]]:
        """``(offset, value bytes)`` of every committed record of ``partition`` below its last
        stable offset, in order (what a simulator hashes to compare two runs byte for byte).
        Raises UnknownTopic."""
        with self._state.lock:
            stored = self._state.partition(partition)
            return [
                (offset, stored.entries[offset].record.value)
                for offset in range(stored.stable_end)
                if stored.entries[offset].visible
            ]

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        with self._state.lock:
            return {tp: self._state.end_offset(tp) for tp in partitions}

    def high_watermarks(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The end of each partition with the records of open transactions (Kafka's high
        watermark, what a ``read_uncommitted`` reader sees; :meth:`end_offsets` is the last
        stable offset): a partition whose two ends differ holds an open transaction, as
        :func:`~.kafka_records.unstable_partitions` finds on Kafka. Raises UnknownTopic."""
        with self._state.lock:
            return {tp: len(self._state.partition(tp).entries) for tp in partitions}

    def consumer(
        self,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None = None,
        **options: Unpack[ConsumerOptions],
    ) -> InMemoryConsumer:
        # There are no sessions to time out: a member is dropped by expire_member only.
        with self._state.lock:
            for name in topics:
                self._state.topic(name)
            return InMemoryConsumer(
                self._state,
                self._registry,
                group_id,
                tuple(topics),
                on_assigned,
                None if (types := options.get("types")) is None else frozenset(types),
                options.get("on_revoked"),
                skip_undecodable=options.get("skip_undecodable", False),
                grouped=self._groups,
            )

    def close(self) -> None:
        pass
