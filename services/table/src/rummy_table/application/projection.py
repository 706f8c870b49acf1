"""Every table in memory, rebuilt by replaying the table stream.

:class:`Projection` holds the :class:`~.held_table.HeldTable` of each table id (the domain's table
and its answer window) and folds each envelope into it (live after an append, or on replay at
start). Two kinds of locks:

- ``lock`` guards the in-memory state of every table (folding an envelope, reading a view). It is
  held for microseconds and never across I/O, so a read never waits for a Kafka write.
- :meth:`Projection.command_lock` is one lock per table, held by a command from its decision
  through its commit to its fold: the commands of one table are strictly ordered and each sees
  the state its predecessor left, while other tables' commands proceed (and share transactions,
  see :class:`rummy_platform.eventlog.GroupCommitWriter`).

:attr:`Projection.on_change` is told the id of every table that changed (under ``lock``, from the
thread that folded it): the WatchTable streams hand it to their event loop and wake only the
watchers of that table.

The views WatchTable sends are built from it at the edge
(:func:`rummy_table.entrypoints.views.player_view`), under ``lock``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads, variant_wires
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import Record
from rummy_platform.logging import get_logger
from rummy_platform.skips import SKIPPED
from rummy_rules.rules import RuleSetError
from rummy_table.domain.table import DecisionObserver

from .held_table import HeldTable

_log = get_logger(__name__)


class Projection:
    """The tables, by id. Thread-safe under ``lock``. ``on_decision`` is given to every table
    (told of each decision a table asks of the rules; see ``Table.on_decision``)."""

    def __init__(self, on_decision: DecisionObserver | None = None) -> None:
        self.lock = threading.RLock()
        self.tables: dict[str, HeldTable] = {}
        self._command_locks: dict[str, threading.Lock] = {}
        #: Called with a table's id after each change of it, under :attr:`lock` (it must be
        #: quick and never block: the watch streams only schedule a wake-up on their loop).
        self.on_change: Callable[[str], None] | None = None
        #: The request digest of every client command in a table's answer window, by causation
        #: id (``"<account>/<client_request_id>"``), over all tables (bounded as the windows).
        self.requests: dict[str, str] = {}
        #: Per partition of the table stream: the highest offset folded here (live or on
        #: replay). Every table's state covers all its events up to it, once no command of the
        #: table is in flight (see :mod:`rummy_table.adapters.snapshot`).
        self.folded: dict[int, int] = {}
        #: Per partition: envelopes folded since the last snapshot of it was taken.
        self.since_snapshot: dict[int, int] = {}
        self.on_decision = on_decision
        #: Tables this instance cannot serve (their TableOpened names a variant it does not
        #: host: a newer instance opened them, in a rolling deploy) -> why, naming the variant.
        #: Their commands fail with FAILED_PRECONDITION; every other table is served.
        self.unservable: dict[str, str] = {}

    def command_lock(self, table_id: str) -> threading.Lock:
        """The lock a command on ``table_id`` holds from its decision to its fold."""
        with self.lock:
            found = self._command_locks.get(table_id)
            if found is None:
                found = self._command_locks[table_id] = threading.Lock()
            return found

    def command_locks(self) -> list[str]:
        """The table ids that have a command lock (every table a command was begun for)."""
        with self.lock:
            return list(self._command_locks)

    def _changed(self, table_id: str) -> None:
        if self.on_change is not None:
            self.on_change(table_id)

    def rebuild(self, table_id: str, envelopes: Iterable[Envelope | Record]) -> HeldTable | None:
        """Replace ``table_id``'s state by the fold of ``envelopes`` (its whole stream, as read
        back from the log; Records also say where each lies, which a snapshot of the table
        needs); returns the new table (None if the stream holds no table)."""
        table: HeldTable | None = None
        where: list[tuple[int, int]] = []
        for item in envelopes:
            envelope = item.envelope if isinstance(item, Record) else item
            offset = item.offset if isinstance(item, Record) else -1
            if isinstance(item, Record):
                where.append((item.partition, item.offset))
            if isinstance(envelope.payload, pb.TableOpened):
                table = self._opened(envelope)
                if table is None:
                    break
            elif table is not None:
                table.apply(envelope, offset)
        with self.lock:
            for partition, offset in where:
                self._folded_at(partition, offset)
            if table is None:
                self.tables.pop(table_id, None)
            else:
                self.install(table)
            self._changed(table_id)
        return table

    def _opened(self, envelope: Envelope) -> HeldTable | None:
        """The table a TableOpened creates, or None when it cannot be loaded (its later events
        are then those of an unknown table): a variant this instance does not host (recorded in
        :attr:`unservable`, counted as a skip), or options the rules refuse (a table opened
        before a bound was added: logged, never loaded, so it never starts a hand)."""
        opened = envelope.payload
        assert isinstance(opened, pb.TableOpened)
        variant = stream_payloads.variant_of(opened.rule_set)  # the upcast's: none, the legacy
        if variant not in variant_wires.hosted_variants():
            reason = (
                f"table {envelope.stream_id} plays variant {variant!r}, which this table-service "
                f"instance does not host (it hosts: {', '.join(variant_wires.hosted_variants())})"
            )
            with self.lock:
                self.unservable[envelope.stream_id] = reason
            SKIPPED.skipped(
                "unknown_variant",
                type_name=envelope.type,
                variant=variant,
                table_id=envelope.stream_id,
                consumer="table",
            )
            return None
        try:
            return HeldTable.opened_from(envelope, self.on_decision)
        except RuleSetError as exc:
            _log.error(
                "table not loaded: the rules refuse its options",
                table_id=envelope.stream_id,
                reason=stream_payloads.wire_message(exc, variant),
            )
            return None

    def drop(self, table_ids: Iterable[str]) -> None:
        """Forget ``table_ids`` (handed over to another instance) with the request digests
        their events recorded; their watchers are woken (and end: the table is gone)."""
        with self.lock:
            for table_id in table_ids:
                table = self.tables.pop(table_id, None)
                if table is not None:
                    for key in table.answers.payloads:
                        self.requests.pop(key, None)
                self._command_locks.pop(table_id, None)
                self.unservable.pop(table_id, None)
                self._changed(table_id)

    def install(self, table: HeldTable) -> None:
        """Hold ``table`` (rebuilt, or loaded from a snapshot) with its request digests."""
        with self.lock:
            table.on_decision = self.on_decision
            self.tables[table.table_id] = table
            for key, digest in table.answers.digests.items():
                self.requests.setdefault(key, digest)
            table.answers.evicted.clear()

    def _folded_at(self, partition: int, offset: int) -> None:
        if partition >= 0:
            self.since_snapshot[partition] = self.since_snapshot.get(partition, 0) + 1
            if offset > self.folded.get(partition, -1):
                self.folded[partition] = offset

    def _forget_evicted(self, table: HeldTable) -> None:
        window = table.answers
        for key in window.evicted:
            if self.requests.get(key) is not None and key not in window.digests:
                del self.requests[key]
        window.evicted.clear()

    def apply(self, envelope: Envelope, partition: int = -1, offset: int = -1) -> HeldTable | None:
        """Fold one table-stream envelope (``offset`` in ``partition`` of the table stream; -1
        when not known); returns its table (None for an event of an unknown table, or for a
        TableOpened whose options the rules refuse: a table opened before a bound was added is
        logged and not loaded)."""
        with self.lock:
            table = self._fold(envelope, partition, offset)
            if table is not None:
                self._changed(table.table_id)
            return table

    def apply_all(self, folded: Iterable[tuple[Envelope, int, int]]) -> None:
        """Fold envelopes appended together (each with its partition and offset, as
        :meth:`apply`) under one hold of :attr:`lock`; :attr:`on_change` is told of each table
        they changed once, after the last (a discard and the turn it starts wake each watcher
        once, not once per event)."""
        with self.lock:
            changed: dict[str, None] = {}
            for envelope, partition, offset in folded:
                table = self._fold(envelope, partition, offset)
                if table is not None:
                    changed[table.table_id] = None
            for table_id in changed:
                self._changed(table_id)

    def _fold(self, envelope: Envelope, partition: int, offset: int) -> HeldTable | None:
        self._folded_at(partition, offset)
        if envelope.causation_id and envelope.request_digest:
            self.requests.setdefault(envelope.causation_id, envelope.request_digest)
        if isinstance(envelope.payload, pb.TableOpened):
            opened = self._opened(envelope)
            if opened is None:
                return None
            self.tables[opened.table_id] = opened
            return opened
        table = self.tables.get(envelope.stream_id)
        if table is None:
            return None
        table.apply(envelope, offset)
        if table.answers.evicted:
            self._forget_evicted(table)
        return table
