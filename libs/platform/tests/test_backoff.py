"""Backoff: delays double from the first up to the cap; one log line when a failing period starts
and one when it ends, never one per try. PollGuard: a broker that is gone or hangs makes a
consumer's poll wait instead of raising or spinning."""

from __future__ import annotations

import time
from typing import Any

import kafka.errors as kafka_errors
import pytest
from structlog.testing import capture_logs

from rummy_platform.backoff import Backoff
from rummy_platform.eventlog.kafka_poll import SETTLE_S, PollGuard


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_delays_double_from_the_first_and_stop_at_the_cap() -> None:
    backoff = Backoff("poll", first_s=0.2, cap_s=5.0)
    delays = [backoff.failed("down") for _ in range(8)]
    assert delays == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
    assert backoff.failing and backoff.failures == 8


def test_a_failing_period_is_logged_once_when_it_starts_and_once_when_it_ends() -> None:
    clock = FakeClock()
    backoff = Backoff("kafka consumer poll", clock=clock, group_id="table")
    with capture_logs() as logs:
        for _ in range(50):
            backoff.failed("connection refused")
            clock.now += 1.0
        backoff.succeeded()
        backoff.succeeded()
    assert [(line["log_level"], line["event"]) for line in logs] == [
        ("warning", "kafka consumer poll failing; backing off"),
        ("info", "kafka consumer poll recovered"),
    ]
    assert logs[0]["group_id"] == "table" and logs[0]["reason"] == "connection refused"
    assert logs[1]["failures"] == 50 and logs[1]["failing_s"] == pytest.approx(50.0)


def test_after_a_success_the_delay_starts_again_from_the_first() -> None:
    backoff = Backoff("poll", first_s=0.5, cap_s=4.0)
    for _ in range(5):
        backoff.failed("down")
    backoff.succeeded()
    assert not backoff.failing
    assert backoff.failed("down again") == 0.5


def test_a_first_delay_above_the_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="first_s"):
        Backoff("poll", first_s=10.0, cap_s=5.0)


class ScriptedConsumer:
    """Stands in for KafkaConsumer.poll only: each call plays the next step of a script
    (an exception to raise, or records)."""

    def __init__(self, *steps: BaseException | dict[Any, list[Any]]) -> None:
        self.steps = list(steps)

    def poll(self, timeout_ms: int, max_records: int | None = None) -> dict[Any, list[Any]]:
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step


def test_a_retriable_kafka_error_from_poll_is_waited_out_with_growing_delays() -> None:
    slept: list[float] = []
    guard = PollGuard("table", sleep=slept.append)
    refused = kafka_errors.KafkaConnectionError("111 ECONNREFUSED")
    consumer = ScriptedConsumer(refused, refused, refused, {"tp": ["record"]})
    with capture_logs() as logs:
        results = [guard.poll(consumer, 200) for _ in range(4)]
    assert results == [{}, {}, {}, {"tp": ["record"]}]
    assert slept == pytest.approx([0.2, 0.4, 0.8])
    assert [line["event"] for line in logs] == [
        "kafka consumer poll failing; backing off",
        "kafka consumer poll recovered",
    ]


def test_a_kafka_error_that_is_not_retriable_is_raised() -> None:
    guard = PollGuard("table", sleep=lambda _s: None)
    consumer = ScriptedConsumer(kafka_errors.IllegalStateError("KafkaConsumer is closed"))
    with pytest.raises(kafka_errors.IllegalStateError):
        guard.poll(consumer, 200)


def test_an_empty_poll_that_kept_the_thread_busy_is_followed_by_a_wait() -> None:
    # The clocks are fakes: on a loaded machine a real spin of 0.08 s of CPU can take a second of
    # wall time, under the share that makes it a spin. Each poll lasts 0.1 s, 0.08 s of it busy.
    wall, cpu = FakeClock(), FakeClock()

    class Spinning:
        def poll(self, timeout_ms: int, max_records: int | None = None) -> dict[Any, Any]:
            wall.now += timeout_ms / 1000
            cpu.now += 0.08
            return {}

    slept: list[float] = []
    guard = PollGuard("table", sleep=slept.append, clock=wall, thread_clock=cpu)
    for _ in range(3):
        assert guard.poll(Spinning(), 100) == {}
    assert slept == pytest.approx([0.2, 0.4, 0.8])


def test_an_empty_poll_that_only_waited_is_not_a_failure() -> None:
    slept: list[float] = []
    guard = PollGuard("table", sleep=slept.append)

    class Waiting:
        def poll(self, timeout_ms: int, max_records: int | None = None) -> dict[Any, Any]:
            time.sleep(timeout_ms / 1000)
            return {}

    for _ in range(3):
        assert guard.poll(Waiting(), 100) == {}
    assert slept == [] and not guard.backoff.failing


def test_quiet_empty_polls_end_a_failing_period_only_after_the_settling_time() -> None:
    clock = FakeClock()
    guard = PollGuard("table", sleep=lambda _s: None, clock=clock, thread_clock=lambda: 0.0)
    consumer = ScriptedConsumer(kafka_errors.NodeNotReadyError("1"), {}, {})
    guard.poll(consumer, 200)
    clock.now += SETTLE_S / 2
    guard.poll(consumer, 200)
    assert guard.backoff.failing
    clock.now += SETTLE_S / 2
    guard.poll(consumer, 200)
    assert not guard.backoff.failing
