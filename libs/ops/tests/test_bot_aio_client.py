"""A bot on an event loop plays as the threaded one does (one seed per hand, one draw and one
discard per turn naming the hand and turn), follows its watch when the server ends it, and its
router follows a table to the instance a ``grpc.aio`` error names."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from test_bot_client import view as turn_view

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as ev
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.aio import AioTableRouter, AsyncBot
from rummy_ops.bots.strategy import BotBrain
from rummy_rules.cards import parse_card
from rummy_rules.deck import Shoe
from rummy_table.contract import OWNER_METADATA_KEY

SHOE = Shoe(decks=2, printed_jokers=2)
HOME, OWNER = "10.0.0.1:1", "10.0.0.2:1"
HAND = "2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD 4C"


def wire(text: str) -> cards_pb2.Card:
    card = parse_card(text)
    return cards_pb2.Card(index=SHOE.card_to_index(card), face=card.face)


def view(phase: api.HandPhase.ValueType, turn_no: int = 1, cards: str = "") -> api.PlayerView:
    v = api.PlayerView(
        table_id="t1", hand_id="h1", phase=phase, turn_seat=0, turn_no=turn_no, my_seat=0
    )
    v.wild_cut.CopyFrom(wire("JK"))
    v.seats.extend(api.SeatView(seat=s, dealt_in=True) for s in (0, 1))
    v.my_cards.extend(wire(c) for c in cards.split())
    v.discard_pile.append(wire("KC"))
    return v


class _Stream:
    """A WatchTable call: the views given, then the end of the stream."""

    def __init__(self, views: list[api.PlayerView]) -> None:
        self._views = views

    def cancel(self) -> bool:
        return True

    async def __aiter__(self) -> AsyncIterator[api.WatchTableResponse]:
        for v in self._views:
            yield api.WatchTableResponse(view=v)


class FakeChannel:
    """A grpc.aio channel to one instance of a fake table service: every call logged as
    ``(address, method, request)``; the home instance answers table calls UNAVAILABLE naming
    the owner when ``moved``; WatchTable streams the next list of ``streams`` (empty after)."""

    def __init__(self, address: str, service: FakeService) -> None:
        self.address, self.service = address, service

    def unary_unary(self, path: str, *args: Any, **kwargs: Any) -> Any:
        method = path.rsplit("/", 1)[-1]

        async def call(request: Any, **_: Any) -> Any:
            self.service.calls.append((self.address, method, request))
            if self.service.moved and self.address == HOME:
                raise grpc.aio.AioRpcError(
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.aio.Metadata(),
                    grpc.aio.Metadata((OWNER_METADATA_KEY, OWNER)),
                    details="served elsewhere",
                )
            if method == "DrawCard":
                return api.DrawCardResponse(card=wire("8C"))
            if method == "TakeSeat":
                return api.TakeSeatResponse(seat=0)
            return api.PlayResponse()

        return call

    def unary_stream(self, path: str, *args: Any, **kwargs: Any) -> Any:
        def watch(request: Any, **_: Any) -> _Stream:
            self.service.watches += 1
            return _Stream(self.service.streams.pop(0) if self.service.streams else [])

        return watch

    stream_unary = stream_stream = unary_unary

    async def close(self) -> None:
        return None


class FakeService:
    def __init__(self, streams: list[list[api.PlayerView]] | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.streams = streams or []
        self.watches = 0
        self.moved = False

    def router(self) -> AioTableRouter:
        return AioTableRouter(HOME, channel=lambda address: FakeChannel(address, self))  # type: ignore[arg-type, return-value]

    def names(self) -> list[str]:
        return [method for _, method, _ in self.calls]


def bot(service: FakeService) -> AsyncBot:
    return AsyncBot("alice", "token", service.router(), "t1", SHOE, BotBrain(seed=5))


def test_on_its_turn_it_draws_then_discards_once_naming_the_hand_and_turn() -> None:
    service = FakeService()
    b = bot(service)
    turn = turn_view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC")
    after = turn_view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC", drawn="8C")

    async def play() -> None:
        await b._react_async(turn)
        await b._react_async(turn)
        await b._react_async(after)  # the view after the draw lists the discards
        await b._react_async(after)

    asyncio.run(play())
    assert service.names() == ["DrawCard", "DiscardCard"]
    draw, discard = (request for _, _, request in service.calls)
    assert draw.source == ev.DRAW_SOURCE_STOCK
    assert (draw.hand_id, draw.turn_no, discard.hand_id, discard.turn_no) == ("h1", 7, "h1", 7)
    assert b.stats.actions == 2 and b.stats.last_turn_ok > 0


def test_it_contributes_one_seed_per_hand_from_its_watch_and_watches_again_when_it_ends() -> None:
    seeding = view(api.HAND_PHASE_SEEDING)
    service = FakeService(streams=[[seeding, seeding], [seeding]])
    b = bot(service)

    async def play() -> None:
        assert await b.take_seat() == 0
        b.start()
        for _ in range(200):  # the first stream ends: opened again after 0.5 s
            if service.watches >= 2:
                break
            await asyncio.sleep(0.01)
        assert b.alive
        await b.stop(leave=True)
        assert not b.alive

    asyncio.run(play())
    assert service.watches >= 2
    assert service.names() == ["TakeSeat", "ContributeSeed", "LeaveTable"]


def test_its_router_follows_the_owner_an_aio_error_names() -> None:
    service = FakeService()
    service.moved = True
    router = service.router()
    reply = asyncio.run(router.call("DrawCard", api.DrawCardRequest(table_id="t1")))
    assert reply.card == wire("8C")
    assert [address for address, _, _ in service.calls] == [HOME, OWNER]
    assert router.address_for("t1") == OWNER and router.redirects == 1
