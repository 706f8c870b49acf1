"""The speed of the deadlines' clock, shared by the table and the clock services."""

from __future__ import annotations

from typing import Any

from rummy_platform.config.base import setting


def clock_speed_setting() -> Any:
    """The ``RUMMY_CLOCK_SPEED`` field, shared by the table and the clock (one definition)."""
    return setting(
        "RUMMY_CLOCK_SPEED",
        1.0,
        "deadlines (turns, seed windows, start delays) pass this many times faster; give the "
        "table and the clock the same value",
        unit="times real time",
        gt=0,
        allow_inf_nan=False,
    )
