"""Whole partitions read outside any consumer group, and records that are not envelopes.

- :class:`PartitionReader` reads partitions of a topic from given offsets up to their ends as
  they were when the read began (a rebuild, a replay, an export), or follows them (a tail).
- :class:`RecordProducer` writes records whose key and value the caller encodes itself (the
  table's snapshots and its directory of partition owners).
- :func:`unstable_partitions` tells which partitions still hold an open transaction.

Records come back as :class:`RawRecord` (bytes, undecoded): a caller of envelopes decodes them
with :func:`~.base.decode_known`. Every Kafka error comes out as EventLogError.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import kafka.errors as kafka_errors
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition

from .base import ClosedOnExit, EventLogError, Position
from .kafka_client import connection_config, header_type
from .kafka_security import KafkaSecurity

#: What a :class:`PartitionReader` fetches from one partition at a time by default (bytes).
FETCH_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record as stored, undecoded. ``event_type``: its :data:`~.base.EVENT_TYPE_HEADER`
    (None without one)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    event_type: str | None = None


class PartitionReader(ClosedOnExit):
    """Reads partitions of a topic on the brokers ``bootstrap_servers`` (``"host:port[,...]"``)
    outside any consumer group: nothing is committed, no rebalance happens.

    ``committed_only``: only records of committed transactions (``read_committed``; else
    ``read_uncommitted``: every record, as a non-transactional writer's topic needs nothing
    more). ``fetch_bytes``: the most fetched (and buffered) from one partition at a time; a
    larger record is still fetched whole. ``security``: how it authenticates (None: the
    process's). The client is made on first use; one thread at a time (a lock guards it). Use it
    as a context manager, or :meth:`close` it.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        client_id: str,
        committed_only: bool = True,
        fetch_bytes: int = FETCH_BYTES,
        security: KafkaSecurity | None = None,
    ) -> None:
        self._config: dict[str, Any] = {
            **connection_config(bootstrap_servers, client_id, security),
            "group_id": None,
            "enable_auto_commit": False,
            "isolation_level": "read_committed" if committed_only else "read_uncommitted",
            "auto_offset_reset": "earliest",
            "max_partition_fetch_bytes": fetch_bytes,
        }
        self._lock = threading.Lock()
        self._consumer: KafkaConsumer | None = None
        self._topic = ""

    def _client(self) -> KafkaConsumer:
        if self._consumer is None:
            try:
                self._consumer = KafkaConsumer(**self._config)
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"no reader of {self._config['client_id']!r}: {exc}") from exc
        return self._consumer

    def partitions(self, topic: str) -> list[int]:
        """The partition numbers of ``topic``, in order; ``[]`` when it does not exist."""
        with self._lock:
            try:
                return sorted(self._client().partitions_for_topic(topic) or set())
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"partitions of {topic}: {exc}") from exc

    def end_offsets(self, topic: str, partitions: Iterable[int]) -> dict[int, int]:
        """The end of each of ``partitions`` of ``topic`` (the offset after its last record; with
        ``committed_only``, Kafka's last stable offset: short of the high watermark while a
        transaction is open)."""
        tps = [KafkaTopicPartition(topic, p) for p in partitions]
        with self._lock:
            try:
                ends = self._client().end_offsets(tps)
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"end offsets of {topic}: {exc}") from exc
        return {tp.partition: int(ends[tp]) for tp in tps}

    def assign(self, topic: str, starts: Mapping[int, int]) -> None:
        """Read ``topic``'s partitions ``starts`` (partition -> offset to start at) from now on,
        in place of whatever was read before."""
        tps = [KafkaTopicPartition(topic, p) for p in sorted(starts)]
        with self._lock:
            try:
                consumer = self._client()
                consumer.assign(tps)
                for tp in tps:
                    consumer.seek(tp, starts[tp.partition])
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"reading {topic}: {exc}") from exc
            self._topic = topic

    def poll(self, timeout_s: float) -> list[RawRecord]:
        """The records fetched from the assigned partitions, waiting up to ``timeout_s`` seconds
        for some (``[]`` if none came); by partition, each partition in offset order."""
        with self._lock:
            try:
                batches = self._client().poll(timeout_ms=int(timeout_s * 1000))
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"reading {self._topic}: {exc}") from exc
        return [
            RawRecord(tp.topic, tp.partition, m.offset, m.key, m.value, header_type(m.headers))
            for tp in sorted(batches)
            for m in batches[tp]
        ]

    def read(
        self,
        topic: str,
        starts: Mapping[int, int],
        *,
        idle_timeout_s: float,
        ends: dict[int, int] | None = None,
    ) -> Iterator[RawRecord]:
        """Every record of ``topic``'s partitions ``starts`` (partition -> first offset) up to
        their ends as they are when the read begins (stored into ``ends`` when given: partition
        -> the offset read up to), each partition in offset order. Raises EventLogError when
        ``idle_timeout_s`` seconds pass without a record (however long the whole read takes
        while records keep coming)."""
        self.assign(topic, starts)
        end = self.end_offsets(topic, sorted(starts))
        if ends is not None:
            ends.update(end)
        pending = {p for p in end if self._position(topic, p) < end[p]}
        deadline = time.monotonic() + idle_timeout_s
        while pending:
            if time.monotonic() > deadline:
                raise EventLogError(f"reading {topic}: no record for {idle_timeout_s}s")
            records = self.poll(0.5)
            if records:
                deadline = time.monotonic() + idle_timeout_s
            for record in records:
                if record.offset < end[record.partition]:
                    yield record
            pending = {p for p in pending if self._position(topic, p) < end[p]}

    def _position(self, topic: str, partition: int) -> int:
        with self._lock:
            try:
                return int(self._client().position(KafkaTopicPartition(topic, partition)))
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"position in {topic}[{partition}]: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._consumer is not None:
                self._consumer.close(autocommit=False)
                self._consumer = None


