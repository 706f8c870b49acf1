"""The capacity benchmark's pure parts (bench/open_loop.py): think times are exponential and
capped, an action's watch lag runs from its sending to the last watcher's view of it, and the
capacity is the largest step that meets every limit, a step whose driver slipped counting as
unmeasured."""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from open_loop import (  # noqa: E402  (bench/ is no package)
    Limits,
    TableWatch,
    capacity_tables,
    capped_mean,
    think_time,
    verdict,
)


def test_think_times_are_capped_and_average_the_capped_exponential_s_mean() -> None:
    rng = random.Random(5)
    draws = [think_time(rng, 5.0, 10.0) for _ in range(20_000)]
    assert all(0.0 <= d <= 10.0 for d in draws)
    assert statistics.fmean(draws) == pytest.approx(capped_mean(5.0, 10.0), rel=0.03)
    assert capped_mean(5.0, 10.0) == pytest.approx(5.0 * (1 - 0.1353352832), rel=1e-6)


def test_no_think_time_without_a_mean_and_no_negative_cap() -> None:
    assert think_time(random.Random(1), 0.0, 10.0) == 0.0
    with pytest.raises(ValueError):
        think_time(random.Random(1), 5.0, -1.0)


def test_the_watch_lag_runs_from_the_sending_to_the_last_watcher_s_later_view() -> None:
    watch = TableWatch()
    for seat in range(4):
        watch.join(seat)
        watch.seen(seat, 10, 1.0)
    change = watch.acted(10, sent_at=2.0)
    watch.seen(0, 11, 2.05)
    watch.seen(1, 11, 2.02)
    watch.seen(2, 11, 2.04)
    watch.answered(change, 2.06)
    assert watch.lags == []  # seat 3 has not seen it yet
    watch.seen(3, 11, 2.10)
    [(answered, lag, after_answer)] = watch.lags
    assert answered == 2.06
    assert lag == pytest.approx(0.10)
    assert after_answer == pytest.approx(0.04)


def test_views_before_the_answer_give_a_negative_lag_after_it() -> None:
    watch = TableWatch()
    for seat in range(2):
        watch.join(seat)
    change = watch.acted(3, sent_at=1.0)
    watch.seen(0, 4, 1.01)
    watch.seen(1, 5, 1.02)  # a later version shows the action too
    watch.answered(change, 1.03)
    [(_, lag, after_answer)] = watch.lags
    assert lag == pytest.approx(0.02) and after_answer == pytest.approx(-0.01)


def test_a_view_already_later_than_the_action_s_counts_and_a_refused_action_nothing() -> None:
    watch = TableWatch()
    watch.join("a")
    watch.join("b")
    watch.seen("b", 8, 0.5)  # b is ahead of the actor's view (7)
    change = watch.acted(7, sent_at=1.0)
    watch.seen("a", 8, 1.2)
    watch.answered(change, 1.1)
    [(_, lag, _)] = watch.lags
    assert lag == pytest.approx(0.2)
    refused = watch.acted(8, sent_at=2.0)
    watch.abandoned(refused)
    watch.seen("a", 9, 2.5)
    watch.seen("b", 9, 2.5)
    assert len(watch.lags) == 1


def test_a_watcher_leaving_no_longer_holds_an_action_back() -> None:
    watch = TableWatch()
    watch.join("a")
    watch.join("b")
    change = watch.acted(1, sent_at=0.0)
    watch.seen("a", 2, 0.3)
    watch.answered(change, 0.2)
    watch.leave("b")
    [(_, lag, _)] = watch.lags
    assert lag == pytest.approx(0.3)


def _row(tables: int, **changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "tables": tables,
        "actions": 1000,
        "p99_ms": 100.0,
        "watch_p99_ms": 200.0,
        "errors": {},
        "deadlines_fired": 0,
        "driver_slip_p99_ms": 5.0,
    }
    row.update(changes)
    return row


def test_a_step_passes_only_within_every_limit() -> None:
    assert verdict(_row(50)) == "pass"
    assert verdict(_row(50, p99_ms=150.0)) == "pass"
    assert verdict(_row(50, p99_ms=150.1)) == "fail"
    assert verdict(_row(50, watch_p99_ms=251.0)) == "fail"
    assert verdict(_row(50, errors={"UNAVAILABLE": 1})) == "fail"
    assert verdict(_row(50, errors={"UNAVAILABLE": 0})) == "pass"
    assert verdict(_row(50, deadlines_fired=1)) == "fail"


def test_a_step_whose_driver_slipped_or_that_measured_nothing_is_unmeasured() -> None:
    assert verdict(_row(50, driver_slip_p99_ms=20.5, p99_ms=900.0)) == "unmeasured"
    assert verdict(_row(50, driver_slip_p99_ms=20.5)) == "unmeasured"
    assert verdict(_row(50, actions=0)) == "unmeasured"
    assert verdict(_row(50, driver_slip_p99_ms=30.0), Limits(driver_slip_p99_ms=40.0)) == "pass"


def test_the_capacity_is_the_largest_step_that_passes() -> None:
    rows = [
        _row(50),
        _row(250),
        _row(500, p99_ms=400.0),
        _row(1000, driver_slip_p99_ms=80.0),
    ]
    assert capacity_tables(rows) == 250
    assert capacity_tables([_row(50, deadlines_fired=2)]) == 0
    assert capacity_tables([]) == 0
