"""The transactional outbox and the relay that publishes it
(``docs/rules/promises.md#nothing-lost``).

A service that commits to PostgreSQL and publishes to Kafka writes its outgoing events with
:func:`write_outbox` in the same transaction as its effects; an :class:`OutboxRelay` later
appends each row to its topic with the event log's idempotent producer and stamps it published.
A crash between the append and the stamp republishes the row after a restart: delivery is at
least once, and consumers drop repeats by ``event_id`` (the row's primary key is the event id,
so a repeat is the very same envelope bytes).

The tables (``outbox``, and ``stream_versions`` for :func:`next_stream_version`) are created in
each service's schema by ``rummy_platform/migrations/platform_0001_event_plumbing.sql``, which
:func:`rummy_platform.db.apply_migrations` applies before the service's own migrations;
``platform_0002_outbox_notify.sql`` adds the trigger that notifies :data:`NOTIFY_CHANNEL` at the
commit of every transaction that wrote ``outbox`` rows, which wakes the relay.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy_platform.envelope import Envelope, PayloadRegistry, decode, encode, event_payloads
from rummy_platform.eventlog import EventLog
from rummy_platform.logging import get_logger

_log = get_logger(__name__)

DEFAULT_TABLE = "outbox"
#: The PostgreSQL channel the outbox trigger notifies (payload ``<schema>.<table>``).
NOTIFY_CHANNEL = "rummy_outbox"


def next_stream_version(conn: psycopg.Connection, stream_id: str) -> int:
    """Take the next 1-based ``stream_version`` of ``stream_id`` (table ``stream_versions``),
    inside the caller's open transaction: the row stays locked until it ends, so two writers
    never take the same version and a rolled-back one is taken again (versions stay dense)."""
    row = conn.execute(
        "INSERT INTO stream_versions (stream_id, version) VALUES (%s, 1) "
        "ON CONFLICT (stream_id) DO UPDATE SET version = stream_versions.version + 1 "
        "RETURNING version",
        (stream_id,),
    ).fetchone()
    assert row is not None
    return int(row[0])


#: Called with the row's event id just before / just after it is appended (fault injection in
#: tests of crash recovery; ``None`` in production).
RelayHook = Callable[[str], None]


def write_outbox(
    conn: psycopg.Connection, events: Sequence[tuple[str, Envelope]], *, table: str = DEFAULT_TABLE
) -> None:
    """Append ``(topic, envelope)`` pairs to the outbox, in order, inside the caller's open
    transaction (never commits). A repeated event id raises psycopg.errors.UniqueViolation."""
    if not events:
        return
    query = sql.SQL(
        "INSERT INTO {} (id, topic, key, type, payload) VALUES (%s, %s, %s, %s, %s)"
    ).format(sql.Identifier(table))
    with conn.cursor() as cur:
        cur.executemany(
            query,
            [(e.event_id, topic, e.stream_id, e.type, encode(e)) for topic, e in events],
        )


@dataclass(frozen=True)
class PendingRow:
    """One unpublished outbox row."""

    event_id: str
    position: int
    topic: str
    key: str
    payload: bytes


class OutboxRelay:
    """Publishes the rows of one outbox table, oldest first, and marks them published.

    Several relays over the same table are safe (rows are claimed with ``FOR UPDATE SKIP
    LOCKED``), though one per service suffices.

    Waking: :meth:`run` LISTENs on :data:`NOTIFY_CHANNEL` (one connection of its own, made
    from the pool's connection settings) and queries the table when a transaction that wrote
    to it commits (the trigger of ``platform_0002_outbox_notify.sql``), from any process; a
    row is published a few milliseconds after its commit. It listens first and queries after,
    so a commit between the two is found by the query. ``poll_interval_s`` bounds the wait
    when no notification comes (a table without the trigger, a notification lost with a
    broken connection); while the listening connection cannot be made, the relay queries
    every ``poll_interval_s`` and tries to listen again. Idle, a relay makes no query between
    those polls (before, it queried every 0.2 s: 2.8-3.2 ms of CPU a second in the ledger and
    in fairness, issue 19). ``wake_check_s``: how often the wait looks at ``stop``.
    """

    def __init__(
        self,
        pool: ConnectionPool,
        log: EventLog,
        *,
        table: str = DEFAULT_TABLE,
        registry: PayloadRegistry | None = None,
        batch_size: int = 100,
        poll_interval_s: float = 5.0,
        wake_check_s: float = 0.5,
        before_append: RelayHook | None = None,
        after_append: RelayHook | None = None,
    ) -> None:
        self._pool = pool
        self._log = log
        self._table_name = table
        self._table = sql.Identifier(table)
        self._registry = registry or event_payloads()
        self._batch_size = batch_size
        self._poll_interval_s = poll_interval_s
        self._wake_check_s = wake_check_s
        self._before_append = before_append
        self._after_append = after_append
        self._listener: psycopg.Connection | None = None
        self._wanted = ""  # the notification payload of this table: "<schema>.<table>"

    def publish_pending(self) -> int:
        """Publish up to one batch of unpublished rows in position order; return how many.

        The rows stay locked until they are marked published in the same transaction, so a
        failure (broker down, crash) leaves them unpublished to retry. Raises EventLogError if
        an append fails (rows appended before it are republished on the next call), and
        EnvelopeError if a row does not hold a valid envelope for its id and key.
        """
        with self._pool.connection() as conn, conn.transaction():
            rows = conn.execute(
                sql.SQL(
                    "SELECT id, position, topic, key, payload FROM {} WHERE published_at IS NULL "
                    "ORDER BY position LIMIT %s FOR UPDATE SKIP LOCKED"
                ).format(self._table),
                (self._batch_size,),
            ).fetchall()
            published: list[str] = []
            for event_id, _position, topic, key, payload in rows:
                envelope = decode(bytes(payload), self._registry)
                if envelope.event_id != event_id or envelope.stream_id != key:
                    raise ValueError(
                        f"outbox row {event_id} holds event {envelope.event_id} of stream "
                        f"{envelope.stream_id}, not of {key}"
                    )
                if self._before_append is not None:
                    self._before_append(event_id)
                self._log.append(topic, envelope)
                if self._after_append is not None:
                    self._after_append(event_id)
                published.append(event_id)
            if published:
                conn.execute(
                    sql.SQL("UPDATE {} SET published_at = now() WHERE id = ANY(%s)").format(
                        self._table
                    ),
                    (published,),
                )
        return len(published)

    def oldest_unpublished_age_s(self) -> float:
        """Seconds since the oldest unpublished row was written; 0.0 when none is waiting."""
        with self._pool.connection() as conn:
            row = conn.execute(
                sql.SQL(
                    "SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) "
                    "FROM {} WHERE published_at IS NULL"
                ).format(self._table)
            ).fetchone()
        return float(row[0]) if row else 0.0

    def run(self, stop: threading.Event) -> None:
        """Publish until ``stop`` is set: batch after batch while rows wait, then wait for a
        notification (see the class docstring). Errors are logged and retried after a pause
        (never raised)."""
        try:
            while not stop.is_set():
                listening = self._listen()
                try:
                    if self.publish_pending():
                        continue
                except Exception:
                    _log.exception("outbox relay failed; retrying", table=self._table_name)
                    stop.wait(1.0)
                    continue
                if listening:
                    self._wait_for_rows(stop)
                else:
                    stop.wait(self._poll_interval_s)
        finally:
            self._close_listener()

    def _listen(self) -> bool:
        """True when the listening connection is up (made now if it was not)."""
        if self._listener is not None:
            return True
        try:
            conninfo, kwargs = self._pool.conninfo, self._pool.kwargs  # either may be a callable
            conn = psycopg.connect(
                conninfo() if callable(conninfo) else conninfo,
                autocommit=True,
                **((kwargs() if callable(kwargs) else kwargs) or {}),
            )
        except psycopg.Error as exc:
            _log.warning("outbox relay cannot listen; polling", error=str(exc))
            return False
        try:
            row = conn.execute("SELECT current_schema()").fetchone()
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(NOTIFY_CHANNEL)))
        except psycopg.Error as exc:
            conn.close()
            _log.warning("outbox relay cannot listen; polling", error=str(exc))
            return False
        self._wanted = f"{row[0] if row else 'public'}.{self._table_name}"
        self._listener = conn
        return True

    def _wait_for_rows(self, stop: threading.Event) -> None:
        """Wait until this table's notification came, ``poll_interval_s`` passed or ``stop``
        was set."""
        assert self._listener is not None
        deadline = time.monotonic() + self._poll_interval_s
        while not stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                for notify in self._listener.notifies(timeout=min(left, self._wake_check_s)):
                    if notify.payload == self._wanted:
                        return
            except psycopg.Error as exc:
                _log.warning("outbox relay stopped listening; will listen again", error=str(exc))
                self._close_listener()
                return

    def _close_listener(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(psycopg.Error):
                self._listener.close()
            self._listener = None
