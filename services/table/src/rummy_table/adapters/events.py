"""Kafka for the table service (the only module, with ``directory``, that builds Kafka clients):
the event log, the read of table-events partitions when they are granted (and the check for
transactions a previous owner left open on them), the loop over the inputs (ledger, fairness,
dealer and clock events, group ``table``) and the hand-start ticker."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import KafkaError

from rummy_platform.envelope import Envelope, decode, event_payloads
from rummy_platform.errors import Unavailable
from rummy_platform.eventlog import (
    EventLog,
    EventLogError,
    GroupConsumer,
    KafkaEventLog,
    Record,
    TopicPartition,
    WriterFenced,
)
from rummy_platform.isolation import StreamIsolation
from rummy_platform.logging import get_logger
from rummy_table.application import TableApp

_log = get_logger(__name__)
#: "No held input caps this partition's offset" (larger than any offset).
_NO_CAP = 2**63


def kafka_log(bootstrap_servers: str) -> EventLog:
    return KafkaEventLog(bootstrap_servers, client_id="table")


def _reader(bootstrap_servers: str, isolation: str = "read_committed") -> KafkaConsumer:
    return KafkaConsumer(
        bootstrap_servers=bootstrap_servers.split(","),
        client_id="table-replay",
        group_id=None,
        enable_auto_commit=False,
        isolation_level=isolation,
        auto_offset_reset="earliest",
    )


def read_partitions(
    bootstrap_servers: str,
    topic: str,
    partitions: frozenset[int] | None,
    timeout_s: float = 120.0,
) -> tuple[list[Envelope], dict[int, int]]:
    """Every committed envelope of ``partitions`` of ``topic`` (None: all), each partition in
    offset order, and the offset each partition was read up to. Raises EventLogError past
    ``timeout_s`` seconds."""
    registry = event_payloads()
    consumer = _reader(bootstrap_servers)
    try:
        known = consumer.partitions_for_topic(topic) or set()
        wanted = known if partitions is None else known & set(partitions)
        tps = [KafkaTopicPartition(topic, p) for p in sorted(wanted)]
        if not tps:
            return [], {}
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)  # last stable offsets under read_committed
        out: list[Envelope] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise EventLogError(f"replaying {topic} took over {timeout_s}s")
            for tp, messages in sorted(consumer.poll(timeout_ms=500).items()):
                out.extend(decode(m.value, registry) for m in messages if m.offset < end[tp])
        return out, {tp.partition: int(end[tp]) for tp in tps}
    finally:
        consumer.close(autocommit=False)


def unstable_partitions(
    bootstrap_servers: str, topic: str, partitions: frozenset[int], wait_s: float
) -> frozenset[int]:
    """Those of ``partitions`` of ``topic`` that still hold an open transaction (the last stable
    offset short of the high watermark) after waiting up to ``wait_s`` seconds for them to
    settle: a writer that died or lost them mid-transaction, whose records a takeover must not
    rebuild past. Raises EventLogError when the broker does not answer."""
    committed, uncommitted = (
        _reader(bootstrap_servers),
        _reader(bootstrap_servers, "read_uncommitted"),
    )
    tps = [KafkaTopicPartition(topic, p) for p in sorted(partitions)]
    deadline = time.monotonic() + wait_s
    try:
        while True:
            stable, high = committed.end_offsets(tps), uncommitted.end_offsets(tps)
            open_ = frozenset(tp.partition for tp in tps if stable[tp] < high[tp])
            if not open_ or time.monotonic() >= deadline:
                return open_
            time.sleep(0.1)
    except KafkaError as exc:
        raise EventLogError(f"stability of {topic} partitions {sorted(partitions)}: {exc}") from exc
    finally:
        committed.close(autocommit=False)
        uncommitted.close(autocommit=False)


def abort_transactions_of(log: EventLog, transactional_id: str) -> None:
    """Abort the open transaction of the writer ``transactional_id`` (another instance's, dead
    or a zombie) and fence it: a writer with that id is started and closed (Kafka aborts the
    previous producer's open transaction when a new one with its id initialises)."""
    log.transactional_writer(transactional_id).close()


class InputLoop:
    """Consumes the table's inputs and hands each poll's records to :meth:`TableApp.on_inputs`
    (the tables in parallel, each table's inputs in order, each appending its facts with the
    consumed offsets in one transaction; offsets never pass an input not yet committed).

    An input whose handling raises parks its table alone (``isolation``, see
    :mod:`rummy_platform.isolation`): that table's inputs are held in order and retried after a
    backoff starting at ``retry_pause_s``, the other tables' inputs go on, and the offset
    committed never passes a held input. A broker outage rewinds the round and retries it after
    ``retry_pause_s``; a fenced writer ends the loop with WriterFenced."""

    def __init__(
        self,
        log: EventLog,
        app: TableApp,
        topics: Sequence[str],
        *,
        retry_pause_s: float = 1.0,
        poll_timeout_s: float = 0.2,
        on_owned: Callable[[frozenset[int], object], None] | None = None,
        on_disowned: Callable[[frozenset[int]], None] | None = None,
        session_timeout_s: float | None = None,
    ) -> None:
        self._on_owned = on_owned
        self._on_disowned = on_disowned
        self._session_timeout_s = session_timeout_s
        self._log = log
        self._app = app
        self._topics = list(topics)
        self._retry_pause_s = retry_pause_s
        self._poll_timeout_s = poll_timeout_s
        self.isolation = StreamIsolation(app.input_group, first_s=retry_pause_s)
        self._consumer: GroupConsumer | None = None

    def _numbers(self, partitions: frozenset[TopicPartition]) -> frozenset[int]:
        """The partition numbers held on every input topic (the range assignment gives a member
        the same numbers of each co-partitioned topic)."""
        by_topic = [{tp.partition for tp in partitions if tp.topic == t} for t in self._topics]
        return frozenset(set.intersection(*by_topic)) if by_topic else frozenset()

    def _assigned(self, partitions: frozenset[TopicPartition]) -> dict[TopicPartition, int]:
        # The tables of the partitions are rebuilt before any of their inputs is handled.
        if self._on_owned is not None and self._consumer is not None:
            self._on_owned(self._numbers(partitions), self._consumer.group_metadata())
        # Held inputs are read again from the first of them (a partition the member keeps
        # keeps its position; the others resume from the committed offsets).
        return self.isolation.reassigned(partitions)

    def _revoked(self, partitions: frozenset[TopicPartition]) -> None:
        if self._on_disowned is not None:
            self._on_disowned(frozenset(tp.partition for tp in partitions))

    def open(self) -> GroupConsumer:
        """Join the consumer group (idempotent)."""
        if self._consumer is None:
            self._consumer = self._log.consumer(
                self._app.input_group,
                self._topics,
                self._assigned,
                on_revoked=self._revoked,
                session_timeout_s=self._session_timeout_s,
            )
            # The offsets this loop's inputs commit carry the member's generation (KIP-447).
            self._app.input_group_metadata = self._consumer.group_metadata
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def run(self, stop: threading.Event) -> None:
        self.open()
        try:
            while not stop.is_set():
                try:
                    self.run_once()
                except WriterFenced:
                    raise
                except EventLogError:
                    _log.exception("input round failed; will retry")
                    stop.wait(self._retry_pause_s)
        finally:
            self.close()

    def run_once(self) -> int:
        """Retry the parked tables that are due, poll once and handle what came; returns how
        many inputs were handled. Raises WriterFenced once fenced, EventLogError on an outage
        (after rewinding the inputs not done)."""
        consumer = self.open()
        if self._app.fenced:
            raise WriterFenced("the table writer was fenced; stopping the input loop")
        try:
            handled = self.isolation.retry_due(
                self._handle, reraise=(WriterFenced, Unavailable, EventLogError)
            )
        except (WriterFenced, Unavailable):
            raise WriterFenced("the table writer was fenced") from None
        records = consumer.poll(self._poll_timeout_s)
        admitted = [r for r in records if self.isolation.admit(r)]
        if not admitted:
            return handled
        caps = {
            tp: self.isolation.resume(tp, _NO_CAP)
            for tp in {TopicPartition(r.topic, r.partition) for r in admitted}
        }
        outcome = self._app.on_inputs(admitted, caps)
        for record, error in outcome.failed:
            self.isolation.failed(record, error)
            for later in outcome.held.get(record.envelope.stream_id, ()):
                self.isolation.admit(later)  # queued behind the failed one
        if outcome.fenced is not None:
            raise WriterFenced("the table writer was fenced") from None
        if outcome.log_error is not None:
            self._rewind(consumer, sorted(outcome.not_done, key=lambda r: r.offset))
            raise outcome.log_error
        parked = sum(1 + len(outcome.held.get(r.envelope.stream_id, ())) for r, _ in outcome.failed)
        return handled + len(admitted) - parked

    def _rewind(self, consumer: GroupConsumer, pending: Sequence[Record]) -> None:
        first: dict[TopicPartition, int] = {}
        for r in pending:
            first.setdefault(TopicPartition(r.topic, r.partition), r.offset)
        for tp, offset in first.items():
            self.isolation.forget_from(tp, offset)
            consumer.seek(tp, offset)

    def _handle(self, record: Record, store_offset: int) -> None:
        self._app.on_input(
            record.envelope, TopicPartition(record.topic, record.partition), store_offset
        )


def hand_starter(app: TableApp, period_s: float = 0.1) -> Callable[[threading.Event], None]:
    """A loop for BackgroundLoops: start due hands every ``period_s`` seconds; ends (raising
    WriterFenced) once the writer is fenced."""

    def loop(stop: threading.Event) -> None:
        while not stop.wait(period_s):
            try:
                app.tick()
            except Unavailable:
                raise WriterFenced("the table writer was fenced; stopping hand starts") from None
            except Exception:
                _log.exception("starting hands failed; will retry")

    return loop
