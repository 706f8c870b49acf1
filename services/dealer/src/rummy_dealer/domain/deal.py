"""A hand's deal and its reshuffles, as pure functions of the hand's locked inputs and the seeds
(``docs/rules/hand-flow.md#the-deal``, ``docs/rules/deal.md#reshuffle``; the shuffle spec
``bb-shuffle-v1`` of ``rummy_rules``, ``docs/rules/shuffle-spec.md``): the lock's inputs and the
server seed in, the deal out; a reshuffle's discard pile and the seeds in, the new stock out.
No protobuf here: the messages the dealer reads and writes map to these values in
:mod:`rummy_dealer.application.deal_messages`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.shuffle import Deal, ShuffleInputs, deal, reshuffle


@dataclass(frozen=True)
class LockedHand:
    """What a hand's lock fixed before its deal: ``server_commitment`` (the SHA-256 of the
    server seed, 32 bytes), ``client_seeds`` (``(seat, seed)``, one per seat dealt in), the
    dealer's seat, the shoe, the cards per hand, and the variant whose deal it is (a lock that
    names none is upcast first: ``rummy_dealer.application.upcast``)."""

    hand_id: str
    variant: str
    server_commitment: bytes
    client_seeds: tuple[tuple[int, bytes], ...]
    dealer_seat: int
    shoe: Shoe
    hand_size: int


@dataclass(frozen=True)
class DealtHand:
    """A hand's deal (``deal``: the seats' cards, the wild cut, the first open card, the stock)
    and the digest of the shuffled shoe (:func:`deck_digest`)."""

    deal: Deal
    deck_digest: str


def deck_digest(order: Sequence[int]) -> str:
    """Hex SHA-256 of the shuffled shoe's canonical indices, each as a 4-byte big-endian word,
    in dealing order (position 0 first)."""
    return hashlib.sha256(b"".join(i.to_bytes(4, "big") for i in order)).hexdigest()


def deal_locked(locked: LockedHand, server_seed: bytes) -> DealtHand:
    """The deal of a hand whose inputs ``locked`` fixed, with ``server_seed``, dealt as the
    hand's variant shapes its deal: a wild cut or none, a first open card or none.

    Raises ValueError if the seed does not match the lock's commitment, the variant is not
    registered, or the lock's seats, dealer, shoe or hand size cannot make a deal (see
    ``rummy_rules.shuffle.deal``).
    """
    if hashlib.sha256(server_seed).digest() != locked.server_commitment:
        raise ValueError(f"the server seed of hand {locked.hand_id} does not match its commitment")
    try:
        variant = registry.lookup(locked.variant)
    except registry.UnknownVariant as exc:
        raise ValueError(str(exc)) from None
    inputs = ShuffleInputs(server_seed, locked.hand_id, locked.client_seeds)
    seats = [seat for seat, _ in locked.client_seeds]
    dealt = deal(
        inputs, locked.shoe, seats, locked.dealer_seat, locked.hand_size, variant.deal_shape
    )
    return DealtHand(dealt, deck_digest(dealt.order))


def reshuffled_stock(
    hand_id: str,
    shoe: Shoe,
    pile: Sequence[Card],
    reshuffle_no: int,
    server_seed: bytes,
    client_seeds: Sequence[tuple[int, bytes]],
) -> tuple[Card, ...]:
    """The new stock made from ``pile`` (the discard pile but its top) on sub-stream
    ``reshuffle_no``, the stock's top first.

    Raises ValueError for a reshuffle number below 1, or a card repeated.
    """
    inputs = ShuffleInputs(server_seed, hand_id, tuple(client_seeds))
    return reshuffle(inputs, shoe, pile, reshuffle_no)
