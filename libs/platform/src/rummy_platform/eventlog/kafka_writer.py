"""The transactional writer on Kafka (:class:`KafkaTransactionalWriter`), made by
:meth:`~.kafka_log.KafkaEventLog.transactional_writer`."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

import kafka.errors as kafka_errors
from kafka import KafkaProducer, OffsetAndMetadata
from kafka import TopicPartition as KafkaTopicPartition

from rummy_platform.backoff import Backoff
from rummy_platform.envelope import Envelope, encode
from rummy_platform.logging import get_logger

from .base import (
    CommitOutcomeUnknown,
    EventLogError,
    GenerationFenced,
    OffsetCommit,
    Position,
    TopicPartition,
    TransactionalWriter,
    WriterFenced,
    offsets_to_commit,
)
from .kafka_client import PRODUCER_REQUEST_TIMEOUT_MS, is_fencing, record_headers

_log = get_logger(__name__)


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
        self, events: Sequence[tuple[str, Envelope]], **commit: Unpack[OffsetCommit]
    ) -> list[Position]:
        consumed, group_id, group_metadata = offsets_to_commit(commit)
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
            if is_fencing(exc):
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
                if is_fencing(abort_exc):
                    raise self._fenced_error() from exc
                self._break(f"abort failed: {abort_exc}")
                raise EventLogError(
                    f"transaction of {self.transactional_id!r} failed ({exc}) and its producer "
                    f"cannot abort it ({abort_exc}); nothing was written, the producer is "
                    "recreated"
                ) from exc
            if isinstance(exc, kafka_errors.CommitFailedError):
                # The group refused the offsets: the member's generation ended (KIP-447).
                raise GenerationFenced(
                    f"transaction of {self.transactional_id!r} was aborted: {exc}"
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
