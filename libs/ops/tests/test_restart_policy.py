"""``rummy up``'s restart policy (``rummy_ops.restart_policy``), with explicit times: the delay
doubles from 1 s to at most 30 s, the sixth exit within ten minutes (five restarts counted) gives
up with every exit status of the window, and ten minutes up starts afresh."""

from __future__ import annotations

import pytest

from rummy_ops.restart_policy import GiveUp, Restart, RestartPolicy, ServiceHistory


def crash_loop(policy: RestartPolicy, exits: list[tuple[float, int]]) -> list[Restart | GiveUp]:
    """The decisions for a service started at 0 that exits at each (time, status) of ``exits``
    and is restarted when each decision says (never later than its next exit)."""
    history = ServiceHistory(started_at=0.0)
    decisions: list[Restart | GiveUp] = []
    for at, code in exits:
        decision = policy.on_exit(history, exited_at=at, code=code)
        decisions.append(decision)
        if isinstance(decision, GiveUp):
            break
        history = policy.restarted(decision.history, at=at + decision.delay_s)
    return decisions


def test_the_delay_doubles_from_one_second_and_the_sixth_exit_gives_up() -> None:
    exits = [(10.0, -9), (12.0, 1), (16.0, 1), (25.0, 1), (42.0, 1), (80.0, 2)]
    decisions = crash_loop(RestartPolicy(), exits)
    restarts = decisions[:5]
    assert all(isinstance(d, Restart) for d in restarts)
    assert [d.delay_s for d in restarts if isinstance(d, Restart)] == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert [d.attempt for d in restarts if isinstance(d, Restart)] == [1, 2, 3, 4, 5]
    assert decisions[5] == GiveUp(restarts=5, window_s=600.0, exit_codes=(-9, 1, 1, 1, 1, 2))


def test_the_delay_stops_at_its_maximum() -> None:
    policy = RestartPolicy(max_restarts=10)
    exits = [(100.0 * n, 1) for n in range(1, 8)]
    delays = [d.delay_s for d in crash_loop(policy, exits) if isinstance(d, Restart)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_ten_minutes_up_resets_the_count_and_the_delay() -> None:
    policy = RestartPolicy()
    history = ServiceHistory(started_at=0.0)
    attempts = []
    for at in (10.0, 20.0, 40.0, 80.0):
        decision = policy.on_exit(history, exited_at=at, code=1)
        assert isinstance(decision, Restart)
        attempts.append(decision.attempt)
        history = policy.restarted(decision.history, at=at + decision.delay_s)
    assert attempts == [1, 2, 3, 4]
    started = history.started_at  # 88 s: four restarts counted
    late = policy.on_exit(history, exited_at=started + 600.0, code=-9)
    assert isinstance(late, Restart)
    assert (late.delay_s, late.attempt) == (1.0, 1)
    assert late.history.exits == ((started + 600.0, -9),)
    just_short = policy.on_exit(history, exited_at=started + 100.0, code=-9)
    assert isinstance(just_short, Restart) and just_short.attempt == 5


def test_restarts_older_than_the_window_are_no_longer_counted() -> None:
    policy = RestartPolicy()
    # five restarts, the first at 1 s; the service then runs 5 minutes at a time
    history = ServiceHistory(started_at=0.0)
    times = [0.0, 300.0, 330.0, 360.0, 390.0]
    for at in times:
        decision = policy.on_exit(history, exited_at=at, code=1)
        assert isinstance(decision, Restart)
        history = policy.restarted(decision.history, at=at + 1.0)
    # the first restart (at 1 s) left the window at 601 s: four counted, not given up
    later = policy.on_exit(history, exited_at=602.0, code=1)
    assert isinstance(later, Restart) and later.attempt == 5
    assert [code for _t, code in later.history.exits] == [1, 1, 1, 1, 1]
    # while within it, the same exit gives up
    assert isinstance(policy.on_exit(history, exited_at=599.0, code=1), GiveUp)


@pytest.mark.parametrize(
    "fields",
    [{"first_delay_s": 0.0}, {"first_delay_s": 5.0, "max_delay_s": 1.0}, {"max_restarts": -1}],
)
def test_a_policy_that_makes_no_sense_is_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="need"):
        RestartPolicy(**fields)  # type: ignore[arg-type]
