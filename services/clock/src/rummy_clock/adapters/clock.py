"""Where the clock service gets its time from, and how a speed factor shortens deadlines.

The table writes each deadline as a wall-clock timestamp inside its event (``TurnStarted``,
``SeedWindowOpened``). The clock fires a deadline when its time source says that instant has
passed. Two time sources:

- :class:`SystemClock`: the host's UTC wall clock (``datetime.now(UTC)``);
- :class:`ManualClock`: stands still until a test moves it with :meth:`ManualClock.advance`.

A *speed factor* (``RUMMY_CLOCK_SPEED``, default 1: ``ClockSettings.clock_speed``) lets end-to-end
tests and the demo run deadlines fast without changing the table's rules: the time a deadline
leaves after its event is divided by the factor, see :func:`due_time`. The published event still
carries the table's deadline.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """A source of the current UTC time."""

    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC)."""
        ...


class SystemClock:
    """The host's wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to (for tests). Thread-safe."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        """Move the clock ``seconds`` forward (must not be negative); return the new time."""
        if seconds < 0:
            raise ValueError("a clock does not move backwards")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now


def due_time(occurred_at: datetime, deadline: datetime, speed: float = 1.0) -> datetime:
    """When a deadline set by an event at ``occurred_at`` fires at ``speed``.

    ``occurred_at + (deadline - occurred_at) / speed``; exactly ``deadline`` at speed 1. A
    deadline already before its event fires at ``deadline``. Raises ValueError if ``speed`` is
    not positive.
    """
    if speed <= 0:
        raise ValueError(f"speed must be positive, got {speed}")
    if speed == 1.0 or deadline <= occurred_at:
        return deadline
    return occurred_at + (deadline - occurred_at) / speed
