"""A match table through the gRPC API (the real ServiceHost with its auth and error interceptors,
over the in-memory event log): bad format options and bad match commands get their status codes
with nothing appended, a rejoin is accepted with Play, and a player's watch shows the match."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.protobuf.message import Message
from match_world import hold_money, next_step, play_deal
from served_table import code_of, served_table, stub
from test_table_service import table_events
from world import World

from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.auth import Role
from rummy_platform.server import ServiceHost
from rummy_testing.match_options import GIN_SCORING

POOL = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=500, rejoin=True))


@pytest.fixture
def served() -> Iterator[tuple[World, ServiceHost]]:
    with served_table(World()) as served:
        yield served


def _open(
    host: ServiceHost, match: mpb.MatchOptions, seats: int = 3, commission_bps: int = 0
) -> str:
    request = api.OpenTableRequest(
        client_request_id="open-1", seat_count=seats, match=match, commission_bps=commission_bps
    )
    return stub(host, "ops", Role.OPERATOR).OpenTable(request).table_id


def _play(host: ServiceHost, account: str, table_id: str, command: Message) -> api.PlayResponse:
    request = api.PlayRequest(table_id=table_id, client_request_id=f"{account}-{id(command)}")
    request.command.Pack(command)
    return stub(host, account, Role.PLAYER).Play(request)


@pytest.mark.parametrize(
    ("match", "kw", "says"),
    [
        (mpb.MatchOptions(pool=mpb.PoolOptions(target=150)), {}, "match.pool.target"),
        (
            mpb.MatchOptions(pool=mpb.PoolOptions(target=101)),
            {"point_value_hundredths": 10},
            "point_value_hundredths must be 0",
        ),
        (mpb.MatchOptions(deals=mpb.DealsOptions(deals=2)), {"seat_count": 7}, "seat_count"),
    ],
)
def test_bad_format_options_are_invalid_argument_and_open_nothing(
    served: tuple[World, ServiceHost], match: mpb.MatchOptions, kw: dict[str, int], says: str
) -> None:
    world, host = served
    request = api.OpenTableRequest(client_request_id="bad", seat_count=3, match=match)
    for name, value in kw.items():
        setattr(request, name, value)
    operator = stub(host, "ops", Role.OPERATOR)
    with pytest.raises(grpc.RpcError) as error:
        operator.OpenTable(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert says in (error.value.details() or "")
    assert list(operator.ListTables(api.ListTablesRequest()).tables) == []


def test_a_pool_101_match_played_through_grpc_to_its_end_with_a_rejoin(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = _open(host, POOL, commission_bps=1000)
    for seat, account in enumerate(("ann", "bob", "cat")):
        stub(host, account, Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id="sit", seat=seat)
        )
    (summary,) = stub(host, "ann", Role.PLAYER).ListTables(api.ListTablesRequest()).tables
    assert summary.match_format == "pool-101"
    players = {a: stub(host, a, Role.PLAYER) for a in ("ann", "bob", "cat")}.__getitem__
    next_step(world, table_id)
    before = len(table_events(world, table_id))
    failed = grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(lambda: _play(host, "ann", table_id, mpb.AcceptRejoin())) == failed
    assert code_of(lambda: _play(host, "ann", table_id, mpb.RequestSplit())) == (
        grpc.StatusCode.INVALID_ARGUMENT
    )
    assert code_of(lambda: _play(host, "zed", table_id, mpb.DeclineRejoin())) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    assert len(table_events(world, table_id)) == before

    hold_money(world, table_id)
    next_step(world, table_id)
    for _ in range(3):
        if world.view(table_id, None).match.phase == "between_deals":
            next_step(world, table_id)
        play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"}, players)
    answer = mpb.MatchCommandAnswer()
    assert _play(host, "bob", table_id, mpb.AcceptRejoin()).answer.Unpack(answer)
    assert answer.total == 61
    watch_request = api.WatchTableRequest(table_id=table_id)
    watch = stub(host, "cat", Role.PLAYER).WatchTable(watch_request)
    first = next(iter(watch))
    watch.cancel()
    seats = first.view.match.seats
    assert [(s.status, s.total, s.held_hundredths) for s in seats] == [
        ("in", 0, 500),
        ("in", 61, 1000),
        ("in", 60, 500),
    ]
    hold_money(world, table_id, "rejoin")
    for plan in ({0: "win", 1: "middle", 2: "first"}, {0: "win", 2: "middle"}):
        next_step(world, table_id)
        play_deal(world, table_id, plan, players)
    watch = stub(host, "ann", Role.PLAYER).WatchTable(watch_request)
    view = next(iter(watch)).view.match
    watch.cancel()
    assert view.phase == "ended" and list(view.ended.winners) == [0]
    assert [ln.amount_hundredths for ln in view.ended.settlement.lines] == [1300, -1000, -500]


@pytest.mark.parametrize(
    ("match", "held"),
    [
        (mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=13_001)), 13_001),
        (mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=3, entry_fee_hundredths=20_000)), 20_000),
        (
            mpb.MatchOptions(
                game_to=mpb.GameToOptions(
                    target=100, games=1, point_value_hundredths=131, max_game_points=100
                )
            ),
            13_100,  # max_game_points x point value
        ),
    ],
)
def test_a_configured_maximum_reservation_bounds_entry_fees_and_game_stakes(
    served: tuple[World, ServiceHost], match: mpb.MatchOptions, held: int
) -> None:
    world, host = served
    world.app.max_reservation_hundredths = 13_000
    operator = stub(host, "ops", Role.OPERATOR)
    request = api.OpenTableRequest(client_request_id="big", seat_count=2, match=match)
    with pytest.raises(grpc.RpcError) as error:
        operator.OpenTable(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"reserves {held} hundredths per seat" in (error.value.details() or "")
    assert "RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS" in (error.value.details() or "")
    assert list(operator.ListTables(api.ListTablesRequest()).tables) == []
    within = api.OpenTableRequest(
        client_request_id="fits",
        seat_count=2,
        match=mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=13_000)),
    )
    operator.OpenTable(within)  # an entry fee of exactly the most is fine


HOLLYWOOD = mpb.MatchOptions(
    hollywood=mpb.HollywoodOptions(
        target=100, point_value_hundredths=1, max_game_points=100, scoring=GIN_SCORING
    )
)


@pytest.mark.parametrize(
    ("match", "seats", "says"),
    [
        (HOLLYWOOD, 3, "seat_count must be 2..2 at a hollywood-100 table, got 3"),
        (
            mpb.MatchOptions(
                hollywood=mpb.HollywoodOptions(
                    target=100, max_game_points=100, scoring=mpb.GameScoring(box_points=100_001)
                )
            ),
            2,
            "match.hollywood.scoring.box_points must be 0..100000",
        ),
        (
            mpb.MatchOptions(
                game_to=mpb.GameToOptions(
                    target=100,
                    games=1,
                    max_game_points=100,
                    scoring=mpb.GameScoring(shutout_bonus_points=4_000_000_000),
                )
            ),
            2,
            "match.game_to.scoring.shutout_bonus_points must be 0..100000",
        ),
    ],
)
def test_bad_game_end_scoring_or_a_hollywood_of_three_is_invalid_argument_and_opens_nothing(
    served: tuple[World, ServiceHost], match: mpb.MatchOptions, seats: int, says: str
) -> None:
    _, host = served
    operator = stub(host, "ops", Role.OPERATOR)
    request = api.OpenTableRequest(client_request_id="bad", seat_count=seats, match=match)
    with pytest.raises(grpc.RpcError) as error:
        operator.OpenTable(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert says in (error.value.details() or "")
    assert list(operator.ListTables(api.ListTablesRequest()).tables) == []


def test_a_hollywood_table_opened_through_grpc_shows_its_three_columns_in_a_watch(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = _open(host, HOLLYWOOD, seats=2, commission_bps=500)
    for seat, account in enumerate(("ann", "bob")):
        stub(host, account, Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id="sit", seat=seat)
        )
    (summary,) = stub(host, "ann", Role.PLAYER).ListTables(api.ListTablesRequest()).tables
    assert summary.match_format == "hollywood-100"
    next_step(world, table_id)  # the match's one hold: 3 x 100 x 0.01
    hold_money(world, table_id, "stake", 1)
    next_step(world, table_id)
    players = {a: stub(host, a, Role.PLAYER) for a in ("ann", "bob")}.__getitem__
    play_deal(world, table_id, {0: "win", 1: "first"}, players)  # ann's 1st win: column 1
    charged = world.view(table_id, None).match.seats[0].total
    assert charged > 0
    watch = stub(host, "bob", Role.PLAYER).WatchTable(api.WatchTableRequest(table_id=table_id))
    view = next(iter(watch)).view.match
    watch.cancel()
    assert view.match_format == "hollywood-100"
    assert [(s.seat, s.held_hundredths) for s in view.seats] == [(0, 300), (1, 300)]
    assert [
        (s.number, s.running, s.HasField("winner"), [(x.points, x.boxes) for x in s.seats])
        for s in view.sheets
    ] == [
        (1, True, False, [(charged, 1), (0, 0)]),
        (2, True, False, [(0, 0), (0, 0)]),
        (3, True, False, [(0, 0), (0, 0)]),
    ]
