"""The event log on Apache Kafka, through kafka-python 3.0.x.

- Every record carries the header ``event-type`` (:data:`~.base.EVENT_TYPE_HEADER`): the
  envelope's payload type, so consumers drop types they do not use without decoding the value.
- Plain appends go through one idempotent producer with ``acks=all`` (kafka-python 3.0's
  defaults, set explicitly here), keyed by the envelope's stream id.
- Each :class:`~.kafka_writer.KafkaTransactionalWriter` is its own producer with a stable
  ``transactional.id``; ``init_transactions`` on creation fences every earlier producer with the
  same id.
- Readers use ``isolation_level=read_committed``: records of open or aborted transactions are
  never returned.
- Consumers never auto-commit; the caller resumes from offsets it stored (``on_assigned``) or
  commits explicitly.
- Group consumers (:class:`~.kafka_group.KafkaGroupConsumer`) poll through a
  :class:`~.kafka_poll.PollGuard`: a broker that is down or stops answering
  makes ``poll`` back off (0.2 s doubling to 5 s, one log line when it starts failing and one
  when it recovers) instead of raising or spinning.
- Group consumers export their lag (``rummy_consumer_lag_events``, see
  :class:`rummy_platform.metrics.ConsumerLagReporter`) every 15 s from their polls.

The clients' settings, and why each departs from kafka-python's default, are in
:mod:`.kafka_client`; topics are created and checked by :mod:`.kafka_admin`. Clients are
created on first use, so building a :class:`KafkaEventLog` does no I/O. The producer is
thread-safe; the stream reader is guarded by a lock; a :class:`GroupConsumer` belongs to one thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any, Unpack

import kafka.errors as kafka_errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition

from rummy_platform.envelope import Envelope, PayloadRegistry, encode, event_payloads
from rummy_platform.topics import TopicSpec

from .base import (
    ConsumerOptions,
    EventLog,
    EventLogError,
    GroupConsumer,
    OnAssigned,
    Position,
    Record,
    TopicDescription,
    TopicPartition,
    TransactionalWriter,
    UnknownTopic,
    decode_known,
)
from .kafka_admin import describe_topic, ensure_topics
from .kafka_client import (
    GROUP_FETCH,
    common_config,
    consumer_config,
    group_consumer_config,
    producer_config,
    record_headers,
)
from .kafka_group import KafkaGroupConsumer, rejoin_after_s
from .kafka_security import KafkaSecurity
from .kafka_writer import KafkaTransactionalWriter
from .partitioner import partition_for


class KafkaEventLog(EventLog):
    """The event log on the brokers ``bootstrap_servers`` (``"host:port[,host:port]"``).

    ``timeout_s`` bounds each blocking call (acknowledgement, metadata, stream read).
    ``log_skips=False``: a stream read counts the events of unknown payload types it skips
    without logging them (a command-line reader that reports them itself). ``security``: how
    its clients authenticate (None: the process's, see
    :func:`~.kafka_security.use_kafka_security`).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        registry: PayloadRegistry | None = None,
        client_id: str = "rummy",
        timeout_s: float = 30.0,
        log_skips: bool = True,
        security: KafkaSecurity | None = None,
    ) -> None:
        self._log_skips = log_skips
        self._security = security
        self._bootstrap = bootstrap_servers
        self._registry = registry or event_payloads()
        self._client_id = client_id
        self._timeout_s = timeout_s
        self._lock = threading.Lock()  # guards client creation
        self._reader_lock = threading.Lock()  # the stream reader serves one read at a time
        self._producer: KafkaProducer | None = None
        self._admin: KafkaAdminClient | None = None
        self._reader: KafkaConsumer | None = None

    # -- clients -------------------------------------------------------------------------------

    def _common(self) -> dict[str, Any]:
        return common_config(self._bootstrap, self._client_id, self._security)

    def producer_config(self) -> dict[str, Any]:
        """The configuration of every producer this log builds (idempotent, acks=all)."""
        return producer_config(self._common(), self._timeout_s)

    def _get_producer(self) -> KafkaProducer:
        with self._lock:
            if self._producer is None:
                self._producer = KafkaProducer(**self.producer_config())
            return self._producer

    def _get_admin(self) -> KafkaAdminClient:
        with self._lock:
            if self._admin is None:
                self._admin = KafkaAdminClient(**self._common())
            return self._admin

    # -- topics --------------------------------------------------------------------------------

    def ensure_topics(self, specs: Iterable[TopicSpec]) -> None:
        ensure_topics(self._get_admin(), specs)

    def describe_topic(self, name: str) -> TopicDescription:
        return describe_topic(self._get_admin(), name)

    # -- writing -------------------------------------------------------------------------------

    def append(self, topic: str, envelope: Envelope) -> Position:
        producer = self._get_producer()
        try:
            meta = producer.send(
                topic, key=envelope.key, value=encode(envelope), headers=record_headers(envelope)
            ).get(timeout=self._timeout_s)
        except kafka_errors.KafkaTimeoutError as exc:
            raise EventLogError(
                f"append to {topic!r} not acknowledged in {self._timeout_s}s "
                f"(missing topic or broker down): {exc}"
            ) from exc
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"append to {topic!r} failed: {exc}") from exc
        return Position(meta.topic, meta.partition, meta.offset)

    def transactional_writer(self, transactional_id: str) -> TransactionalWriter:
        return KafkaTransactionalWriter(self.producer_config(), transactional_id, self._timeout_s)

    # -- reading -------------------------------------------------------------------------------

    def read_stream(self, topic: str, stream_id: str, from_offset: int = 0) -> list[Record]:
        key = stream_id.encode()
        with self._reader_lock:
            reader = self._get_reader()
            partitions = reader.partitions_for_topic(topic)
            if not partitions:
                raise UnknownTopic(f"topic {topic!r} does not exist")
            tp = KafkaTopicPartition(topic, partition_for(stream_id, len(partitions)))
            reader.assign([tp])
            reader.seek(tp, from_offset)
            end = reader.end_offsets([tp])[tp]  # last stable offset under read_committed
            deadline = time.monotonic() + self._timeout_s
            records: list[Record] = []
            while reader.position(tp) < end:
                if time.monotonic() > deadline:
                    raise EventLogError(
                        f"reading {topic}[{tp.partition}] up to offset {end} took over "
                        f"{self._timeout_s}s"
                    )
                for message in reader.poll(timeout_ms=200).get(tp, []):
                    if message.offset < end and message.key == key:
                        envelope = decode_known(
                            message.value,
                            self._registry,
                            "stream-reader",
                            log=self._log_skips,
                            topic=topic,
                            partition=tp.partition,
                            offset=message.offset,
                        )
                        if envelope is not None:
                            records.append(Record(topic, tp.partition, message.offset, envelope))
            return records

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        wanted = list(partitions)
        with self._reader_lock:
            reader = self._get_reader()
            for topic in {tp.topic for tp in wanted}:
                known = reader.partitions_for_topic(topic)
                if not known:
                    raise UnknownTopic(f"topic {topic!r} does not exist")
                for tp in wanted:
                    if tp.topic == topic and tp.partition not in known:
                        raise UnknownTopic(f"topic {topic!r} has no partition {tp.partition}")
            try:
                ends = reader.end_offsets(
                    [KafkaTopicPartition(tp.topic, tp.partition) for tp in wanted],
                    timeout_ms=int(self._timeout_s * 1000),
                )
            except kafka_errors.KafkaError as exc:
                raise EventLogError(f"end offsets of {len(wanted)} partitions: {exc}") from exc
        return {TopicPartition(tp.topic, tp.partition): int(end) for tp, end in ends.items()}

    def _get_reader(self) -> KafkaConsumer:
        with self._lock:
            if self._reader is None:
                self._reader = KafkaConsumer(group_id=None, **consumer_config(self._common()))
            return self._reader

    def consumer(
        self,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None = None,
        **options: Unpack[ConsumerOptions],
    ) -> GroupConsumer:
        config = group_consumer_config(
            self._common(),
            options.get("session_timeout_s"),
            options.get("batch_wait_s"),
            options.get("max_poll_interval_s"),
        )
        return KafkaGroupConsumer(
            lambda: KafkaConsumer(group_id=group_id, **config),
            self._registry,
            group_id,
            topics,
            on_assigned,
            metadata_wait_s=self._timeout_s,
            rejoin_after_s=rejoin_after_s(config["session_timeout_ms"] / 1000),
            types=options.get("types"),
            on_revoked=options.get("on_revoked"),
            skip_undecodable=options.get("skip_undecodable", False),
            busy_fetch={k: config[k] for k in GROUP_FETCH},
        )

    def close(self) -> None:
        with self._reader_lock, self._lock:
            if self._producer is not None:
                self._producer.close(timeout=self._timeout_s)
            if self._reader is not None:
                self._reader.close(autocommit=False)
            if self._admin is not None:
                self._admin.close()
            self._producer = self._reader = self._admin = None