class RecordProducer(ClosedOnExit):
    """Writes records whose key and value the caller encodes (no envelope, no event-type
    header), acknowledged by every in-sync replica (``acks=all``), each sent at once.

    ``compression``: ``"gzip"`` and the others kafka-python knows, or None; ``max_request_bytes``:
    the largest request (so the largest record) it sends (None: kafka-python's 1 MiB). The
    producer is made on first use; thread-safe. Use it as a context manager, or :meth:`close`
    it.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        client_id: str,
        compression: str | None = None,
        max_request_bytes: int | None = None,
        security: KafkaSecurity | None = None,
    ) -> None:
        self._config: dict[str, Any] = {
            **connection_config(bootstrap_servers, client_id, security),
            "acks": "all",
            "linger_ms": 0,
        }
        if compression is not None:
            self._config["compression_type"] = compression
        if max_request_bytes is not None:
            self._config["max_request_size"] = max_request_bytes
        self._lock = threading.Lock()
        self._producer: KafkaProducer | None = None

    def _client(self) -> KafkaProducer:
        with self._lock:
            if self._producer is None:
                self._producer = KafkaProducer(**self._config)
            return self._producer

    def send(self, topic: str, key: bytes, value: bytes) -> None:
        """Queue a record; :meth:`flush` waits for it. Raises EventLogError."""
        try:
            self._client().send(topic, key=key, value=value)
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"send to {topic!r} failed: {exc}") from exc

    def write(self, topic: str, key: bytes, value: bytes, timeout_s: float) -> Position:
        """Send a record and wait up to ``timeout_s`` seconds for its acknowledgement. Raises
        EventLogError when it is not acknowledged."""
        try:
            meta = self._client().send(topic, key=key, value=value).get(timeout=timeout_s)
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"write to {topic!r} failed: {exc}") from exc
        return Position(meta.topic, meta.partition, meta.offset)

    def flush(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` seconds for every queued record to be acknowledged. Raises
        EventLogError when they are not."""
        try:
            self._client().flush(timeout=timeout_s)
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"records not acknowledged in {timeout_s}s: {exc}") from exc

    def close(self, timeout_s: float = 5.0) -> None:
        with self._lock:
            if self._producer is not None:
                self._producer.close(timeout=timeout_s)
                self._producer = None


def unstable_partitions(
    bootstrap_servers: str,
    topic: str,
    partitions: frozenset[int],
    wait_s: float,
    *,
    client_id: str = "rummy-stability",
) -> frozenset[int]:
    """Those of ``partitions`` of ``topic`` that still hold an open transaction (the last stable
    offset short of the high watermark) after waiting up to ``wait_s`` seconds for them to
    settle: a writer that died or lost them mid-transaction, whose records a takeover must not
    rebuild past. Raises EventLogError when the broker does not answer."""
    wanted = sorted(partitions)
    deadline = time.monotonic() + wait_s
    with (
        PartitionReader(bootstrap_servers, client_id=client_id) as committed,
        PartitionReader(bootstrap_servers, client_id=client_id, committed_only=False) as loose,
    ):
        try:
            while True:
                stable = committed.end_offsets(topic, wanted)
                high = loose.end_offsets(topic, wanted)
                open_ = frozenset(p for p in wanted if stable[p] < high[p])
                if not open_ or time.monotonic() >= deadline:
                    return open_
                time.sleep(0.1)
        except EventLogError as exc:
            raise EventLogError(f"stability of {topic} partitions {wanted}: {exc}") from exc
