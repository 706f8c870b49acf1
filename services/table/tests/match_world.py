"""Match tables on the test World: open one, answer the ledger's match money, and play deals with
scripted seats through the public API (not a test module)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import table_calls
from google.protobuf.message import Message
from test_table_service import table_events
from world import World

from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.topics import LEDGER_EVENTS

M = TypeVar("M", bound=Message)


def open_match_table(
    world: World,
    match: mpb.MatchOptions,
    seats: int = 3,
    commission_bps: int = 1000,
    point_value: int = 0,
) -> str:
    request = api.OpenTableRequest(
        client_request_id=world.request_id(),
        seat_count=seats,
        point_value_hundredths=point_value,
        commission_bps=commission_bps,
        match=match,
    )
    return table_calls.open_table(world.app, "op", request)


def seat_all(world: World, table_id: str, accounts: tuple[str, ...]) -> None:
    for seat, account in enumerate(accounts):
        world.sit(table_id, account, seat=seat)


def match_payloads(world: World, table_id: str) -> list[Message]:
    return [p for p in table_events(world, table_id) if type(p).__module__ == mpb.__name__]


def last(world: World, table_id: str, cls: type[M]) -> M:
    """The table's last event of type ``cls``."""
    return [p for p in table_events(world, table_id) if isinstance(p, cls)][-1]


def hold_money(world: World, table_id: str, purpose: str = "entry", game_no: int = 0) -> None:
    """The ledger holds every hold of ``purpose`` the table asked for last."""
    view = world.view(table_id, None)
    asked = [
        p
        for p in table_events(world, table_id)
        if isinstance(p, mpb.MoneyReserved) and p.purpose == purpose and p.game_no == game_no
    ]
    accounts = {s.seat: s.account_id for s in view.match.seats}
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.MatchMoneyHeld(
            match_id=view.match.match_id,
            purpose=purpose,
            game_no=game_no,
            reservations=[
                ledger_pb.Reservation(
                    seat=p.seat, account_id=accounts[p.seat], amount_hundredths=p.amount_hundredths
                )
                for p in asked
            ],
        ),
    )


def next_step(world: World, table_id: str) -> list[str]:
    """Let the start delay pass and tick once (a match start, a deal, or a deal's hand)."""
    world.now += 5_000
    return world.app.tick()


def _request(world: World, table_id: str, view: api.PlayerView) -> api.PlayRequest:
    return world.turn_request(api.PlayRequest, table_id, view)


class _Handlers:
    """A player calling the table's handlers directly (what the gRPC servicer calls)."""

    def __init__(self, world: World, account: str) -> None:
        self.world, self.account = world, account

    def Play(self, request: api.PlayRequest) -> api.PlayResponse:  # noqa: N802 - the RPC's name
        return table_calls.play(self.world.app, self.account, request)

    def DrawCard(self, request: api.DrawCardRequest) -> api.DrawCardResponse:  # noqa: N802
        return table_calls.draw(self.world.app, self.account, request)

    def DiscardCard(self, request: api.DiscardCardRequest) -> None:  # noqa: N802
        table_calls.discard(self.world.app, self.account, request)


def play_deal(
    world: World,
    table_id: str,
    plan: dict[int, str],
    client: Callable[[str], Any] | None = None,
) -> pb.HandEnded:
    """Play the current deal's hand to its end: each seat's ``plan`` is ``first`` (drops on its
    first turn: the first drop), ``middle`` (draws and discards once, then drops: the middle
    drop) or ``win`` (draws and discards until it is the last seat playing). The hand must be
    started; its money and deal are prepared here. ``client(account)``: the player's client
    (a gRPC stub; default: the handlers)."""
    connect = client or (lambda account: _Handlers(world, account))
    view = world.view(table_id, None)
    hand_id = view.hand_id
    world.prepare(table_id, hand_id)
    turns: dict[int, int] = {}
    for _ in range(200):
        if _ended(world, table_id, hand_id):
            break
        view = world.view(table_id, None)
        seat = view.turn_seat
        account = next(s.account_id for s in view.seats if s.seat == seat)
        player = connect(account)
        mine = world.view(table_id, account)
        turns[seat] = turns.get(seat, 0) + 1
        what = plan[seat]
        if what == "first" or (what == "middle" and turns[seat] == 2):
            request = _request(world, table_id, mine)
            request.command.Pack(indian_pb.Drop())
            player.Play(request)
            continue
        drawn = player.DrawCard(
            api.DrawCardRequest(
                table_id=table_id,
                hand_id=hand_id,
                turn_no=mine.turn_no,
                client_request_id=world.request_id(),
                source=pb.DRAW_SOURCE_STOCK,
            )
        )
        player.DiscardCard(
            api.DiscardCardRequest(
                table_id=table_id,
                hand_id=hand_id,
                turn_no=mine.turn_no,
                client_request_id=world.request_id(),
                card=drawn.card,
            )
        )
    found = _ended(world, table_id, hand_id)
    assert found, "the deal's hand did not end"
    return found[-1]


def _ended(world: World, table_id: str, hand_id: str) -> list[pb.HandEnded]:
    return [
        p
        for p in table_events(world, table_id)
        if isinstance(p, pb.HandEnded) and p.hand_id == hand_id
    ]
