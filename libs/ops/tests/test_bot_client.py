"""A bot reacts to its own view: one seed per hand in the seed window, nothing out of turn, one
play per turn naming the hand and turn, and never the pile's card straight back; its thread
lives until it is stopped (a watch the server ends is opened again, a view it fails on is
noted)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any

import grpc
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import events_pb2 as ev
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_game import variant_wires
from rummy_game.moves import moves_to_pb
from rummy_ops.bots.client import Bot
from rummy_ops.bots.strategy import BotBrain
from rummy_rules.cards import parse_card, parse_cards
from rummy_rules.commands import Command, Discard, DrawFromDiscardPile, DrawFromStock
from rummy_rules.deck import Shoe
from rummy_rules.indian import Declare, Drop
from rummy_table.contract import TableRouter
from rummy_testing.refusals import Refused

SHOE = Shoe(decks=2, printed_jokers=2)


def wire(text: str) -> cards_pb2.Card:
    card = parse_card(text)
    return cards_pb2.Card(index=SHOE.card_to_index(card), face=card.face)


class FakeTable:
    """Records the bot's calls; answers a draw with ``next_draw``."""

    def __init__(self, next_draw: str = "KS") -> None:
        self.calls: list[tuple[str, Any]] = []  # (method, its request message)
        self.next_draw = next_draw

    def __getattr__(self, name: str) -> Callable[..., Message | None]:
        def call(request: Any, metadata: object = None, timeout: object = None) -> Message | None:
            self.calls.append((name, request))
            if name == "DrawCard":
                return api.DrawCardResponse(card=wire(self.next_draw))
            if name == "Play":
                reply = api.PlayResponse()
                if request.command.Is(indian_pb.Declare.DESCRIPTOR):
                    reply.answer.Pack(indian_pb.DeclareAnswer(valid=True))
                return reply
            return None

        return call

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def bot(fake: FakeTable) -> Bot:
    b = Bot("alice", "token", TableRouter("127.0.0.1:9"), "t1", SHOE, BotBrain(seed=5))
    b._router = _Routed(fake)  # type: ignore[assignment]  # the wire is replaced, not the logic
    return b


class _Routed:
    """A router whose every call goes to ``fake``."""

    def __init__(self, fake: FakeTable) -> None:
        self._fake = fake

    def call(self, name: str, request: object, **kwargs: object) -> object:
        return getattr(self._fake, name)(request, **kwargs)


def view(
    phase: api.HandPhase.ValueType,
    *,
    turn_seat: int = 0,
    turn_no: int = 1,
    cards: str = "",
    pile: str = "2C",
    drawn: str = "",
    taken: str = "",
) -> api.PlayerView:
    """Seat 0's view; on its turn with cards, the legal moves the table lists (the Indian
    variant's: before drawing, or after drawing ``drawn``, never discarding ``taken``)."""
    v = api.PlayerView(
        table_id="t1",
        hand_id="h1",
        phase=phase,
        turn_seat=turn_seat,
        turn_no=turn_no,
        my_seat=0,
        wild_cut=wire("JK"),
        has_drawn=bool(drawn),
    )
    v.seats.extend(api.SeatView(seat=s, dealt_in=True) for s in (0, 1))
    held = parse_cards(f"{cards} {drawn}") if cards else ()
    v.my_cards.extend(wire(c.face) for c in held)
    v.discard_pile.extend(wire(c) for c in pile.split())
    if phase == api.HAND_PHASE_PLAYING and turn_seat == 0 and held:
        commands: list[Command]
        if not drawn:
            commands = [
                DrawFromStock(seat=0, turn_no=turn_no, at_ms=0),
                DrawFromDiscardPile(seat=0, turn_no=turn_no, at_ms=0),
                Drop(seat=0, turn_no=turn_no, at_ms=0),
            ]
        else:
            leaving = [c for c in held if not taken or c != parse_card(taken)]
            commands = [Discard(seat=0, turn_no=turn_no, card=c, at_ms=0) for c in leaving]
            commands += [Declare(seat=0, turn_no=turn_no, face_down=c, at_ms=0) for c in leaving]
        v.legal_moves.extend(moves_to_pb(commands, variant_wires.lookup("indian-points"), SHOE))
    return v


HAND = "2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD 4C"


