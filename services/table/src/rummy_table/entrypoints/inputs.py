"""The table service's inbound loops: the loop over the inputs (ledger, fairness, dealer and
clock events, group ``table``: :class:`InputLoop`, which hands each poll to
:meth:`TableApp.on_inputs`) and the hand-start ticker (:func:`hand_starter`, which calls
:meth:`TableApp.tick`). What they read goes through :mod:`rummy_platform.eventlog`, the only home
of the Kafka client; the rebuild, the snapshots and the takeover checks (outbound) are in
:mod:`rummy_table.adapters.table_log`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from rummy_platform.errors import Unavailable
from rummy_platform.eventlog import (
    EventLog,
    EventLogError,
    GroupConsumer,
    Record,
    TopicPartition,
    WriterFenced,
)
from rummy_platform.isolation import StreamIsolation
from rummy_platform.logging import get_logger
from rummy_platform.rounds import run_rounds
from rummy_table.application.app import TableApp

_log = get_logger(__name__)
#: "No held input caps this partition's offset" (larger than any offset).
_NO_CAP = 2**63


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
        max_poll_interval_s: float | None = None,
    ) -> None:
        self._on_owned = on_owned
        self._max_poll_interval_s = max_poll_interval_s
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
                max_poll_interval_s=self._max_poll_interval_s,
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
        run_rounds(
            stop,
            self.run_once,
            close=self.close,
            retried=EventLogError,
            pause_s=self._retry_pause_s,
            log=_log,
            failed="input round failed; will retry",
        )

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
