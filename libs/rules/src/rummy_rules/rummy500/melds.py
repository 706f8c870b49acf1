"""Rummy 500's melds on the table, their lay-offs and the cards' values.

Rules (``docs/rules/rummy500.md#melds``): a set is three or four cards of one rank (one per
suit: with two decks two 7H never share a group); a run is three or more cards of one suit on
consecutive ranks, the ace high (Q-K-A) or low (A-2-3) but not both, no wrap (K-A-2 is no
run), never the same card twice. There are no jokers. What a group is comes from the rules
library's one meld classifier (``rummy_rules.melds.classify_group`` with no wild rank, the
strict duplicate rule and the ace high or low): the same sets and runs the other games make.

A meld on the table (:class:`TableMeld`) has a stable id (its ordinal in the round: 1, 2, ...),
an owner (who melded it) and its lay-offs (card, who laid it); a lay-off names its target, so a
card that would fit a set and a run goes where it is sent, and later extensions follow from
that (``docs/rules/rummy500.md#lay-offs``).

Values (``docs/rules/rummy500.md#scores``): ace 15, J/Q/K 10, others face value; with the
option ``low_ace_one`` an ace melded low in a run (the run holds that suit's 2) counts 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import json_form
from ..cards import SUITS, Card, Rank
from ..melds import MeldKind, MeldOptions, classify_group

SET_KIND = "set"
RUN_KIND = "run"
ACE_POINTS = 15
LOW_ACE_POINTS = 1
FACE_POINTS = 10
#: Sets and runs as Rummy 500 makes them: no jokers, no face twice, the ace high or low.
MELD_OPTIONS = MeldOptions(
    jokers_only_group_is_sequence=False, strict_duplicate_faces=True, ace_high=True
)


def group_kind(cards: Iterable[Card]) -> str | None:
    """``"set"``, ``"run"`` or None (no meld) for one group of cards; a printed joker makes
    no meld."""
    group = tuple(cards)
    if any(c.is_printed_joker for c in group):
        return None
    kind = classify_group(group, None, MELD_OPTIONS)
    if kind is MeldKind.SET:
        return SET_KIND
    if kind is MeldKind.PURE_SEQUENCE:
        return RUN_KIND
    return None


def card_points(card: Card) -> int:
    """A card's value: ace 15, J/Q/K 10, others face value (a card in hand always so)."""
    assert card.rank is not None
    if card.rank is Rank.ACE:
        return ACE_POINTS
    return FACE_POINTS if card.rank >= Rank.JACK else int(card.rank)


def is_low_run(cards: Iterable[Card]) -> bool:
    """Whether a run holds an ace played low (A-2-3...): it holds the ace and the 2."""
    ranks = {c.rank for c in cards}
    return Rank.ACE in ranks and Rank.TWO in ranks


def run_position(card: Card, low: bool) -> int:
    """A run card's place: the ace 1 in a low run, 14 in a high one; others their rank."""
    assert card.rank is not None
    if card.rank is Rank.ACE and not low:
        return 14
    return int(card.rank)


def fixed_order(card: Card) -> tuple[int, int, int]:
    """The fixed card order (rank A..K, then suit C, D, H, S, then the deck copy)."""
    assert card.rank is not None and card.suit is not None
    return (int(card.rank), SUITS.index(card.suit), card.copy)


def laid_out(kind: str, cards: Iterable[Card]) -> tuple[Card, ...]:
    """A meld's cards in display order: a run by its places, a set by suit."""
    group = tuple(cards)
    if kind == RUN_KIND:
        low = is_low_run(group)
        return tuple(sorted(group, key=lambda c: (run_position(c, low), c.copy)))
    return tuple(sorted(group, key=fixed_order))


@json_form.tag("rummy500.Layoff")
@dataclass(frozen=True)
class Rummy500Layoff:
    """A card laid off onto a meld by seat ``seat`` (it scores for that seat)."""

    card: Card
    seat: int


@json_form.tag("rummy500.TableMeld")
@dataclass(frozen=True)
class TableMeld:
    """A meld face up in front of its ``owner``: ``meld_id`` (its ordinal in the round, from
    1), ``kind`` (``set`` or ``run``), the ``cards`` melded, and the lay-offs on it in the
    order they came."""

    meld_id: int
    owner: int
    kind: str
    cards: tuple[Card, ...]
    layoffs: tuple[Rummy500Layoff, ...] = ()

    @property
    def all_cards(self) -> tuple[Card, ...]:
        """The melded cards and the laid-off ones, in display order."""
        return laid_out(self.kind, (*self.cards, *(lay.card for lay in self.layoffs)))

    def takes(self, card: Card) -> bool:
        """Whether ``card`` laid off here leaves a meld of the same kind."""
        return group_kind((*self.cards, *(lay.card for lay in self.layoffs), card)) == self.kind

    def points_of(self, card: Card, low_ace_one: bool) -> int:
        """What ``card`` (one of this meld's) scores: its value, 1 for a low ace under
        ``low_ace_one``."""
        if (
            low_ace_one
            and card.rank is Rank.ACE
            and self.kind == RUN_KIND
            and is_low_run(self.all_cards)
        ):
            return LOW_ACE_POINTS
        return card_points(card)

    def points_for(self, seat: int, low_ace_one: bool) -> int:
        """What this meld scores for ``seat``: its cards if ``seat`` owns it, and the cards
        ``seat`` laid off on it."""
        own = sum(self.points_of(c, low_ace_one) for c in self.cards) if seat == self.owner else 0
        laid = sum(
            self.points_of(lay.card, low_ace_one) for lay in self.layoffs if lay.seat == seat
        )
        return own + laid


def hand_points(cards: Iterable[Card]) -> int:
    """What cards in hand count against their holder (every ace 15)."""
    return sum(card_points(c) for c in cards)


def table_points(melds: Iterable[TableMeld], seat: int, low_ace_one: bool) -> int:
    """What ``seat`` has on the table: its melds' cards and the cards it laid off anywhere."""
    return sum(m.points_for(seat, low_ace_one) for m in melds)


def round_score(
    melds: Iterable[TableMeld], seat: int, hand: Iterable[Card], low_ace_one: bool
) -> int:
    """A seat's round score: :func:`table_points` minus :func:`hand_points` (may be < 0)."""
    return table_points(melds, seat, low_ace_one) - hand_points(hand)
