"""Time sources and the speed factor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rummy_clock.clock import ManualClock, SystemClock, due_time, speed_from_env

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_manual_clock_moves_only_when_advanced() -> None:
    clock = ManualClock(T0)
    assert clock.now() == T0
    assert clock.advance(2.5) == T0 + timedelta(seconds=2.5)
    assert clock.now() == T0 + timedelta(seconds=2.5)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_the_system_clock_reads_utc() -> None:
    assert SystemClock().now().utcoffset() == timedelta(0)


def test_at_speed_one_a_deadline_fires_at_the_tables_timestamp() -> None:
    assert due_time(T0, T0 + timedelta(seconds=30)) == T0 + timedelta(seconds=30)


def test_at_speed_ten_a_thirty_second_turn_fires_after_three_seconds() -> None:
    assert due_time(T0, T0 + timedelta(seconds=30), 10) == T0 + timedelta(seconds=3)


def test_a_deadline_before_its_event_fires_at_the_deadline() -> None:
    assert due_time(T0, T0 - timedelta(seconds=1), 10) == T0 - timedelta(seconds=1)


@pytest.mark.parametrize("raw", ["0", "-2", "fast", "inf"])
def test_a_speed_that_is_not_a_positive_number_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="RUMMY_CLOCK_SPEED"):
        speed_from_env({"RUMMY_CLOCK_SPEED": raw})


def test_speed_defaults_to_real_time() -> None:
    assert speed_from_env({}) == 1.0
    assert speed_from_env({"RUMMY_CLOCK_SPEED": "20"}) == 20.0
