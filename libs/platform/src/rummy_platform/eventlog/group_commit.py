"""Group commit: many callers' appends carried by one transaction of one writer.

:class:`GroupCommitWriter` wraps a :class:`~rummy_platform.eventlog.TransactionalWriter` (one
producer, one ``transactional_id``: fencing is the inner writer's). Callers on any number of
threads call :meth:`GroupCommitWriter.append_batch` as they would on the inner writer; while a
transaction is in flight the callers that arrive queue up, and the next transaction carries all of
them (in arrival order, their consumed offsets merged), up to ``max_events`` events. No thread of
its own: the first caller that finds no transaction in flight commits (it is the *leader*) and
keeps committing until its own events are in; the others wait and are answered when theirs are.

A failed transaction fails exactly the callers whose events it held, each with the inner writer's
error (WriterFenced, CommitOutcomeUnknown, EventLogError); later callers go into the next
transaction. Throughput therefore grows with the number of concurrent callers instead of being
capped by one broker round trip per caller.

:class:`GroupCommitMetrics` (optional) counts what each transaction carried:
``rummy_eventlog_transaction_appends`` (callers, i.e. commands, per transaction) and
``rummy_eventlog_transaction_events`` (events per transaction), two histograms whose ``_count``
is the transactions tried, and ``rummy_eventlog_transaction_partitions``: the partitions each
committed transaction wrote to (what its commit must complete on; the benchmarks' floor of a
transaction as wide).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from prometheus_client import REGISTRY, CollectorRegistry, Histogram

from rummy_platform.envelope import Envelope

from .base import OffsetCommit, Position, TopicPartition, TransactionalWriter, offsets_to_commit

#: The most events one transaction carries (a caller's own batch is never split, so one larger
#: batch still goes alone).
DEFAULT_MAX_EVENTS = 1000

#: Buckets of the per-transaction histograms (callers or events per transaction).
PER_TRANSACTION_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)
#: Buckets of the partitions-per-transaction histogram: one per count up to 16 (a median read
#: from them is exact there), then coarser.
PARTITION_BUCKETS = (*range(1, 17), 24, 32, 48, 64, 128, 256)


@dataclass(frozen=True)
class GroupCommitMetrics:
    """What each transaction of a :class:`GroupCommitWriter` carried (failed ones included)."""

    appends: Histogram
    events: Histogram
    partitions: Histogram

    @classmethod
    def create(cls, registry: CollectorRegistry = REGISTRY) -> GroupCommitMetrics:
        """The three histograms, registered in ``registry``."""
        return cls(
            Histogram(
                "rummy_eventlog_transaction_appends",
                "Callers (commands) whose events one group-commit transaction carried.",
                buckets=PER_TRANSACTION_BUCKETS,
                registry=registry,
            ),
            Histogram(
                "rummy_eventlog_transaction_events",
                "Events one group-commit transaction carried.",
                buckets=PER_TRANSACTION_BUCKETS,
                registry=registry,
            ),
            Histogram(
                "rummy_eventlog_transaction_partitions",
                "Partitions one committed group-commit transaction wrote to.",
                buckets=PARTITION_BUCKETS,
                registry=registry,
            ),
        )


@dataclass(eq=False)
class _Pending:
    events: Sequence[tuple[str, Envelope]]
    consumed: Mapping[TopicPartition, int]
    group_id: str | None
    group_metadata: object | None
    done: bool = False
    positions: list[Position] = field(default_factory=list)
    error: BaseException | None = None


class GroupCommitWriter(TransactionalWriter):
    """A thread-safe writer whose concurrent appends share transactions of ``inner``.

    ``linger_s``: how long a leader waits for more callers before it commits (seconds; 0 commits
    at once: callers that arrive during a transaction already share the next one);
    ``max_events``: the most events per transaction. ``transactions`` counts the transactions
    committed or tried (for tests and benchmarks); ``metrics``, when given, records what each
    carried.
    """

    def __init__(
        self,
        inner: TransactionalWriter,
        *,
        linger_s: float = 0.0,
        max_events: int = DEFAULT_MAX_EVENTS,
        metrics: GroupCommitMetrics | None = None,
    ) -> None:
        self.inner = inner
        self.transactional_id = inner.transactional_id
        self._linger_s = linger_s
        self._max_events = max(1, max_events)
        self._cond = threading.Condition()
        self._queue: list[_Pending] = []
        self._leading = False
        self.transactions = 0
        self._metrics = metrics

    def append_batch(
        self, events: Sequence[tuple[str, Envelope]], **commit: Unpack[OffsetCommit]
    ) -> list[Position]:
        """As :meth:`TransactionalWriter.append_batch`; returns once a transaction holding these
        events (and offsets) committed, raises what that transaction raised."""
        mine = _Pending(list(events), *offsets_to_commit(commit))
        with self._cond:
            self._queue.append(mine)
            while self._leading and not mine.done:
                self._cond.wait()
            if not mine.done:
                self._leading = True
        if not mine.done:
            try:
                while not mine.done:
                    self._commit_next()
            finally:
                with self._cond:
                    self._leading = False
                    self._cond.notify_all()
        if mine.error is not None:
            raise mine.error
        return mine.positions

    def _take(self) -> list[_Pending]:
        """The next transaction's callers: a prefix of the queue within ``max_events`` whose
        consumed offsets all belong to one group and one member generation (a caller whose
        metadata is of another generation goes into the next transaction, so one stale caller
        never fails the others)."""
        if self._linger_s > 0:
            deadline = time.monotonic() + self._linger_s
            while sum(len(p.events) for p in self._queue) < self._max_events:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        batch: list[_Pending] = []
        count, group, member = 0, None, _member(None)
        for pending in self._queue:
            if batch and count + len(pending.events) > self._max_events:
                break
            if pending.consumed:
                if group is not None and (
                    pending.group_id != group or _member(pending.group_metadata) != member
                ):
                    break
                group, member = pending.group_id, _member(pending.group_metadata)
            batch.append(pending)
            count += len(pending.events)
        del self._queue[: len(batch)]
        return batch

    def _commit_next(self) -> None:
        with self._cond:
            batch = self._take()
        events = [e for p in batch for e in p.events]
        consumed: dict[TopicPartition, int] = {}
        group_id, metadata = None, None
        for p in batch:
            for tp, offset in p.consumed.items():
                consumed[tp] = max(offset, consumed.get(tp, offset))
            if p.consumed:
                group_id = p.group_id
                metadata = p.group_metadata if p.group_metadata is not None else metadata
        error: BaseException | None = None
        positions: list[Position] = []
        if self._metrics is not None:
            self._metrics.appends.observe(len(batch))
            self._metrics.events.observe(len(events))
        try:
            self.transactions += 1
            positions = self.inner.append_batch(
                events,
                consumed=consumed or None,
                group_id=group_id,
                group_metadata=metadata,
            )
        except Exception as exc:  # every caller of this transaction gets its error
            error = exc
        if self._metrics is not None and error is None:
            self._metrics.partitions.observe(len({(p.topic, p.partition) for p in positions}))
        with self._cond:
            at = 0
            for p in batch:
                if error is None:
                    p.positions = positions[at : at + len(p.events)]
                else:
                    p.error = error
                at += len(p.events)
                p.done = True
            self._cond.notify_all()

    def ready(self) -> None:
        """The inner writer's :meth:`~TransactionalWriter.ready`."""
        self.inner.ready()

    def close(self) -> None:
        self.inner.close()


def _member(metadata: object | None) -> tuple[object, object]:
    """The fencing identity of a group member's metadata (generation, member id)."""
    return getattr(metadata, "generation_id", None), getattr(metadata, "member_id", None)
