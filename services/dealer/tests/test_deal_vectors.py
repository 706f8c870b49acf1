"""The dealer's deal and reshuffle equal the rules library's test vectors
(libs/rules/vectors/shuffle-v1.json), through the wire messages the dealer reads and writes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.application.deal_messages import deal_from_lock, reshuffle_from_exhausted
from rummy_dealer.domain.deal import deck_digest
from rummy_rules import registry
from rummy_rules.rules import DealShape

VECTORS = json.loads(
    (Path(__file__).resolve().parents[3] / "libs/rules/vectors/shuffle-v1.json").read_text()
)


def variant_of(vector: dict[str, Any]) -> str:
    """A registered variant whose deal has the vector's shape (the dealer reads the shape from
    the hand's variant)."""
    shape = DealShape(**vector["deal_shape"])
    return next(v.name for v in registry.variants() if v.deal_shape == shape)


def lock_of(vector: dict[str, Any]) -> table_events.SeedsLocked:
    seed = bytes.fromhex(vector["server_seed_hex"])
    return table_events.SeedsLocked(
        variant=variant_of(vector),
        hand_id=vector["hand_id"],
        server_commitment_sha256=hashlib.sha256(seed).digest(),
        client_seeds=[
            table_events.ClientSeed(seat=s["seat"], client_seed=bytes.fromhex(s["seed_hex"]))
            for s in vector["client_seeds"]
        ],
        dealer_seat=vector["dealer"],
        shoe=cards_pb2.ShoeSpec(decks=vector["decks"], printed_jokers=vector["printed_jokers"]),
        hand_size=vector["hand_size"],
    )


@pytest.mark.parametrize("vector", VECTORS["deals"], ids=lambda v: v["name"])
def test_the_deal_for_a_fixed_seed_equals_the_rules_library_vector(vector: dict[str, Any]) -> None:
    expected = vector["expected"]
    dealt = deal_from_lock(lock_of(vector), bytes.fromhex(vector["server_seed_hex"]))

    assert [(h.seat, [c.index for c in h.cards]) for h in dealt.hands] == sorted(
        (h["seat"], h["indices"]) for h in expected["hands"]
    )
    assert [[c.face for c in h.cards] for h in dealt.hands] == [
        h["cards"] for h in sorted(expected["hands"], key=lambda h: h["seat"])
    ]
    turned = []
    for field in ("wild_cut", "first_open"):
        if expected[field] is None:  # gin's deal cuts no wild card
            assert not dealt.HasField(field)
        else:
            card = getattr(dealt, field)
            assert (card.index, card.face) == (expected[field]["index"], expected[field]["card"])
            turned.append(card.index)
    assert dealt.stock[0].index == expected["stock_top"]["index"]
    assert len(dealt.stock) == expected["stock_size"]
    assert dealt.deck_digest == deck_digest(expected["order_indices"])
    order = [c.index for h in dealt.hands for c in h.cards]
    assert sorted(order + turned + [c.index for c in dealt.stock]) == sorted(
        expected["order_indices"]
    )


@pytest.mark.parametrize("vector", VECTORS["reshuffles"], ids=lambda v: v["name"])
def test_the_reshuffled_stock_equals_the_rules_library_vector(vector: dict[str, Any]) -> None:
    shoe = cards_pb2.ShoeSpec(decks=vector["decks"], printed_jokers=vector["printed_jokers"])
    exhausted = table_events.StockExhausted(
        hand_id=vector["hand_id"],
        turn_no=40,
        reshuffle_no=vector["number"],
        cards=[cards_pb2.Card(index=i) for i in vector["pile_indices"]],
        top_discard=cards_pb2.Card(index=1),
        shoe=shoe,
    )
    seeds = [(s["seat"], bytes.fromhex(s["seed_hex"])) for s in vector["client_seeds"]]
    result = reshuffle_from_exhausted(exhausted, bytes.fromhex(vector["server_seed_hex"]), seeds)
    assert [c.index for c in result.stock] == vector["expected"]["order_indices"]
    assert [c.face for c in result.stock] == vector["expected"]["order_cards"]
    assert result.reshuffle_no == vector["number"]
    assert result.kept_top_discard.index == 1


def test_a_seed_that_does_not_match_the_locked_commitment_is_not_dealt() -> None:
    vector = VECTORS["deals"][0]
    with pytest.raises(ValueError, match="does not match its commitment"):
        deal_from_lock(lock_of(vector), bytes(32))


def test_a_card_whose_face_contradicts_its_index_is_refused() -> None:
    vector = VECTORS["reshuffles"][0]
    exhausted = table_events.StockExhausted(
        hand_id=vector["hand_id"],
        reshuffle_no=1,
        cards=[cards_pb2.Card(index=0, face="KS")],
        top_discard=cards_pb2.Card(index=1),
        shoe=cards_pb2.ShoeSpec(decks=2, printed_jokers=2),
    )
    with pytest.raises(ValueError, match="is AC, not KS"):
        reshuffle_from_exhausted(exhausted, bytes.fromhex(vector["server_seed_hex"]), [])
