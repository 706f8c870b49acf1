"""The event log's interface: what every adapter (Kafka, in-memory) provides.

Positions are Kafka's: a stream (all events of one key) lives on one partition of a topic, and an
*offset* is a record's position in that partition. Readers see only committed data (Kafka's
``read_committed``): records of an open or aborted transaction are never returned.

Every append also writes the envelope's payload type (``Envelope.type``) as the record header
:data:`EVENT_TYPE_HEADER`, so a consumer that declares the types it uses drops the others without
decoding them (records written before the header existed are decoded and then dropped by type).

A record whose payload type this build's registry does not know (a newer writer's, in a rolling
deploy) is skipped the same way, by every reader of the log: :func:`decode_known` counts and logs
it (:mod:`rummy_platform.skips`) and returns None instead of raising.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Self, TypedDict, Unpack

from rummy_platform.envelope import (
    Envelope,
    EnvelopeError,
    PayloadRegistry,
    UnknownEventType,
    decode,
)
from rummy_platform.logging import get_logger
from rummy_platform.skips import SKIPPED, RecordPlace
from rummy_platform.topics import TopicSpec

_log = get_logger(__name__)

#: The record header holding the payload type (UTF-8), e.g. ``rummy.table.v1.CardDrawn``.
EVENT_TYPE_HEADER = "event-type"


def decode_known(
    value: bytes,
    registry: PayloadRegistry,
    consumer: str = "",
    *,
    log: bool = True,
    **where: Unpack[RecordPlace],
) -> Envelope | None:
    """The envelope of a record's ``value``, or None (counted and logged once per type, see
    :mod:`rummy_platform.skips`; ``log=False``: counted only) when its payload type is not in
    ``registry``: a newer writer's event this build skips. ``consumer`` and ``where`` (topic,
    partition, offset) go into the log line. Raises EnvelopeError for bytes that are no
    envelope or payload."""
    try:
        return decode(value, registry)
    except UnknownEventType as exc:
        SKIPPED.skipped(
            "unknown_type",
            type_name=exc.type_name,
            table_id=exc.stream_id,
            hand_id=exc.correlation_id,
            consumer=consumer,
            log=log,
            **where,
        )
        return None


def decode_if_used(
    value: bytes,
    header_type: str | None,
    registry: PayloadRegistry,
    types: Collection[str] | None,
    consumer: str = "",
    **where: Unpack[RecordPlace],
) -> Envelope | None:
    """The envelope of a consumed record's ``value``, or None when a consumer of ``types``
    (None: every type) does not use it. A record whose :data:`EVENT_TYPE_HEADER`
    (``header_type``) names a type outside ``types`` is dropped without decoding its value; a
    record without the header (None: written before the header existed) is decoded, then
    dropped if its type is not in ``types``; a record of a type ``registry`` does not know is
    skipped as :func:`decode_known` says. Raises EnvelopeError for undecodable bytes."""
    if types is not None and header_type is not None and header_type not in types:
        return None
    envelope = decode_known(value, registry, consumer, **where)
    if envelope is None:
        return None
    if types is not None and envelope.type not in types:
        return None
    return envelope


def decode_consumed(
    value: bytes,
    header_type: str | None,
    registry: PayloadRegistry,
    types: Collection[str] | None,
    consumer: str,
    *,
    skip_undecodable: bool,
    topic: str,
    partition: int,
    offset: int,
) -> Envelope | None:
    """:func:`decode_if_used` for a group consumer's record; with ``skip_undecodable``, bytes
    that are no envelope are skipped (None, one warning "undecodable event skipped" with the
    record's place) instead of raising EnvelopeError."""
    try:
        return decode_if_used(
            value,
            header_type,
            registry,
            types,
            consumer,
            topic=topic,
            partition=partition,
            offset=offset,
        )
    except EnvelopeError:
        if not skip_undecodable:
            raise
        _log.warning(
            "undecodable event skipped",
            consumer=consumer,
            topic=topic,
            partition=partition,
            offset=offset,
        )
        return None


class ClosedOnExit(ABC):
    """A client closed when the ``with`` block using it ends."""

    @abstractmethod
    def close(self) -> None:
        """Release what the client holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class EventLogError(Exception):
    """The event log could not do what was asked (broker unreachable, timeout, bad state)."""


class WriterFenced(EventLogError):
    """Another writer took over this writer's ``transactional_id``.

    Raised by the fenced writer's next append; nothing of that append is visible to readers. The
    writer is dead: build a new one (which fences the other in turn) only if this process should
    own the stream again.
    """


class GenerationFenced(EventLogError):
    """The group refused offsets committed under a member's group metadata (KIP-447): the
    generation it names has ended (a rebalance moved on) or the group dropped the member (a
    zombie). Raised by :meth:`TransactionalWriter.append_batch` (the transaction is aborted:
    nothing of it is visible; the writer carries on) and :meth:`GroupConsumer.commit`
    (nothing committed)."""


class CommitOutcomeUnknown(EventLogError):
    """The transaction's commit was sent but not confirmed (a timeout, a lost connection): its
    events may or may not be in the log. Re-read the affected streams before deciding anything
    on them again."""


class TopicMismatch(EventLogError):
    """A topic exists with a partition count or configuration other than its spec."""


class UnknownTopic(EventLogError):
    """The topic does not exist (topics are created explicitly, never on first use)."""


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class Position:
    """Where an appended event landed."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class Record:
    """One event read back from the log, with its position."""

    topic: str
    partition: int
    offset: int
    envelope: Envelope

    @property
    def next_offset(self) -> int:
        """The offset to resume from after this record (what a consumer stores)."""
        return self.offset + 1


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """A topic as the log reports it: partition count and its non-default configuration."""

    name: str
    partitions: int
    config: Mapping[str, str]


#: Called when a group consumer is given partitions; returns the offsets to resume each from
#: (e.g. read from Postgres). Partitions left out resume from the group's committed offset, or
#: from the beginning when there is none.
OnAssigned = Callable[[frozenset[TopicPartition]], Mapping[TopicPartition, int]]
#: Called when a group consumer loses partitions (revoked in a rebalance, or lost because the
#: member was dropped from the group), before they go to another member.
OnRevoked = Callable[[frozenset[TopicPartition]], None]


class OffsetCommit(TypedDict, total=False):
    """The consumed offsets a :meth:`TransactionalWriter.append_batch` commits with its events
    (each key optional, None when absent)."""

    #: The next offsets to resume from.
    consumed: Mapping[TopicPartition, int] | None
    #: The group they are committed for (required with ``consumed``).
    group_id: str | None
    #: :meth:`GroupConsumer.group_metadata` of the member that read them.
    group_metadata: object | None


def offsets_to_commit(
    commit: OffsetCommit,
) -> tuple[dict[TopicPartition, int], str | None, object | None]:
    """``commit``'s consumed offsets (``{}`` for none), group id and group metadata. Raises
    ValueError for offsets without a group id."""
    consumed, group_id = dict(commit.get("consumed") or {}), commit.get("group_id")
    if consumed and not group_id:
        raise ValueError("consumed offsets need a group_id")
    return consumed, group_id, commit.get("group_metadata")


class ConsumerOptions(TypedDict, total=False):
    """The options of :meth:`EventLog.consumer` (each optional; see there)."""

    types: Collection[str] | None
    on_revoked: OnRevoked | None
    session_timeout_s: float | None
    skip_undecodable: bool
    batch_wait_s: float | None
    max_poll_interval_s: float | None


class TransactionalWriter(ClosedOnExit):
    """A producer with a stable ``transactional_id``: the single writer of the streams it owns.

    Creating a writer fences every earlier writer with the same id. Each :meth:`append_batch` is
    one Kafka transaction: all its events become visible together, or none do.
    """

    transactional_id: str

    @abstractmethod
    def append_batch(
        self, events: Sequence[tuple[str, Envelope]], **commit: Unpack[OffsetCommit]
    ) -> list[Position]:
        """Append ``(topic, envelope)`` pairs atomically, each keyed by its stream id.

        ``commit`` (:class:`OffsetCommit`): ``consumed`` (next offsets to resume from) are
        committed for ``group_id`` in the same transaction (consume-transform-produce).
        ``group_metadata`` (from :meth:`GroupConsumer.group_metadata` of the member that read
        them) lets the broker refuse offsets of a member whose generation is stale (KIP-447).
        Returns the positions, in order. Raises ValueError for offsets without a group id.
        Raises WriterFenced if another writer took the id (nothing is written),
        GenerationFenced if the group refused the offsets (nothing is written),
        CommitOutcomeUnknown if the commit was sent but not confirmed, EventLogError otherwise
        (nothing is written).
        """

    def append(self, topic: str, envelope: Envelope) -> Position:
        """Append one event in its own transaction. Raises as :meth:`append_batch`."""
        return self.append_batch([(topic, envelope)])[0]

    def ready(self) -> None:
        """Return when the writer can write; raise EventLogError (WriterFenced once fenced) while
        it cannot, saying why. A writer that recovers by itself (recreating its producer after a
        broker stall) tries that here when its backoff allows; once this returns, the outcome of
        every earlier transaction is final (a commit of unknown outcome was completed or aborted by
        the broker). A probe for :class:`rummy_platform.dependencies.DependencyWatch`. This
        default (a writer without a producer to lose) always returns."""
        return None

    @abstractmethod
    def close(self) -> None:
        """Release the producer (an open transaction is aborted by the broker)."""


class GroupConsumer(ClosedOnExit):
    """A member of a consumer group whose offsets the caller controls.

    Nothing is committed automatically: the caller stores ``record.next_offset`` with the effects
    of the record (e.g. in Postgres) and hands it back through ``on_assigned``, or calls
    :meth:`commit`.
    """

    @abstractmethod
    def poll(self, timeout_s: float = 1.0, max_records: int = 500) -> list[Record]:
        """Committed records from the assigned partitions, in offset order per partition.

        Waits up to ``timeout_s`` seconds for at least one; returns ``[]`` if none came.
        """

    @abstractmethod
    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions this member currently owns."""

    @abstractmethod
    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Resume ``partition`` (owned by this member) from ``offset``."""

    @abstractmethod
    def position(self, partition: TopicPartition) -> int:
        """The offset of the next record this member reads from ``partition`` (owned by it).
        Raises EventLogError when the broker cannot tell."""

    @abstractmethod
    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit next offsets for the group (optional: offsets may live in the caller's store).
        Raises GenerationFenced when the group has moved past this member's generation (or
        dropped it), EventLogError when the broker cannot be reached."""

    def group_metadata(self) -> object | None:
        """This member's group membership now (generation included), for
        :meth:`TransactionalWriter.append_batch`; None where the log has no generations."""
        return None

    @abstractmethod
    def committed(self, partition: TopicPartition) -> int | None:
        """The group's committed offset of ``partition``, or None. Raises EventLogError when the
        broker cannot tell."""

    @abstractmethod
    def lag(self) -> dict[TopicPartition, int]:
        """How many offsets lie between this member's position and the end of each partition it
        owns (0 when caught up; ``{}`` before it owns any). The end is the one
        :meth:`EventLog.end_offsets` reports. Raises EventLogError when the broker cannot tell."""

    @abstractmethod
    def close(self) -> None:
        """Leave the group (without committing)."""


class EventLog(ClosedOnExit):
    """Append to, and read from, the event topics."""

    @abstractmethod
    def ensure_topics(self, specs: Iterable[TopicSpec]) -> None:
        """Create the topics that are missing; check those that exist.

        Idempotent. Raises TopicMismatch if an existing topic has another partition count or a
        different value for a key of its spec's configuration.
        """

    @abstractmethod
    def describe_topic(self, name: str) -> TopicDescription:
        """Partition count and non-default configuration of ``name``. Raises UnknownTopic."""

    @abstractmethod
    def append(self, topic: str, envelope: Envelope) -> Position:
        """Append one event, keyed by its stream id, with an idempotent, acks=all producer.

        Returns once the broker acknowledged it. Raises UnknownTopic / EventLogError.
        """

    @abstractmethod
    def transactional_writer(self, transactional_id: str) -> TransactionalWriter:
        """A transactional writer with this stable id; fences earlier writers with the same id."""

    @abstractmethod
    def read_stream(self, topic: str, stream_id: str, from_offset: int = 0) -> list[Record]:
        """Every committed event of ``stream_id`` in ``topic`` at or after ``from_offset``.

        ``from_offset`` is an offset of the stream's partition (a ``Record.next_offset``). Returns
        the events in the order they were appended. Raises UnknownTopic.
        """

    @abstractmethod
    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The end of each partition: the offset after its last committed record (Kafka's last
        stable offset, as a ``read_committed`` reader sees it; transaction markers take offsets
        too). Raises UnknownTopic for a topic or partition that does not exist, EventLogError
        when the broker does not answer."""

    @abstractmethod
    def consumer(
        self,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None = None,
        **options: Unpack[ConsumerOptions],
    ) -> GroupConsumer:
        """Join consumer group ``group_id`` on ``topics`` (see :class:`GroupConsumer`), with
        ``options`` (:class:`ConsumerOptions`, below; none given: defaults).

        ``on_revoked`` is called (on the polling thread) with the partitions the member loses,
        before the group hands them to another member. ``session_timeout_s``: how long the
        group waits for a silent member before it hands its partitions over (None: the
        client's default; heartbeats every sixth of it). Partitions are assigned by range, so
        members of topics with one partition count get the same partition numbers of each.

        With ``types`` (payload type names, ``type_name(HandStarted)``), :meth:`GroupConsumer.poll`
        returns only records of those types: the others are dropped by their
        :data:`EVENT_TYPE_HEADER` without being decoded (see :func:`decode_if_used`). The
        consumer's position moves past them, but no offset is stored for them: a caller that
        stores ``record.next_offset`` of the records it gets resumes after the last of those
        (and drops the skipped ones after it again, as cheaply).

        A record whose bytes are no envelope makes :meth:`GroupConsumer.poll` raise
        EnvelopeError; with ``skip_undecodable`` it is skipped with a warning instead (see
        :func:`decode_consumed`).

        ``batch_wait_s``: while records come, how long the broker may hold a fetch to batch
        them (seconds; None: the client's, 0.1 s on Kafka), i.e. how late a record may reach
        this member; a consumer that can take records late fetches less often. (Idle members
        get the first record at once whatever it is; an adapter without fetches ignores it.)

        ``on_assigned`` runs on the polling thread, inside the :meth:`GroupConsumer.poll` that
        got the partitions (their records come from later polls), while the member keeps its
        membership; ``max_poll_interval_s``: the longest a poll (such a grant included) and
        the time between two polls may take before the member leaves the group, which is also
        how long a rebalance waits for a live member to rejoin (seconds; None: the client's,
        300 s on Kafka; an adapter without sessions ignores it)."""

    @abstractmethod
    def close(self) -> None:
        """Release every client this log opened."""
