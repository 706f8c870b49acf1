"""The shoe: every physical card a hand is dealt from, in one canonical order.

A shoe is ``decks`` standard 52-card decks plus ``printed_jokers`` printed jokers. Its canonical
order is part of the shuffle spec (``docs/rules/shuffle-spec.md#canonical-shoe-order``), and a
card's position in it (its *index*) is the card's stable identity on the wire: cards travel as
small ints.

Canonical order, index by index::

    for copy in 0 .. decks-1:            # deck by deck
        for suit in C, D, H, S:          # clubs, diamonds, hearts, spades
            for rank in A, 2, .., 10, J, Q, K:
                Card(rank, suit, copy)   # index = copy*52 + suit_position*13 + (rank - 1)
    for j in 0 .. printed_jokers-1:
        printed joker j                  # index = decks*52 + j

So with two decks and two printed jokers: 0 = AC (copy 0), 12 = KC, 13 = AD, 51 = KS,
52 = AC (copy 1), 103 = KS (copy 1), 104 = JK (copy 0), 105 = JK (copy 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .cards import RANKS, SUITS, Card, Rank, printed_joker

CARDS_PER_DECK = 52
_RANKS_PER_SUIT = 13


@dataclass(frozen=True, slots=False)
class Shoe:
    """``decks`` standard decks plus ``printed_jokers`` printed jokers
    (``docs/rules/cards.md#shoe``).

    Raises ValueError if ``decks`` < 1 or ``printed_jokers`` < 0.
    """

    decks: int
    printed_jokers: int

    def __post_init__(self) -> None:
        if self.decks < 1:
            raise ValueError(f"a shoe needs at least one deck, got decks={self.decks}")
        if self.printed_jokers < 0:
            raise ValueError(f"printed_jokers must be >= 0, got {self.printed_jokers}")

    @property
    def size(self) -> int:
        """Number of cards in the shoe (106 for 2 decks + 2 jokers, 159 for 3 + 3)."""
        return self.decks * CARDS_PER_DECK + self.printed_jokers

    @cached_property
    def cards(self) -> tuple[Card, ...]:
        """Every card of the shoe in canonical order (``cards[i]`` has index ``i``)."""
        return tuple(self.index_to_card(i) for i in range(self.size))

    def index_to_card(self, index: int) -> Card:
        """The card at canonical ``index`` (0 .. size-1). Raises ValueError outside that range."""
        if not 0 <= index < self.size:
            raise ValueError(f"card index {index} is outside this shoe (0..{self.size - 1})")
        standard = self.decks * CARDS_PER_DECK
        if index >= standard:
            return printed_joker(index - standard)
        copy, rest = divmod(index, CARDS_PER_DECK)
        suit_pos, rank_pos = divmod(rest, _RANKS_PER_SUIT)
        return Card(RANKS[rank_pos], SUITS[suit_pos], copy)

    def card_to_index(self, card: Card) -> int:
        """The canonical index of ``card``. Raises ValueError if the card is not in this shoe."""
        if card.is_printed_joker:
            if card.copy >= self.printed_jokers:
                raise ValueError(
                    f"printed joker copy {card.copy} is not in a shoe of "
                    f"{self.printed_jokers} printed jokers"
                )
            return self.decks * CARDS_PER_DECK + card.copy
        if card.copy >= self.decks:
            raise ValueError(f"{card.face} copy {card.copy} is not in a shoe of {self.decks} decks")
        assert card.suit is not None and card.rank is not None
        return (
            card.copy * CARDS_PER_DECK
            + SUITS.index(card.suit) * _RANKS_PER_SUIT
            + (int(card.rank) - int(Rank.ACE))
        )

    def __contains__(self, card: object) -> bool:
        if not isinstance(card, Card):
            return False
        if card.is_printed_joker:
            return card.copy < self.printed_jokers
        return card.copy < self.decks
