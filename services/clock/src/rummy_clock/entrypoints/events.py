"""The clock's event log (through :mod:`rummy_platform.eventlog`, the only home of the Kafka
client).

The clock cannot use :class:`rummy_platform.reactor.TransactionalReactor`: that reactor commits
an input's offset together with the outputs *that input* causes, right away, but a deadline's
output comes later, at the deadline. Committing the ``TurnStarted`` offset on receipt would lose
the pending deadline in a crash. So the clock runs the platform's consumer loop
(:class:`rummy_platform.consumer_loop.ConsumerLoop`) with a core of its own (:class:`ClockCore`,
which schedules what it reads) and publishes after each round, on the same writer:

- It joins group ``clock`` on ``table-events`` *and* its own ``clock-events`` (same partition
  count, same key: partition p of one holds the same tables as partition p of the other; the
  range assignor gives both to the same member).
- Each publication is one Kafka transaction: the firings, plus the group's offsets of both
  topics. Those offsets are not "what was read" but "where a restart must re-read from"
  (:meth:`~rummy_clock.domain.schedule.Schedule.resume_offsets`): table-events from the oldest
  source of a pending deadline, clock-events from the oldest firing whose source is re-read.
- After an assignment it reads both topics up to their end offsets before it fires anything,
  so a deadline that already fired (its firing is read back) never fires again, and one that
  passed while the clock was down fires right after.
- The writer's transactional id is stable across restarts: a restarted clock fences its
  predecessor and the broker aborts whatever that one left open.
- A table event whose handling raises parks that table alone
  (:class:`rummy_platform.isolation.StreamIsolation`): its events are held in order and retried
  after a backoff, the other tables' deadlines go on, and the table-events resume offset never
  passes a held event.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from rummy_clock.application.deadlines import CLOCK_EVENTS_USED, TABLE_EVENTS_USED, ClockApplication
from rummy_clock.application.ports import Clock
from rummy_platform.consumer_loop import ConsumerLoop, Step
from rummy_platform.eventlog import (
    EventLog,
    EventLogError,
    GroupConsumer,
    Record,
    TopicPartition,
    TransactionalWriter,
)
from rummy_platform.isolation import StreamIsolation
from rummy_platform.logging import get_logger

_log = get_logger(__name__)

CONSUMER_GROUP = "clock"

#: How long the broker may hold the clock's fetches while table events come (seconds; the
#: platform's group consumers wait 0.1 s). The clock times each deadline from its event's
#: ``occurred_at``, not from when it reads the event, so reading a TurnStarted up to 0.5 s late
#: fires nothing later (turns are seconds long); reading a turn's end late can only fire a
#: deadline the table then ignores (its turn number is past), for a player who acted in the
#: last half second. Measured (issue 19, bench/throughput.py at 1 table, ~25 actions/s: records
#: every 20-40 ms, so the member never idles): 0.1 s -> ten fetches a second, the clock at
#: 3.1-3.7% of a core, 1.3-2.0 ms of CPU per action (the other consumers: 2.6-3.9%); 0.5 s ->
#: 1.3% of a core, 1.07 ms per action (the others 2.7-2.9% in the same run); at 64 tables
#: 0.43-0.51 -> 0.25 ms per action. A deadline shorter than this wait (a seed window at clock
#: speed 10) fires up to this late (services/clock/README.md, "Time").
BATCH_WAIT_S = 0.5


class ClockCore:
    """The clock loop's core (no I/O of its own, see :mod:`rummy_platform.consumer_loop`):
    each table event the clock uses goes to :meth:`ClockApplication.on_table_event` (a table
    whose event raises is parked, ``isolation``), each firing read back to
    :meth:`ClockApplication.on_clock_event`; table events first, each partition in offset
    order. ``live()`` says whether every owned partition was read to its end since the last
    assignment (a firing read before then is a catch-up's)."""

    def __init__(
        self,
        app: ClockApplication,
        isolation: StreamIsolation,
        *,
        table_topic: str,
        live: Callable[[], bool],
    ) -> None:
        self._app = app
        self.isolation = isolation
        self._table_topic = table_topic
        self._live = live

    def retry_due(self) -> int:
        return self.isolation.retry_due(self._on_table_record)

    def step(self, records: Sequence[Record]) -> Step:
        live = self._live()
        handled = 0
        for record in sorted(records, key=lambda r: r.topic != self._table_topic):
            table = record.topic == self._table_topic
            if record.envelope.type not in (TABLE_EVENTS_USED if table else CLOCK_EVENTS_USED):
                continue  # a type the clock does not use on this topic
            if not table:
                self._app.on_clock_event(
                    record.envelope, record.partition, record.offset, live=live
                )
            elif not self.isolation.admit(record):
                continue
            else:
                try:
                    self._on_table_record(record)
                except Exception as exc:
                    self.isolation.failed(record, exc)
                    continue
            handled += 1
        return Step(handled)

    def _on_table_record(self, record: Record, _resume: int = 0) -> None:
        self._app.on_table_event(record.envelope, record.partition, record.offset)


def clock_core(
    app: ClockApplication,
    *,
    table_topic: str,
    live: Callable[[], bool],
    group_id: str = CONSUMER_GROUP,
    retry_pause_s: float = 0.5,
) -> ClockCore:
    """The clock loop's core for ``app`` (a parked table's first retry after ``retry_pause_s``
    seconds): what :class:`ClockLoop` runs, and what a simulator drives record by record."""
    return ClockCore(
        app, StreamIsolation(group_id, first_s=retry_pause_s), table_topic=table_topic, live=live
    )


class ClockLoop(ConsumerLoop):
    """Consumes table-events and clock-events, fires due deadlines, commits resume offsets.

    ``max_wait_s`` bounds one poll (seconds); ``checkpoint_s`` is how often resume offsets are
    committed when nothing fires (so a restart re-reads little). One thread only. Each round
    its :class:`ClockCore` (``core``) takes the records polled; then the loop fires what is due.

    The group member is the event log's (:meth:`EventLog.consumer`): it backs off while the
    broker is lost or hung, rejoins when stuck without partitions, and reports its lag.
    """

    def __init__(
        self,
        log: EventLog,
        app: ClockApplication,
        writer: TransactionalWriter,
        clock: Clock,
        *,
        table_topic: str,
        clock_topic: str,
        group_id: str = CONSUMER_GROUP,
        max_wait_s: float = 0.5,
        checkpoint_s: float = 5.0,
    ) -> None:
        self._app = app
        self._writer = writer
        self._clock = clock
        self._table_topic = table_topic
        self._clock_topic = clock_topic
        self._max_wait_s = max_wait_s
        self._checkpoint_s = checkpoint_s
        self._owned: set[int] = set()
        self._catching_up: dict[TopicPartition, int] | None = None
        self._newly_assigned: set[TopicPartition] = set()
        self._reread: set[TopicPartition] = set()
        self._committed: dict[TopicPartition, int] = {}
        self._last_checkpoint = time.monotonic()
        # A failed publication (EventLogError) leaves nothing visible and the deadlines still
        # pending: the next round publishes them again under the same ids. (Or the broker went
        # away under a position or offset lookup, a restart: nothing was published; the next
        # round asks again once it answers.)
        super().__init__(
            log,
            # Tables whose events raised: held and retried, the others go on.
            clock_core(
                app,
                table_topic=table_topic,
                live=lambda: self.live,
                group_id=group_id,
                retry_pause_s=max_wait_s,
            ),
            group_id=group_id,
            topics=[table_topic, clock_topic],
            poll_timeout_s=max_wait_s,
            pause_s=max_wait_s,
            retried=EventLogError,
            failed="publication failed; will retry",
            fenced="clock writer fenced by another clock; stopping",
            log_to=_log,
            on_revoked=self._revoked,
            # Per topic, only the types it uses are handled (see ClockCore.step).
            types=TABLE_EVENTS_USED | CLOCK_EVENTS_USED,
            skip_undecodable=True,  # bytes that are no envelope: nothing to schedule
            batch_wait_s=BATCH_WAIT_S,
        )

    # -- rebalance ---------------------------------------------------------------------------

    def _assigned(self, assigned: frozenset[TopicPartition]) -> Mapping[TopicPartition, int]:
        tps = set(assigned)
        self._newly_assigned |= tps
        self._owned = {tp.partition for tp in tps if tp.topic == self._table_topic}
        self._committed.clear()
        self.isolation.reset()
        self._reread |= tps  # in the loop: no blocking call in a rebalance callback
        _log.info("partitions assigned", partitions=sorted(self._owned))
        return {}  # positions are set by _reread_from_committed

    def _reread_from_committed(self, consumer: GroupConsumer) -> bool:
        """Read each partition assigned since the last round again from the group's committed
        resume offset (from the beginning without one); True if any was. kafka-python keeps the
        position of a partition a member keeps across a rebalance, but :meth:`_revoked` forgot
        its deadlines and held events: without this they would never be read again."""
        if not self._reread:
            return False
        tps, self._reread = self._reread, set()
        for tp in tps:
            offset = consumer.committed(tp)
            consumer.seek(tp, 0 if offset is None else offset)  # 0: the beginning
        return True

    def _revoked(self, revoked: frozenset[TopicPartition]) -> None:
        self._reread -= revoked
        gone = {tp.partition for tp in revoked}
        self._app.drop_partitions(gone)
        self._owned -= gone
        self._catching_up = None
        self._committed.clear()
        self.isolation.reset()

    @property
    def live(self) -> bool:
        """True once every owned partition was read to its end after the last assignment."""
        return self._catching_up is not None and not self._catching_up

    # -- a round (ConsumerLoop) ------------------------------------------------------------

    def _poll_timeout(self) -> float:
        return self._wait_seconds()

    def _settle(self, consumer: GroupConsumer) -> bool:
        # What this poll returned is read again from the committed offsets.
        return self._reread_from_committed(consumer)

    def _after(self, consumer: GroupConsumer) -> None:
        self._track_catch_up(consumer)
        if self.live:
            self._fire_due(consumer)

    def _wait_seconds(self) -> float:
        if not self.live:
            return self._max_wait_s
        next_due = self._app.next_due()
        if next_due is None:
            return self._max_wait_s
        until = (next_due - self._clock.now()).total_seconds()
        return min(self._max_wait_s, max(0.0, until))

    def _track_catch_up(self, consumer: GroupConsumer) -> None:
        if self._newly_assigned:
            ends = self._log.end_offsets(self._newly_assigned)
            self._catching_up = {**(self._catching_up or {}), **ends}
            self._newly_assigned = set()
        if not self._catching_up:
            return
        done = [tp for tp, end in self._catching_up.items() if consumer.position(tp) >= end]
        for tp in done:
            del self._catching_up[tp]
        if not self._catching_up:
            # Both topics read to their end: a firing whose cause was not re-read by now
            # never will be (see Schedule.forget_unmatched_firings).
            self._app.caught_up(self._owned)
            _log.info("caught up; firing deadlines", partitions=sorted(self._owned))

    def _positions(self, consumer: GroupConsumer) -> tuple[dict[int, int], dict[int, int]]:
        sources = {
            p: self.isolation.resume(
                TopicPartition(self._table_topic, p),
                consumer.position(TopicPartition(self._table_topic, p)),
            )
            for p in self._owned
        }
        fired = {p: consumer.position(TopicPartition(self._clock_topic, p)) for p in self._owned}
        return sources, fired

    def _fire_due(self, consumer: GroupConsumer) -> None:
        now = self._clock.now()
        due = self._app.due(now)
        if not due and time.monotonic() - self._last_checkpoint < self._checkpoint_s:
            return
        sources, fired = self._positions(consumer)
        resume_sources, resume_fired = self._app.resume_offsets(
            self._owned, sources, fired, firing=due
        )
        offsets: dict[TopicPartition, int] = {
            **{TopicPartition(self._table_topic, p): o for p, o in resume_sources.items()},
            **{TopicPartition(self._clock_topic, p): o for p, o in resume_fired.items()},
        }
        self._last_checkpoint = time.monotonic()
        if not due and offsets == self._committed:
            return
        outputs = [(self._clock_topic, self._app.publication(d)) for d in due]
        positions = self._writer.append_batch(outputs, consumed=offsets, group_id=self.group_id)
        self._committed = dict(offsets)
        if due:
            self._app.published(due, [p.offset for p in positions], self._clock.now())
