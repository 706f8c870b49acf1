"""Per-table error isolation for consumer loops: one table's failing event never stops another's.

Every event of a topic is keyed by its stream id (a table id for everything about tables and
hands), so a stream's events are in order on one partition, mixed with other tables' events.
A loop that retries a failing record *in place* stops every table behind it on that partition.
:class:`StreamIsolation` parks the failing record's stream instead:

- the failing record and every later record of the same stream are held in memory, in order,
  and retried after an exponential backoff (:class:`rummy_platform.backoff.Backoff`);
- records of every other stream are handled as they come;
- the offset a loop stores (or commits) for a partition never passes the first held record of
  that partition (:meth:`StreamIsolation.resume`), so a restart (or a rebalance) reads the held
  records again. Records of other streams after that point are then delivered a second time:
  the consumers here drop repeats by event id (``processed_events``, causation ids, reaction
  event ids), as they already must for a relay's republication.

Each failure is logged once per failing period with ``table_id`` (the stream id), ``hand_id``
and ``seat`` where the event names them, and counted in ``rummy_stream_failures_total{group}``;
``rummy_streams_parked{group}`` is how many streams wait for a retry.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge

from rummy_platform.backoff import KeyedBackoff
from rummy_platform.eventlog.base import Record, TopicPartition
from rummy_platform.logging import get_logger

_log = get_logger(__name__)


@dataclass(frozen=True)
class IsolationMetrics:
    failures: Counter
    parked: Gauge


@functools.cache
def isolation_metrics(registry: CollectorRegistry = REGISTRY) -> IsolationMetrics:
    """The two series of ``registry``, created on first use (a registry refuses duplicates)."""
    return IsolationMetrics(
        Counter(
            "rummy_stream_failures",  # exposed as rummy_stream_failures_total
            "Events whose handling raised (the stream, a table, is parked and retried).",
            ["group"],
            registry=registry,
        ),
        Gauge(
            "rummy_streams_parked",
            "Streams (tables) whose events wait for a retry after a failure.",
            ["group"],
            registry=registry,
        ),
    )


def event_context(record: Record) -> dict[str, object]:
    """``table_id``, and ``hand_id`` / ``seat`` when the event names them, for a log line."""
    envelope = record.envelope
    context: dict[str, object] = {"table_id": envelope.stream_id, "event_type": envelope.type}
    hand_id = getattr(envelope.payload, "hand_id", "") or envelope.correlation_id
    if hand_id:
        context["hand_id"] = hand_id
    seat = getattr(envelope.payload, "seat", None)
    if isinstance(seat, int):
        context["seat"] = seat
    return context


class StreamIsolation:
    """The parked streams of one consumer group and the offsets it may store.

    ``first_s`` is the first retry delay (seconds; 0 retries at the next round), doubled per
    failure up to ``cap_s``. ``clock`` gives seconds (``time.monotonic``). One thread only.

    The cap is 5 s: most parked tables wait for a dependency that comes back (the dealer's
    fairness calls while fairness restarts); with a 30 s cap a table parked over a 9 s fairness
    restart waited 24 s more for its next retry (issue 14's soak). A table whose event keeps
    failing costs one retry every 5 s.
    """

    def __init__(
        self,
        group_id: str,
        *,
        first_s: float = 0.5,
        cap_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        metrics: IsolationMetrics | None = None,
    ) -> None:
        self.group_id = group_id
        self._retries = KeyedBackoff(
            f"{group_id}: handling a table's events",
            first_s=first_s,
            cap_s=cap_s,
            clock=clock,
            group_id=group_id,
        )
        self._metrics = metrics or isolation_metrics()
        # Exported at 0 from the start, so rates and alerts have a series before any failure.
        self._metrics.failures.labels(group_id)
        self._metrics.parked.labels(group_id).set(0)
        #: The held records of each parked stream, the failed one first.
        self._held: dict[str, list[Record]] = {}
        self._seen: dict[TopicPartition, int] = {}

    @property
    def parked(self) -> frozenset[str]:
        """The stream ids waiting for a retry."""
        return frozenset(self._held)

    def _count_parked(self) -> None:
        self._metrics.parked.labels(self.group_id).set(len(self._held))

    def admit(self, record: Record) -> bool:
        """Note ``record`` as delivered. True: handle it now; False: its stream is parked and the
        record was queued behind the stream's failed one."""
        tp = TopicPartition(record.topic, record.partition)
        self._seen[tp] = max(self._seen.get(tp, 0), record.next_offset)
        held = self._held.get(record.envelope.stream_id)
        if held is None:
            return True
        held.append(record)
        return False

    def failed(self, record: Record, error: BaseException) -> None:
        """``record``'s handling raised ``error``: park its stream with ``record`` first in its
        queue (ahead of any record of the stream held after it), log and count it."""
        stream_id = record.envelope.stream_id
        reason = f"{type(error).__name__}: {error}"
        if stream_id not in self._held:
            _log.error(
                "event handling failed; this table is parked, the others go on",
                group_id=self.group_id,
                error=reason,
                exc_info=error,
                **event_context(record),
            )
        self._held.setdefault(stream_id, []).insert(0, record)
        self._retries.failed(stream_id, reason, **event_context(record))
        self._metrics.failures.labels(self.group_id).inc()
        self._count_parked()

    def retry_due(
        self,
        handle: Callable[[Record, int], object],
        *,
        reraise: tuple[type[BaseException], ...] = (),
    ) -> int:
        """Hand the held records of every parked stream whose delay passed, in order, to
        ``handle(record, offset to store with it)``; returns how many were handled. A stream whose
        records were all handled is no longer parked; one whose record raises again stays parked
        with a longer delay. An exception of a ``reraise`` type puts the record back and is
        raised (a fenced writer, a broker or database outage: not the table's fault)."""
        handled = 0
        for stream_id, held in list(self._held.items()):
            if not self._retries.ready(stream_id):
                continue
            while held:
                record = held.pop(0)
                tp = TopicPartition(record.topic, record.partition)
                try:
                    handle(record, self.resume(tp))
                except reraise:
                    held.insert(0, record)
                    raise
                except Exception as exc:
                    self.failed(record, exc)
                    break
                handled += 1
            else:
                del self._held[stream_id]
                self._retries.succeeded(stream_id)
                self._count_parked()
        return handled

    def forget_from(self, tp: TopicPartition, offset: int) -> None:
        """Drop the held records of ``tp`` at ``offset`` or later (the consumer was rewound to
        ``offset`` and delivers them again); a stream left with none is no longer parked."""
        for stream_id, held in list(self._held.items()):
            held[:] = [
                r
                for r in held
                if not (r.topic == tp.topic and r.partition == tp.partition and r.offset >= offset)
            ]
            if not held:
                del self._held[stream_id]
                self._retries.forget(stream_id)
        if self._seen.get(tp, 0) > offset:
            self._seen[tp] = offset
        self._count_parked()

    def resume(self, tp: TopicPartition, next_offset: int | None = None) -> int:
        """The offset to store for ``tp``: ``next_offset`` (default: after the last record
        delivered), but never past the first record held for a retry."""
        upto = self._seen.get(tp, 0) if next_offset is None else next_offset
        first = self._first_held(tp)
        return upto if first is None else min(upto, first)

    def reassigned(self, partitions: frozenset[TopicPartition]) -> dict[TopicPartition, int]:
        """After a (re)assignment: the offset to resume each of ``partitions`` that holds records
        from (its first held record: a member that keeps a partition keeps its position, so
        the held records must be read again), then forget every held record."""
        seek = {tp: self.resume(tp) for tp in partitions if self._first_held(tp) is not None}
        self.reset()
        return seek

    def _first_held(self, tp: TopicPartition) -> int | None:
        offsets = [
            r.offset
            for held in self._held.values()
            for r in held
            if r.topic == tp.topic and r.partition == tp.partition
        ]
        return min(offsets, default=None)

    def reset(self) -> None:
        """Forget every held record (after a (re)assignment the consumer reads them again from
        the stored offsets)."""
        self._held.clear()
        self._seen.clear()
        self._retries.clear()
        self._count_parked()
