"""The table service's inbound loops: the loop over the inputs (ledger, fairness, dealer and
clock events, group ``table``: :class:`InputLoop`, which hands each poll to
:meth:`TableApp.on_inputs`) and the hand-start ticker (:func:`hand_starter`, which calls
:meth:`TableApp.tick`). What they read goes through :mod:`rummy_platform.eventlog`, the only home
of the Kafka client; the rebuild, the snapshots and the takeover checks (outbound) are in
:mod:`rummy_table.adapters.table_log`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from rummy_platform.consumer_loop import ConsumerLoop, Step, rewind_from
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
from rummy_table.application.app import TableApp

_log = get_logger(__name__)
#: "No held input caps this partition's offset" (larger than any offset).
_NO_CAP = 2**63


class InputCore:
    """The input loop's core (no I/O of its own, see :mod:`rummy_platform.consumer_loop`): a
    poll's admitted records go to :meth:`TableApp.on_inputs` (the tables in parallel, each
    table's inputs in order, each appending its facts with the consumed offsets in one
    transaction, never past an input held for a retry); a parked table's held inputs are
    retried one by one through :meth:`TableApp.on_input`."""

    def __init__(self, app: TableApp, isolation: StreamIsolation) -> None:
        self._app = app
        self.isolation = isolation

    def retry_due(self) -> int:
        """Raises WriterFenced once fenced (before trying anything), EventLogError on an
        outage."""
        if self._app.fenced:
            raise WriterFenced("the table writer was fenced; stopping the input loop")
        try:
            return self.isolation.retry_due(
                self._handle, reraise=(WriterFenced, Unavailable, EventLogError)
            )
        except (WriterFenced, Unavailable):
            raise WriterFenced("the table writer was fenced") from None

    def step(self, records: Sequence[Record]) -> Step:
        admitted = [r for r in records if self.isolation.admit(r)]
        if not admitted:
            return Step()
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
            return Step(error=WriterFenced("the table writer was fenced"))
        if outcome.log_error is not None:
            return Step(
                rewind=rewind_from(self.isolation, outcome.not_done), error=outcome.log_error
            )
        parked = sum(1 + len(outcome.held.get(r.envelope.stream_id, ())) for r, _ in outcome.failed)
        return Step(len(admitted) - parked)

    def _handle(self, record: Record, store_offset: int) -> None:
        self._app.on_input(
            record.envelope, TopicPartition(record.topic, record.partition), store_offset
        )


def input_core(app: TableApp, *, retry_pause_s: float = 1.0) -> InputCore:
    """The input loop's core for ``app`` (group ``app.input_group``; a parked table's first
    retry after ``retry_pause_s`` seconds): what :class:`InputLoop` runs, and what a simulator
    drives record by record."""
    return InputCore(app, StreamIsolation(app.input_group, first_s=retry_pause_s))


class InputLoop(ConsumerLoop):
    """Consumes the table's inputs (group ``app.input_group``) and hands each poll's records to
    its :class:`InputCore` (``core``).

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
        self._on_disowned = on_disowned
        self._app = app
        super().__init__(
            log,
            input_core(app, retry_pause_s=retry_pause_s),
            group_id=app.input_group,
            topics=topics,
            poll_timeout_s=poll_timeout_s,
            pause_s=retry_pause_s,
            retried=EventLogError,
            failed="input round failed; will retry",
            log_to=_log,
            on_revoked=self._revoked,
            session_timeout_s=session_timeout_s,
            max_poll_interval_s=max_poll_interval_s,
        )

    def _numbers(self, partitions: frozenset[TopicPartition]) -> frozenset[int]:
        """The partition numbers held on every input topic (the range assignment gives a member
        the same numbers of each co-partitioned topic)."""
        by_topic = [{tp.partition for tp in partitions if tp.topic == t} for t in self._topics]
        return frozenset(set.intersection(*by_topic)) if by_topic else frozenset()

    def _assigned(self, partitions: frozenset[TopicPartition]) -> dict[TopicPartition, int]:
        # The tables of the partitions are rebuilt before any of their inputs is handled.
        if self._on_owned is not None and self.consumer is not None:
            self._on_owned(self._numbers(partitions), self.consumer.group_metadata())
        # Held inputs are read again from the first of them (a partition the member keeps
        # keeps its position; the others resume from the committed offsets).
        return self.isolation.reassigned(partitions)

    def _revoked(self, partitions: frozenset[TopicPartition]) -> None:
        if self._on_disowned is not None:
            self._on_disowned(frozenset(tp.partition for tp in partitions))

    def _opened(self, consumer: GroupConsumer) -> None:
        # The offsets this loop's inputs commit carry the member's generation (KIP-447).
        self._app.input_group_metadata = consumer.group_metadata


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
