"""A bot reacts to its own view: one seed per hand in the seed window, nothing out of turn, one
play per turn naming the hand and turn, and never the pile's card straight back."""

from __future__ import annotations

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import events_pb2 as ev
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.client import Bot
from rummy_ops.bots.strategy import BotBrain
from rummy_platform.table_routing import TableRouter
from rummy_rules.cards import parse_card, parse_cards
from rummy_rules.deck import Shoe

SHOE = Shoe(decks=2, printed_jokers=2)


def wire(text: str) -> cards_pb2.Card:
    card = parse_card(text)
    return cards_pb2.Card(index=SHOE.card_to_index(card), face=card.face)


class FakeTable:
    """Records the bot's calls; answers a draw with ``next_draw``."""

    def __init__(self, next_draw: str = "KS") -> None:
        self.calls: list[tuple[str, object]] = []
        self.next_draw = next_draw

    def __getattr__(self, name: str):
        def call(request, metadata=None, timeout=None):
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


def view(phase: int, *, turn_seat: int = 0, turn_no: int = 1, cards: str = "", pile: str = "2C"):
    v = api.PlayerView(
        table_id="t1",
        hand_id="h1",
        phase=phase,
        turn_seat=turn_seat,
        turn_no=turn_no,
        my_seat=0,
        wild_cut=wire("JK"),
    )
    v.my_cards.extend(wire(c) for c in cards.split())
    v.discard_pile.extend(wire(c) for c in pile.split())
    return v


HAND = "2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD 4C"


def test_it_contributes_one_seed_per_hand_in_the_seed_window():
    fake = FakeTable()
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_SEEDING))
    b.on_view(view(api.HAND_PHASE_SEEDING))
    assert fake.names() == ["ContributeSeed"]
    request = fake.calls[0][1]
    assert request.hand_id == "h1" and len(request.client_seed) == 32


def test_it_does_nothing_when_it_is_another_seats_turn():
    fake = FakeTable()
    bot(fake).on_view(view(api.HAND_PHASE_PLAYING, turn_seat=1, cards=HAND))
    assert fake.calls == []


def test_on_its_turn_it_draws_then_discards_once_naming_the_hand_and_turn():
    fake = FakeTable(next_draw="8C")
    b = bot(fake)
    b.on_view(view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC"))
    b.on_view(view(api.HAND_PHASE_PLAYING, turn_no=7, cards=HAND, pile="KC"))
    assert fake.names() == ["DrawCard", "DiscardCard"]
    draw, discard = (request for _, request in fake.calls)
    assert draw.source == ev.DRAW_SOURCE_STOCK
    assert (draw.hand_id, draw.turn_no, discard.hand_id, discard.turn_no) == ("h1", 7, "h1", 7)
    assert draw.client_request_id != discard.client_request_id


def test_it_declares_when_the_drawn_card_completes_a_valid_show():
    fake = FakeTable(next_draw="AD")  # AD joins JD QD KD: four melds and a loose 4C
    bot(fake).on_view(view(api.HAND_PHASE_PLAYING, cards=HAND, pile="8S"))
    assert fake.names() == ["DrawCard", "Play"]
    declare = indian_pb.Declare()
    assert fake.calls[1][1].command.Unpack(declare)  # the Indian variant's own command
    assert SHOE.index_to_card(declare.face_down.index) == parse_card("4C")


def test_it_takes_the_pile_card_that_completes_a_set_and_keeps_it():
    fake = FakeTable(next_draw="9H")  # the pile's top card, as the table hands it over
    hand = "2H 3H 4H 5S 6S 7S 9C 9D JD QD KD 4C 2S"
    bot(fake).on_view(view(api.HAND_PHASE_PLAYING, cards=hand, pile="9H"))
    draw, discard = (request for _, request in fake.calls)
    assert draw.source == ev.DRAW_SOURCE_DISCARD_PILE
    assert SHOE.index_to_card(discard.card.index) != parse_card("9H")
    assert SHOE.index_to_card(discard.card.index) in parse_cards(hand)
