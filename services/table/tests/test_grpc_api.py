"""The gRPC API in-process (the real ServiceHost with its auth and error interceptors) over the
in-memory event log: who may call what, status codes, and what a watch shows."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry
from world import World

from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, TokenAuthority, authorized_channel
from rummy_platform.config import Settings
from rummy_platform.server import ServiceHost
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules.rules import bombay_baazi
from rummy_table import stream_codec as codec
from rummy_table.adapters import grpc as grpc_adapter

SECRET = "grpc-api-test-secret-0123456789abcdef0123"


@pytest.fixture
def served() -> Iterator[tuple[World, ServiceHost]]:
    world = World()
    settings = Settings(service="table", jwt_secret=SECRET, grpc_port=0, metrics_port=0)
    host = ServiceHost("table", settings, registry=CollectorRegistry())
    host.on_stopping(world.app.stop_watches)
    host.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.TableServicer(world.app, max_watches=4),
        grpc_adapter.SERVICE_NAME,
    )
    host.start()
    try:
        yield world, host
    finally:
        host.stop(grace_seconds=1)


def stub(host: ServiceHost, account: str, role: Role) -> api_grpc.TableServiceStub:
    token = TokenAuthority(SECRET).issue(account, role)
    return api_grpc.TableServiceStub(authorized_channel(grpc.insecure_channel(host.address), token))


def code_of(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as error:
        call()  # type: ignore[operator]
    return error.value.code()


def test_only_an_operator_opens_tables_and_only_players_take_seats(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    player, operator = stub(host, "alice", Role.PLAYER), stub(host, "op", Role.OPERATOR)
    request = api.OpenTableRequest(client_request_id="o1", seat_count=4)
    assert code_of(lambda: player.OpenTable(request)) == grpc.StatusCode.PERMISSION_DENIED
    table_id = operator.OpenTable(request).table_id
    sit = api.TakeSeatRequest(table_id=table_id, client_request_id="s1")
    assert code_of(lambda: operator.TakeSeat(sit)) == grpc.StatusCode.PERMISSION_DENIED
    assert player.TakeSeat(sit).seat == 0
    assert [t.table_id for t in player.ListTables(api.ListTablesRequest()).tables] == [table_id]


def test_a_table_opened_with_no_options_plays_the_whole_bombay_baazi_rule_set(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    operator = stub(host, "op", Role.OPERATOR)
    request = api.OpenTableRequest(
        client_request_id="o1", seat_count=6, point_value_hundredths=10, commission_bps=1000
    )
    assert not request.HasField("rule_set")
    table_id = operator.OpenTable(request).table_id
    house = bombay_baazi(6, 10, 1000)
    rules = world.app.projection.tables[table_id].rule_set
    assert rules == house
    indian = rules.indian
    assert (indian.first_drop_points, indian.middle_drop_points, indian.wrong_declare_points) == (
        20,
        40,
        80,
    )
    assert indian.points_cap is None and rules.max_loss_points == 130
    assert indian.meld_options.jokers_only_group_is_sequence
    assert indian.meld_options.strict_duplicate_faces and indian.meld_options.ace_high
    assert indian.no_discard_of_card_taken_from_pile
    assert (rules.variant, rules.max_missed_turns, rules.turn_seconds) == ("indian-points", 3, 30)
    assert (rules.seed_window_seconds, rules.hand_size, rules.min_players) == (5, 13, 2)
    assert (rules.shoe.decks, rules.shoe.printed_jokers) == (2, 2)
    # The record says every option, so replaying it never depends on what a default was.
    opened = world.log.read_stream(TABLE_EVENTS, table_id)[0].envelope.payload
    assert isinstance(opened, pb.TableOpened)
    recorded = opened.rule_set
    assert recorded == codec.rule_set_to_pb(house, 5)
    assert all(recorded.HasField(f.name) for f in recorded.DESCRIPTOR.fields if f.has_presence)
    (summary,) = operator.ListTables(api.ListTablesRequest()).tables
    assert (summary.variant, summary.turn_seconds, summary.start_delay_seconds) == (
        "indian-points",
        30,
        5,
    )
    # Its hands are dealt under the same rules.
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    world.start_hand(table_id)
    (started,) = [
        r.envelope.payload
        for r in world.log.read_stream(TABLE_EVENTS, table_id)
        if isinstance(r.envelope.payload, pb.HandStarted)
    ]
    assert codec.hand_context(started).rule_set == house


def test_a_call_without_a_token_is_unauthenticated(served: tuple[World, ServiceHost]) -> None:
    _, host = served
    bare = api_grpc.TableServiceStub(grpc.insecure_channel(host.address))
    assert (
        code_of(lambda: bare.ListTables(api.ListTablesRequest())) == grpc.StatusCode.UNAUTHENTICATED
    )


def test_a_stale_turn_is_failed_precondition_and_an_unknown_table_not_found(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = world.open_table()
    world.sit(table_id, "alice")
    world.sit(table_id, "bob")
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    view = world.view(table_id, None)
    who = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
    draw = api.DrawCardRequest(
        table_id=table_id,
        hand_id=hand_id,
        turn_no=view.turn_no + 1,
        client_request_id="d1",
        source=pb.DRAW_SOURCE_STOCK,
    )
    player = stub(host, who, Role.PLAYER)
    assert code_of(lambda: player.DrawCard(draw)) == grpc.StatusCode.FAILED_PRECONDITION
    watch = api.WatchTableRequest(table_id="nope")
    assert code_of(lambda: next(iter(player.WatchTable(watch)))) == grpc.StatusCode.NOT_FOUND


def test_a_watch_shows_only_the_callers_cards_then_follows_changes_and_ends_at_shutdown(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = world.open_table()
    world.sit(table_id, "alice")
    world.sit(table_id, "bob")
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    alice_cards = {c.index for c in world.view(table_id, "alice").my_cards}
    stream = stub(host, "bob", Role.PLAYER).WatchTable(api.WatchTableRequest(table_id=table_id))
    first = next(stream).view
    assert len(first.my_cards) == 13 and not alice_cards & {c.index for c in first.my_cards}
    world.sit(table_id, "carol")
    assert next(stream).view.stream_version == first.stream_version + 1
    host.stop(grace_seconds=5)
    assert list(stream) == []  # the stream ends cleanly at shutdown
