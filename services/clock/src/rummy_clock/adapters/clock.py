"""Where the clock service gets its time from (the port ``rummy_clock.application.ports.Clock``).

The clock fires a deadline when its time source says that instant has passed (the due time:
``rummy_clock.domain.speed.due_time``). Two time sources:

- :class:`SystemClock`: the host's UTC wall clock (``datetime.now(UTC)``);
- :class:`ManualClock`: stands still until a test moves it with :meth:`ManualClock.advance`.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


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
