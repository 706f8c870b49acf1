"""Property: a clock rebuilt from its committed resume offsets has exactly the pending deadlines
the clock it replaces had, whatever happened before the crash and however the two topics'
records interleave on the re-read. (Hypothesis profiles: derandomized under CI, see
tests/support/rummy_testing.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from rummy_clock.domain.schedule import PendingDeadline, Schedule
from rummy_rules.variant import DeadlineKind

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TABLES = ("a", "b", "c")


@dataclass
class World:
    """One partition: the table log, the clock log, and the live clock's schedule."""

    live: Schedule = field(default_factory=Schedule)
    table_log: list[tuple[str, object]] = field(default_factory=list)
    clock_log: list[PendingDeadline] = field(default_factory=list)
    read_back: int = 0
    now: datetime = T0
    hand_no: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 1))
    turn_no: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    committed: tuple[int, int] = (0, 0)
    seeded: set[str] = field(default_factory=set)

    def hand(self, table: str) -> str:
        return f"{table}-h{self.hand_no[table]}"

    def deadline(self, table: str, kind: DeadlineKind, seconds: int) -> PendingDeadline:
        offset = len(self.table_log)
        turn = self.turn_no[table] if kind is DeadlineKind.TURN else 0
        at = self.now + timedelta(seconds=seconds)
        return PendingDeadline(
            table_id=table,
            hand_id=self.hand(table),
            kind=kind,
            seat=turn % 4 if kind is DeadlineKind.TURN else 0,
            turn_no=turn,
            deadline=at,
            due=at,
            cause_event_id=f"cause-{offset}",
            cause_version=offset + 1,
            event_id=f"fired-{offset}",
            partition=0,
            source_offset=offset,
        )

    def commit(self, firing: list[PendingDeadline]) -> None:
        sources, firings = self.live.resume_offsets(
            [0], {0: len(self.table_log)}, {0: self.read_back}, firing=firing
        )
        self.committed = (sources[0], firings[0])


operations = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.sampled_from(TABLES), st.integers(0, 60)),
        st.tuples(st.just("seeds"), st.sampled_from(TABLES), st.integers(0, 60)),
        st.tuples(st.just("end"), st.sampled_from(TABLES), st.just(0)),
        st.tuples(st.just("advance"), st.just(""), st.integers(0, 40)),
        st.tuples(st.just("read_back"), st.just(""), st.just(0)),
        st.tuples(st.just("checkpoint"), st.just(""), st.just(0)),
    ),
    max_size=60,
)


def play(ops: list[tuple[str, str, int]]) -> World:
    world = World()
    for op, table, n in ops:
        if op == "turn":
            world.turn_no[table] += 1
            d = world.deadline(table, DeadlineKind.TURN, n)
            world.table_log.append(("deadline", d))
            world.live.schedule(d)
        elif op == "seeds" and world.turn_no[table] == 0 and table not in world.seeded:
            # As the table writes it: one seed window per hand, before its first turn.
            world.seeded.add(table)
            d = world.deadline(table, DeadlineKind.SEED_WINDOW, n)
            world.table_log.append(("deadline", d))
            world.live.schedule(d)
        elif op == "end":
            world.table_log.append(("end", (table, world.hand(table))))
            world.live.end_hand(table, world.hand(table))
            world.hand_no[table] += 1
            world.turn_no[table] = 0
            world.seeded.discard(table)
        elif op == "advance":
            world.now += timedelta(seconds=n)
            due = world.live.due(world.now)
            if due:
                world.commit(due)  # offsets and firings in one transaction
                for d in due:
                    world.live.record_fired(
                        d.cause_event_id, d.table_id, d.hand_id, 0, len(world.clock_log)
                    )
                    world.clock_log.append(d)
        elif op == "read_back" and world.read_back < len(world.clock_log):
            d = world.clock_log[world.read_back]
            world.live.record_fired(
                d.cause_event_id, d.table_id, d.hand_id, 0, world.read_back, only_known=True
            )
            world.read_back += 1
        elif op == "checkpoint":
            world.commit([])
    return world


def rebuild(world: World, table_first: list[bool]) -> Schedule:
    """A new clock reads both logs from the committed offsets, interleaved as drawn."""
    rebuilt = Schedule()
    table_at, clock_at = world.committed
    choices = iter(table_first)
    while table_at < len(world.table_log) or clock_at < len(world.clock_log):
        take_table = clock_at >= len(world.clock_log) or (
            table_at < len(world.table_log) and next(choices, True)
        )
        if take_table:
            kind, value = world.table_log[table_at]
            if kind == "deadline":
                assert isinstance(value, PendingDeadline)
                rebuilt.schedule(value)
            else:
                assert isinstance(value, tuple)
                rebuilt.end_hand(*value)
            table_at += 1
        else:
            d = world.clock_log[clock_at]
            rebuilt.record_fired(d.cause_event_id, d.table_id, d.hand_id, 0, clock_at)
            clock_at += 1
    rebuilt.forget_unmatched_firings([0])
    return rebuilt


@given(operations, st.lists(st.booleans(), max_size=200))
def test_a_clock_rebuilt_from_its_resume_offsets_has_the_same_pending_deadlines(
    ops: list[tuple[str, str, int]], table_first: list[bool]
) -> None:
    world = play(ops)
    rebuilt = rebuild(world, table_first)
    assert rebuilt.pending() == world.live.pending()
    fired = {d.cause_event_id for d in world.clock_log}
    assert not any(d.cause_event_id in fired for d in rebuilt.due(world.now + timedelta(days=1)))


@given(operations)
def test_resume_offsets_never_move_backwards_past_a_pending_deadline(
    ops: list[tuple[str, str, int]],
) -> None:
    world = play(ops)
    world.commit([])
    table_at, _ = world.committed
    assert all(d.source_offset >= table_at for d in world.live.pending())
