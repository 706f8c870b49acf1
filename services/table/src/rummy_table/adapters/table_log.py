"""The table service's event log (through :mod:`rummy_platform.eventlog`, the only home of the
Kafka client), outbound: the rebuild of table-events partitions when they are granted
(:func:`rebuild`: each partition's latest snapshot and its tail, folded into the projection) and
the check for transactions a previous owner left open on them (:func:`unstable_partitions`,
:func:`abort_transactions_of`), and the snapshot writer (:class:`SnapshotLoop`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from rummy_platform.envelope import Envelope, PayloadRegistry, event_payloads
from rummy_platform.eventlog import (
    EventLog,
    KafkaEventLog,
    PartitionReader,
    RawRecord,
    Record,
    RecordProducer,
    decode_known,
    partition_for,
)
from rummy_platform.eventlog import unstable_partitions as _unstable_partitions
from rummy_platform.logging import get_logger
from rummy_table.adapters import snapshot
from rummy_table.application.ports import ServedTables

_log = get_logger(__name__)


def kafka_log(bootstrap_servers: str) -> EventLog:
    return KafkaEventLog(bootstrap_servers, client_id="table")


def _decode(record: RawRecord, registry: PayloadRegistry) -> Envelope | None:
    """The envelope of a table-stream record, or None for a payload type this build does not
    know (a newer instance's, in a rolling deploy: skipped, counted and logged once by
    :func:`rummy_platform.eventlog.decode_known`)."""
    if record.value is None:
        return None
    return decode_known(
        record.value,
        registry,
        "table-rebuild",
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
    )


def read_partitions(
    bootstrap_servers: str,
    topic: str,
    partitions: frozenset[int] | None,
    timeout_s: float = 120.0,
) -> tuple[list[Envelope], dict[int, int]]:
    """Every committed envelope of ``partitions`` of ``topic`` (None: all), each partition in
    offset order, and the offset each partition was read up to. Raises EventLogError when
    ``timeout_s`` seconds pass without a record."""
    registry = event_payloads()
    with PartitionReader(bootstrap_servers, client_id="table-replay") as reader:
        known = reader.partitions(topic)
        wanted = known if partitions is None else sorted(set(known) & set(partitions))
        ends: dict[int, int] = {}
        starts = dict.fromkeys(wanted, 0)
        read = reader.read(topic, starts, idle_timeout_s=timeout_s, ends=ends)
        out = [envelope for r in read if (envelope := _decode(r, registry)) is not None]
        return out, ends


def read_snapshots(bootstrap_servers: str, topic: str, timeout_s: float = 60.0) -> dict[int, bytes]:
    """The latest snapshot of each partition of the table stream on the snapshot ``topic``
    (its key: the partition number), by partition. Raises EventLogError when ``timeout_s``
    seconds pass without a record."""
    latest: dict[int, bytes] = {}
    with PartitionReader(
        bootstrap_servers,
        client_id="table-snapshot-reader",
        fetch_bytes=snapshot.MAX_SNAPSHOT_BYTES,
    ) as reader:
        starts = dict.fromkeys(reader.partitions(topic), 0)
        for r in reader.read(topic, starts, idle_timeout_s=timeout_s):
            if r.key is not None and r.key.isdigit() and r.value is not None:
                latest[int(r.key)] = r.value
        return latest


def rebuild(
    bootstrap_servers: str,
    app: ServedTables,
    snapshot_topic: str,
    partitions: Iterable[int] | None = None,
    timeout_s: float = 120.0,
) -> dict[int, int]:
    """Rebuild the tables of ``partitions`` of the table stream (``app.topic``; every partition
    when None) into ``app.projection``: each partition's latest snapshot on ``snapshot_topic``
    and the tail after it; a partition without a snapshot, or whose snapshot is of another
    shape or does not decode (logged, counted in ``rummy_table_snapshots_ignored_total``), is
    replayed from its start (the one place a set of partitions is rebuilt). Returns the offset
    each partition was read up to. Raises EventLogError when ``timeout_s`` seconds pass without
    a record."""
    topic = app.topic
    registry = event_payloads()
    reader = PartitionReader(bootstrap_servers, client_id="table-replay")
    try:
        wanted = reader.partitions(topic) if partitions is None else sorted(partitions)
        stored = read_snapshots(bootstrap_servers, snapshot_topic, timeout_s)
        loaded: dict[int, snapshot.PartitionSnapshot | None] = {}
        for p in wanted:
            loaded[p] = None
            if p not in stored:
                continue
            try:
                loaded[p] = snapshot.decode(stored[p], topic, p, app.projection.on_decision)
            except snapshot.SnapshotError as exc:
                app.metrics.snapshot_ignored(exc.reason)
                _log.warning(
                    "snapshot ignored: the partition is replayed in full",
                    partition=p,
                    reason=exc.reason,
                    error=str(exc),
                )
        starts = {p: s.tail_from if s is not None else 0 for p, s in loaded.items()}
        ends: dict[int, int] = {}
        tail = (
            Record(topic, r.partition, r.offset, envelope)
            for r in reader.read(topic, starts, idle_timeout_s=timeout_s, ends=ends)
            if (envelope := _decode(r, registry)) is not None
        )
        folded = snapshot.load(app.projection, loaded, tail)
    finally:
        reader.close()
    app.count_tables()
    _log.info(
        "tables rebuilt",
        partitions=wanted,
        from_snapshots=sum(s is not None for s in loaded.values()),
        tail_records=folded,
        tables=len(app.projection.tables),
    )
    return ends


class SnapshotLoop:
    """Writes the snapshot of each partition of ``partitions()`` (the table stream's partitions
    this instance serves, out of ``partition_count``) to ``snapshot_topic`` once
    ``every_events`` envelopes of it were folded since its last one, or ``every_s`` seconds after
    its last one when anything was folded since; checked every ``check_s`` seconds, off the
    command path (see :func:`rummy_table.adapters.snapshot.take`). Stops once the writer is
    fenced."""

    def __init__(
        self,
        bootstrap_servers: str,
        app: ServedTables,
        snapshot_topic: str,
        partition_count: int,
        partitions: Callable[[], Iterable[int]] | None = None,
        *,
        every_events: int = 2000,
        every_s: float = 30.0,
        check_s: float = 1.0,
    ) -> None:
        self._app = app
        self._topic = snapshot_topic
        self._count = partition_count
        self._partitions = partitions or (lambda: range(partition_count))
        self.every_events = every_events
        self.every_s = every_s
        self._check_s = check_s
        self._last: dict[int, float] = {}
        #: Each table's encoding in the last snapshot of its partition, reused while unchanged.
        self._encoded = snapshot.EncodedTables()
        self._producer = RecordProducer(
            bootstrap_servers,
            client_id="table-snapshots",
            compression="gzip",
            max_request_bytes=snapshot.MAX_SNAPSHOT_BYTES,
        )

    def _produce(self, partition: int, data: bytes) -> None:
        self._producer.write(self._topic, str(partition).encode(), data, timeout_s=60)

    def due(self, partition: int, now: float) -> bool:
        """Whether ``partition``'s snapshot is due at ``now`` (monotonic seconds)."""
        with self._app.projection.lock:
            since = self._app.projection.since_snapshot.get(partition, 0)
        last = self._last.setdefault(partition, now)
        return since >= self.every_events or (since > 0 and now - last >= self.every_s)

    def write(self, partition: int) -> bool:
        """Take and write ``partition``'s snapshot now; False when a table of it must first be
        re-read (tried again at the next check). Raises what the producer raises."""
        app = self._app
        taken = snapshot.take(
            app.projection,
            app.topic,
            partition,
            lambda table_id: partition_for(table_id, self._count),
            lambda table_id: table_id in app.unsure,
            self._encoded,
        )
        if taken is None:
            return False
        self._produce(partition, taken.data)
        with app.projection.lock:
            since = app.projection.since_snapshot
            since[partition] = since.get(partition, 0) - taken.folded_since
        self._last[partition] = time.monotonic()
        app.metrics.snapshot_written(len(taken.data))
        _log.info(
            "snapshot written", partition=partition, tables=taken.tables, bytes=len(taken.data)
        )
        return True

    def run(self, stop: threading.Event) -> None:
        """Write the due snapshots until ``stop``; then (unless fenced) one last snapshot of each
        partition that changed whose tables are still here (a graceful stop may have handed the
        partitions over already: such a snapshot is older than the new owner's, never wrong, see
        :func:`rummy_table.adapters.snapshot.take`), so the next start has little tail to replay."""
        try:
            while not stop.wait(self._check_s) and not self._app.fenced:
                self._write_due(lambda p: self.due(p, time.monotonic()), stop)
            if not self._app.fenced:
                self._write_due(self._changed, None, self._held())
        finally:
            self._producer.close(timeout_s=5)

    def _changed(self, partition: int) -> bool:
        with self._app.projection.lock:
            return self._app.projection.since_snapshot.get(partition, 0) > 0

    def _held(self) -> list[int]:
        """The partitions served, and those whose tables are still in the projection."""
        with self._app.projection.lock:
            held = {partition_for(t, self._count) for t in self._app.projection.tables}
        return sorted(held | set(self._partitions()))

    def _write_due(
        self,
        due: Callable[[int], bool],
        stop: threading.Event | None,
        partitions: Iterable[int] | None = None,
    ) -> None:
        written = list(self._partitions() if partitions is None else partitions)
        self._encoded.keep(written)
        for partition in written:
            if stop is not None and stop.is_set():
                return
            if not due(partition):
                continue
            try:
                self.write(partition)
            except Exception:
                _log.exception("writing a snapshot failed; will retry", partition=partition)


def unstable_partitions(
    bootstrap_servers: str, topic: str, partitions: frozenset[int], wait_s: float
) -> frozenset[int]:
    """Those of ``partitions`` of ``topic`` that still hold an open transaction after waiting up
    to ``wait_s`` seconds (see :func:`rummy_platform.eventlog.unstable_partitions`): a writer
    that died or lost them mid-transaction, whose records a takeover must not rebuild past.
    Raises EventLogError when the broker does not answer."""
    return _unstable_partitions(
        bootstrap_servers, topic, partitions, wait_s, client_id="table-replay"
    )


def abort_transactions_of(log: EventLog, transactional_id: str) -> None:
    """Abort the open transaction of the writer ``transactional_id`` (another instance's, dead
    or a zombie) and fence it: a writer with that id is started and closed (Kafka aborts the
    previous producer's open transaction when a new one with its id initialises)."""
    log.transactional_writer(transactional_id).close()
