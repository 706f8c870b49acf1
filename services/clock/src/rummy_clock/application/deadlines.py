"""The clock's use cases: schedule deadlines from table events, fire them as clock events.

:class:`ClockApplication` wraps the pure :class:`~rummy_clock.domain.schedule.Schedule` with
what the entrypoints need: decoding table events into deadlines, building the published
envelopes (ids derived from the cause event), metrics and logs. Thread-safe: the event loop and
the gRPC servicer share it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from rummy.clock.v1 import events_pb2 as clock_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_clock.application.ports import ClockMetrics
from rummy_clock.domain.schedule import PendingDeadline, Schedule
from rummy_clock.domain.speed import due_time
from rummy_platform.envelope import Envelope, reaction_event_id, type_name
from rummy_platform.logging import get_logger, log_context
from rummy_rules.variant import DeadlineKind

_log = get_logger(__name__)

TURN_STARTED = type_name(table_events.TurnStarted)
SEED_WINDOW_OPENED = type_name(table_events.SeedWindowOpened)
HAND_ENDED = type_name(table_events.HandEnded)
HAND_ABORTED = type_name(table_events.HandAborted)
TURN_DEADLINE_PASSED = type_name(clock_events.TurnDeadlinePassed)
SEED_WINDOW_CLOSED = type_name(clock_events.SeedWindowClosed)
#: The table events :meth:`ClockApplication.on_table_event` acts on (the consumer drops the rest
#: by their event-type header, undecoded).
TABLE_EVENTS_USED = frozenset({TURN_STARTED, SEED_WINDOW_OPENED, HAND_ENDED, HAND_ABORTED})
#: The clock events :meth:`ClockApplication.on_clock_event` acts on.
CLOCK_EVENTS_USED = frozenset({TURN_DEADLINE_PASSED, SEED_WINDOW_CLOSED})


class ClockApplication:
    """Deadlines in, firings out.

    ``speed`` shortens every deadline (see :func:`rummy_clock.domain.speed.due_time`).
    """

    def __init__(
        self,
        *,
        speed: float = 1.0,
        metrics: ClockMetrics | None = None,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self._schedule = Schedule()
        self._speed = speed
        self._metrics = metrics or ClockMetrics()
        self._lock = threading.Lock()

    # -- consuming ---------------------------------------------------------------------------

    def on_table_event(self, envelope: Envelope, partition: int, offset: int) -> None:
        """Schedule a ``TurnStarted`` / ``SeedWindowOpened`` deadline; clear a hand on
        ``HandEnded`` / ``HandAborted``; ignore every other table event."""
        deadline = self._deadline_of(envelope, partition, offset)
        table_id = envelope.stream_id
        if deadline is not None:
            with self._lock:
                added = self._schedule.schedule(deadline)
                pending = len(self._schedule)
            if added:
                self._metrics.scheduled(deadline.kind.value)
                self._metrics.pending(pending)
                with log_context(table_id=table_id, hand_id=deadline.hand_id, seat=_seat(deadline)):
                    _log.debug(
                        "deadline scheduled",
                        kind=deadline.kind.value,
                        turn_no=deadline.turn_no,
                        deadline=deadline.deadline.isoformat(),
                        due=deadline.due.isoformat(),
                    )
        elif envelope.type in (HAND_ENDED, HAND_ABORTED):
            hand_id = getattr(envelope.payload, "hand_id", "")
            with self._lock:
                dropped = self._schedule.end_hand(table_id, hand_id)
                pending = len(self._schedule)
            self._metrics.pending(pending)
            if dropped:
                with log_context(table_id=table_id, hand_id=hand_id):
                    _log.info("hand over: pending deadlines dropped", dropped=dropped)

    def on_clock_event(
        self, envelope: Envelope, partition: int, offset: int, *, live: bool
    ) -> None:
        """Note a firing read back from the clock's own topic (``live``: the partition is
        caught up, so only firings this process knows about matter)."""
        if envelope.type not in (TURN_DEADLINE_PASSED, SEED_WINDOW_CLOSED):
            return
        hand_id = getattr(envelope.payload, "hand_id", "")
        with self._lock:
            self._schedule.record_fired(
                envelope.causation_id,
                envelope.stream_id,
                hand_id,
                partition,
                offset,
                only_known=live,
            )
            pending = len(self._schedule)
        self._metrics.pending(pending)

    # -- firing ------------------------------------------------------------------------------

    def due(self, now: datetime) -> list[PendingDeadline]:
        """Deadlines to fire at ``now``, soonest first."""
        with self._lock:
            return self._schedule.due(now)

    def next_due(self) -> datetime | None:
        """When the next deadline fires, or None."""
        with self._lock:
            return self._schedule.next_due()

    def publication(self, deadline: PendingDeadline) -> Envelope:
        """The clock event announcing ``deadline``: keyed by table id, correlated to the hand,
        caused by the deadline's event, under the deadline's derived event id.

        Everything in it follows from the cause, so a publication repeated after a crash is
        the same event: ``occurred_at`` is the due time (the table's deadline unless a speed
        factor applies) and ``stream_version`` is the cause's version in the table stream
        (increasing along each table's clock stream, with gaps; one turn is open at a time).
        """
        stamp = Timestamp()
        stamp.FromDatetime(deadline.deadline)
        payload: clock_events.TurnDeadlinePassed | clock_events.SeedWindowClosed
        if deadline.kind is DeadlineKind.TURN:
            payload = clock_events.TurnDeadlinePassed(
                hand_id=deadline.hand_id,
                seat=deadline.seat,
                turn_no=deadline.turn_no,
                deadline=stamp,
            )
        else:
            payload = clock_events.SeedWindowClosed(hand_id=deadline.hand_id, deadline=stamp)
        return Envelope(
            event_id=deadline.event_id,
            stream_id=deadline.table_id,
            stream_version=deadline.cause_version,
            occurred_at=deadline.due,
            payload=payload,
            correlation_id=deadline.hand_id,
            causation_id=deadline.cause_event_id,
        )

    def published(
        self, deadlines: Sequence[PendingDeadline], offsets: Sequence[int], now: datetime
    ) -> None:
        """Record that ``deadlines`` were published at ``offsets`` (same order) at ``now``."""
        with self._lock:
            for deadline, offset in zip(deadlines, offsets, strict=True):
                self._schedule.record_fired(
                    deadline.cause_event_id,
                    deadline.table_id,
                    deadline.hand_id,
                    deadline.partition,
                    offset,
                )
            pending = len(self._schedule)
        for deadline in deadlines:
            lag = max(0.0, (now - deadline.due).total_seconds())
            self._metrics.fired(deadline.kind.value)
            self._metrics.lag_seconds(lag)
            with log_context(
                table_id=deadline.table_id, hand_id=deadline.hand_id, seat=_seat(deadline)
            ):
                _log.info(
                    "deadline fired",
                    kind=deadline.kind.value,
                    turn_no=deadline.turn_no,
                    event_id=deadline.event_id,
                    lag_seconds=round(lag, 4),
                )
        self._metrics.pending(pending)

    # -- restart bookkeeping -----------------------------------------------------------------

    def resume_offsets(
        self,
        partitions: Iterable[int],
        source_positions: Mapping[int, int],
        fired_positions: Mapping[int, int],
        firing: Iterable[PendingDeadline] = (),
    ) -> tuple[dict[int, int], dict[int, int]]:
        """See :meth:`rummy_clock.domain.schedule.Schedule.resume_offsets`."""
        with self._lock:
            return self._schedule.resume_offsets(
                partitions, source_positions, fired_positions, firing=firing
            )

    def caught_up(self, partitions: Iterable[int]) -> None:
        """Both topics of ``partitions`` were read to their end after an assignment."""
        with self._lock:
            self._schedule.forget_unmatched_firings(partitions)

    def drop_partitions(self, partitions: Iterable[int]) -> None:
        """Forget the deadlines of partitions this process no longer owns."""
        with self._lock:
            self._schedule.drop_partitions(partitions)
            pending = len(self._schedule)
        self._metrics.pending(pending)

    # -- reading -----------------------------------------------------------------------------

    def pending(self, table_id: str | None = None, limit: int = 0) -> list[PendingDeadline]:
        """Pending deadlines (of one table, or all), soonest first; at most ``limit`` if > 0."""
        with self._lock:
            found = self._schedule.pending(table_id)
        return found[:limit] if limit > 0 else found

    # -- decoding ----------------------------------------------------------------------------

    def _deadline_of(
        self, envelope: Envelope, partition: int, offset: int
    ) -> PendingDeadline | None:
        payload = envelope.payload
        if isinstance(payload, table_events.TurnStarted):
            kind, seat, turn_no, out_type = (
                DeadlineKind.TURN,
                payload.seat,
                payload.turn_no,
                TURN_DEADLINE_PASSED,
            )
        elif isinstance(payload, table_events.SeedWindowOpened):
            kind, seat, turn_no, out_type = DeadlineKind.SEED_WINDOW, 0, 0, SEED_WINDOW_CLOSED
        else:
            return None
        deadline = payload.deadline.ToDatetime(tzinfo=UTC)
        return PendingDeadline(
            table_id=envelope.stream_id,
            hand_id=payload.hand_id,
            kind=kind,
            seat=seat,
            turn_no=turn_no,
            deadline=deadline,
            due=due_time(envelope.occurred_at, deadline, self._speed),
            cause_event_id=envelope.event_id,
            cause_version=envelope.stream_version,
            event_id=reaction_event_id(envelope, out_type),
            partition=partition,
            source_offset=offset,
        )


def _seat(deadline: PendingDeadline) -> int | None:
    return deadline.seat if deadline.kind is DeadlineKind.TURN else None
