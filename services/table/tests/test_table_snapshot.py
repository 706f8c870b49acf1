"""Snapshots: a snapshot taken at any point of a partition, plus the tail after it, folds to
exactly the state the whole partition folds to; a snapshot that cannot be used is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypedDict

import pytest
import table_calls
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_table_service import first_drop
from world import SERVER_SEED, World

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import ServiceError
from rummy_platform.eventlog import Record, partition_for
from rummy_platform.topics import (
    CLOCK_EVENTS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
)
from rummy_table.adapters import snapshot
from rummy_table.application.answers import ANSWER_WINDOW
from rummy_table.application.held_table import RESULT_WINDOW
from rummy_table.application.projection import Projection
from rummy_table.entrypoints.views import player_view
from rummy_testing.profiles import examples

PARTITIONS = 2  # World's topics
_PREPARING = (api.HAND_PHASE_RESERVING, api.HAND_PHASE_SEEDING, api.HAND_PHASE_DEALING)


class _Where(TypedDict):
    """The fields every turn's request carries (the hand, the turn, the request id)."""

    table_id: str
    hand_id: str
    turn_no: int
    client_request_id: str


def table_records(world: World) -> list[Record]:
    """Every record of the table stream, partition by partition, in offset order."""
    consumer = world.log.consumer(
        f"snap-{id(world)}", [TABLE_EVENTS], lambda ps: {p: 0 for p in ps}
    )
    records = consumer.poll(max_records=1_000_000)
    consumer.close()
    return sorted(records, key=lambda r: (r.partition, r.offset))


def fold(records: list[Record]) -> Projection:
    projection = Projection()
    for r in records:
        projection.apply(r.envelope, r.partition, r.offset)
    return projection


def settle(world: World, table_id: str, ended: pb.HandEnded) -> None:
    world.feed(
        FAIRNESS_EVENTS,
        table_id,
        fairness_pb.SeedRevealed(hand_id=ended.hand_id, server_seed=SERVER_SEED),
    )
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.HandSettled(hand_id=ended.hand_id, journal_transaction_id=f"tx-{ended.hand_id}"),
    )


def act(world: World, data: st.DataObject, table_id: str) -> None:  # noqa: C901 - one per move
    """One random move at ``table_id``, through the service's handlers (so the rules' decide and
    apply): a seat taken or left, a hand started or prepared, a draw, discard, drop or timeout,
    a settlement, the table closed. A move the rules or the table refuse appends nothing."""
    table = world.app.projection.tables[table_id]
    view = world.view(table_id, None)
    rid = world.request_id()
    try:
        if table.closed:
            return
        if not table.hand_running:
            move = data.draw(st.sampled_from(["start"] * 8 + ["sit", "sit", "leave", "close"]))
            if move == "start":
                world.now += 5_000
                world.app.tick()
            elif move == "sit":
                world.sit(table_id, f"p{data.draw(st.integers(0, 5))}")
            elif move == "leave" and view.seats:
                account = data.draw(st.sampled_from([s.account_id for s in view.seats]))
                table_calls.leave_table(
                    world.app,
                    account,
                    api.LeaveTableRequest(table_id=table_id, client_request_id=rid),
                )
            elif move == "close":
                table_calls.close_table(
                    world.app, "op", api.CloseTableRequest(table_id=table_id, client_request_id=rid)
                )
            for hand_id, ended in list(table.results.items()):
                if hand_id not in table.settled and data.draw(st.booleans()):
                    settle(world, table_id, ended)
            return
        if view.phase in _PREPARING:
            world.prepare(table_id, view.hand_id)
            return
        account = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
        mine = world.view(table_id, account)
        move = data.draw(
            st.sampled_from(["draw", "draw", "discard", "discard", "drop", "timeout", "leave"])
        )
        where: _Where = {
            "table_id": table_id,
            "hand_id": mine.hand_id,
            "turn_no": mine.turn_no,
            "client_request_id": rid,
        }
        if move == "draw":
            source = data.draw(st.sampled_from([pb.DRAW_SOURCE_STOCK, pb.DRAW_SOURCE_DISCARD_PILE]))
            table_calls.draw(world.app, account, api.DrawCardRequest(**where, source=source))
        elif move == "discard":
            card = data.draw(st.sampled_from(list(mine.my_cards)))
            table_calls.discard(world.app, account, api.DiscardCardRequest(**where, card=card))
        elif move == "drop":
            table_calls.drop(world.app, account, api.DropRequest(**where))
        elif move == "timeout":
            deadline = clock_pb.TurnDeadlinePassed(hand_id=mine.hand_id, turn_no=mine.turn_no)
            world.feed(CLOCK_EVENTS, table_id, deadline)
        else:
            table_calls.leave_table(
                world.app, account, api.LeaveTableRequest(table_id=table_id, client_request_id=rid)
            )
    except ServiceError:
        pass  # refused: nothing appended


