"""Gin melds, the exact best arrangement of ten cards and the value of eleven.

Rules: ``docs/rules/gin.md#deck`` (one deck, ace low, values), ``docs/rules/gin.md#melds`` (sets of
3-4, runs of 3+ of one suit, no wrap, Q-K-A not a run), ``docs/rules/gin.md#deadwood`` (the minimum
over every arrangement; a run is one meld however long), ``docs/rules/gin.md#tie-break``,
``docs/rules/gin.md#eleven-cards`` (the minimum over every discard), ``docs/rules/gin.md#knock``
and ``docs/rules/gin.md#gin`` (rulebook "Gin Rummy": "Valid Melds", "Knocking", "Gin").

Cards are ``rummy_rules.cards.Card`` of one deck (``copy`` 0, no printed joker); every function
raises ``GinCardError`` (a ``ValueError``) for anything else or for a card given twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from rummy_rules.cards import RANKS, SUITS, Card

from . import solver

#: The default knock limit (``docs/rules/gin.md#knock``), in points.
KNOCK_LIMIT = 10


class GinCardError(ValueError):
    """A card that is not one of the 52 of a single deck, or the same card twice."""


class MeldShape(Enum):
    """What a gin meld is (``docs/rules/gin.md#melds``)."""

    RUN = "run"
    SET = "set"


_INDEX = {s: k for k, s in enumerate(SUITS)}
_CARDS: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in RANKS)


def card_index(card: Card) -> int:
    """The card's canonical index 0..51 (``docs/rules/gin.md#deck``). Raises GinCardError."""
    if card.rank is None or card.suit is None:
        raise GinCardError("a printed joker is not a card of the gin deck")
    if card.copy != 0:
        raise GinCardError(f"{card.face} appears twice (the gin deck has one of each card)")
    return _INDEX[card.suit] * 13 + int(card.rank) - 1


def card_at(index: int) -> Card:
    """The card of canonical index 0..51. Raises GinCardError for another index."""
    if not 0 <= index < 52:
        raise GinCardError(f"no card has index {index} (0..51)")
    return _CARDS[index]


def card_value(card: Card) -> int:
    """Points of a card: ace 1, jack/queen/king 10, others face value
    (``docs/rules/gin.md#deck``). Raises GinCardError."""
    return solver.RANK_VALUES[card_index(card) % 13]


_SUIT_BASE = {s.value: k * 13 - 1 for k, s in enumerate(SUITS)}  # by letter: a str hashes
# faster than an Enum member


