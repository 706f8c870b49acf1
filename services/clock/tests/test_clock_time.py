"""Time sources and the speed factor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rummy_clock.adapters.clock import ManualClock, SystemClock
from rummy_clock.config import ClockSettings
from rummy_clock.domain.speed import due_time
from rummy_platform.config import ConfigError
from rummy_testing.settings_env import use_settings_environment
from rummy_testing.token_keys import token_environment

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


CLOCK_ENV = {**token_environment(),
             "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"}  # fmt: skip


@pytest.mark.parametrize("raw", ["0", "-2", "fast", "inf", "nan"])
def test_a_speed_that_is_not_a_positive_number_is_refused(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_settings_environment(monkeypatch, {**CLOCK_ENV, "RUMMY_CLOCK_SPEED": raw})
    with pytest.raises(ConfigError, match=f"^RUMMY_CLOCK_SPEED='{raw}': "):
        ClockSettings.load()


def test_speed_defaults_to_real_time(monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings_environment(monkeypatch, CLOCK_ENV)
    assert ClockSettings.load().clock_speed == 1.0
    use_settings_environment(monkeypatch, {**CLOCK_ENV, "RUMMY_CLOCK_SPEED": "20"})
    assert ClockSettings.load().clock_speed == 20.0
