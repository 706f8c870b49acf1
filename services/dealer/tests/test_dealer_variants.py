"""The dealer deals as the hand's variant says (its deal shape), knowing no game's rules: the toy
variant of the test suite cuts no wild card; a lock that names no variant (written before locks
named one) is upcast to name the legacy variant (``rummy_dealer.application.upcast``) and dealt
as Indian points always was."""

from __future__ import annotations

import hashlib

import pytest

import toy_variant
from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.application import upcast
from rummy_dealer.application.deal_messages import deal_from_lock

SERVER_SEED = bytes(range(32))


def lock(variant: str | None, decks: int, jokers: int, hand_size: int) -> table_events.SeedsLocked:
    locked = table_events.SeedsLocked(
        hand_id="hand-variants",
        server_commitment_sha256=hashlib.sha256(SERVER_SEED).digest(),
        client_seeds=[table_events.ClientSeed(seat=s, client_seed=bytes([s])) for s in (0, 1, 2)],
        dealer_seat=2,
        shoe=cards_pb2.ShoeSpec(decks=decks, printed_jokers=jokers),
        hand_size=hand_size,
    )
    if variant is not None:
        locked.variant = variant
    return locked


def test_a_hand_of_a_variant_without_a_wild_cut_is_dealt_with_no_cut() -> None:
    dealt = deal_from_lock(lock(toy_variant.TOY_NAME, 1, 0, 5), SERVER_SEED)
    assert not dealt.HasField("wild_cut")
    assert dealt.HasField("first_open")
    assert [len(h.cards) for h in dealt.hands] == [5, 5, 5]
    indices = [c.index for h in dealt.hands for c in h.cards]
    indices += [dealt.first_open.index] + [c.index for c in dealt.stock]
    assert sorted(indices) == list(range(52))


@pytest.mark.parametrize("variant", [None, "indian-points"])
def test_an_indian_hand_or_a_lock_naming_no_variant_gets_the_wild_cut(variant: str | None) -> None:
    dealt = deal_from_lock(lock(variant, 2, 2, 13), SERVER_SEED)
    assert dealt.HasField("wild_cut") and dealt.HasField("first_open")
    assert len(dealt.stock) == 106 - 3 * 13 - 2


def test_a_hand_of_a_variant_nobody_registered_is_not_dealt() -> None:
    with pytest.raises(ValueError, match="no variant 'no-such-game' is registered"):
        deal_from_lock(lock("no-such-game", 1, 0, 10), SERVER_SEED)


def test_a_gin_hand_is_dealt_ten_each_from_the_non_dealer_then_the_upcard_with_no_cut() -> None:
    locked = lock("gin", 1, 0, 10)
    del locked.client_seeds[2:]  # two seats, 0 and 1; the dealer is seat 1
    locked.dealer_seat = 1
    dealt = deal_from_lock(locked, SERVER_SEED)
    assert not dealt.HasField("wild_cut") and dealt.HasField("first_open")
    assert [(h.seat, len(h.cards)) for h in dealt.hands] == [(0, 10), (1, 10)]
    assert len(dealt.stock) == 52 - 20 - 1


def test_a_lock_naming_no_variant_upcasts_to_exactly_the_lock_a_current_table_writes() -> None:
    old = lock(None, 2, 2, 13)
    today = lock("indian-points", 2, 2, 13)  # what the table writes since locks name it
    assert upcast.seeds_locked(old) == today
    assert not old.HasField("variant"), "the record is kept"
    assert upcast.seeds_locked(today) is today
    assert deal_from_lock(old, SERVER_SEED) == deal_from_lock(today, SERVER_SEED)