def test_it_contributes_one_seed_per_hand_in_the_seed_window() -> None:
    fake = FakeTable()
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_SEEDING))
    b.on_view(view(api.HAND_PHASE_SEEDING))
    assert fake.names() == ["ContributeSeed"]
    request = fake.calls[0][1]
    assert request.hand_id == "h1" and len(request.client_seed) == 32


def test_a_seat_not_dealt_into_the_hand_sends_no_seed_and_plays_no_turn() -> None:
    fake = FakeTable()
    b = bot(fake)
    for phase in (api.HAND_PHASE_SEEDING, api.HAND_PHASE_PLAYING):
        sitting_out = view(phase, cards="")  # out of the match: seated, not dealt this deal
        sitting_out.seats[0].dealt_in = False
        b.on_view(sitting_out)
    assert fake.calls == []


def test_it_does_nothing_when_it_is_another_seats_turn() -> None:
    fake = FakeTable()
    bot(fake).on_view(view(api.HAND_PHASE_PLAYING, turn_seat=1, cards=HAND))
    assert fake.calls == []


def test_on_its_turn_it_draws_then_discards_once_naming_the_hand_and_turn() -> None:
    fake = FakeTable(next_draw="8C")
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC"))
    b.on_view(view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC"))
    assert fake.names() == ["DrawCard"]  # the discard is chosen from the view after the draw
    after = view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC", drawn="8C")
    b.on_view(after)
    b.on_view(after)
    assert fake.names() == ["DrawCard", "DiscardCard"]
    draw, discard = (request for _, request in fake.calls)
    assert draw.source == ev.DRAW_SOURCE_STOCK
    assert (draw.hand_id, draw.turn_no, discard.hand_id, discard.turn_no) == ("h1", 7, "h1", 7)
    assert draw.client_request_id != discard.client_request_id


def test_each_step_of_a_turn_after_the_draw_is_played_once() -> None:
    # A turn may hold several moves after the draw (Rummy 500: melds and lay-offs, then the
    # discard): a view of the same turn, drawn, with fewer cards held is the next step.
    fake = FakeTable(next_draw="8C")
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_PLAYING, turn_no=3, cards=HAND, pile="KC"))
    drawn = view(api.HAND_PHASE_PLAYING, turn_no=3, cards=HAND, pile="KC", drawn="8C")
    b.on_view(drawn)
    b.on_view(drawn)
    assert fake.names() == ["DrawCard", "DiscardCard"]
    melded = view(api.HAND_PHASE_PLAYING, turn_no=3, cards=HAND[9:], pile="KC", drawn="8C")
    b.on_view(melded)  # 2H 3H 4H melded: three cards fewer, the same turn: the next step
    b.on_view(melded)
    assert fake.names() == ["DrawCard", "DiscardCard", "DiscardCard"]


def test_it_declares_when_the_drawn_card_completes_a_valid_show() -> None:
    fake = FakeTable(next_draw="AD")  # AD joins JD QD KD: four melds and a loose 4C
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_PLAYING, cards=HAND, pile="8S"))
    b.on_view(view(api.HAND_PHASE_PLAYING, cards=HAND, pile="8S", drawn="AD"))
    assert fake.names() == ["DrawCard", "Play"]
    declare = indian_pb.Declare()
    assert fake.calls[1][1].command.Unpack(declare)  # the Indian variant's own command
    assert SHOE.index_to_card(declare.face_down.index) == parse_card("4C")


def test_it_takes_the_pile_card_that_completes_a_set_and_keeps_it() -> None:
    fake = FakeTable(next_draw="9H")  # the pile's top card, as the table hands it over
    hand = "2H 3H 4H 5S 6S 7S 9C 9D JD QD KD 4C 2S"
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_PLAYING, cards=hand, pile="9H"))
    b.on_view(view(api.HAND_PHASE_PLAYING, cards=hand, pile="2C", drawn="9H", taken="9H"))
    draw, discard = (request for _, request in fake.calls)
    assert draw.source == ev.DRAW_SOURCE_DISCARD_PILE
    assert SHOE.index_to_card(discard.card.index) != parse_card("9H")
    assert SHOE.index_to_card(discard.card.index) in parse_cards(hand)


