"""The schedule: supersede, clear on a hand's end, firing order, and resuming after a restart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rummy_clock.adapters.clock import ManualClock
from rummy_clock.domain.schedule import PendingDeadline, Schedule
from rummy_rules.variant import Deadline, DeadlineKind, clock_deadline

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def turn(
    turn_no: int,
    seconds: float,
    *,
    table: str = "t1",
    hand: str = "h1",
    seat: int = 1,
    offset: int | None = None,
    partition: int = 0,
) -> PendingDeadline:
    at = T0 + timedelta(seconds=seconds)
    cause = f"{table}/{hand}/turn-{turn_no}"
    return PendingDeadline(
        table_id=table,
        hand_id=hand,
        kind=DeadlineKind.TURN,
        seat=seat,
        turn_no=turn_no,
        deadline=at,
        due=at,
        cause_event_id=cause,
        cause_version=7,
        event_id="out-" + cause,
        partition=partition,
        source_offset=turn_no * 10 if offset is None else offset,
    )


def seed_window(
    seconds: float, *, table: str = "t1", hand: str = "h1", offset: int = 5
) -> PendingDeadline:
    at = T0 + timedelta(seconds=seconds)
    cause = f"{table}/{hand}/seeds"
    return PendingDeadline(
        table_id=table,
        hand_id=hand,
        kind=DeadlineKind.SEED_WINDOW,
        seat=0,
        turn_no=0,
        deadline=at,
        due=at,
        cause_event_id=cause,
        cause_version=7,
        event_id="out-" + cause,
        partition=0,
        source_offset=offset,
    )


def test_a_pending_deadline_waits_for_what_the_variant_asked_for() -> None:
    due_ms = round((T0 + timedelta(seconds=30)).timestamp() * 1000)
    assert turn(3, 30).target == clock_deadline(None, 3, due_ms)
    assert seed_window(30).target == clock_deadline(due_ms, 3, None)
    assert seed_window(30).target == Deadline(DeadlineKind.SEED_WINDOW, 0, due_ms)


def test_a_deadline_is_due_only_once_its_time_has_come() -> None:
    clock = ManualClock(T0)
    schedule = Schedule()
    schedule.schedule(turn(1, 30))
    assert schedule.due(clock.now()) == []
    clock.advance(29.999)
    assert schedule.due(clock.now()) == []
    clock.advance(0.001)
    assert [d.turn_no for d in schedule.due(clock.now())] == [1]


def test_a_later_turn_supersedes_the_earlier_turn_of_the_same_hand() -> None:
    schedule = Schedule()
    schedule.schedule(turn(1, 30))
    assert schedule.schedule(turn(2, 50, seat=2))
    assert [(d.turn_no, d.seat) for d in schedule.pending()] == [(2, 2)]
    # Turn 1's deadline passing now publishes nothing: it is gone.
    assert schedule.due(T0 + timedelta(seconds=40)) == []


def test_an_older_turn_arriving_after_a_newer_one_is_ignored() -> None:
    schedule = Schedule()
    schedule.schedule(turn(3, 30))
    assert not schedule.schedule(turn(2, 10))
    assert [d.turn_no for d in schedule.pending()] == [3]


def test_turns_of_other_hands_and_tables_are_not_superseded() -> None:
    schedule = Schedule()
    schedule.schedule(turn(4, 30, table="t1", hand="h1"))
    schedule.schedule(turn(1, 20, table="t1", hand="h2"))
    schedule.schedule(turn(7, 25, table="t2", hand="h9"))
    assert len(schedule) == 3


def test_the_first_turn_closes_the_seed_window_and_a_late_window_is_ignored() -> None:
    schedule = Schedule()
    schedule.schedule(seed_window(10))
    schedule.schedule(turn(1, 40))
    assert [d.kind for d in schedule.pending()] == [DeadlineKind.TURN]
    assert not schedule.schedule(seed_window(10))


def test_the_end_of_a_hand_clears_its_deadlines_and_nothing_fires_for_it() -> None:
    schedule = Schedule()
    schedule.schedule(turn(5, 30, hand="h1"))
    schedule.schedule(turn(2, 30, hand="h2"))
    assert schedule.end_hand("t1", "h1") == 1
    assert [d.hand_id for d in schedule.due(T0 + timedelta(seconds=60))] == ["h2"]


def test_due_deadlines_come_soonest_first_with_ties_in_a_fixed_order() -> None:
    schedule = Schedule()
    schedule.schedule(turn(1, 30, table="t3"))
    schedule.schedule(turn(1, 10, table="t2"))
    schedule.schedule(turn(1, 30, table="t1"))
    schedule.schedule(seed_window(20, table="t4"))
    fired = schedule.due(T0 + timedelta(seconds=60))
    assert [(d.table_id, d.kind) for d in fired] == [
        ("t2", DeadlineKind.TURN),
        ("t4", DeadlineKind.SEED_WINDOW),
        ("t1", DeadlineKind.TURN),
        ("t3", DeadlineKind.TURN),
    ]


def test_a_fired_deadline_is_not_pending_and_is_not_scheduled_again() -> None:
    schedule = Schedule()
    d = turn(1, 30)
    schedule.schedule(d)
    assert schedule.record_fired(d.cause_event_id, "t1", "h1", partition=0, fired_offset=3)
    assert schedule.due(T0 + timedelta(seconds=60)) == []
    assert not schedule.schedule(d)


def test_a_deadline_that_passed_while_the_clock_was_down_is_due_at_once_after_a_rebuild() -> None:
    # The clock was down from 10 s to 100 s; the rebuilt schedule fires turn 2 at once but not
    # turn 1, whose firing it read back from its own topic.
    clock = ManualClock(T0 + timedelta(seconds=100))
    rebuilt = Schedule()
    rebuilt.record_fired("t1/h1/turn-1", "t1", "h1", partition=0, fired_offset=0)
    rebuilt.schedule(turn(1, 5, hand="h1"))
    rebuilt.schedule(turn(2, 60, hand="h2"))
    assert [(d.hand_id, d.turn_no) for d in rebuilt.due(clock.now())] == [("h2", 2)]


def test_resume_offsets_rebuild_the_same_pending_deadlines_from_a_shorter_read() -> None:
    # Table log of partition 0 (offset: event); firings land on the clock log.
    log = [
        turn(1, 30, table="a", hand="ha", offset=0),
        turn(1, 10, table="b", hand="hb", offset=1),
        turn(1, 50, table="c", hand="hc", offset=2),
    ]
    live = Schedule()
    for d in log:
        live.schedule(d)
    # b fires first (clock offset 0): a is still pending, so the table log resumes at 0 and the
    # clock log at b's firing.
    b = live.due(T0 + timedelta(seconds=10))
    assert [d.table_id for d in b] == ["b"]
    sources, firings = live.resume_offsets([0], {0: 3}, {0: 0}, firing=b)
    assert (sources, firings) == ({0: 0}, {0: 0})
    live.record_fired(b[0].cause_event_id, "b", "hb", partition=0, fired_offset=0)
    # a fires (clock offset 1): c is pending from offset 2; b's firing is no longer needed.
    a = live.due(T0 + timedelta(seconds=30))
    sources, firings = live.resume_offsets([0], {0: 3}, {0: 1}, firing=a)
    assert (sources, firings) == ({0: 2}, {0: 1})
    live.record_fired(a[0].cause_event_id, "a", "ha", partition=0, fired_offset=1)

    # A restart reads the table log from 2 and the clock log from 1 and has c, and only c.
    rebuilt = Schedule()
    rebuilt.record_fired(a[0].cause_event_id, "a", "ha", partition=0, fired_offset=1)
    for d in log[2:]:
        rebuilt.schedule(d)
    rebuilt.forget_unmatched_firings([0])
    assert rebuilt.pending() == live.pending() == [log[2]]


def test_nothing_pending_resumes_both_logs_where_reading_stopped() -> None:
    schedule = Schedule()
    assert schedule.resume_offsets([0, 1], {0: 7, 1: 9}, {0: 2, 1: 4}) == (
        {0: 7, 1: 9},
        {0: 2, 1: 4},
    )


def test_a_live_read_back_of_a_firing_for_an_ended_hand_is_not_remembered() -> None:
    schedule = Schedule()
    d = turn(1, 30)
    schedule.schedule(d)
    schedule.record_fired(d.cause_event_id, "t1", "h1", partition=0, fired_offset=4)
    schedule.end_hand("t1", "h1")
    schedule.record_fired(
        d.cause_event_id, "t1", "h1", partition=0, fired_offset=4, only_known=True
    )
    assert schedule.resume_offsets([0], {0: 20}, {0: 5}) == ({0: 20}, {0: 5})


def test_losing_a_partition_forgets_its_deadlines() -> None:
    schedule = Schedule()
    schedule.schedule(turn(1, 30, table="t1", partition=0))
    schedule.schedule(turn(1, 30, table="t2", partition=3))
    schedule.drop_partitions([3])
    assert [d.table_id for d in schedule.pending()] == ["t1"]
