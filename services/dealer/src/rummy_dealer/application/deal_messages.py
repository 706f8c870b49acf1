"""The dealer's messages <-> its domain (:mod:`rummy_dealer.domain.deal`): a ``SeedsLocked`` into
the hand's locked inputs and the deal into a ``HandDealt``; a ``StockExhausted`` into the pile and
the new stock into a ``StockReshuffled``. Cards are the shoe's canonical indices on the wire.
"""

from __future__ import annotations

from collections.abc import Sequence

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.application import upcast
from rummy_dealer.domain.deal import LockedHand, deal_locked, reshuffled_stock
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe


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


def locked_hand(locked: table_events.SeedsLocked) -> LockedHand:
    """The inputs a SeedsLocked fixes, its old shape upcast first
    (:func:`rummy_dealer.application.upcast.seeds_locked`: naming no variant, the legacy
    variant). Raises ValueError for an empty shoe."""
    locked = upcast.seeds_locked(locked)
    return LockedHand(
        hand_id=locked.hand_id,
        variant=locked.variant,
        server_commitment=locked.server_commitment_sha256,
        client_seeds=tuple((s.seat, s.client_seed) for s in locked.client_seeds),
        dealer_seat=locked.dealer_seat,
        shoe=shoe_of(locked.shoe),
        hand_size=locked.hand_size,
    )


def deal_from_lock(locked: table_events.SeedsLocked, server_seed: bytes) -> dealer_events.HandDealt:
    """The HandDealt of a hand whose inputs ``locked`` fixed, with ``server_seed``
    (:func:`rummy_dealer.domain.deal.deal_locked`: the hand's variant shapes the deal). Raises
    ValueError as that does, and for an empty shoe."""
    hand = locked_hand(locked)
    dealt = deal_locked(hand, server_seed)
    shoe, deal = hand.shoe, dealt.deal
    out = dealer_events.HandDealt(
        hand_id=hand.hand_id,
        hands=[
            dealer_events.SeatHand(seat=h.seat, cards=[card_to_pb(c, shoe) for c in h.cards])
            for h in sorted(deal.hands, key=lambda h: h.seat)
        ],
        stock=[card_to_pb(c, shoe) for c in deal.stock],
        deck_digest=dealt.deck_digest,
    )
    if deal.wild_cut is not None:
        out.wild_cut.CopyFrom(card_to_pb(deal.wild_cut, shoe))
    if deal.first_open is not None:
        out.first_open.CopyFrom(card_to_pb(deal.first_open, shoe))
    return out


def reshuffle_from_exhausted(
    exhausted: table_events.StockExhausted,
    server_seed: bytes,
    client_seeds: Sequence[tuple[int, bytes]],
) -> dealer_events.StockReshuffled:
    """The new stock from the discard pile but its top, on sub-stream ``reshuffle_no``
    (:func:`rummy_dealer.domain.deal.reshuffled_stock`).

    Raises ValueError for a reshuffle number below 1, a card outside the shoe or repeated.
    """
    shoe = shoe_of(exhausted.shoe)
    pile = [card_from_pb(c, shoe) for c in exhausted.cards]
    stock = reshuffled_stock(
        exhausted.hand_id, shoe, pile, exhausted.reshuffle_no, server_seed, client_seeds
    )
    return dealer_events.StockReshuffled(
        hand_id=exhausted.hand_id,
        reshuffle_no=exhausted.reshuffle_no,
        stock=[card_to_pb(c, shoe) for c in stock],
        kept_top_discard=card_to_pb(card_from_pb(exhausted.top_discard, shoe), shoe),
    )
