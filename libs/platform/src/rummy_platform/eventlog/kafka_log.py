"""The event log on Apache Kafka, through kafka-python 3.0.x.

- Every record carries the header ``event-type`` (:data:`~.base.EVENT_TYPE_HEADER`): the
  envelope's payload type, so consumers drop types they do not use without decoding the value.
- Plain appends go through one idempotent producer with ``acks=all`` (kafka-python 3.0's
  defaults, set explicitly here), keyed by the envelope's stream id.
- Each :class:`KafkaTransactionalWriter` is its own producer with a stable ``transactional.id``;
  ``init_transactions`` on creation fences every earlier producer with the same id.
- Readers use ``isolation_level=read_committed``: records of open or aborted transactions are
  never returned.
- Consumers never auto-commit; the caller resumes from offsets it stored (``on_assigned``) or
  commits explicitly.
- Group consumers poll through a :class:`PollGuard`: a broker that is down or stops answering
  makes ``poll`` back off (0.2 s doubling to 5 s, one log line when it starts failing and one
  when it recovers) instead of raising or spinning.
- Group consumers export their lag (``rummy_consumer_lag_events``, see
  :class:`rummy_platform.metrics.ConsumerLagReporter`) every 15 s from their polls.

Clients are created on first use, so building a :class:`KafkaEventLog` does no I/O. The producer is
thread-safe; the stream reader is guarded by a lock; a :class:`GroupConsumer` belongs to one thread.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import kafka.errors as kafka_errors
from kafka import (
    ConsumerRebalanceListener,
    KafkaAdminClient,
    KafkaConsumer,
    KafkaProducer,
    OffsetAndMetadata,
)
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.coordinator.assignors.range import RangePartitionAssignor

from rummy_platform.backoff import Backoff
from rummy_platform.envelope import Envelope, PayloadRegistry, encode, event_payloads
from rummy_platform.logging import get_logger
from rummy_platform.metrics import ConsumerLagReporter
from rummy_platform.topics import TopicSpec, partition_for

from .base import (
    EVENT_TYPE_HEADER,
    CommitOutcomeUnknown,
    EventLog,
    EventLogError,
    GroupConsumer,
    OnAssigned,
    OnRevoked,
    Position,
    Record,
    TopicDescription,
    TopicMismatch,
    TopicPartition,
    TransactionalWriter,
    UnknownTopic,
    WriterFenced,
    decode_if_used,
    decode_known,
)

_log = get_logger(__name__)

#: The producers' retry backoff (ms). kafka-python 3.0.12's sender sleeps the configured
#: ``retry_backoff_ms`` (default 100) before every retried transactional request, ignoring the
#: 20 ms it sets on the handler for the case that matters here: a transaction that begins while
#: the broker still writes the previous one's markers gets CONCURRENT_TRANSACTIONS for its
#: AddPartitionsToTxn, which happens all the time to back-to-back transactions. Measured with
#: libs/platform/bench/produce_latency.py (600 one-event transactions, busy 2-core machine):
#: 100 ms -> p99 108 ms, mean 7.8 ms; 20 ms -> p99 29 ms, mean 4.8 ms; 10/5/2 ms -> p99 20-30 ms,
#: mean 4.4-5.6 ms (no better below 20 ms within the noise; 5 ms keeps the retry of a
#: concurrent-transactions answer shortest without retrying faster than a broker round trip).
PRODUCER_RETRY_BACKOFF_MS = 5

#: How group consumers fetch: the broker holds a fetch until 64 KiB are ready or 100 ms passed
#: (kafka-python's defaults are 1 byte / 500 ms: a fetch per record as soon as it is written).
#: Each fetch costs the consumer about 1.5 ms of CPU in kafka-python whatever it carries, so at
#: tens of records a second the consumer spent its CPU fetching one record at a time. Measured
#: here (a consumer of 1 in 10 records, a producer at 40 records/s): 1 byte -> 7.4-8.3% of a
#: core, 1.7-1.9 ms per record; 100 ms -> 2.9%, 0.65 ms; 50 ms -> 4.2%; 25 ms -> no change (the
#: records came every 25 ms). The price: a record reaches a group consumer up to 100 ms later,
#: and an idle consumer fetches 10 times a second instead of twice (0.5% -> 1.9% of a core).
GROUP_FETCH: dict[str, Any] = {"fetch_min_bytes": 64 * 1024, "fetch_max_wait_ms": 100}

#: Every client's reconnect backoff (ms): 50 ms doubling to 1 s. kafka-python's consumers default
#: to a 30 s cap, so after a broker restart a consumer that had backed off far waited up to 30 s
#: before it even tried again (issue 14: hands resumed 32 s after a Kafka restart).
CLIENT_RECONNECT: dict[str, Any] = {"reconnect_backoff_ms": 50, "reconnect_backoff_max_ms": 1000}

#: How group members keep their membership (ms). kafka-python 3.0.12 defaults to a 45 s session
#: (KIP-735) and a 3 s heartbeat: a SIGKILLed member (which sends no LeaveGroup) kept its
#: partitions until the broker dropped it 45 s later, so a restarted service waited that long for
#: its own partitions (issue 14: 31 s after a ledger kill, 45 s after a table kill). 6 s (the
#: broker's minimum, group.min.session.timeout.ms; the clock already ran with it) with a 1.5 s
#: heartbeat leaves three missed heartbeats of slack; a member closed gracefully sends LeaveGroup
#: (dynamic members do in 3.0.12) and is replaced at once. Static membership
#: (``group_instance_id``, which 3.0.12 supports) is not used: static members never send
#: LeaveGroup, and each instance would need a stable id of its own.
GROUP_MEMBERSHIP: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1500,
    **CLIENT_RECONNECT,
}

#: kafka-python's own client metrics (``metrics_enabled``, default True) are off in the event
#: log's producers and consumers and the clock's consumer (the hot ones): nothing reads them
#: (``KafkaProducer.metrics()``, ``KafkaConsumer.metrics()``; the services export their own
#: through prometheus-client), yet every request, batch and fetch records a dozen sensors in
#: Python. Measured with libs/platform/bench/produce_latency.py --count 800-1000 against
#: --set metrics_enabled=true (busy 2-core machine, three pairs): a one-event transaction
#: 3.55 / 2.75 / 2.57 -> 2.87 / 2.07 / 2.46 ms of client CPU. (KafkaAdminClient has no such
#: setting and refuses unknown ones.)
CLIENT_METRICS: dict[str, Any] = {"metrics_enabled": False}

#: The producers' request timeout (ms); kafka-python's default is 30 s. A broker that stops
#: answering fails a transaction after 10 s instead of 30 (the writer then recovers by itself,
#: see :class:`KafkaTransactionalWriter`); a healthy broker answers in milliseconds.
PRODUCER_REQUEST_TIMEOUT_MS = 10_000

_FENCING_ERRORS = (kafka_errors.ProducerFencedError, kafka_errors.InvalidProducerEpochError)


def record_headers(envelope: Envelope) -> list[tuple[str, bytes]]:
    """The Kafka headers every append writes with ``envelope``: its payload type."""
    return [(EVENT_TYPE_HEADER, envelope.type.encode())]


def header_type(headers: Iterable[tuple[str, bytes]] | None) -> str | None:
    """The payload type named by a consumed record's headers (kafka-python's ``(key, value)``
    list), or None when the record has no (UTF-8) :data:`~.base.EVENT_TYPE_HEADER`: written
    before the header existed."""
    for key, value in headers or ():
        if key == EVENT_TYPE_HEADER:
            try:
                return value.decode()
            except UnicodeDecodeError:
                return None
    return None


def _is_fencing(exc: BaseException) -> bool:
    # After fencing, kafka-python raises the broker's error once, then a plain KafkaError
    # ("... in an error state: [Error 90] ProducerFencedError") from every transactional call.
    return isinstance(exc, _FENCING_ERRORS) or "ProducerFenced" in str(exc)


class KafkaEventLog(EventLog):
    """The event log on the brokers ``bootstrap_servers`` (``"host:port[,host:port]"``).

    ``timeout_s`` bounds each blocking call (acknowledgement, metadata, stream read).
    ``log_skips=False``: a stream read counts the events of unknown payload types it skips
    without logging them (a command-line reader that reports them itself).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        registry: PayloadRegistry | None = None,
        client_id: str = "rummy",
        timeout_s: float = 30.0,
        log_skips: bool = True,
    ) -> None:
        self._log_skips = log_skips
        self._bootstrap = bootstrap_servers.split(",")
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
        return {
            "bootstrap_servers": self._bootstrap,
            "client_id": self._client_id,
            **CLIENT_RECONNECT,
        }

    def producer_config(self) -> dict[str, Any]:
        """The configuration of every producer this log builds (idempotent, acks=all)."""
        return {
            **self._common(),
            "enable_idempotence": True,
            "acks": "all",
            # Each append (each transaction) is sent as soon as it is made: the callers wait for
            # its ack one at a time, so lingering would only add its wait to every append. The
            # table's GroupCommitWriter batches callers itself (those arriving while one
            # transaction is in flight share the next), and commit_transaction flushes whatever
            # is lingering anyway, so producer linger would only delay that flush.
            # (batch_size stays 16 KiB: an event is 100-500 bytes; a group transaction of many
            # tables spreads over the partitions, a few events per partition batch.)
            "linger_ms": 0,
            "max_block_ms": int(self._timeout_s * 1000),
            "retry_backoff_ms": PRODUCER_RETRY_BACKOFF_MS,
            "request_timeout_ms": PRODUCER_REQUEST_TIMEOUT_MS,
            **CLIENT_METRICS,
        }

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

    def _consumer_config(self) -> dict[str, Any]:
        return {
            **self._common(),
            "enable_auto_commit": False,
            "isolation_level": "read_committed",
            "auto_offset_reset": "earliest",
            **CLIENT_METRICS,
        }

    def _group_consumer_config(self, session_timeout_s: float | None) -> dict[str, Any]:
        # Group members (the services' reactors) batch their fetches; the stream reader does not
        # (it reads to the end at once and would wait GROUP_FETCH's wait at the tail). Range
        # assignment: a member gets the same partition numbers of co-partitioned topics.
        config = {
            **self._consumer_config(),
            **GROUP_FETCH,
            **GROUP_MEMBERSHIP,
            "partition_assignment_strategy": (RangePartitionAssignor,),
        }
        if session_timeout_s is not None:
            config["session_timeout_ms"] = int(session_timeout_s * 1000)
            config["heartbeat_interval_ms"] = max(100, int(session_timeout_s * 1000 / 6))
        return config

    # -- topics --------------------------------------------------------------------------------

    def ensure_topics(self, specs: Iterable[TopicSpec]) -> None:
        specs = list(specs)
        admin = self._get_admin()
        existing = set(admin.list_topics())
        missing = {
            spec.name: {
                "num_partitions": spec.partitions,
                "replication_factor": spec.replication_factor,
                "configs": dict(spec.config),
            }
            for spec in specs
            if spec.name not in existing
        }
        if missing:
            # A topic created concurrently by another process is verified below like any other.
            with contextlib.suppress(kafka_errors.TopicAlreadyExistsError):
                admin.create_topics(missing, wait_for_metadata=True)
        for spec in specs:
            described = self.describe_topic(spec.name)
            if described.partitions != spec.partitions:
                raise TopicMismatch(
                    f"topic {spec.name} has {described.partitions} partitions, "
                    f"spec says {spec.partitions}"
                )
            for key, value in spec.config.items():
                if described.config.get(key) != value:
                    raise TopicMismatch(
                        f"topic {spec.name}: {key}={described.config.get(key)!r}, "
                        f"spec says {value!r}"
                    )

    def describe_topic(self, name: str) -> TopicDescription:
        admin = self._get_admin()
        try:
            (topic,) = admin.describe_topics([name])
        except kafka_errors.UnknownTopicOrPartitionError:
            raise UnknownTopic(f"topic {name!r} does not exist") from None
        if topic["error_code"] != 0:
            raise UnknownTopic(f"topic {name!r}: error code {topic['error_code']}")
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)])
        config = {key: entry["value"] for key, entry in configs["topic"][name].items()}
        return TopicDescription(name, len(topic["partitions"]), config)

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
                self._reader = KafkaConsumer(group_id=None, **self._consumer_config())
            return self._reader

    def consumer(
        self,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None = None,
        *,
        types: Collection[str] | None = None,
        on_revoked: OnRevoked | None = None,
        session_timeout_s: float | None = None,
    ) -> GroupConsumer:
        config = self._group_consumer_config(session_timeout_s)
        return KafkaGroupConsumer(
            lambda: KafkaConsumer(group_id=group_id, **config),
            self._registry,
            group_id,
            topics,
            on_assigned,
            metadata_wait_s=self._timeout_s,
            types=types,
            on_revoked=on_revoked,
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


class KafkaTransactionalWriter(TransactionalWriter):
    """A transactional producer; created by :meth:`KafkaEventLog.transactional_writer`.

    Raises EventLogError if the transaction coordinator does not answer within ``timeout_s``
    when it is created.

    Broker trouble never wedges it (kafka-python 3.0 leaves a producer whose request timed out in
    an error state in which every later transactional call fails, "Cannot execute transactional
    method because we are in an error state", until the process is restarted):

    - a transaction that fails before its commit is aborted; if the abort works (an *abortable*
      error) the same producer carries on with the next append;
    - if the abort fails, the producer is in a *fatal* state, or the commit's outcome is unknown
      (CommitOutcomeUnknown), the producer is *broken*: the next :meth:`ready` or append closes
      it and makes a new one under the same ``transactional_id`` (``init_transactions`` again:
      the broker completes or aborts whatever the old one left open, so once it returns every
      earlier transaction's outcome is final). A failed attempt waits a
      :class:`~rummy_platform.backoff.Backoff` delay (0.2 s doubling to 5 s) before the next;
      until then appends and :meth:`ready` fail at once with EventLogError saying why.

    ``clock`` is ``time.monotonic`` unless a test gives another. Thread-safe (one lock).
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        transactional_id: str,
        timeout_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.transactional_id = transactional_id
        self._config = dict(config)
        self._timeout_s = timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._fenced = False
        #: Why the producer cannot be used (None while it can).
        self._broken: str | None = None
        self._retry_at = 0.0
        self._backoff = Backoff(
            "transactional producer", clock=clock, transactional_id=transactional_id
        )
        #: Producers made so far (1 on creation; one more per recovery), for tests and logs.
        self.producers_created = 0
        self._producer: KafkaProducer | None = self._new_producer()

    def _new_producer(self) -> KafkaProducer:
        """A producer under ``transactional_id`` with its transactions initialised (fencing any
        older one). Raises EventLogError when the broker does not answer."""
        try:
            producer = KafkaProducer(**self._config, transactional_id=self.transactional_id)
        except kafka_errors.KafkaError as exc:
            raise EventLogError(
                f"producer for {self.transactional_id!r} not created: {exc}"
            ) from exc
        try:
            producer.init_transactions()
        except kafka_errors.KafkaError as exc:
            producer.close(timeout=0)
            raise EventLogError(
                f"init_transactions for {self.transactional_id!r} failed: {exc}"
            ) from exc
        self.producers_created += 1
        return producer

    def _fenced_error(self) -> WriterFenced:
        self._fenced = True
        return WriterFenced(
            f"writer {self.transactional_id!r} was fenced by a newer writer with the same "
            "transactional id; nothing of this append was written"
        )

    def _break(self, reason: str) -> None:
        """Mark the producer unusable: the next :meth:`_usable` recreates it."""
        if self._broken is None:
            _log.warning(
                "transactional producer broken; it will be recreated",
                transactional_id=self.transactional_id,
                reason=reason,
            )
        self._broken = reason

    def _usable(self) -> KafkaProducer:
        """The producer, recreated first if broken (and the backoff allows). Raises
        WriterFenced once fenced, EventLogError while the producer cannot be made. Call with
        ``_lock`` held."""
        if self._fenced:
            raise self._fenced_error()
        if self._broken is None and self._producer is not None:
            return self._producer
        now = self._clock()
        if now < self._retry_at:
            raise EventLogError(
                f"writer {self.transactional_id!r} cannot write ({self._broken}); its producer "
                f"is recreated in {self._retry_at - now:.1f} s"
            )
        old, self._producer = self._producer, None
        if old is not None:
            with contextlib.suppress(Exception):  # a broken client may fail to close cleanly
                old.close(timeout=0)
        try:
            self._producer = self._new_producer()
        except EventLogError as exc:
            self._retry_at = self._clock() + self._backoff.failed(str(exc))
            self._broken = str(exc)
            raise
        _log.info(
            "transactional producer recreated",
            transactional_id=self.transactional_id,
            after=self._broken,
        )
        self._backoff.succeeded()
        self._broken = None
        self._retry_at = 0.0
        return self._producer

    def ready(self) -> None:
        with self._lock:
            self._usable()

    @property
    def broken(self) -> str | None:
        """Why the producer is to be recreated before the next write, or None."""
        return self._broken

    def append_batch(
        self,
        events: Sequence[tuple[str, Envelope]],
        *,
        consumed: Mapping[TopicPartition, int] | None = None,
        group_id: str | None = None,
        group_metadata: object | None = None,
    ) -> list[Position]:
        if consumed and not group_id:
            raise ValueError("consumed offsets need a group_id")
        with self._lock:
            producer = self._usable()
            return self._transaction(producer, events, consumed, group_id, group_metadata)

    def _transaction(
        self,
        producer: KafkaProducer,
        events: Sequence[tuple[str, Envelope]],
        consumed: Mapping[TopicPartition, int] | None,
        group_id: str | None,
        group_metadata: object | None,
    ) -> list[Position]:
        committing = False
        try:
            producer.begin_transaction()
            futures = [
                producer.send(
                    topic,
                    key=envelope.key,
                    value=encode(envelope),
                    headers=record_headers(envelope),
                )
                for topic, envelope in events
            ]
            # A healthy broker acknowledges in milliseconds; a batch the producer lost track of
            # in a broker restart was seen unanswered for the whole 30 s, holding every
            # command of the instance behind it. So the ack wait is the request timeout.
            ack_s = min(self._timeout_s, PRODUCER_REQUEST_TIMEOUT_MS / 1000)
            metas = [future.get(timeout=ack_s) for future in futures]
            if consumed:
                producer.send_offsets_to_transaction(
                    {
                        KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset)
                        for tp, offset in consumed.items()
                    },
                    # The member's metadata (KIP-447, kafka-python >= 3.0) makes the broker
                    # refuse offsets of a member whose generation is stale; a bare group id
                    # (older callers) fences by transactional id only.
                    group_metadata if group_metadata is not None else group_id,
                )
            committing = True
            producer.commit_transaction()
        except kafka_errors.KafkaError as exc:
            if _is_fencing(exc):
                raise self._fenced_error() from exc
            if committing:
                # EndTxn was sent: the coordinator may have committed it. A new producer's
                # init_transactions waits for that outcome (or aborts what never got there).
                self._break(f"commit not confirmed: {exc}")
                raise CommitOutcomeUnknown(
                    f"commit of {self.transactional_id!r} not confirmed: {exc}"
                ) from exc
            try:
                producer.abort_transaction()
            except kafka_errors.KafkaError as abort_exc:
                if _is_fencing(abort_exc):
                    raise self._fenced_error() from exc
                self._break(f"abort failed: {abort_exc}")
                raise EventLogError(
                    f"transaction of {self.transactional_id!r} failed ({exc}) and its producer "
                    f"cannot abort it ({abort_exc}); nothing was written, the producer is "
                    "recreated"
                ) from exc
            raise EventLogError(
                f"transaction of {self.transactional_id!r} failed and was aborted: {exc}"
            ) from exc
        return [Position(m.topic, m.partition, m.offset) for m in metas]

    def close(self) -> None:
        with self._lock:
            if self._producer is not None:
                self._producer.close(timeout=self._timeout_s)
                self._producer = None


class _Listener:
    """Logs every rebalance and seeks to the caller's stored offsets when partitions are assigned
    (registered below as a kafka-python ConsumerRebalanceListener rather than subclassing an
    untyped class)."""

    def __init__(self, owner: KafkaGroupConsumer) -> None:
        self._owner = owner

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._owner._owns_partitions = False
        _log.info(
            "consumer partitions revoked", group_id=self._owner.group_id, partitions=_names(revoked)
        )
        self._owner._revoked(revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        _log.info(
            "consumer partitions assigned",
            group_id=self._owner.group_id,
            count=len(assigned),
            partitions=_names(assigned),
        )
        self._owner._owns_partitions = bool(assigned)
        self._owner._resume(assigned)

    def on_partitions_lost(self, lost: Any) -> None:
        self._owner._owns_partitions = False
        _log.info(
            "consumer partitions lost", group_id=self._owner.group_id, partitions=_names(lost)
        )
        self._owner._revoked(lost)


ConsumerRebalanceListener.register(_Listener)


def _names(partitions: Iterable[KafkaTopicPartition]) -> list[str]:
    return sorted(f"{tp.topic}[{tp.partition}]" for tp in partitions)


class EmptyAssignmentWatch:
    """Tells a group member when to leave and join its group again because its assignment has
    stayed empty too long (kafka-python 3.0 can hang in a rebalance for good: the leader logs
    "performing partition assignments", then no assignment and no heartbeat ever follow).

    Call :meth:`due` after each poll with whether the member owns any partition; it returns
    True once the assignment has been empty for ``after_s`` seconds, and then waits twice as
    long before the next True (up to ``max_after_s``); any assignment resets it. Seconds are
    measured with ``time.monotonic``.
    """

    def __init__(self, after_s: float = 15.0, max_after_s: float = 120.0) -> None:
        self._base_s = after_s
        self._after_s = after_s
        self._max_after_s = max_after_s
        self._empty_since: float | None = time.monotonic()

    def due(self, assigned: bool) -> bool:
        """True when the member should rejoin now (the caller does; the clock restarts)."""
        now = time.monotonic()
        if assigned:
            self._empty_since = None
            self._after_s = self._base_s
            return False
        if self._empty_since is None:
            self._empty_since = now
            return False
        if now - self._empty_since < self._after_s:
            return False
        self._empty_since = now
        self._after_s = min(self._after_s * 2, self._max_after_s)
        return True


#: An empty poll during which the polling thread was busy for at least this share of the poll's
#: duration was a spin, not a wait. kafka-python 3.0 busy-loops inside ``poll`` while a request to
#: a broker that stopped answering is in flight, and while a member hangs in a rebalance (measured
#: here with the broker SIGSTOPped: ~100% of a core, the polling thread itself busy ~40% of each
#: poll; an idle poll keeps it busy under 1%).
SPIN_CPU_SHARE = 0.15
#: Polls shorter than this (seconds) are too short to judge.
SPIN_MIN_POLL_S = 0.05
#: After a failure, empty polls count as recovery only once this many seconds passed without one.
SETTLE_S = 10.0


class PollGuard:
    """``KafkaConsumer.poll`` for a loop that polls forever, without a lost or hung broker turning
    that loop into a busy loop or killing it.

    - A retriable Kafka error from ``poll`` (connection refused, coordinator unknown, request
      timed out, ...) is not raised: :meth:`poll` waits the :class:`~rummy_platform.backoff.Backoff`
      delay and returns no records. Other Kafka errors are raised.
    - An empty poll that kept the calling thread busy for at least :data:`SPIN_CPU_SHARE` of its
      duration (thread CPU time over wall time) is a spin of the client: :meth:`poll` waits the
      backoff delay before returning, so the spin takes a small share of the time.
    - Records, or :data:`SETTLE_S` seconds of quiet empty polls after the last failure, end the
      failing period (logged once) and reset the delay.

    Waits are at most ``cap_s`` seconds (``first_s`` first, doubling). ``sleep``, ``clock`` and
    ``thread_clock`` are ``time.sleep``, ``time.monotonic`` and ``time.thread_time`` unless a test
    gives others.
    """

    def __init__(
        self,
        group_id: str,
        *,
        first_s: float = 0.2,
        cap_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        thread_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.backoff = Backoff(
            "kafka consumer poll", first_s=first_s, cap_s=cap_s, clock=clock, group_id=group_id
        )
        self._sleep = sleep
        self._clock = clock
        self._thread_clock = thread_clock

    def failed(self, exc: kafka_errors.KafkaError) -> None:
        """Wait out a retriable ``exc`` (from ``poll`` or from joining); raise any other."""
        if not getattr(exc, "retriable", False):
            raise exc
        self._sleep(self.backoff.failed(f"{type(exc).__name__}: {exc}"))

    def poll(
        self, consumer: KafkaConsumer, timeout_ms: int, max_records: int | None = None
    ) -> dict[KafkaTopicPartition, list[Any]]:
        """``consumer.poll(timeout_ms, max_records)``, guarded as the class doc says; ``{}``
        after a failure or a spin."""
        started, started_cpu = self._clock(), self._thread_clock()
        try:
            batches = consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        except kafka_errors.KafkaError as exc:
            self.failed(exc)
            return {}
        if batches:
            self.backoff.succeeded()
            return dict(batches)
        wall = self._clock() - started
        busy = self._thread_clock() - started_cpu
        if wall >= SPIN_MIN_POLL_S and busy >= SPIN_CPU_SHARE * wall:
            reason = f"an empty poll kept the thread busy {busy / wall:.0%} of {wall:.2f} s"
            self._sleep(self.backoff.failed(reason + " (broker not answering?)"))
        elif self.backoff.failing and self.backoff.seconds_since_failure() >= SETTLE_S:
            self.backoff.succeeded()
        return {}


def kafka_consumer_lag(
    consumer: KafkaConsumer, timeout_s: float = 5.0
) -> dict[TopicPartition, int]:
    """Offsets between ``consumer``'s position and the end (last stable offset) of each
    partition assigned to it; partitions without a known position yet are left out. Raises
    EventLogError when the broker does not answer within ``timeout_s`` seconds."""
    assigned = list(consumer.assignment())
    if not assigned:
        return {}
    timeout_ms = int(timeout_s * 1000)
    try:
        ends = consumer.end_offsets(assigned, timeout_ms=timeout_ms)
        lag: dict[TopicPartition, int] = {}
        for tp in assigned:
            with contextlib.suppress(kafka_errors.IllegalStateError):  # revoked meanwhile
                position = consumer.position(tp, timeout_ms=timeout_ms)
                if position is not None and tp in ends:
                    lag[TopicPartition(tp.topic, tp.partition)] = max(0, ends[tp] - position)
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"consumer lag unknown: {exc}") from exc
    return lag


def wait_for_partitions(
    consumer: KafkaConsumer, topics: Sequence[str], timeout_s: float, group_id: str
) -> None:
    """Return once ``consumer`` sees every topic's partitions, or after ``timeout_s`` seconds
    (logging a warning): a member that joins while a topic it subscribes to is still being
    created gets an empty assignment."""
    deadline = time.monotonic() + timeout_s
    missing = [t for t in topics if not consumer.partitions_for_topic(t)]
    while missing and time.monotonic() < deadline:
        time.sleep(0.1)
        missing = [t for t in missing if not consumer.partitions_for_topic(t)]
    if missing:
        _log.warning(
            "joining consumer group before its topics' partitions are known",
            group_id=group_id,
            missing=missing,
            waited_s=timeout_s,
        )


class KafkaGroupConsumer(GroupConsumer):
    """A consumer-group member; created by :meth:`KafkaEventLog.consumer`.

    Joining: the member subscribes only once its client sees every topic's partitions (up to
    ``metadata_wait_s`` seconds): a member that joins while a topic it subscribes to is still
    being created gets an empty assignment.

    Rejoining: kafka-python 3.0 can get stuck in a rebalance for good (seen on fresh stacks, in
    the first join or in the rebalance right after it: the leader logs "performing partition
    assignments" and then never gets an assignment, no heartbeat, the broker drops the member;
    every ``poll`` returns nothing). So when an empty ``poll`` finds the member without
    partitions (none assigned since subscribing or since the last revocation) for
    ``rejoin_after_s`` seconds, the client is closed and a new one joins the group (see
    :class:`EmptyAssignmentWatch`; the wait doubles up to ``max_rejoin_after_s``). A
    member of a group with more members than partitions therefore rejoins now and then, which
    is harmless. Nothing is lost: an empty assignment has no uncommitted positions.

    Broker trouble: polls go through a :class:`PollGuard` (back off instead of raising a
    retriable error or spinning); a rejoin that fails because the broker is unreachable is tried
    again at the next poll.

    Types: with ``types``, records of other payload types are dropped (see
    :meth:`EventLog.consumer`, :func:`~.base.decode_if_used`).

    Lag: a poll (while the broker answers) sets ``rummy_consumer_lag_events`` for the owned
    partitions at most every ``lag_interval_s`` seconds (:meth:`lag`, one ListOffsets request).
    """

    def __init__(
        self,
        factory: Callable[[], KafkaConsumer],
        registry: PayloadRegistry,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None,
        *,
        metadata_wait_s: float = 30.0,
        rejoin_after_s: float = 15.0,
        max_rejoin_after_s: float = 120.0,
        lag_interval_s: float = 15.0,
        types: Collection[str] | None = None,
        on_revoked: OnRevoked | None = None,
    ) -> None:
        self._on_revoked = on_revoked
        self._factory = factory
        self._types = None if types is None else frozenset(types)
        self._registry = registry
        self.group_id = group_id
        self._topics = list(topics)
        self._on_assigned = on_assigned
        self._metadata_wait_s = metadata_wait_s
        self._watch = EmptyAssignmentWatch(rejoin_after_s, max_rejoin_after_s)
        #: True from an assignment of at least one partition until the next revocation: during
        #: a rebalance kafka-python still reports the old assignment, so that is not a sign.
        self._owns_partitions = False
        self._guard = PollGuard(group_id)
        self._lag_reporter = ConsumerLagReporter(group_id, interval_s=lag_interval_s)
        self._consumer: KafkaConsumer | None = self._join()

    def _join(self) -> KafkaConsumer:
        consumer = self._factory()
        self._owns_partitions = False
        wait_for_partitions(consumer, self._topics, self._metadata_wait_s, self.group_id)
        consumer.subscribe(self._topics, listener=_Listener(self))
        _log.info("consumer subscribed", group_id=self.group_id, topics=self._topics)
        return consumer

    def _rejoin_if_stuck(self) -> None:
        if not self._watch.due(self._owns_partitions):
            return
        _log.warning(
            "consumer has no partitions; leaving and joining the group again",
            group_id=self.group_id,
        )
        self._leave()
        self._consumer = self._joined()

    def _joined(self) -> KafkaConsumer | None:
        """A new member, or None (after waiting out the backoff) when the broker cannot be
        reached; the next poll tries again."""
        try:
            return self._join()
        except kafka_errors.KafkaError as exc:
            self._guard.failed(exc)
            return None

    def _leave(self) -> None:
        if self._consumer is not None:
            with contextlib.suppress(Exception):  # a stuck client may fail to leave cleanly
                self._consumer.close(autocommit=False)
            self._consumer = None

    def _client(self) -> KafkaConsumer:
        if self._consumer is None:
            raise EventLogError(f"group {self.group_id!r}: not joined (broker unreachable)")
        return self._consumer

    def _resume(self, assigned: Iterable[KafkaTopicPartition]) -> None:
        if self._on_assigned is None:
            return
        owned = frozenset(TopicPartition(tp.topic, tp.partition) for tp in assigned)
        for tp, offset in self._on_assigned(owned).items():
            if tp in owned:
                self._client().seek(KafkaTopicPartition(tp.topic, tp.partition), offset)

    def _revoked(self, revoked: Iterable[KafkaTopicPartition]) -> None:
        if self._on_revoked is not None:
            self._on_revoked(frozenset(TopicPartition(tp.topic, tp.partition) for tp in revoked))

    def poll(self, timeout_s: float = 1.0, max_records: int = 500) -> list[Record]:
        if self._consumer is None:
            self._consumer = self._joined()
            if self._consumer is None:
                return []
        batches = self._guard.poll(self._consumer, int(timeout_s * 1000), max_records)
        if not self._guard.backoff.failing:
            self._lag_reporter.maybe_report(self.lag)
        if not batches:
            self._rejoin_if_stuck()
        records = []
        for tp in sorted(batches, key=lambda t: (t.topic, t.partition)):
            for m in batches[tp]:
                envelope = decode_if_used(
                    m.value,
                    header_type(m.headers),
                    self._registry,
                    self._types,
                    self.group_id,
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=m.offset,
                )
                if envelope is not None:
                    records.append(Record(tp.topic, tp.partition, m.offset, envelope))
        return records

    def assignment(self) -> frozenset[TopicPartition]:
        if self._consumer is None:
            return frozenset()
        return frozenset(
            TopicPartition(tp.topic, tp.partition) for tp in self._consumer.assignment()
        )

    def lag(self) -> dict[TopicPartition, int]:
        if self._consumer is None or not self._owns_partitions:
            return {}
        return kafka_consumer_lag(self._consumer)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self._client().seek(KafkaTopicPartition(partition.topic, partition.partition), offset)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._client().commit(
            {
                KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset)
                for tp, offset in offsets.items()
            }
        )

    def group_metadata(self) -> object | None:
        return None if self._consumer is None else self._consumer.group_metadata()

    def committed(self, partition: TopicPartition) -> int | None:
        value = self._client().committed(KafkaTopicPartition(partition.topic, partition.partition))
        return None if value is None else int(value)

    def close(self) -> None:
        """Leave the group at once (LeaveGroup: the others get the partitions without waiting
        out the session), after ``on_revoked`` of the partitions owned (kafka-python calls the
        listener on close)."""
        if self._consumer is not None:
            self._consumer.close(autocommit=False)
            self._consumer = None