def random_history(world: World, data: st.DataObject) -> None:
    tables = []
    for _ in range(data.draw(st.integers(1, 3), label="tables")):
        table_id = world.open_table(seats=data.draw(st.sampled_from([4, 6])))
        for i in range(data.draw(st.integers(2, 4), label="players")):
            world.sit(table_id, f"p{i}")
        tables.append(table_id)
    for _ in range(data.draw(st.integers(0, 80), label="moves")):
        act(world, data, data.draw(st.sampled_from(tables)))


def assert_same(loaded: Projection, full: Projection) -> None:
    assert sorted(loaded.tables) == sorted(full.tables)
    for table_id, want in full.tables.items():
        got = loaded.tables[table_id]
        assert snapshot.encode_table(got) == snapshot.encode_table(want)
        assert (got.hand, got.ctx, got.started) == (want.hand, want.ctx, want.started)
        assert got.hand_started == want.hand_started
        accounts = {s.account_id for s in got.hand.seats} if got.hand is not None else set()
        for who in [*sorted(accounts | {i.account_id for i in got.seats.values()}), None]:
            assert player_view(got, who) == player_view(want, who)
    assert loaded.requests == full.requests
    assert loaded.folded == full.folded


@settings(
    max_examples=examples(ci=60, dev=15),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_snapshot_at_any_point_plus_the_tail_folds_to_exactly_the_full_fold(
    data: st.DataObject,
) -> None:
    world = World()
    random_history(world, data)
    records = table_records(world)
    kinds = {type(r.envelope.payload).__name__ for r in records}
    for kind in ("HandEnded", "CardDiscarded", "TableClosed", "HandSettled", "TurnTimedOut"):
        event(f"{kind} in the history: {kind in kinds}")
    full = fold(records)
    # the live projection and a full replay agree (what the snapshot is held to)
    for table_id, table in full.tables.items():
        live = world.app.projection.tables[table_id]
        assert snapshot.encode_table(live) == snapshot.encode_table(table)
    cuts = {
        p: data.draw(st.integers(0, sum(r.partition == p for r in records)), label=f"cut {p}")
        for p in range(PARTITIONS)
    }
    before = fold([r for r in records if r.offset < cuts[r.partition]])
    snapshots: dict[int, snapshot.PartitionSnapshot] = {}
    for p in range(PARTITIONS):
        taken = snapshot.take(before, TABLE_EVENTS, p, lambda t: partition_for(t, PARTITIONS))
        assert taken is not None
        snapshots[p] = snapshot.decode(taken.data, TABLE_EVENTS, p)
    loaded = Projection()
    tail = [r for r in records if r.offset >= snapshots[r.partition].tail_from]
    snapshot.load(loaded, snapshots, tail)
    assert_same(loaded, full)


def test_the_answer_window_keeps_the_last_answers_and_their_digests_only() -> None:
    world = World()
    table_id = world.open_table(seats=6)
    for i in range(ANSWER_WINDOW + 10):
        account = f"p{i % 2}"
        world.sit(table_id, account)
        table_calls.leave_table(
            world.app,
            account,
            api.LeaveTableRequest(table_id=table_id, client_request_id=f"leave-{i}"),
        )
    table = world.app.projection.tables[table_id]
    assert len(table.answers.payloads) == ANSWER_WINDOW
    assert "p0/leave-0" not in table.answers and "p0/leave-0" not in world.app.projection.requests
    last = f"p{(ANSWER_WINDOW + 9) % 2}/leave-{ANSWER_WINDOW + 9}"
    assert last in table.answers and last in world.app.projection.requests
    # a retry within the window gets the first answer and appends nothing
    count = len(table_records(world))
    table_calls.leave_table(
        world.app,
        last.split("/")[0],
        api.LeaveTableRequest(table_id=table_id, client_request_id=last.split("/")[1]),
    )
    assert len(table_records(world)) == count


def test_only_the_last_results_stay_in_memory_and_an_older_one_is_read_from_the_log() -> None:
    world = World()
    table_id = world.open_table()
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    ended = []
    for _ in range(RESULT_WINDOW + 2):
        hand_id = world.start_hand(table_id)
        world.prepare(table_id, hand_id)
        first_drop(world, table_id, hand_id)
        result = world.app.get_hand_result(None, table_id, hand_id)
        settle(world, table_id, result)
        ended.append(result)
    table = world.app.projection.tables[table_id]
    assert list(table.results) == [e.hand_id for e in ended[-RESULT_WINDOW:]]
    oldest = ended[0]
    assert oldest.hand_id not in table.results
    assert world.app.get_hand_result(None, table_id, oldest.hand_id) == oldest
    assert world.app.get_hand_result(None, "", oldest.hand_id) == oldest
    bundle = json.loads(world.app.get_hand_proof(None, table_id, oldest.hand_id))
    assert bundle["hand_id"] == oldest.hand_id and bundle["server_seed_hex"] == SERVER_SEED.hex()


def test_a_closed_table_keeps_a_stub_and_still_answers_for_its_hands() -> None:
    world = World()
    table_id, hand_id, account, view = world.playing("alice", "bob")
    table_calls.close_table(
        world.app, "op", api.CloseTableRequest(table_id=table_id, client_request_id="c")
    )
    table_calls.drop(
        world.app,
        account,
        api.DropRequest(
            table_id=table_id, hand_id=hand_id, turn_no=view.turn_no, client_request_id="d"
        ),
    )
    table = world.app.projection.tables[table_id]
    assert table.closed and table.hand is None and table.results == {}
    ended = world.app.get_hand_result(None, table_id, hand_id)
    assert ended.hand_id == hand_id and ended.winner_seat != view.turn_seat


def test_a_snapshot_of_shape_3_which_listed_the_hands_played_loads_the_same_tables() -> None:
    world = World()
    table_id = world.open_table()
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    for _ in range(3):
        hand_id = world.start_hand(table_id)
        world.prepare(table_id, hand_id)
        first_drop(world, table_id, hand_id)
    settle(world, table_id, world.app.get_hand_result(None, table_id, hand_id))
    p = partition_for(table_id, PARTITIONS)
    taken = snapshot.take(
        world.app.projection, TABLE_EVENTS, p, lambda t: partition_for(t, PARTITIONS)
    )
    assert taken is not None
    table = world.app.projection.tables[table_id]
    document = json.loads(taken.data)
    (entry,) = document["tables"]
    # shape 3: [hand id, HandStarted offset] pairs, and the ids revealed and settled
    entry["hands"] = [[h, table.hands[h]] for h in table.hands]
    entry["revealed"], entry["settled"] = sorted(table.revealed), sorted(table.settled)
    assert len(entry["hands"]) == 3 and len(entry["settled"]) == 1
    older = json.dumps({**document, "shape": 3}).encode()
    (loaded, _covered), *_ = snapshot.decode(older, TABLE_EVENTS, p).tables
    assert snapshot.encode_table(loaded) == snapshot.encode_table(table)
    assert world.app.get_hand_result(None, table_id, hand_id).hand_id == hand_id


@pytest.mark.parametrize(
    ("mangle", "error"),
    [
        (lambda d: {**d, "shape": snapshot.SHAPE_VERSION + 1}, snapshot.SnapshotShapeError),
        (lambda d: {**d, "shape": 0}, snapshot.SnapshotShapeError),
        (lambda d: {**d, "partition": d["partition"] + 1}, snapshot.SnapshotError),
        (lambda d: {**d, "format": "something-else"}, snapshot.SnapshotError),
        (
            lambda d: {**d, "tables": [{**d["tables"][0], "hand": {"type": "Nope"}}]},
            snapshot.SnapshotError,
        ),
        (
            lambda d: {**d, "tables": [{**d["tables"][0], "opened": "not base64!"}]},
            snapshot.SnapshotError,
        ),
        (lambda d: {**d, "tables": [{"table_id": "x"}]}, snapshot.SnapshotError),
        (lambda d: [d], snapshot.SnapshotError),
    ],
)
def test_a_snapshot_of_another_shape_or_that_does_not_decode_is_refused(
    mangle: Callable[[dict[str, Any]], object], error: type[Exception]
) -> None:
    world = World()
    table_id = world.open_table()
    world.sit(table_id, "alice")
    p = partition_for(table_id, PARTITIONS)
    taken = snapshot.take(
        world.app.projection, TABLE_EVENTS, p, lambda t: partition_for(t, PARTITIONS)
    )
    assert taken is not None and taken.tables == 1
    assert snapshot.decode(taken.data, TABLE_EVENTS, p).tables[0][0].table_id == table_id
    with pytest.raises(error):
        snapshot.decode(json.dumps(mangle(json.loads(taken.data))).encode(), TABLE_EVENTS, p)


def test_bytes_that_are_not_json_are_not_a_snapshot() -> None:
    with pytest.raises(snapshot.SnapshotError, match="not JSON"):
        snapshot.decode(b"\xff\x00", TABLE_EVENTS, 0)


def _uncached(projection: Projection, p: int) -> bytes:
    """The snapshot of partition ``p`` as the document is defined (every table encoded now)."""
    folded = projection.folded.get(p, -1) + 1
    ids = sorted(t for t in projection.tables if partition_for(t, PARTITIONS) == p)
    document = {
        "format": snapshot.FORMAT,
        "shape": snapshot.SHAPE_VERSION,
        "topic": TABLE_EVENTS,
        "partition": p,
        "tail_from": folded,
        "tables": [{**snapshot.encode_table(projection.tables[t]), "covered": folded} for t in ids],
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_snapshot_encodes_again_only_the_tables_changed_and_writes_the_same_bytes() -> None:
    world = World()
    played = world.open_table()
    p = partition_for(played, PARTITIONS)
    tables = [played]
    while sum(partition_for(t, PARTITIONS) == p for t in tables) < 4:
        tables.append(world.open_table())
    for table_id in tables:
        world.sit(table_id, "alice")
    projection = world.app.projection
    cache = snapshot.EncodedTables()

    def take() -> bytes:
        taken = snapshot.take(
            projection, TABLE_EVENTS, p, lambda t: partition_for(t, PARTITIONS), cache=cache
        )
        assert taken is not None
        return taken.data

    assert take() == _uncached(projection, p)
    kept = {t: e[2] for t, e in cache.of(p).items()}
    world.sit(played, "bob")
    hand_id = world.start_hand(played)
    world.prepare(played, hand_id)
    assert take() == _uncached(projection, p)
    # the idle tables' encodings were reused, the played one's made again
    for table_id, (_table, _version, halves) in cache.of(p).items():
        assert (halves is kept[table_id]) == (table_id != played)
    # a table rebuilt (another object) is encoded again; a table dropped leaves the cache
    gone = next(t for t in cache.of(p) if t != played)
    projection.drop([gone])
    projection.rebuild(played, [r for r in table_records(world) if r.envelope.stream_id == played])
    kept = {t: e[2] for t, e in cache.of(p).items()}
    assert take() == _uncached(projection, p)
    assert gone not in cache.of(p) and len(cache.of(p)) == 3
    assert cache.of(p)[played][2] is not kept[played]
    cache.keep([1 - p])
    assert cache.of(p) == {}
