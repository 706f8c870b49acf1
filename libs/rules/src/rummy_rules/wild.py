"""The wild rank and what a card is worth.

The wild rank comes from the cut card: a ``Rank``, or ``None`` when the cut card was a printed joker
(then only printed jokers are wild). Printed jokers and cards of the wild rank are worth 0 wherever
they sit; A, K, Q, J and 10 are worth 10; 2 to 9 their face value.

Rules: ``docs/rules/cards.md#wild-rank`` (the wild rank, printed and wild jokers) and
``docs/rules/cards.md#card-points`` (what a card is worth).
"""

from __future__ import annotations

from collections.abc import Iterable

from rummy_rules.cards import Card, Rank

WildRank = Rank | None
"""The hand's wild rank, or ``None`` when the cut card was a printed joker."""

MAX_CARD_POINTS = 10


def is_joker(card: Card, wild_rank: WildRank) -> bool:
    """True for a printed joker or a card of the wild rank, a card that may stand in
    (``docs/rules/cards.md#wild-rank``)."""
    return card.rank is None or card.rank == wild_rank


def rank_points(rank: Rank) -> int:
    """Points of a non-wild card of this rank: A, K, Q, J, 10 -> 10; 2..9 -> face value
    (``docs/rules/cards.md#card-points``)."""
    return MAX_CARD_POINTS if rank == Rank.ACE or rank >= Rank.TEN else int(rank)


def card_points(card: Card, wild_rank: WildRank) -> int:
    """Points a card counts when loose: 0 for printed jokers and the wild rank, else rank_points
    (``docs/rules/cards.md#card-points``)."""
    if card.rank is None or card.rank == wild_rank:
        return 0
    return rank_points(card.rank)


def hand_points(cards: Iterable[Card], wild_rank: WildRank) -> int:
    """Sum of ``card_points`` over the cards (every card counted, no arrangement)."""
    return sum(card_points(c, wild_rank) for c in cards)
