"""An operator's CloseTable through the gRPC API (the real ServiceHost with its auth and error
interceptors, over the in-memory event log): no new hands or seats, the current hand plays out,
then every seated player is stood up, the table leaves ListTables (listed again, CLOSED, when closed
tables are asked for), and the stream says so."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
import table_calls
from served_table import code_of, served_table, stub
from test_table_service import table_events
from world import World

from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role
from rummy_platform.envelope import request_digest
from rummy_platform.errors import AlreadyExists
from rummy_platform.server import ServiceHost
from rummy_table.application.app import TableApp
from rummy_table.application.commands import ClientCommand


@pytest.fixture
def served() -> Iterator[tuple[World, ServiceHost]]:
    with served_table(World()) as served:
        yield served


def opened_with_players(
    host: ServiceHost, *players: str
) -> tuple[str, dict[str, api_grpc.TableServiceStub]]:
    operator = stub(host, "ops-1", Role.OPERATOR)
    table_id = operator.OpenTable(
        api.OpenTableRequest(client_request_id="open-1", seat_count=4, point_value_hundredths=100)
    ).table_id
    stubs = {p: stub(host, p, Role.PLAYER) for p in players}
    for p, s in stubs.items():
        s.TakeSeat(api.TakeSeatRequest(table_id=table_id, client_request_id=f"sit-{p}"))
    return table_id, stubs


def close(host: ServiceHost, table_id: str, request_id: str = "close-1") -> api.CloseTableResponse:
    return stub(host, "ops-2", Role.OPERATOR).CloseTable(
        api.CloseTableRequest(table_id=table_id, client_request_id=request_id, reason="maintenance")
    )


def test_closing_a_table_between_hands_stands_every_player_up_and_unlists_it(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, players = opened_with_players(host, "alice", "bob")
    alice = players["alice"]
    denied = api.CloseTableRequest(table_id=table_id, client_request_id="c0")
    assert code_of(lambda: alice.CloseTable(denied)) == grpc.StatusCode.PERMISSION_DENIED

    assert close(host, table_id).state == api.TABLE_STATE_CLOSED
    closing, *left, closed = table_events(world, table_id)[-4:]
    assert isinstance(closing, pb.TableClosing)
    assert (closing.operator_account_id, closing.reason) == ("ops-2", "maintenance")
    left_seats = [(p.seat, p.account_id) for p in left if isinstance(p, pb.TablePlayerLeft)]
    assert left_seats == [(0, "alice"), (1, "bob")]
    assert isinstance(closed, pb.TableClosed)
    assert alice.ListTables(api.ListTablesRequest()).tables == []
    (listed,) = alice.ListTables(api.ListTablesRequest(include_closed=True)).tables
    assert (listed.table_id, listed.state) == (table_id, api.TABLE_STATE_CLOSED)
    assert (listed.seats_taken, listed.hands_played) == (0, 0)
    view = next(iter(alice.WatchTable(api.WatchTableRequest(table_id=table_id)))).view
    assert view.table_state == api.TABLE_STATE_CLOSED and list(view.seats) == []

    sit = api.TakeSeatRequest(table_id=table_id, client_request_id="sit-again")
    assert code_of(lambda: alice.TakeSeat(sit)) == grpc.StatusCode.FAILED_PRECONDITION
    world.now += 60_000
    assert world.app.tick() == []
    # The same request again answers as the first; another one is refused; nothing appended.
    versions = len(table_events(world, table_id))
    assert close(host, table_id).state == api.TABLE_STATE_CLOSED
    assert code_of(lambda: close(host, table_id, "close-2")) == grpc.StatusCode.FAILED_PRECONDITION
    assert len(table_events(world, table_id)) == versions
    missing = api.CloseTableRequest(table_id="no-such-table", client_request_id="c3")
    operator = stub(host, "ops-2", Role.OPERATOR)
    assert code_of(lambda: operator.CloseTable(missing)) == grpc.StatusCode.NOT_FOUND
    long_reason = api.CloseTableRequest(table_id=table_id, client_request_id="c4", reason="x" * 201)
    assert code_of(lambda: operator.CloseTable(long_reason)) == grpc.StatusCode.INVALID_ARGUMENT


def test_closing_a_table_mid_hand_lets_the_hand_play_out_then_stands_the_players_up(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, players = opened_with_players(host, "alice", "bob", "carol")
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)

    assert close(host, table_id).state == api.TABLE_STATE_CLOSING
    (listed,) = players["alice"].ListTables(api.ListTablesRequest()).tables
    assert listed.state == api.TABLE_STATE_CLOSING
    dave = stub(host, "dave", Role.PLAYER)
    sit = api.TakeSeatRequest(table_id=table_id, client_request_id="sit-dave")
    assert code_of(lambda: dave.TakeSeat(sit)) == grpc.StatusCode.FAILED_PRECONDITION

    # The hand plays on: each seat on turn drops until one is left.
    for _ in range(2):
        view = world.view(table_id, None)
        assert view.table_state == api.TABLE_STATE_CLOSING
        account = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
        players[account].Drop(
            api.DropRequest(
                table_id=table_id,
                hand_id=hand_id,
                turn_no=view.turn_no,
                client_request_id=f"drop-{account}",
            )
        )
    result = (
        players["alice"]
        .GetHandResult(api.GetHandResultRequest(table_id=table_id, hand_id=hand_id))
        .result
    )
    assert len(result.settlement) == 3
    tail = table_events(world, table_id)[-5:]
    assert isinstance(tail[0], pb.HandEnded)
    left = [p.account_id for p in tail[1:4] if isinstance(p, pb.TablePlayerLeft)]
    assert left == ["alice", "bob", "carol"]
    assert isinstance(tail[4], pb.TableClosed)
    assert players["alice"].ListTables(api.ListTablesRequest()).tables == []
    world.now += 60_000
    assert world.app.tick() == []
    # A restarted service rebuilds the same closed table from the stream.
    again = world.new_app("table-writer-2")
    assert again.projection.tables[table_id].closed
    assert table_calls.list_tables(again) == []
    (listed,) = table_calls.list_tables(again, include_closed=True)
    assert (listed.state, listed.hands_played) == (api.TABLE_STATE_CLOSED, 1)


def test_a_player_leaving_the_last_hand_of_a_closing_table_is_stood_up_once(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, players = opened_with_players(host, "alice", "bob")
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    close(host, table_id)
    players["bob"].LeaveTable(api.LeaveTableRequest(table_id=table_id, client_request_id="bye"))
    events = table_events(world, table_id)
    left = [p.account_id for p in events if isinstance(p, pb.TablePlayerLeft)]
    assert sorted(left) == ["alice", "bob"]
    assert isinstance(events[-1], pb.TableClosed)
    assert world.app.projection.tables[table_id].seats == {}


def race_one_request_id(
    app: TableApp, act: Callable[[Any], Any], late: Any, early: Any
) -> dict[str, Any]:
    """``act(late)`` in a thread that stalls 0.3 s right after its request id is checked, and
    ``act(early)`` meanwhile; each outcome (the answer, or the AlreadyExists raised) by name."""
    checked, real_request = threading.Event(), app._request
    late_digest = request_digest(late)  # the late request's command, as the edge decodes it

    def slow_request(command: ClientCommand) -> tuple[str, str]:
        answer = real_request(command)
        if command.request_digest == late_digest:
            checked.set()
            time.sleep(0.3)  # the other call gets its chance to commit here
        return answer

    app._request = slow_request  # type: ignore[method-assign]  # the test stalls the id check
    outcomes: dict[str, Any] = {}

    def run(name: str, request: Any) -> None:
        try:
            outcomes[name] = act(request)
        except AlreadyExists as error:
            outcomes[name] = error

    thread = threading.Thread(target=run, args=("late", late))
    thread.start()
    assert checked.wait(5)
    run("early", early)
    thread.join(5)
    return outcomes


def test_two_racing_closes_with_one_request_id_and_different_reasons_do_not_both_answer_ok() -> (
    None
):
    # The second of two concurrent CloseTable calls with one id and another reason answered OK
    # from the first one's events (its request id was checked before the table lock was taken).
    world = World()
    table_id = world.open_table()
    late, early = (
        api.CloseTableRequest(table_id=table_id, client_request_id="c", reason=reason)
        for reason in ("late", "early")
    )
    outcomes = race_one_request_id(
        world.app, lambda r: table_calls.close_table(world.app, "ops", r), late, early
    )
    assert sorted(type(o).__name__ for o in outcomes.values()) == ["AlreadyExists", "int"]
    [closing] = [p for p in table_events(world, table_id) if isinstance(p, pb.TableClosing)]
    assert isinstance(outcomes[closing.reason], int)


def test_two_racing_seat_requests_with_one_id_and_different_seats_do_not_both_answer_ok() -> None:
    # Every player command checks its request id under the table's command lock, as CloseTable.
    world = World()
    table_id = world.open_table()
    late, early = (
        api.TakeSeatRequest(table_id=table_id, client_request_id="s", seat=seat) for seat in (1, 0)
    )
    outcomes = race_one_request_id(
        world.app, lambda r: table_calls.take_seat(world.app, "alice", r), late, early
    )
    assert sorted(type(o).__name__ for o in outcomes.values()) == ["AlreadyExists", "int"]
    [seated] = [p for p in table_events(world, table_id) if isinstance(p, pb.TablePlayerSeated)]
    assert outcomes["late" if seated.seat == 1 else "early"] == seated.seat
