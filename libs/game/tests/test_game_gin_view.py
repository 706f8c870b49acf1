"""The gin part of a seat's view (``rummy_rules.gin.hand.view`` -> ``PlayerView.variant_view``,
packed by the gin wire as ``rummy.gin.v1.GinView``) at each phase of a hand: before a knock the
knock limit and no other hand; after the knock the knocker's melds and deadwood (its face-down
card only its own); with the result both hands and the lay-offs. A spectator and the other seat
never see a hidden card (``docs/rules/gin.md#views``)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import view_pb2 as gin_view_pb
from rummy_game.gin import GIN_WIRE
from rummy_rules.cards import Card, parse_card
from rummy_rules.commands import (
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromStock,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
)
from rummy_rules.events import HandEnded, SeatAccount
from rummy_rules.gin.arrangement import best_arrangement
from rummy_rules.gin.hand import GinHandScored, GinKnock, GinKnocked, GinPassUpcard, GinView
from rummy_rules.gin.rules import GIN_SHOE, GinOptions, gin_rule_set
from rummy_rules.gin.variant import GIN, GinState
from rummy_rules.rules import RuleSet
from rummy_rules.shuffle import ShuffleInputs, deal
from rummy_testing.variant_play import VariantPlay

T0 = 1_700_000_000_000
SPECTATOR = -1


def _indices(message: Message) -> set[int]:
    """Every card index anywhere inside ``message``."""
    if isinstance(message, cards_pb2.Card):
        return {message.index}
    found: set[int] = set()
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for item in [value] if hasattr(value, "ListFields") else value:
            found |= _indices(item)
    return found


def _index(cards: tuple[Card, ...] | list[Card]) -> set[int]:
    return {GIN_SHOE.card_to_index(c) for c in cards}


class Hand(VariantPlay[GinState]):
    """One gin hand played greedily (pass the offer, draw the stock, discard the card leaving
    the least deadwood, knock as soon as a knock that is not gin is legal)."""

    def __init__(self, rule_set: RuleSet, seed: int, upcard: str | None = None) -> None:
        super().__init__(GIN)
        server_seed = hashlib.sha256(f"view-{seed}".encode()).digest()
        self.run(
            StartHand(
                hand_id=f"v{seed}",
                seats=(SeatAccount(0, "acct-0"), SeatAccount(1, "acct-1")),
                dealer_seat=1,
                rule_set=rule_set,
                at_ms=T0,
            )
        )
        for seat in (0, 1):
            self.run(RecordStakeReserved(seat=seat, amount_hundredths=0, at_ms=T0))
        self.run(RecordSeedCommitment(commitment=hashlib.sha256(server_seed).hexdigest(), at_ms=T0))
        for seat in (0, 1):
            self.run(ContributeClientSeed(seat=seat, seed_hex="", at_ms=T0))
        dealt = deal(
            ShuffleInputs.of(server_seed, f"v{seed}", {0: b"", 1: b""}),
            GIN_SHOE,
            (0, 1),
            1,
            10,
            GinOptions.deal_shape,
        )
        assert dealt.first_open is not None
        first, hands, stock = dealt.first_open, dealt.hands, dealt.stock
        if upcard is not None:  # swap the wanted card in as the upcard
            card = parse_card(upcard)

            def swap(c: Card) -> Card:
                return first if c == card else card if c == first else c

            hands = tuple(replace(h, cards=tuple(swap(c) for c in h.cards)) for h in hands)
            stock, first = tuple(swap(c) for c in stock), card
        self.run(Deal(hands=hands, wild_cut=None, first_open=first, stock=stock, at_ms=T0))

    def knock_move(self) -> GinKnock | None:
        """The first legal knock (not gin) of the seat on turn with eleven cards, else None."""
        seat = self.state.play.turn_seat
        assert seat is not None
        for move in GIN.legal_commands(self.state, seat):
            if isinstance(move, GinKnock):
                left = tuple(c for c in self.state.play.hand_of(seat) if c != move.face_down)
                if best_arrangement(left).deadwood > 0:
                    return move
        return None

    def step(self) -> None:
        """One greedy move of the seat on turn (not a knock)."""
        seat = self.state.play.turn_seat
        assert seat is not None
        legal = GIN.legal_commands(self.state, seat)
        for kind in (GinPassUpcard, DrawFromStock):
            move = next((m for m in legal if isinstance(m, kind)), None)
            if move is not None:
                self.run(move)
                return
        hand = self.state.play.hand_of(seat)
        discards = [m for m in legal if isinstance(m, Discard)]
        best = min(
            discards,
            key=lambda m: best_arrangement(tuple(c for c in hand if c != m.card)).deadwood,
        )
        self.run(best)


def knocking_hand(rule_set: RuleSet, upcard: str | None = None) -> tuple[Hand, GinKnock]:
    """A hand played up to a legal knock that is not gin (the first seed that gets there
    without a wall), and that knock."""
    for seed in range(60):
        hand = Hand(rule_set, seed, upcard)
        while not GIN.is_over(hand.state):
            if hand.state.play.phase is not None and hand.state.play.phase.value == "discard":
                knock = hand.knock_move()
                if knock is not None:
                    return hand, knock
            hand.step()
    raise AssertionError("no seed reached a knock")


def _wire(state: GinState, seat: int) -> gin_view_pb.GinView:
    view = GIN.view(state, seat)
    assert isinstance(view.variant_view, GinView)
    packed = GIN_WIRE.view_to_pb(view.variant_view, GIN_SHOE)
    assert isinstance(packed, gin_view_pb.GinView)
    return packed


def _seen(state: GinState, seat: int) -> set[int]:
    """Every card index ``seat``'s view carries while the hand runs: its cards, the pile and
    the gin part."""
    view = GIN.view(state, seat)
    return _index(view.cards) | _index(view.discard_pile) | _indices(_wire(state, seat))


@pytest.fixture(scope="module")
def gin_hand() -> tuple[Hand, GinKnock]:
    return knocking_hand(gin_rule_set())


def test_before_a_knock_a_seat_sees_the_limit_and_never_the_other_hand(
    gin_hand: tuple[Hand, GinKnock],
) -> None:
    hand, _knock = gin_hand
    state = hand.state
    play = state.play
    for seat in (0, 1):
        other = play.hand_of(1 - seat)
        wire = _wire(state, seat)
        assert wire.knock_limit == 10 and not wire.doubled
        assert not wire.HasField("knock") and not wire.HasField("score")
        assert wire.other_card_count == len(other)
        assert not _seen(state, seat) & (_index(other) - _index(play.pile))
    assert GIN.view(state, SPECTATOR).cards == ()
    assert not _seen(state, SPECTATOR) - _index(play.pile)


def test_the_first_turn_offer_and_the_card_taken_from_the_pile_are_shown() -> None:
    hand = Hand(gin_rule_set(), 3)
    non_dealer = hand.state.play.turn_seat
    assert non_dealer == 0
    assert _wire(hand.state, 0).first_turn_offer
    (take,) = [
        m for m in GIN.legal_commands(hand.state, 0) if type(m).__name__ == "DrawFromDiscardPile"
    ]
    upcard = hand.state.play.pile[-1]
    hand.run(take)
    mine, theirs = _wire(hand.state, 0), _wire(hand.state, 1)
    assert not mine.first_turn_offer
    assert mine.pile_taken.index == GIN_SHOE.card_to_index(upcard)
    assert not theirs.HasField("pile_taken")


def test_after_a_knock_its_melds_and_deadwood_are_public_and_its_face_down_card_is_not(
    gin_hand: tuple[Hand, GinKnock],
) -> None:
    hand, knock = gin_hand
    knocked, *_rest = GIN.decide(hand.state, knock)
    assert isinstance(knocked, GinKnocked)
    after = GIN.apply(hand.state, knocked)  # the table applies (and shows) one event at a time
    knocker, defender = knock.seat, 1 - knock.seat
    melded = [c for m in knocked.melds for c in m.cards]
    face_down = GIN_SHOE.card_to_index(knock.face_down)
    for seat in (defender, SPECTATOR):
        wire = _wire(after, seat)
        assert wire.knock.seat == knocker and wire.knock.outcome == "knock"
        assert [[c.index for c in m.cards] for m in wire.knock.melds] == [
            [GIN_SHOE.card_to_index(c) for c in m.cards] for m in knocked.melds
        ]
        assert {c.index for c in wire.knock.deadwood_cards} == _index(knocked.deadwood_cards)
        assert wire.knock.deadwood == knocked.deadwood > 0
        assert not wire.knock.HasField("face_down") and not wire.HasField("score")
        # the knock's public cards, and nothing else of the knocker's hand
        hidden = _index(after.play.hand_of(knocker)) - _index([*melded, *knocked.deadwood_cards])
        assert face_down in hidden
        assert not _seen(after, seat) & hidden
    # the defender's hand stays its own until the score
    defender_cards = _index(after.play.hand_of(defender))
    assert not _seen(after, knocker) & defender_cards
    assert not _seen(after, SPECTATOR) & defender_cards
    assert _wire(after, knocker).knock.face_down.index == face_down


def test_with_the_result_both_hands_and_the_layoffs_are_public(
    gin_hand: tuple[Hand, GinKnock],
) -> None:
    hand, knock = gin_hand
    events = GIN.decide(hand.state, knock)
    state = GIN.fold(events, hand.state)
    scored = next(e for e in events if isinstance(e, GinHandScored))
    ended = next(e for e in events if isinstance(e, HandEnded))
    for seat in (0, 1, SPECTATOR):
        wire = _wire(state, seat)
        assert wire.knock.face_down.index == GIN_SHOE.card_to_index(knock.face_down)
        assert wire.score.knocker_seat == knock.seat and wire.score.points == scored.points
        assert {c.index for c in wire.score.defender_cards} == _index(scored.defender_cards)
        assert [(lay.card.index, lay.meld) for lay in wire.score.layoffs] == [
            (GIN_SHOE.card_to_index(lay.card), lay.meld) for lay in scored.layoffs
        ]
        assert GIN.view(state, seat).result == ended
    assert {len(r.cards) for r in ended.results} >= {10}


def test_oklahoma_shows_the_upcards_limit_and_the_spade_doubling() -> None:
    hand = Hand(gin_rule_set(oklahoma=True), 1, upcard="7S")
    for seat in (0, 1, SPECTATOR):
        wire = _wire(hand.state, seat)
        assert (wire.knock_limit, wire.doubled) == (7, True)
    face = Hand(gin_rule_set(oklahoma=True), 1, upcard="KH")
    assert (_wire(face.state, 0).knock_limit, _wire(face.state, 0).doubled) == (10, False)


def test_no_gin_part_before_the_deal() -> None:
    hand = VariantPlay(GIN)
    hand.run(
        StartHand(
            hand_id="pre",
            seats=(SeatAccount(0, "a"), SeatAccount(1, "b")),
            dealer_seat=1,
            rule_set=gin_rule_set(),
            at_ms=T0,
        )
    )
    assert GIN.view(hand.state, 0).variant_view is None
