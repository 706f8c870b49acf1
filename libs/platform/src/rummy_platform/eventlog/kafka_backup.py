"""Topics copied out whole and written back into an empty broker: the Kafka side of
``rummy backup`` / ``rummy restore`` (``docs/operations.md#backups``).

- :func:`cut_log`: the last stable offset of every partition of some topics together with the
  committed offsets of every consumer group on them, taken so that no group committed between
  the two reads (a transaction that commits a group's offsets commits its outputs with them);
- :func:`export_partition`: every committed record of a partition below a cut, as stored (key,
  value, headers, timestamp, offset);
- :class:`PartitionLoader`: writes such records into an empty partition of another broker, in
  order, with their key, headers, timestamp and partition, and says at which offset each landed:
  without transactions there are no control markers, so the new offsets are dense (0, 1, 2...)
  where the old ones had gaps; the caller maps every stored offset through what it returns;
- :func:`set_group_offsets`: commits offsets for a group that has no member (the restored
  broker's, before any service starts).

Every Kafka error comes out as EventLogError.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kafka.errors as kafka_errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.structs import OffsetAndMetadata

from .base import EventLogError, TopicPartition
from .kafka_client import CLIENT_METRICS, common_config, consumer_config

#: How long an export waits for the next record of a partition it has not finished (seconds).
EXPORT_IDLE_S = 30.0
#: The most records one :class:`PartitionLoader` leaves unacknowledged before it waits.
LOADER_WINDOW = 2000


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record exactly as a partition holds it: its ``offset`` there, ``key`` and ``value``
    bytes (None when absent), ``headers`` (name, bytes) in order, and ``timestamp_ms`` (the
    producer's create time, milliseconds since the epoch)."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int


@dataclass(frozen=True)
class Cut:
    """Where a copy of the log stops: ``ends`` (partition -> the offset after its last committed
    record) and ``groups`` (consumer group -> partition -> its committed next offset), read with
    no group commit between them. ``stable`` is False when groups kept committing through every
    attempt; the groups' offsets were then read before the ends (so at most behind them: the
    services read again, and drop by event id, what they had already handled)."""

    ends: dict[TopicPartition, int]
    groups: dict[str, dict[TopicPartition, int]]
    stable: bool


def _admin(bootstrap_servers: str, client_id: str) -> KafkaAdminClient:
    try:
        return KafkaAdminClient(**common_config(bootstrap_servers, client_id))
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"no admin client for {bootstrap_servers}: {exc}") from exc


def _group_ids(admin: KafkaAdminClient) -> list[str]:
    groups: list[Any] = admin.list_groups()
    ids = [
        g[0] if isinstance(g, tuple | list) else g.get("group_id", g.get("group")) for g in groups
    ]
    return sorted(str(g) for g in ids if g)


def _read_groups(
    admin: KafkaAdminClient, topics: frozenset[str]
) -> dict[str, dict[TopicPartition, int]]:
    ids = _group_ids(admin)
    if not ids:
        return {}
    found: dict[str, dict[TopicPartition, int]] = {}
    for group in ids:
        offsets: Mapping[Any, Any] = admin.list_group_offsets({group: None}).get(group, {})
        mine = {
            TopicPartition(tp.topic, tp.partition): int(meta.offset)
            for tp, meta in offsets.items()
            if tp.topic in topics and meta is not None and int(meta.offset) >= 0
        }
        if mine:
            found[group] = mine
    return found


def partition_counts(
    bootstrap_servers: str, topics: Sequence[str], *, client_id: str = "rummy-backup"
) -> dict[str, int]:
    """The partition count of each of ``topics`` that exists (absent ones are left out)."""
    consumer = _consumer(bootstrap_servers, client_id)
    try:
        return {
            t: len(parts) for t in topics if (parts := consumer.partitions_for_topic(t) or set())
        }
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"partitions of {list(topics)}: {exc}") from exc
    finally:
        consumer.close(autocommit=False)


def _consumer(bootstrap_servers: str, client_id: str) -> KafkaConsumer:
    try:
        return KafkaConsumer(
            **consumer_config(common_config(bootstrap_servers, client_id)), group_id=None
        )
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"no reader of {bootstrap_servers}: {exc}") from exc


def cut_log(
    bootstrap_servers: str,
    partitions: Iterable[TopicPartition],
    *,
    attempts: int = 20,
    client_id: str = "rummy-backup",
) -> Cut:
    """The ends of ``partitions`` (last stable offsets) and every group's committed offsets on
    their topics, read as groups, ends, groups again until both group reads agree (at most
    ``attempts`` times; see :class:`Cut`). Raises EventLogError when the broker does not
    answer."""
    tps = sorted(set(partitions))
    topics = frozenset(tp.topic for tp in tps)
    kafka_tps = [KafkaTopicPartition(tp.topic, tp.partition) for tp in tps]
    admin = _admin(bootstrap_servers, client_id)
    consumer = _consumer(bootstrap_servers, client_id)
    try:
        for attempt in range(max(attempts, 1)):
            before = _read_groups(admin, topics)
            ends_raw = consumer.end_offsets(kafka_tps)
            after = _read_groups(admin, topics)
            ends = {TopicPartition(tp.topic, tp.partition): int(ends_raw[tp]) for tp in kafka_tps}
            if before == after:
                return Cut(ends, after, stable=True)
            if attempt == attempts - 1:
                return Cut(ends, before, stable=False)
            time.sleep(0.01)
        raise AssertionError("unreachable")
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"cutting {sorted(topics)}: {exc}") from exc
    finally:
        consumer.close(autocommit=False)
        admin.close()


def export_partition(
    bootstrap_servers: str,
    partition: TopicPartition,
    end: int,
    *,
    idle_timeout_s: float = EXPORT_IDLE_S,
    client_id: str = "rummy-backup",
) -> Iterator[StoredRecord]:
    """Every committed record of ``partition`` below offset ``end``, in offset order (records of
    aborted transactions and control markers are not records: their offsets are skipped).
    Raises EventLogError when ``idle_timeout_s`` seconds pass without progress."""
    tp = KafkaTopicPartition(partition.topic, partition.partition)
    consumer = _consumer(bootstrap_servers, client_id)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + idle_timeout_s
        while int(consumer.position(tp)) < end:
            if time.monotonic() > deadline:
                raise EventLogError(
                    f"exporting {partition.topic}[{partition.partition}]: "
                    f"no progress for {idle_timeout_s:g} s"
                )
            batches = consumer.poll(timeout_ms=500, max_records=5000)
            for message in batches.get(tp, []):
                if message.offset >= end:
                    return
                deadline = time.monotonic() + idle_timeout_s
                yield StoredRecord(
                    offset=int(message.offset),
                    key=message.key,
                    value=message.value,
                    headers=tuple((str(k), bytes(v)) for k, v in (message.headers or ())),
                    timestamp_ms=int(message.timestamp),
                )
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"exporting {partition.topic}[{partition.partition}]: {exc}") from exc
    finally:
        consumer.close(autocommit=False)


class PartitionLoader:
    """Writes records into partitions of the brokers ``bootstrap_servers`` with an idempotent,
    ``acks=all`` producer (so each partition keeps their order), no transaction.

    :meth:`write` queues one; :meth:`finish` waits for all and returns, per partition, the
    offset each landed at, in the order written. Use it as a context manager."""

    def __init__(self, bootstrap_servers: str, *, client_id: str = "rummy-restore") -> None:
        try:
            self._producer = KafkaProducer(
                **common_config(bootstrap_servers, client_id),
                enable_idempotence=True,
                acks="all",
                linger_ms=5,
                max_request_size=16 * 1024 * 1024,
                **CLIENT_METRICS,
            )
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"no producer for {bootstrap_servers}: {exc}") from exc
        self._futures: dict[TopicPartition, list[Any]] = {}
        self._landed: dict[TopicPartition, list[int]] = {}
        self._pending = 0

    def write(self, partition: TopicPartition, record: StoredRecord) -> None:
        """Queue ``record`` for ``partition``. Raises EventLogError."""
        try:
            future = self._producer.send(
                partition.topic,
                key=record.key,
                value=record.value,
                headers=list(record.headers),
                partition=partition.partition,
                timestamp_ms=record.timestamp_ms,
            )
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"writing to {partition.topic}: {exc}") from exc
        self._futures.setdefault(partition, []).append(future)
        self._pending += 1
        if self._pending >= LOADER_WINDOW:
            self._settle()

    def _settle(self, timeout_s: float = 60.0) -> None:
        try:
            self._producer.flush(timeout=timeout_s)
            for partition, futures in self._futures.items():
                landed = self._landed.setdefault(partition, [])
                landed.extend(int(f.get(timeout=timeout_s).offset) for f in futures)
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"records not acknowledged: {exc}") from exc
        self._futures = {}
        self._pending = 0

    def finish(self, timeout_s: float = 60.0) -> dict[TopicPartition, list[int]]:
        """Wait up to ``timeout_s`` seconds for every record written; the offset each landed at,
        per partition in the order written. Raises EventLogError when one is not
        acknowledged."""
        self._settle(timeout_s)
        return self._landed

    def close(self) -> None:
        self._producer.close(timeout=5)

    def __enter__(self) -> PartitionLoader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def set_group_offsets(
    bootstrap_servers: str,
    group: str,
    offsets: Mapping[TopicPartition, int],
    *,
    client_id: str = "rummy-restore",
    timeout_s: float = 60.0,
) -> None:
    """Commit ``offsets`` (next offsets to read) for ``group``, which must have no member,
    retrying what the broker calls retriable (a fresh broker's coordinator not yet there) for up
    to ``timeout_s`` seconds. Raises EventLogError when the broker refuses any."""
    wanted = {
        KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset, "", -1)
        for tp, offset in offsets.items()
    }
    admin = _admin(bootstrap_servers, client_id)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                errors = admin.alter_group_offsets(group, wanted) or {}
            except kafka_errors.KafkaError as exc:
                # A fresh broker creates its offsets topic on the first group's request: the
                # coordinator is "not available" until then.
                if not getattr(exc, "retriable", False) or time.monotonic() > deadline:
                    raise EventLogError(f"committing offsets of group {group!r}: {exc}") from exc
                time.sleep(0.5)
                continue
            failed = {
                tp: err
                for tp, err in errors.items()
                if err is not None and getattr(err, "errno", 0) != 0
            }
            if not failed:
                return
            if all(getattr(e, "retriable", False) for e in failed.values()) and (
                time.monotonic() < deadline
            ):
                time.sleep(0.5)
                continue
            named = {
                f"{tp.topic}[{tp.partition}]": getattr(e, "__name__", str(e))
                for tp, e in failed.items()
            }
            raise EventLogError(f"group {group!r} refused offsets: {named}")
    finally:
        admin.close()


def group_offsets(
    bootstrap_servers: str, topics: Iterable[str], *, client_id: str = "rummy-restore"
) -> dict[str, dict[TopicPartition, int]]:
    """Every consumer group's committed offsets on ``topics`` (``{}`` on a fresh broker)."""
    admin = _admin(bootstrap_servers, client_id)
    try:
        return _read_groups(admin, frozenset(topics))
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"group offsets: {exc}") from exc
    finally:
        admin.close()
