"""The consumer loop's rounds (rummy_platform.rounds.run_rounds): a failed round is retried after
the pause, fencing ends the loop, anything else is raised, and the consumer is always closed."""

from __future__ import annotations

import threading

import pytest

from rummy_platform.eventlog import EventLogError, WriterFenced
from rummy_platform.logging import get_logger
from rummy_platform.rounds import run_rounds

_log = get_logger(__name__)


class Rounds:
    """Rounds that raise ``failures`` in turn, then set ``stop``; records what ran."""

    def __init__(self, stop: threading.Event, *failures: BaseException) -> None:
        self.stop = stop
        self.failures = list(failures)
        self.ran = 0
        self.closed = 0

    def one(self) -> None:
        self.ran += 1
        if self.failures:
            raise self.failures.pop(0)
        self.stop.set()

    def close(self) -> None:
        self.closed += 1


def run(rounds: Rounds, retried: type[BaseException] = EventLogError) -> None:
    run_rounds(
        rounds.stop,
        rounds.one,
        close=rounds.close,
        retried=retried,
        pause_s=0.0,
        log=_log,
        failed="round failed",
        fenced="fenced",
    )


def test_a_failed_round_is_retried_until_one_succeeds_then_the_loop_closes() -> None:
    rounds = Rounds(threading.Event(), EventLogError("down"), EventLogError("still down"))
    run(rounds)
    assert (rounds.ran, rounds.closed) == (3, 1)


def test_fencing_ends_the_loop_even_though_its_class_is_retried() -> None:
    rounds = Rounds(threading.Event(), WriterFenced("another instance"))
    with pytest.raises(WriterFenced):
        run(rounds, retried=Exception)
    assert (rounds.ran, rounds.closed) == (1, 1)


def test_an_error_that_is_not_retried_is_raised_and_the_loop_still_closes() -> None:
    rounds = Rounds(threading.Event(), ValueError("a bug"))
    with pytest.raises(ValueError):
        run(rounds)
    assert (rounds.ran, rounds.closed) == (1, 1)


def test_a_loop_told_to_stop_before_it_starts_runs_no_round() -> None:
    stop = threading.Event()
    stop.set()
    rounds = Rounds(stop)
    run(rounds)
    assert (rounds.ran, rounds.closed) == (0, 1)
