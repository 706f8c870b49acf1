"""The clock's schedule: pending deadlines, what fired, and where a restart must resume.

Pure (no I/O, no clock): time arrives as arguments. A deadline is keyed by
``(table_id, hand_id, kind, turn_no)`` (``turn_no`` is 0 for a seed window).

- A turn deadline supersedes every earlier turn deadline of the same table and hand, and the
  hand's seed-window deadline (the window closed before the deal). A turn deadline older than
  one already seen for the hand is ignored.
- The end of a hand (``HandEnded`` / ``HandAborted``) clears all of it: nothing is published for
  a hand already over.
- :meth:`Schedule.due` lists what fires at a given instant, in firing order.

Every deadline remembers where its event lies in the log (``partition``, ``source_offset``) and
every firing where it was published (``fired_offset``), so :meth:`Schedule.resume_offsets` can
say from where to re-read both topics after a restart and get the same pending deadlines back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from rummy_rules.variant import Deadline, DeadlineKind

HandKey = tuple[str, str]  # (table_id, hand_id)


@dataclass(frozen=True, slots=True)
class PendingDeadline:
    """One deadline to fire: a variant's :class:`rummy_rules.variant.Deadline` (what the clock
    waits for, :attr:`target`) as the clock schedules it, with where it came from in the log.

    ``deadline`` is the table's timestamp; ``due`` is when the clock fires it (the same unless a
    speed factor applies). ``cause_event_id`` is the ``TurnStarted`` / ``SeedWindowOpened`` event;
    ``event_id`` the id the firing is published under (derived from the cause, so a repeated
    publication has the same id); ``cause_version`` the cause's version in its table stream.
    ``seat`` and ``turn_no`` are 0 for a seed window.
    """

    table_id: str
    hand_id: str
    kind: DeadlineKind
    seat: int
    turn_no: int
    deadline: datetime
    due: datetime
    cause_event_id: str
    cause_version: int
    event_id: str
    partition: int
    source_offset: int

    @property
    def target(self) -> Deadline:
        """What is waited for, in the rules library's terms (``due_ms``: the table's
        ``deadline`` in ms since the Unix epoch)."""
        return Deadline(self.kind, self.turn_no, round(self.deadline.timestamp() * 1000))

    @property
    def key(self) -> tuple[str, str, DeadlineKind, int]:
        return (self.table_id, self.hand_id, self.kind, self.turn_no)

    @property
    def hand(self) -> HandKey:
        return (self.table_id, self.hand_id)


@dataclass(frozen=True, slots=True)
class _Fired:
    """A firing seen (published by this process, or read back from the clock's topic)."""

    hand: HandKey
    partition: int
    fired_offset: int
    source_offset: int | None  # None until the cause event is seen (it may never be re-read)


class Schedule:
    """Pending deadlines and recent firings. Not thread-safe: the caller serialises access."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str, DeadlineKind, int], PendingDeadline] = {}
        self._last_turn: dict[HandKey, int] = {}
        self._fired: dict[str, _Fired] = {}  # by cause event id

    # -- inputs ----------------------------------------------------------------------------

    def schedule(self, deadline: PendingDeadline) -> bool:
        """Add ``deadline`` unless it already fired, is stale, or is already pending.

        A turn deadline supersedes the earlier ones of its hand even when it fired itself
        (re-read after a restart). Returns True if it was added.
        """
        fired = self._fired.get(deadline.cause_event_id)
        if fired is not None and fired.source_offset is None:
            self._fired[deadline.cause_event_id] = _Fired(
                fired.hand, fired.partition, fired.fired_offset, deadline.source_offset
            )
        if deadline.kind is DeadlineKind.TURN:
            if deadline.turn_no < self._last_turn.get(deadline.hand, 0):
                return False
            self._last_turn[deadline.hand] = deadline.turn_no
            for key, other in list(self._pending.items()):
                if other.hand == deadline.hand and (
                    other.kind is DeadlineKind.SEED_WINDOW or other.turn_no < deadline.turn_no
                ):
                    del self._pending[key]
        elif self._last_turn.get(deadline.hand, 0) > 0:
            return False  # the deal already happened: the window is long closed
        if fired is not None or deadline.key in self._pending:
            return False
        self._pending[deadline.key] = deadline
        return True

    def end_hand(self, table_id: str, hand_id: str) -> int:
        """Forget everything of the hand (it ended or was aborted); return how many pending
        deadlines were dropped."""
        hand = (table_id, hand_id)
        dropped = [key for key, d in self._pending.items() if d.hand == hand]
        for key in dropped:
            del self._pending[key]
        self._last_turn.pop(hand, None)
        for cause in [c for c, f in self._fired.items() if f.hand == hand]:
            del self._fired[cause]
        return len(dropped)

    def record_fired(
        self,
        cause_event_id: str,
        table_id: str,
        hand_id: str,
        partition: int,
        fired_offset: int,
        *,
        only_known: bool = False,
    ) -> bool:
        """Note that the deadline caused by ``cause_event_id`` was published at
        ``fired_offset`` of ``partition``; it is removed from the pending ones. Idempotent.
        With ``only_known`` a firing of neither a pending deadline nor a recorded firing is
        ignored (a live consumer reading back its own publications, perhaps of a hand that
        ended since). Returns True if a pending deadline was removed."""
        if (
            only_known
            and cause_event_id not in self._fired
            and not any(d.cause_event_id == cause_event_id for d in self._pending.values())
        ):
            return False
        removed = None
        for key, d in self._pending.items():
            if d.cause_event_id == cause_event_id:
                removed = key
                break
        source = self._pending.pop(removed).source_offset if removed is not None else None
        known = self._fired.get(cause_event_id)
        if known is not None:
            source = known.source_offset if source is None else source
            fired_offset = min(fired_offset, known.fired_offset)
        self._fired[cause_event_id] = _Fired((table_id, hand_id), partition, fired_offset, source)
        return removed is not None

    def forget_unmatched_firings(self, partitions: Iterable[int]) -> None:
        """Drop firings of ``partitions`` whose cause was not re-read: once both topics are
        read to their end, no such cause can arrive again, so they protect nothing."""
        owned = set(partitions)
        for cause in [
            c for c, f in self._fired.items() if f.partition in owned and f.source_offset is None
        ]:
            del self._fired[cause]

    def drop_partitions(self, partitions: Iterable[int]) -> None:
        """Forget every deadline and firing of ``partitions`` (no longer owned)."""
        gone = set(partitions)
        for key in [k for k, d in self._pending.items() if d.partition in gone]:
            del self._pending[key]
        for cause in [c for c, f in self._fired.items() if f.partition in gone]:
            del self._fired[cause]
        # _last_turn is keyed by hand only; stale entries just make old turns ignorable.

    # -- queries ---------------------------------------------------------------------------

    def due(self, now: datetime) -> list[PendingDeadline]:
        """Pending deadlines whose ``due`` is at or before ``now``, soonest first (ties by
        table, hand, kind, turn). They stay pending until :meth:`record_fired`."""
        return sorted((d for d in self._pending.values() if d.due <= now), key=_firing_order)

    def pending(self, table_id: str | None = None) -> list[PendingDeadline]:
        """Pending deadlines (of one table, or all), soonest first."""
        return sorted(
            (d for d in self._pending.values() if table_id is None or d.table_id == table_id),
            key=_firing_order,
        )

    def next_due(self) -> datetime | None:
        """The earliest ``due`` of a pending deadline, or None."""
        return min((d.due for d in self._pending.values()), default=None)

    def __len__(self) -> int:
        return len(self._pending)

    def resume_offsets(
        self,
        partitions: Iterable[int],
        source_positions: Mapping[int, int],
        fired_positions: Mapping[int, int],
        *,
        firing: Iterable[PendingDeadline] = (),
    ) -> tuple[dict[int, int], dict[int, int]]:
        """Where to resume reading after a restart, per partition: ``(sources, firings)``.

        ``source_positions`` / ``fired_positions`` are the next offsets to read of the table
        topic and of the clock's own topic. ``firing`` are deadlines being published together
        with these offsets (counted as fired). Re-reading the table topic from the first
        offset and the clock topic from the second rebuilds the same pending deadlines:
        the source of every pending deadline is re-read, and so is the firing of every fired
        deadline whose source is re-read. Prunes firings no longer needed for that.
        """
        leaving = {d.cause_event_id for d in firing}
        sources: dict[int, int] = {}
        firings: dict[int, int] = {}
        for p in partitions:
            source_from = min(
                (
                    d.source_offset
                    for d in self._pending.values()
                    if d.partition == p and d.cause_event_id not in leaving
                ),
                default=source_positions[p],
            )
            source_from = min(source_from, source_positions[p])
            for cause in [
                c
                for c, f in self._fired.items()
                if f.partition == p
                and f.source_offset is not None
                and f.source_offset < source_from
            ]:
                del self._fired[cause]
            fired_from = min(
                (f.fired_offset for f in self._fired.values() if f.partition == p),
                default=fired_positions[p],
            )
            sources[p] = source_from
            firings[p] = min(fired_from, fired_positions[p])
        return sources, firings


def _firing_order(d: PendingDeadline) -> tuple[datetime, str, str, str, int]:
    return (d.due, d.table_id, d.hand_id, d.kind.value, d.turn_no)
