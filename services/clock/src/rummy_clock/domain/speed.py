"""The speed factor: when a deadline fires.

The table writes each deadline as a wall-clock timestamp inside its event (``TurnStarted``,
``SeedWindowOpened``). A *speed factor* (``RUMMY_CLOCK_SPEED``, default 1:
``ClockSettings.clock_speed``) lets end-to-end tests and the demo run deadlines fast without
changing the table's rules: the time a deadline leaves after its event is divided by the factor,
see :func:`due_time`. The published event still carries the table's deadline.
"""

from __future__ import annotations

from datetime import datetime


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