def hand_mask(cards: Iterable[Card]) -> int:
    """The cards as a 52-bit mask (bit = canonical index). Raises GinCardError for a bad or a
    repeated card."""
    mask = 0
    try:
        for card in cards:
            bit = 1 << (_SUIT_BASE[card.suit._value_] + card.rank._value_)  # type: ignore[union-attr]
            if mask & bit or card.copy:
                card_index(card)  # raises for a second copy
                raise GinCardError(f"{card.face} appears twice")
            mask |= bit
    except AttributeError:  # a printed joker has no rank and no suit
        raise GinCardError("a printed joker is not a card of the gin deck") from None
    return mask


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask in canonical order."""
    out = []
    while mask:
        b = mask & -mask
        out.append(_CARDS[b.bit_length() - 1])
        mask ^= b
    return tuple(out)


@dataclass(frozen=True, slots=True)
class GinMeld:
    """A set or a run; ``cards`` in canonical order (a run's cards are then in rank order)."""

    shape: MeldShape
    cards: tuple[Card, ...]

    @property
    def mask(self) -> int:
        return hand_mask(self.cards)


def classify_meld(cards: Sequence[Card]) -> MeldShape | None:
    """``SET``, ``RUN`` or None (no meld) for one group of cards (``docs/rules/gin.md#melds``).
    Raises GinCardError for a bad or repeated card."""
    hand_mask(cards)  # raises for a bad or repeated card
    n = len(cards)
    if n < 3:
        return None
    indices = sorted(card_index(c) for c in cards)
    ranks = {i % 13 for i in indices}
    if len(ranks) == 1 and n <= 4:
        return MeldShape.SET
    suits = {i // 13 for i in indices}
    if len(suits) == 1 and indices[-1] - indices[0] == n - 1:
        return MeldShape.RUN
    return None


def make_meld(cards: Sequence[Card]) -> GinMeld:
    """The meld of these cards. Raises GinCardError when they are not a set or a run."""
    shape = classify_meld(cards)
    if shape is None:
        raise GinCardError(f"not a meld: {' '.join(c.face for c in cards)}")
    return GinMeld(shape, tuple(sorted(cards, key=card_index)))


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Ten (or any number of) cards as melds and deadwood.

    ``melds`` in [tie-break] order (``docs/rules/gin.md#tie-break``), ``loose`` the deadwood cards
    in canonical order, ``deadwood`` their points.
    """

    melds: tuple[GinMeld, ...]
    loose: tuple[Card, ...]
    deadwood: int

    @property
    def order_key(self) -> tuple[tuple[int, ...], ...]:
        """The tie-break key: each meld's canonical indices ascending, melds sorted."""
        return tuple(sorted(tuple(card_index(c) for c in m.cards) for m in self.melds))


def mask_indices(mask: int) -> tuple[int, ...]:
    """The canonical indices of the cards of ``mask`` (its set bits), ascending."""
    out = []
    while mask:
        b = mask & -mask
        out.append(b.bit_length() - 1)
        mask ^= b
    return tuple(out)


def _arrangement(
    set_masks: tuple[int, ...], run_masks: tuple[int, ...], loose: int, points: int
) -> Arrangement:
    melds = [(m & -m, MeldShape.SET, m) for m in set_masks]
    melds += [(m & -m, MeldShape.RUN, m) for m in run_masks]
    melds.sort()  # disjoint melds: by the lowest card is by the tie-break key
    return Arrangement(
        tuple(GinMeld(shape, cards_of(m)) for _, shape, m in melds),
        cards_of(loose),
        points,
    )


def best_arrangements_of_mask(mask: int) -> tuple[Arrangement, ...]:
    """Every minimum-deadwood arrangement of a mask's cards, first in tie-break order (runs
    whole; ``docs/rules/gin.md#deadwood``, ``docs/rules/gin.md#tie-break``)."""
    least, best = 1 << 30, []
    for sets, rest in solver.set_choices(mask):
        dw = solver.loose_points(rest)
        if dw < least:
            least, best = dw, [(sets, rest)]
        elif dw == least:
            best.append((sets, rest))
    found = [(sets, solver.runs_of(rest), solver.loose_of(rest), least) for sets, rest in best]
    if len(found) > 1:
        found.sort(key=lambda f: sorted(mask_indices(m) for m in (*f[0], *f[1])))
    return tuple(_arrangement(*f) for f in found)


def best_arrangements(cards: Iterable[Card]) -> tuple[Arrangement, ...]:
    """Every minimum-deadwood arrangement of the cards (see ``best_arrangements_of_mask``)."""
    return best_arrangements_of_mask(hand_mask(cards))


def best_arrangement(cards: Iterable[Card]) -> Arrangement:
    """The exact minimum-deadwood arrangement of the cards, the first in tie-break order
    (``docs/rules/gin.md#deadwood``, ``docs/rules/gin.md#tie-break``). Raises GinCardError."""
    return best_arrangements(cards)[0]


def deadwood_of(cards: Iterable[Card]) -> int:
    """The exact minimum deadwood (points) of the cards. Raises GinCardError."""
    return solver.deadwood(hand_mask(cards))


def arrangement_of(cards: Iterable[Card], melds: Iterable[Sequence[Card]]) -> Arrangement:
    """The arrangement of ``cards`` into the given melds, the rest deadwood (a knocker's named
    melds, ``docs/rules/gin.md#knocker-melds``). Raises GinCardError when a group is no meld,
    holds a card not in the hand, or two groups share a card."""
    hand = hand_mask(cards)
    used = 0
    out = []
    for group in melds:
        meld = make_meld(list(group))
        m = meld.mask
        if m & ~hand:
            raise GinCardError(f"meld {' '.join(c.face for c in meld.cards)} is not in the hand")
        if m & used:
            raise GinCardError("two melds share a card")
        used |= m
        out.append(meld)
    out.sort(key=lambda m: tuple(card_index(c) for c in m.cards))
    loose = hand & ~used
    return Arrangement(tuple(out), cards_of(loose), solver.points_of(loose))


@dataclass(frozen=True, slots=True)
class ElevenCards:
    """The value of an eleven-card hand (``docs/rules/gin.md#eleven-cards``).

    ``best_after_discard``: the least deadwood (points) of the ten cards left over every discard;
    ``discards``: every card whose discard leaves that, canonical order; ``big_gin``: all eleven
    melded (``docs/rules/gin.md#gin``); ``gin``: some discard leaves 0.
    """

    best_after_discard: int
    discards: tuple[Card, ...]
    big_gin: bool

    @property
    def gin(self) -> bool:
        return self.best_after_discard == 0

    def knock_legal(self, limit: int = KNOCK_LIMIT) -> bool:
        """Whether some discard leaves deadwood within ``limit`` points
        (``docs/rules/gin.md#knock``; gin always may knock)."""
        return self.best_after_discard <= max(limit, 0)


def evaluate_eleven(cards: Sequence[Card]) -> ElevenCards:
    """The exact value of eleven cards: every discard tried (``docs/rules/gin.md#eleven-cards``).
    Raises GinCardError for bad cards or a count other than eleven."""
    mask = hand_mask(cards)
    if len(cards) != 11:
        raise GinCardError(f"eleven cards needed, got {len(cards)}")
    best, full = solver.after_discard(mask)
    discards = []
    m = mask
    while m:
        b = m & -m
        m ^= b
        if solver.deadwood(mask ^ b) == best:
            discards.append(_CARDS[b.bit_length() - 1])
    return ElevenCards(best, tuple(discards), full == 0)


def can_knock(cards: Sequence[Card], limit: int = KNOCK_LIMIT) -> bool:
    """Whether eleven cards may knock within ``limit`` points: some discard leaves deadwood at most
    the limit (``docs/rules/gin.md#knock``). Raises GinCardError."""
    if len(cards) != 11:
        raise GinCardError(f"eleven cards needed, got {len(cards)}")
    return solver.after_discard(hand_mask(cards))[0] <= max(limit, 0)
