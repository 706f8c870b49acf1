"""What the clock's application and its loop need from outside (implemented in
``rummy_clock.adapters``, wired by ``rummy_clock.bootstrap``): the time, the metrics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    """A source of the current UTC time."""

    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC)."""
        ...


def _ignore(*_args: object) -> None:
    return None


@dataclass(frozen=True)
class ClockMetrics:
    """Where the application reports: deadlines scheduled and fired (by kind value), the
    number pending, and the lag in seconds between a deadline's due time and its firing."""

    scheduled: Callable[[str], None] = field(default=_ignore)
    fired: Callable[[str], None] = field(default=_ignore)
    pending: Callable[[int], None] = field(default=_ignore)
    lag_seconds: Callable[[float], None] = field(default=_ignore)
