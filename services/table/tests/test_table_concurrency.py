"""One instance, many tables at once: the commands of one table stay in order, other tables'
commands share the transaction in flight instead of waiting for it, reads never wait for a
write, and a failed or unconfirmed commit affects exactly its own commands (in-memory log, its
transactions held at a gate by the test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial

import pytest
import table_calls
from world import World

from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import NotFound, Unavailable
from rummy_platform.eventlog import CommitOutcomeUnknown, EventLogError, GroupCommitWriter
from rummy_platform.eventlog.memory import CommitGate
from rummy_platform.topics import TABLE_EVENTS


def until(condition: Callable[[], bool], what: str, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def queued(world: World) -> int:
    writer = world.app.writer
    assert isinstance(writer, GroupCommitWriter)
    return len(writer._queue)


def sit_request(table_id: str, request_id: str) -> api.TakeSeatRequest:
    return api.TakeSeatRequest(table_id=table_id, client_request_id=request_id)


def in_thread(call: Callable[[], object], outcome: dict[str, object], key: str) -> threading.Thread:
    def run() -> None:
        try:
            outcome[key] = call()
        except Exception as exc:
            outcome[key] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def behind_table_zero(
    world: World,
    gate: CommitGate,
    first: Callable[[], object],
    others: dict[str, Callable[[], object]],
) -> dict[str, object]:
    """Run ``first`` (its transaction held at ``gate``), then ``others`` (by table id); once all
    of those are queued in the writer, open the gate; returns each one's answer or error."""
    outcome: dict[str, object] = {}
    threads = [in_thread(first, outcome, "first")]
    assert gate.entered.wait(5)
    threads += [in_thread(call, outcome, key) for key, call in others.items()]
    until(lambda: queued(world) == len(others), "the other tables' commands to be queued")
    gate.open()
    for thread in threads:
        thread.join(5)
    return outcome


def seated_accounts(world: World, table_id: str) -> list[str]:
    return [
        r.envelope.payload.account_id
        for r in world.log.read_stream(TABLE_EVENTS, table_id)
        if isinstance(r.envelope.payload, pb.TablePlayerSeated)
    ]


def test_other_tables_commands_share_the_transaction_in_flight_instead_of_waiting_for_it() -> None:
    world = World()
    tables = [world.open_table() for _ in range(9)]
    gate = world.log.hold_commits()
    outcome = behind_table_zero(
        world,
        gate,
        lambda: world.sit(tables[0], "p0"),
        {t: partial(world.sit, t, f"p{i}") for i, t in enumerate(tables[1:], 1)},
    )

    assert gate.sizes == [1, 8]
    assert outcome["first"] == 0 and all(outcome[t] == 0 for t in tables[1:])
    assert [seated_accounts(world, t) for t in tables] == [[f"p{i}"] for i in range(9)]


def test_reads_answer_while_a_write_is_in_flight() -> None:
    world = World()
    table_id = world.open_table()
    gate = world.log.hold_commits()
    outcome: dict[str, object] = {}
    writing = in_thread(lambda: world.sit(table_id, "alice"), outcome, "sit")
    assert gate.entered.wait(5)

    reads: dict[str, object] = {}

    def read() -> None:
        reads["tables"] = [t.seats_taken for t in table_calls.list_tables(world.app)]
        reads["view"] = [s.account_id for s in world.view(table_id, None).seats]
        try:
            world.app.get_hand_result(None, table_id, "no-such-hand")
        except NotFound:
            reads["result"] = "not found"

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(2)
    answered = not reader.is_alive()
    gate.open()
    writing.join(5)
    reader.join(5)

    assert answered, "a read waited for the write in flight"
    assert reads == {"tables": [0], "view": [], "result": "not found"}  # the state before it
    assert outcome["sit"] == 0


def test_one_tables_commands_wait_for_their_predecessor_and_see_its_state() -> None:
    world = World()
    table_id = world.open_table(seats=8)
    gate = world.log.hold_commits()
    outcome: dict[str, object] = {}
    threads = [in_thread(lambda: world.sit(table_id, "p0"), outcome, "p0")]
    assert gate.entered.wait(5)
    threads += [
        in_thread(partial(world.sit, table_id, f"p{i}"), outcome, f"p{i}") for i in range(1, 8)
    ]
    time.sleep(0.2)
    assert queued(world) == 0  # the others wait for the table, not in the writer's queue
    gate.open()
    for thread in threads:
        thread.join(5)

    # each saw the seats taken before it (8 answers, every one a seat number)
    assert sorted(v for v in outcome.values() if isinstance(v, int)) == list(range(8))
    versions = [r.envelope.stream_version for r in world.log.read_stream(TABLE_EVENTS, table_id)]
    assert versions == list(range(1, 10))
    replayed = world.new_app().projection.tables[table_id]
    assert replayed.seats == world.app.projection.tables[table_id].seats


def test_a_failed_transaction_fails_only_its_callers_with_unavailable_and_records_nothing() -> None:
    world = World()
    tables = [world.open_table() for _ in range(5)]
    gate = world.log.hold_commits(fail={1: EventLogError("the broker refused the transaction")})
    requests = {t: sit_request(t, f"sit-{i}") for i, t in enumerate(tables)}
    outcome = behind_table_zero(
        world,
        gate,
        lambda: table_calls.take_seat(world.app, "p0", requests[tables[0]]),
        {
            t: partial(table_calls.take_seat, world.app, f"p{i}", requests[t])
            for i, t in enumerate(tables[1:], 1)
        },
    )

    assert gate.sizes == [1, 4]
    assert outcome["first"] == 0
    for i, t in enumerate(tables[1:], 1):
        assert isinstance(outcome[t], Unavailable)
        assert seated_accounts(world, t) == []
        assert world.app.projection.tables[t].seats == {}
        assert (
            table_calls.take_seat(world.app, f"p{i}", requests[t]) == 0
        )  # the retry is decided anew
        assert seated_accounts(world, t) == [f"p{i}"]


@pytest.mark.parametrize("landed", [True, False])
def test_an_unconfirmed_commit_is_resolved_from_the_log_before_the_tables_next_command(
    landed: bool,
) -> None:
    world = World()
    table_id = world.open_table()
    request = sit_request(table_id, "sit-1")
    world.log.fail_next_commit(CommitOutcomeUnknown("no answer to EndTxn"), written=landed)
    with pytest.raises(Unavailable, match="same client_request_id"):
        table_calls.take_seat(world.app, "alice", request)
    assert table_id in world.app.unsure

    assert (
        table_calls.take_seat(world.app, "alice", request) == 0
    )  # the retry: the first answer, or anew
    assert table_calls.take_seat(world.app, "bob", sit_request(table_id, "sit-2")) == 1
    assert table_id not in world.app.unsure
    assert seated_accounts(world, table_id) == ["alice", "bob"]
    versions = [r.envelope.stream_version for r in world.log.read_stream(TABLE_EVENTS, table_id)]
    assert versions == [1, 2, 3]
