"""Reactors: consumer loops that turn other services' events into a service's own effects.

A reactor joins a consumer group on some topics, decodes each record's envelope, and calls the
handler registered for its payload type; records of other types are never delivered (the consumer
drops them by their event-type header without decoding them, see
:meth:`rummy_platform.eventlog.EventLog.consumer`), so the offset stored next, with the next
handled record, lies past them. Two kinds, by where the effects land:

- :class:`PostgresReactor` (ledger, fairness): the handler writes to PostgreSQL in an open
  transaction, and the reactor stores the record's next offset in the same transaction
  (``consumer_offsets`` table); on (re)assignment the consumer resumes from the stored offsets.
  Outgoing events go to the outbox (:mod:`rummy_platform.outbox`) in that transaction too.
  With ``processed_table`` it also records each handled event id and skips an event id seen
  before (a relay that republished after a crash, at a new offset).
- :class:`TransactionalReactor` (dealer): the handler returns the events to append; they
  are appended with the record offsets in one Kafka transaction (consume-transform-produce), so
  each input's outputs become visible exactly once. Outputs get event ids derived from the
  input's (:func:`rummy_platform.envelope.reaction_event_id`), so even an input seen twice
  yields the same event ids.

A handler that raises parks its record's stream (a table) and only that one
(:class:`rummy_platform.isolation.StreamIsolation`): the record and the later records of the same
stream are held and retried after a backoff that starts at ``retry_pause_s`` seconds, while every
other table's records are handled as they come; the offset stored for a partition never passes
its first held record, so a restart reads the held records again. An outage of the log or the
database (``EventLogError``, ``psycopg.OperationalError``) is no table's fault: the consumer is
rewound to the first record not done, and the round is retried after ``retry_pause_s``. Handlers
must be deterministic in what they write for a given input.

Each reactor is a :class:`rummy_platform.consumer_loop.ConsumerLoop` around a core that does
no I/O of its own (``reactor.core``: :class:`~rummy_platform.consumer_loop.EachRecord` for the
PostgreSQL reactor, :class:`TransactionalCore` for the Kafka one), which a simulator can drive
record by record.

The tables a :class:`PostgresReactor` uses (``consumer_offsets``, and ``processed_events`` with
``processed_table=...``; any names, these are the defaults) are created in each service's schema
by ``rummy_platform/migrations/platform_0001_event_plumbing.sql`` (applied by
:func:`rummy_platform.db.apply_migrations`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy_platform.consumer_loop import (
    ConsumerLoop,
    EachRecord,
    RecordCore,
    Step,
    in_log_order,
    rewind_from,
)
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import (
    EventLog,
    EventLogError,
    Record,
    TopicPartition,
    TransactionalWriter,
    WriterFenced,
)
from rummy_platform.isolation import StreamIsolation
from rummy_platform.logging import get_logger, log_context

_log = get_logger(__name__)

#: Effects of one event inside the caller's open transaction (must not commit).
DbHandler = Callable[[psycopg.Connection, Envelope], None]
#: The ``(topic, envelope)`` pairs one event causes; appended in the consumed offset's transaction.
EmitHandler = Callable[[Envelope], Sequence[tuple[str, Envelope]]]

#: Failures that are no table's fault: the whole round is rewound and retried.
OUTAGES: tuple[type[BaseException], ...] = (EventLogError, psycopg.OperationalError)


class _Reactor(ConsumerLoop):
    """What both reactors pass the consumer loop: every error retried (a failing table alone
    is parked by the core), the types without a handler dropped by their header, undecoded."""

    def __init__(
        self,
        log: EventLog,
        core: RecordCore,
        *,
        group_id: str,
        topics: Sequence[str],
        handled_types: frozenset[str],
        retry_pause_s: float,
        poll_timeout_s: float,
    ) -> None:
        super().__init__(
            log,
            core,
            group_id=group_id,
            topics=topics,
            poll_timeout_s=poll_timeout_s,
            pause_s=retry_pause_s,
            retried=Exception,
            failed="reactor round failed; will retry",
            fenced="reactor writer fenced; stopping",
            log_to=_log,
            types=handled_types,
        )


class PostgresReactor(_Reactor):
    """Handles each record in one PostgreSQL transaction with its stored offset.

    ``handlers`` maps payload type names (``type_name(HandStarted)``) to :data:`DbHandler`. Its
    core (``core``, an :class:`~rummy_platform.consumer_loop.EachRecord`) runs :meth:`handle`
    for each record.
    """

    def __init__(
        self,
        log: EventLog,
        pool: ConnectionPool,
        *,
        group_id: str,
        topics: Sequence[str],
        handlers: Mapping[str, DbHandler],
        offsets_table: str = "consumer_offsets",
        processed_table: str | None = None,
        retry_pause_s: float = 1.0,
        poll_timeout_s: float = 0.5,
    ) -> None:
        self._pool = pool
        self._handlers = dict(handlers)
        self._offsets = sql.Identifier(offsets_table)
        self._processed = sql.Identifier(processed_table) if processed_table else None
        isolation = StreamIsolation(group_id, first_s=retry_pause_s)
        super().__init__(
            log,
            EachRecord(isolation, self.handle, outages=OUTAGES),
            group_id=group_id,
            topics=topics,
            handled_types=frozenset(handlers),
            retry_pause_s=retry_pause_s,
            poll_timeout_s=poll_timeout_s,
        )

    def stored_offsets(self) -> dict[TopicPartition, int]:
        """The next offset to read of every partition this group stored."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                sql.SQL(
                    "SELECT topic, partition, next_offset FROM {} WHERE consumer_group = %s"
                ).format(self._offsets),
                (self.group_id,),
            ).fetchall()
        return {TopicPartition(r[0], r[1]): int(r[2]) for r in rows}

    def _assigned(self, partitions: frozenset[TopicPartition]) -> Mapping[TopicPartition, int]:
        super()._assigned(partitions)
        stored = self.stored_offsets()
        # A partition never handled starts at 0 (not at the group's Kafka offset).
        return {tp: stored.get(tp, 0) for tp in partitions}

    def handle(self, record: Record, store_offset: int | None = None) -> bool:
        """Handle one record and store ``store_offset`` (default: the record's next offset) in
        one transaction; True if a handler ran (False: no handler for its type, or its event id
        was already processed)."""
        envelope = record.envelope
        handler = self._handlers.get(envelope.type)
        ran = False
        with (
            log_context(correlation_id=envelope.correlation_id or None, event_type=envelope.type),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            if handler is not None and self._first_time(conn, envelope):
                handler(conn, envelope)
                ran = True
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (consumer_group, topic, partition, next_offset) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (consumer_group, topic, partition) "
                    "DO UPDATE SET next_offset = GREATEST({}.next_offset, "
                    "EXCLUDED.next_offset), updated_at = now()"
                ).format(self._offsets, self._offsets),
                (
                    self.group_id,
                    record.topic,
                    record.partition,
                    record.next_offset if store_offset is None else store_offset,
                ),
            )
        return ran

    def _first_time(self, conn: psycopg.Connection[Any], envelope: Envelope) -> bool:
        if self._processed is None:
            return True
        row = conn.execute(
            sql.SQL(
                "INSERT INTO {} (consumer_group, event_id) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING RETURNING event_id"
            ).format(self._processed),
            (self.group_id, envelope.event_id),
        ).fetchone()
        return row is not None


