"""A hand's deal and its reshuffles, as pure functions of the table's events and the seeds
(``docs/rules/hand-flow.md#the-deal``, ``docs/rules/deal.md#reshuffle``; the shuffle spec
``bb-shuffle-v1`` of ``rummy_rules``, ``docs/rules/shuffle-spec.md``): the lock's
``SeedsLocked`` and the server seed in, the ``HandDealt`` out; a ``StockExhausted`` and the seeds
in, the ``StockReshuffled`` out. Cards are the shoe's canonical indices on the wire.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.shuffle import ShuffleInputs, deal, reshuffle


def shoe_of(spec: cards_pb2.ShoeSpec) -> Shoe:
    """The rules library's shoe for a wire ShoeSpec. Raises ValueError for an empty shoe."""
    return Shoe(decks=spec.decks, printed_jokers=spec.printed_jokers)


def card_to_pb(card: Card, shoe: Shoe) -> cards_pb2.Card:
    return cards_pb2.Card(index=shoe.card_to_index(card), face=card.face)


def card_from_pb(card: cards_pb2.Card, shoe: Shoe) -> Card:
    """The card at the wire card's index. Raises ValueError if it is outside the shoe or its
    face label contradicts the index."""
    found = shoe.index_to_card(card.index)
    if card.face and card.face != found.face:
        raise ValueError(f"card index {card.index} is {found.face}, not {card.face}")
    return found


def deck_digest(order: Sequence[int]) -> str:
    """Hex SHA-256 of the shuffled shoe's canonical indices, each as a 4-byte big-endian word,
    in dealing order (position 0 first)."""
    return hashlib.sha256(b"".join(i.to_bytes(4, "big") for i in order)).hexdigest()


def deal_from_lock(locked: table_events.SeedsLocked, server_seed: bytes) -> dealer_events.HandDealt:
    """The HandDealt of a hand whose inputs ``locked`` fixed, with ``server_seed``, dealt as the
    hand's variant (``locked.variant``; absent: ``rummy_rules.registry.LEGACY_VARIANT``) shapes
    its deal: a wild cut or none, a first open card or none.

    Raises ValueError if the seed does not match the lock's commitment, the variant is not
    registered, or the lock's seats, dealer, shoe or hand size cannot make a deal (see
    ``rummy_rules.shuffle.deal``).
    """
    if hashlib.sha256(server_seed).digest() != locked.server_commitment_sha256:
        raise ValueError(f"the server seed of hand {locked.hand_id} does not match its commitment")
    try:
        variant = registry.lookup(locked.variant if locked.HasField("variant") else "")
    except registry.UnknownVariant as exc:
        raise ValueError(str(exc)) from None
    shoe = shoe_of(locked.shoe)
    seeds = [(s.seat, s.client_seed) for s in locked.client_seeds]
    inputs = ShuffleInputs(server_seed, locked.hand_id, tuple(seeds))
    seats = [seat for seat, _ in seeds]
    dealt = deal(inputs, shoe, seats, locked.dealer_seat, locked.hand_size, variant.deal_shape)
    out = dealer_events.HandDealt(
        hand_id=locked.hand_id,
        hands=[
            dealer_events.SeatHand(seat=h.seat, cards=[card_to_pb(c, shoe) for c in h.cards])
            for h in sorted(dealt.hands, key=lambda h: h.seat)
        ],
        stock=[card_to_pb(c, shoe) for c in dealt.stock],
        deck_digest=deck_digest(dealt.order),
    )
    if dealt.wild_cut is not None:
        out.wild_cut.CopyFrom(card_to_pb(dealt.wild_cut, shoe))
    if dealt.first_open is not None:
        out.first_open.CopyFrom(card_to_pb(dealt.first_open, shoe))
    return out


def reshuffle_from_exhausted(
    exhausted: table_events.StockExhausted,
    server_seed: bytes,
    client_seeds: Sequence[tuple[int, bytes]],
) -> dealer_events.StockReshuffled:
    """The new stock from the discard pile but its top, on sub-stream ``reshuffle_no``.

    Raises ValueError for a reshuffle number below 1, a card outside the shoe or repeated.
    """
    shoe = shoe_of(exhausted.shoe)
    inputs = ShuffleInputs(server_seed, exhausted.hand_id, tuple(client_seeds))
    pile = [card_from_pb(c, shoe) for c in exhausted.cards]
    stock = reshuffle(inputs, shoe, pile, exhausted.reshuffle_no)
    return dealer_events.StockReshuffled(
        hand_id=exhausted.hand_id,
        reshuffle_no=exhausted.reshuffle_no,
        stock=[card_to_pb(c, shoe) for c in stock],
        kept_top_discard=card_to_pb(card_from_pb(exhausted.top_discard, shoe), shoe),
    )
