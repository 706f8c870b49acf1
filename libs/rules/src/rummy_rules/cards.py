"""Cards, ranks, suits and the notation ``AH 10S QD JK``.

Every physical card has an identity: the same face (rank and suit) from two decks of a shoe are two
different cards, told apart by ``copy`` (0 for the first deck, 1 for the second, ...). Printed
jokers have no rank and no suit; their ``copy`` numbers them within the shoe.

Rules: ``docs/rules/cards.md#notation`` (the notation, also that of the rules cases of the tests)
and ``docs/rules/cards.md#card-identity`` (copies).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, IntEnum


class Suit(Enum):
    """The four suits, in the fixed order clubs, diamonds, hearts, spades."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"


SUITS: tuple[Suit, ...] = tuple(Suit)


class Rank(IntEnum):
    """Ranks with the ace low (1) to the king (13). Whether an ace may also run high is a rule."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def symbol(self) -> str:
        """The rank as written in the notation: ``A``, ``2`` .. ``10``, ``J``, ``Q``, ``K``."""
        return _RANK_SYMBOLS[self]


RANKS: tuple[Rank, ...] = tuple(Rank)
_RANK_SYMBOLS = {r: str(int(r)) for r in Rank} | {
    Rank.ACE: "A",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
}
_SYMBOL_RANKS = {s: r for r, s in _RANK_SYMBOLS.items()}
PRINTED_JOKER_SYMBOL = "JK"


class CardParseError(ValueError):
    """A card or card list that is not in the ``AH 10S QD JK`` notation."""


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One physical card of a shoe (``docs/rules/cards.md#card-identity``).

    ``rank`` and ``suit`` are both ``None`` for a printed joker. ``copy`` tells apart identical
    faces from different decks (or printed jokers from each other); it never affects the rules,
    only identity.
    """

    rank: Rank | None
    suit: Suit | None
    copy: int = 0

    def __post_init__(self) -> None:
        if (self.rank is None) != (self.suit is None):
            raise ValueError("a card has both a rank and a suit, or neither (printed joker)")
        if self.copy < 0:
            raise ValueError("copy must be >= 0")

    @property
    def is_printed_joker(self) -> bool:
        return self.rank is None

    @property
    def face(self) -> str:
        """The card in the notation, without its copy: ``10S``, ``AH``, ``JK``."""
        if self.rank is None or self.suit is None:
            return PRINTED_JOKER_SYMBOL
        return f"{self.rank.symbol}{self.suit.value}"

    def __str__(self) -> str:
        return self.face


def printed_joker(copy: int = 0) -> Card:
    """The printed joker numbered ``copy`` in its shoe."""
    return Card(None, None, copy)


def parse_rank(text: str) -> Rank:
    """``"A"``, ``"2"`` .. ``"10"``, ``"J"``, ``"Q"``, ``"K"`` (case-insensitive) to a Rank.

    Raises CardParseError for anything else.
    """
    rank = _SYMBOL_RANKS.get(text.strip().upper())
    if rank is None:
        raise CardParseError(f"not a rank: {text!r} (expected A, 2..10, J, Q or K)")
    return rank


def parse_card(text: str, copy: int = 0) -> Card:
    """One card in the notation (``AH``, ``10S``, ``JK``; case-insensitive) with the given copy
    (``docs/rules/cards.md#notation``).

    Raises CardParseError for anything else.
    """
    t = text.strip().upper()
    if t == PRINTED_JOKER_SYMBOL:
        return printed_joker(copy)
    if len(t) < 2:
        raise CardParseError(f"not a card: {text!r}")
    try:
        suit = Suit(t[-1])
    except ValueError:
        raise CardParseError(f"not a card: {text!r} (suit must be C, D, H or S)") from None
    try:
        rank = parse_rank(t[:-1])
    except CardParseError:
        raise CardParseError(f"not a card: {text!r} (rank must be A, 2..10, J, Q or K)") from None
    return Card(rank, suit, copy)


def parse_cards(cards: str | Iterable[str]) -> tuple[Card, ...]:
    """A hand in the notation, as one space-separated string or a list of card strings.

    Repeated faces get increasing copies in order of appearance (the first ``7H`` is copy 0, the
    second copy 1), so the result holds distinct physical cards. Raises CardParseError.
    """
    items = cards.split() if isinstance(cards, str) else list(cards)
    seen: Counter[str] = Counter()
    out = []
    for item in items:
        if not isinstance(item, str):
            raise CardParseError(f"not a card: {item!r}")
        card = parse_card(item)
        out.append(Card(card.rank, card.suit, seen[card.face]))
        seen[card.face] += 1
    return tuple(out)


def format_cards(cards: Iterable[Card]) -> list[str]:
    """Cards to their faces in the notation, in the given order."""
    return [c.face for c in cards]