class ScriptedTable(api_grpc.TableServiceServicer):
    """A real gRPC table service whose n-th WatchTable stream follows ``scripts[n]``: a list of
    views to send, or a status code to end the stream with at once; past the scripts (and after
    its views) a stream stays open until ``done``. Records every ContributeSeed. It serves only
    these two methods: the generated base answers UNIMPLEMENTED for the others (which its stub
    declares abstract, hence the narrow ignores where one is made)."""

    def __init__(self, scripts: list[list[api.PlayerView] | grpc.StatusCode]) -> None:
        self.scripts = scripts
        self.watches = 0
        self.seeds: list[str] = []
        self.done = threading.Event()

    def WatchTable(  # noqa: N802
        self, request: api.WatchTableRequest, context: grpc.ServicerContext
    ) -> Iterator[api.WatchTableResponse]:
        n, self.watches = self.watches, self.watches + 1
        script = self.scripts[n] if n < len(self.scripts) else []
        if isinstance(script, grpc.StatusCode):
            context.abort(script, "the stream was reset by the server")
            return
        for v in script:
            yield api.WatchTableResponse(view=v)
        self.done.wait(10)

    def ContributeSeed(  # noqa: N802
        self, request: api.ContributeSeedRequest, context: grpc.ServicerContext
    ) -> api.ContributeSeedResponse:
        self.seeds.append(request.hand_id)
        return api.ContributeSeedResponse()


@contextmanager
def live_bot(table: ScriptedTable) -> Iterator[Bot]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    api_grpc.add_TableServiceServicer_to_server(table, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    router = TableRouter(f"127.0.0.1:{port}", wait_s=2)
    b = Bot("alice", "token", router, "t1", SHOE, BotBrain(seed=5))
    try:
        b.start()
        yield b
    finally:
        table.done.set()
        b.stop(leave=False)
        router.close()
        server.stop(0)


def until(condition: Callable[[], object], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_watch_the_server_cancels_is_opened_again_and_the_bot_plays_on() -> None:
    scripts: list[list[api.PlayerView] | grpc.StatusCode] = [
        grpc.StatusCode.CANCELLED,
        [view(api.HAND_PHASE_SEEDING)],
    ]
    table = ScriptedTable(scripts)  # type: ignore[abstract]  # serves two methods (its docstring)
    with live_bot(table) as b:
        assert until(lambda: table.seeds == ["h1"]), (table.watches, b.stats.errors)
        assert b.alive and table.watches == 2


def test_a_view_the_bot_cannot_react_to_is_noted_and_the_next_view_is_played() -> None:
    unreadable = view(api.HAND_PHASE_PLAYING, cards=HAND)
    unreadable.my_cards[0].index = 999  # no card of this shoe
    next_hand = view(api.HAND_PHASE_SEEDING)
    next_hand.hand_id = "h2"
    table = ScriptedTable([[unreadable, next_hand]])  # type: ignore[abstract]  # (its docstring)
    with live_bot(table) as b:
        assert until(lambda: table.seeds == ["h2"]), b.stats.errors
        assert b.alive
        assert any("card index 999 is outside this shoe" in note for note in b.stats.errors)


class _SeedRefusingTable(FakeTable):
    def __init__(self, code: grpc.StatusCode) -> None:
        super().__init__()
        self.code = code

    def __getattr__(self, name: str) -> Callable[..., Message | None]:
        if name != "ContributeSeed":
            return super().__getattr__(name)

        def refuse(request: Any, metadata: object = None, timeout: object = None) -> None:
            self.calls.append((name, request))
            raise Refused(self.code, "the hand is awaiting_deal; this needs it seed_window")

        return refuse


def test_a_seed_the_closed_window_refuses_is_a_late_seed_not_an_error() -> None:
    """The seed window closing before the bot's seed (a loaded machine) leaves the hand to go on
    with no seed of this seat: a refusal counted, not a bot error; any other failure is noted."""
    late = bot(_SeedRefusingTable(grpc.StatusCode.FAILED_PRECONDITION))
    late.on_view(view(api.HAND_PHASE_SEEDING))
    assert late.stats.errors == [] and late.stats.refused == 1
    broken = bot(_SeedRefusingTable(grpc.StatusCode.PERMISSION_DENIED))
    broken.on_view(view(api.HAND_PHASE_SEEDING))
    assert len(broken.stats.errors) == 1 and broken.stats.refused == 0
