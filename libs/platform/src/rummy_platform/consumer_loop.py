"""The one consumer loop of the event log, around a steppable core.

Every service that consumes the event log runs a :class:`ConsumerLoop`: the reactors of the
ledger, fairness and the dealer (:mod:`rummy_platform.reactor`), the table's inputs and the
clock. The loop is the I/O; the core is the handling:

- :class:`ConsumerLoop` joins the consumer group (the consumer decodes each record's envelope,
  drops the types nobody handles by their header, backs off while the broker is lost and reports
  its lag: :meth:`rummy_platform.eventlog.EventLog.consumer`), and each round asks the core to
  retry its parked tables, polls once, hands what came to the core, and seeks back to where the
  core says each partition must be read again. :meth:`ConsumerLoop.run` runs round after round
  on its thread (:func:`rummy_platform.rounds.run_rounds`: a failed round is logged and retried
  after a pause, a fenced writer ends the loop).
- A core (:class:`RecordCore`) is given the records: :meth:`RecordCore.step` hands each to the
  service's handler (which writes through the service's own ports: a PostgreSQL transaction, a
  Kafka transaction, the table's commit), parks a failing table
  (:class:`rummy_platform.isolation.StreamIsolation`), and returns a :class:`Step`: how many
  were handled, and, after an outage, where each partition must be read again and the error to
  raise. :meth:`RecordCore.retry_due` retries the parked tables whose delay passed. A core polls,
  seeks, sleeps and starts threads never, so a simulator drives the same core the services run,
  one record (or one batch) at a time.

:class:`EachRecord` is the core of the loops that handle a record and store its offset in one
unit (the PostgreSQL reactor); the others (the Kafka-transaction reactor, the table's inputs,
the clock) are written beside their loops.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, Unpack

import structlog

from rummy_platform.eventlog import (
    EventLog,
    EventLogError,
    GroupConsumer,
    Record,
    TopicPartition,
)
from rummy_platform.eventlog.base import ConsumerOptions
from rummy_platform.isolation import StreamIsolation
from rummy_platform.logging import get_logger
from rummy_platform.rounds import run_rounds

_log = get_logger(__name__)


@dataclass(frozen=True)
class Step:
    """What a core made of the records handed to it.

    ``handled``: how many records a handler ran for (or skipped as already consumed).
    ``rewind``: per partition, the offset to read again from (the records there and after it
    were not done and are delivered again; the core forgot any it held of them). ``error``: the
    outage (or fencing) that stopped the step, raised by the loop once it has sought back.
    """

    handled: int = 0
    rewind: Mapping[TopicPartition, int] = field(default_factory=dict)
    error: BaseException | None = None


class RecordCore(Protocol):
    """The sans-I/O core of a consumer loop (see the module docstring)."""

    #: The parked tables and the offsets that may be stored or committed.
    isolation: StreamIsolation

    def retry_due(self) -> int:
        """Retry the parked tables whose delay passed; return how many records were handled.
        Raises an outage's or a fencing's error (the record stays held)."""
        ...

    def step(self, records: Sequence[Record]) -> Step:
        """Handle ``records`` (one poll's, in the consumer's order; records of a parked table
        are held behind its failed one) and say what came of them."""
        ...


def rewind_from(isolation: StreamIsolation, pending: Iterable[Record]) -> dict[TopicPartition, int]:
    """The first offset of each partition among ``pending`` (the records not done), after
    ``isolation`` forgot what it held from there (those are delivered again)."""
    first: dict[TopicPartition, int] = {}
    for record in pending:
        tp = TopicPartition(record.topic, record.partition)
        first[tp] = min(first.get(tp, record.offset), record.offset)
    for tp, offset in first.items():
        isolation.forget_from(tp, offset)
    return first


def in_log_order(records: Iterable[Record]) -> list[Record]:
    """``records`` by topic, partition and offset."""
    return sorted(records, key=lambda r: (r.topic, r.partition, r.offset))


class EachRecord:
    """The core that handles each record and stores its offset in one unit of work.

    ``handle(record, offset to store)`` is the service's unit (the PostgreSQL reactor's
    transaction); records are taken in log order, a parked table's are held. A handler raising
    one of ``outages`` stops the step: the records from there on are read again (the ones
    before are stored). Any other error parks the record's table.
    """

    def __init__(
        self,
        isolation: StreamIsolation,
        handle: Callable[[Record, int], object],
        *,
        outages: tuple[type[BaseException], ...],
    ) -> None:
        self.isolation = isolation
        self._handle = handle
        self._outages = outages

    def retry_due(self) -> int:
        return self.isolation.retry_due(self._handle, reraise=self._outages)

    def step(self, records: Sequence[Record]) -> Step:
        records = in_log_order(records)
        handled = 0
        for done, record in enumerate(records):
            if not self.isolation.admit(record):
                continue
            tp = TopicPartition(record.topic, record.partition)
            try:
                self._handle(record, self.isolation.resume(tp, record.next_offset))
            except self._outages as exc:
                return Step(handled, rewind_from(self.isolation, records[done:]), exc)
            except Exception as exc:
                self.isolation.failed(record, exc)
                continue
            handled += 1
        return Step(handled)


class ConsumerLoop:
    """A consumer group member that feeds a :class:`RecordCore`, round after round.

    Each round (:meth:`run_once`): ``core.retry_due()``, one poll (``poll_timeout_s`` seconds,
    or what :meth:`_poll_timeout` says), :meth:`_settle` (True: what the poll returned is read
    again, the round ends), ``core.step(records)``, a seek to every offset the step says to read
    again (then its error is raised), :meth:`_after`. :meth:`run` runs rounds until stopped; a
    round raising one of ``retried`` is logged with ``failed`` and tried again after ``pause_s``
    seconds, WriterFenced ends the loop (logged with ``fenced`` when given).

    On (re)assignment the member resumes each partition from :meth:`_assigned` (by default the
    first record the core held there, see :meth:`StreamIsolation.reassigned`). ``options`` go
    to :meth:`EventLog.consumer` (types, ``on_revoked``, session and poll intervals, ...). One
    thread only.
    """

    def __init__(
        self,
        log: EventLog,
        core: RecordCore,
        *,
        group_id: str,
        topics: Sequence[str],
        poll_timeout_s: float,
        pause_s: float,
        retried: type[BaseException] | tuple[type[BaseException], ...] = EventLogError,
        failed: str,
        fenced: str | None = None,
        log_to: structlog.stdlib.BoundLogger = _log,
        **options: Unpack[ConsumerOptions],
    ) -> None:
        self._log = log
        self.core = core
        self.group_id = group_id
        self._topics = list(topics)
        self._poll_timeout_s = poll_timeout_s
        self._options = options
        self._consumer: GroupConsumer | None = None
        #: How :meth:`run` runs the rounds (given the stop event, the round and close).
        self._rounds = functools.partial(
            run_rounds,
            retried=retried,
            pause_s=pause_s,
            log=log_to,
            failed=failed,
            fenced=fenced,
            group_id=group_id,
        )

    @property
    def isolation(self) -> StreamIsolation:
        """The core's parked tables."""
        return self.core.isolation

    @property
    def consumer(self) -> GroupConsumer | None:
        """The group member while the loop is open."""
        return self._consumer

    # what a loop may change ----------------------------------------------------------------
    def _assigned(self, partitions: frozenset[TopicPartition]) -> Mapping[TopicPartition, int]:
        """Where to resume ``partitions`` after a (re)assignment (on the polling thread, inside
        the poll). Held records are read again from their first offset (a member that keeps a
        partition keeps its position)."""
        return self.core.isolation.reassigned(partitions)

    def _opened(self, consumer: GroupConsumer) -> None:
        """Called once the member is created (before its first poll)."""

    def _poll_timeout(self) -> float:
        """How long the next poll may wait (seconds)."""
        return self._poll_timeout_s

    def _settle(self, consumer: GroupConsumer) -> bool:
        """After the poll: True when what it returned is to be read again (the round ends)."""
        return False

    def _after(self, consumer: GroupConsumer) -> None:
        """After the step's records were handled."""

    # the loop ------------------------------------------------------------------------------
    def open(self) -> GroupConsumer:
        """Join the consumer group (idempotent). Called by :meth:`run` and :meth:`run_once`."""
        if self._consumer is None:
            self._consumer = self._log.consumer(
                self.group_id, self._topics, self._assigned, **self._options
            )
            self._opened(self._consumer)
        return self._consumer

    def close(self) -> None:
        """Leave the consumer group (nothing is committed)."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def run_once(self, timeout_s: float | None = None) -> int:
        """One round (see the class docstring); returns how many records were handled.

        Raises what the core's retry raises, and a step's error once its records not done are
        sought back to (to be delivered again)."""
        consumer = self.open()
        handled = self.core.retry_due()
        records = consumer.poll(self._poll_timeout() if timeout_s is None else timeout_s)
        if self._settle(consumer):
            return handled
        if records:
            step = self.core.step(records)
            for tp, offset in step.rewind.items():
                consumer.seek(tp, offset)
            if step.error is not None:
                raise step.error
            handled += step.handled
        self._after(consumer)
        return handled

    def run(self, stop: threading.Event) -> None:
        """Consume until ``stop`` is set, then leave the group (see the class docstring)."""
        self.open()
        self._rounds(stop, self.run_once, close=self.close)
