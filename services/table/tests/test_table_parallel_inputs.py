"""The input loop handles one poll's inputs grouped by table, the tables in parallel (issue 19):
each table's inputs stay in order, the consumed offsets never pass an input not yet committed,
and an input is recorded exactly once even when a transaction of the batch fails."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from google.protobuf.message import Message
from test_table_isolation import other_service_event, table_with_players
from world import INPUT_TOPICS, World, replay_all

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy_platform.eventlog import (
    CommitOutcomeUnknown,
    EventLogError,
    TopicPartition,
    partition_for,
)
from rummy_platform.topics import LEDGER_EVENTS
from rummy_table.application import inputs as table_inputs
from rummy_table.application.commit import TableCore
from rummy_table.application.held_table import HeldTable
from rummy_table.domain.table import Fact
from rummy_table.entrypoints.inputs import InputLoop

PARTITIONS = 2


def reservations(world: World, table_id: str, amount: int) -> ledger_pb.StakesReserved:
    table = world.app.projection.tables[table_id]
    assert table.ctx is not None
    return ledger_pb.StakesReserved(
        hand_id=table.hand_id,
        reservations=[
            ledger_pb.Reservation(seat=s, account_id=a, amount_hundredths=amount)
            for s, a in sorted(table.ctx.accounts.items())
        ],
    )


def tables_in_hands(world: World, count: int) -> list[str]:
    """``count`` tables of two players each, their hands started, both partitions used."""
    while True:
        tables = [table_with_players(world, f"t{n}a", f"t{n}b") for n in range(count)]
        if len({partition_for(t, PARTITIONS) for t in tables}) == PARTITIONS:
            break
        world = World()
    world.now += 5_000
    world.app.tick()
    return tables


def committed(world: World, group: str) -> dict[TopicPartition, int | None]:
    probe = world.log.consumer(group, INPUT_TOPICS)
    try:
        return {
            tp: probe.committed(tp) for tp in (TopicPartition(LEDGER_EVENTS, p) for p in (0, 1))
        }
    finally:
        probe.close()


def test_tables_inputs_run_in_parallel_in_order_and_offsets_wait_for_every_earlier_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    world.app.input_group = "table-parallel"
    tables = tables_in_hands(world, 6)
    slow = tables[0]
    slow_tp = TopicPartition(LEDGER_EVENTS, partition_for(slow, PARTITIONS))
    seen: dict[str, list[int]] = {t: [] for t in tables}
    slow_entered, slow_release = threading.Event(), threading.Event()
    react = table_inputs.react

    def recording(
        core: TableCore, table: HeldTable, payload: Message, hand_id: str, at: int
    ) -> list[Fact]:
        assert isinstance(payload, ledger_pb.StakesReserved)  # the only input fed here
        seen[table.table_id].append(payload.reservations[0].amount_hundredths)
        if table.table_id == slow and not slow_entered.is_set():
            slow_entered.set()
            assert slow_release.wait(10)
        return react(core, table, payload, hand_id, at)

    monkeypatch.setattr(table_inputs, "react", recording)  # the test wraps the reaction
    for table_id in tables:  # every table: its reservations, then a repeat the rules refuse
        other_service_event(world, LEDGER_EVENTS, table_id, reservations(world, table_id, 13_000))
    for table_id in tables:
        other_service_event(world, LEDGER_EVENTS, table_id, reservations(world, table_id, 13_001))
    first_slow_offset = min(
        r.offset
        for r in world.log.consumer("peek", [LEDGER_EVENTS], lambda ps: {p: 0 for p in ps}).poll()
        if r.envelope.stream_id == slow
    )
    versions = {t: world.app.projection.tables[t].version for t in tables}
    loop = InputLoop(world.log, world.app, INPUT_TOPICS, poll_timeout_s=0.05)
    loop.open()
    done = threading.Event()

    def run_once() -> None:
        loop.run_once()
        done.set()

    thread = threading.Thread(target=run_once, daemon=True)
    thread.start()
    try:
        assert slow_entered.wait(10)
        # While the slow table's first input is being handled, every other table's input
        # commits (in parallel, not behind it) ...
        deadline = time.monotonic() + 10
        while any(world.app.projection.tables[t].version == versions[t] for t in tables[1:]):
            assert time.monotonic() < deadline, "the other tables waited for the slow one"
            time.sleep(0.01)
        # ... but the slow table's partition commits no offset past its input.
        offset = committed(world, "table-parallel")[slow_tp]
        assert offset is None or offset <= first_slow_offset
    finally:
        slow_release.set()
    assert done.wait(10)
    thread.join(5)
    assert all(amounts == [13_000, 13_001] for amounts in seen.values())  # in order per table
    assert all(world.app.projection.tables[t].version > versions[t] for t in tables)
    # Every input consumed: the committed offsets are the ends of both partitions.
    ends = Counter(partition_for(t, PARTITIONS) for t in tables)
    assert committed(world, "table-parallel") == {
        TopicPartition(LEDGER_EVENTS, p): 2 * ends[p] for p in (0, 1)
    }
    loop.close()


@pytest.mark.parametrize(
    ("error", "written"),
    [(EventLogError("broker went away"), False), (CommitOutcomeUnknown("no answer"), True)],
)
def test_an_input_is_recorded_exactly_once_when_a_transaction_of_its_batch_fails(
    error: EventLogError, written: bool
) -> None:
    world = World()
    world.app.input_group = "table-once"
    tables = tables_in_hands(world, 5)
    inputs: dict[str, str] = {}
    for table_id in tables:
        other_service_event(world, LEDGER_EVENTS, table_id, reservations(world, table_id, 13_000))
    for record in world.log.consumer("peek", [LEDGER_EVENTS], lambda ps: {p: 0 for p in ps}).poll():
        inputs[record.envelope.stream_id] = record.envelope.event_id
    loop = InputLoop(world.log, world.app, INPUT_TOPICS, poll_timeout_s=0.05)
    world.log.fail_next_commit(error, written=written)
    with pytest.raises(EventLogError):
        loop.run_once()  # one table's transaction failed: the round is rewound
    for _ in range(3):
        loop.run_once()  # delivered again: handled, or dropped as already recorded
    recorded = Counter(e.causation_id for e in replay_all(world.log) if e.causation_id)
    facts = {recorded[inputs[t]] for t in tables}
    assert len(facts) == 1 and facts != {0}  # every table recorded its input once, the same
    ends = Counter(partition_for(t, PARTITIONS) for t in tables)
    assert committed(world, "table-once") == {
        TopicPartition(LEDGER_EVENTS, p): ends[p] or None for p in (0, 1)
    }
    loop.close()