class TransactionalCore:
    """The core of :class:`TransactionalReactor`: each poll's records in log order (a parked
    table's held), their outputs appended with the consumed offsets in one
    :meth:`TransactionalWriter.append_batch`; a parked table's record retried alone, in its own
    append. ``emit(record)`` gives a record's outputs; ``on_abort`` is called when an append
    fails or a handler raised (stream versions handed out for it are forgotten)."""

    def __init__(
        self,
        isolation: StreamIsolation,
        writer: TransactionalWriter,
        emit: Callable[[Record], list[tuple[str, Envelope]]],
        *,
        on_abort: Callable[[], None] | None = None,
    ) -> None:
        self.isolation = isolation
        self._writer = writer
        self._emit = emit
        self._on_abort = on_abort

    def _append(
        self, outputs: list[tuple[str, Envelope]], consumed: dict[TopicPartition, int]
    ) -> None:
        try:
            self._writer.append_batch(outputs, consumed=consumed, group_id=self.isolation.group_id)
        except Exception:
            if self._on_abort is not None:
                self._on_abort()
            raise

    def step(self, records: Sequence[Record]) -> Step:
        records = in_log_order(records)
        outputs: list[tuple[str, Envelope]] = []
        touched: set[TopicPartition] = set()
        handled, failed = 0, False
        try:
            for record in records:
                touched.add(TopicPartition(record.topic, record.partition))
                if not self.isolation.admit(record):
                    continue
                try:
                    outputs.extend(self._emit(record))
                    handled += 1
                except OUTAGES:
                    raise
                except Exception as exc:
                    self.isolation.failed(record, exc)
                    failed = True
            consumed = {tp: self.isolation.resume(tp) for tp in touched}
            self._append(outputs, consumed)
        except Exception as exc:
            # Nothing of this batch was committed: it is all delivered again.
            return Step(handled, rewind_from(self.isolation, records), exc)
        if failed and self._on_abort is not None:
            self._on_abort()  # a failed handler may have counted stream versions it never used
        return Step(handled)

    def retry_due(self) -> int:
        def handle(record: Record, store_offset: int) -> None:
            try:
                outputs = self._emit(record)
            except Exception:
                if self._on_abort is not None:
                    self._on_abort()
                raise
            tp = TopicPartition(record.topic, record.partition)
            self._append(outputs, {tp: store_offset})

        return self.isolation.retry_due(handle, reraise=(WriterFenced, *OUTAGES))


class TransactionalReactor(_Reactor):
    """Appends each poll's outputs with its consumed offsets in one Kafka transaction.

    ``handlers`` maps payload type names to :data:`EmitHandler`. The consumer resumes from the
    group's committed offsets, which only these transactions commit. ``on_abort`` is called
    when a transaction fails (e.g. to forget stream versions handed out for it). Its core
    (``core``) is a :class:`TransactionalCore`.
    """

    def __init__(
        self,
        log: EventLog,
        writer: TransactionalWriter,
        *,
        group_id: str,
        topics: Sequence[str],
        handlers: Mapping[str, EmitHandler],
        on_abort: Callable[[], None] | None = None,
        retry_pause_s: float = 1.0,
        poll_timeout_s: float = 0.5,
    ) -> None:
        self._handlers = dict(handlers)
        isolation = StreamIsolation(group_id, first_s=retry_pause_s)
        super().__init__(
            log,
            TransactionalCore(isolation, writer, self._emit, on_abort=on_abort),
            group_id=group_id,
            topics=topics,
            handled_types=frozenset(handlers),
            retry_pause_s=retry_pause_s,
            poll_timeout_s=poll_timeout_s,
        )

    def _emit(self, record: Record) -> list[tuple[str, Envelope]]:
        envelope = record.envelope
        handler = self._handlers.get(envelope.type)
        if handler is None:
            return []
        with log_context(correlation_id=envelope.correlation_id or None, event_type=envelope.type):
            return list(handler(envelope))
