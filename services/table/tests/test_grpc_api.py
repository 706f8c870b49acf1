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
