"""The Indian points bot strategy: a seat's choices as pure functions of its own cards.

The bot judges its cards with the Indian solver: ``best_arrangement`` says which cards sit in melds
and what the hand would cost, ``valid_discards`` says whether 14 cards hold a valid show,
``classify_group`` whether a card completes a meld with two cards already held. Before the hand has
a pure sequence the solver counts every card, so among loose cards the bot also looks at each
card's *partners* (cards of the same suit one or two ranks away, or of the same rank in another
suit): a loose card without partners is the first to go, the costliest of them first.

Decisions:

- draw: take the discard pile's top card when it is a joker, when it extends a meld or completes
  one with two held cards that are not already melded, or when it lowers the hand's best points
  after the best discard; otherwise draw from the stock;
- discard: never a melded card while a loose one is left, never the card just taken from the pile;
  among loose non-joker cards the one with the fewest partners, the costliest among those;
- declare: when the 14 cards leave a valid show with a card other than the one just taken from the
  pile laid face down;
- drop: on the seat's first turn, before drawing, a hopeless hand (no pure sequence, no run of two
  same-suit neighbours and deadwood of at least ``HOPELESS_POINTS``) may be dropped.

:data:`INDIAN_BOT` (:class:`IndianBot`, a ``rummy_rules.bot.VariantBot``) plays them over the moves
the variant lists; the variant carries it (``IndianPoints.bot``) so that a bot host
(``rummy_ops.bots.strategy``) finds it through ``rummy_rules.registry``. No randomness here: the
host adds a bot's temperament.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Protocol

from ..bot import Situation
from ..cards import Card
from ..commands import Command, Discard, DrawFromDiscardPile, DrawFromStock
from ..events import DrawSource
from ..formats.messages import DealRules
from ..melds import DEFAULT_MELD_OPTIONS, MeldKind, MeldOptions, classify_group
from ..rules import RuleSetError
from ..wild import WildRank, card_points, is_joker
from .arrangement import Arrangement, best_arrangement, valid_discards
from .commands import Declare, Drop
from .decide import fixed_card_order
from .rules import format_deal_options

#: A seat's cards as a strategy is given them.
Hand = list[Card] | tuple[Card, ...]

#: A first hand whose best arrangement counts at least this many points, with no pure sequence and
#: no two same-suit neighbours, is hopeless (130 is the most a hand can count).
HOPELESS_POINTS = 70


def arrangement(
    cards: list[Card] | tuple[Card, ...],
    wild: WildRank,
    options: MeldOptions = DEFAULT_MELD_OPTIONS,
) -> Arrangement:
    """The solver's best arrangement of the bot's own cards (points uncapped)."""
    return best_arrangement(cards, wild, options)


def partners(card: Card, hand: list[Card] | tuple[Card, ...], wild: WildRank) -> int:
    """How many other natural cards of ``hand`` could share a meld with ``card``: the same suit one
    or two ranks away (the ace also next to the king), or the same rank in another suit. Jokers and
    copies of the same face do not count; a joker itself has no partners (it is never loose)."""
    if is_joker(card, wild):
        return 0
    assert card.rank is not None and card.suit is not None
    count = 0
    for other in hand:
        if other == card or is_joker(other, wild) or other.face == card.face:
            continue
        assert other.rank is not None
        if other.suit == card.suit:
            gap = abs(int(other.rank) - int(card.rank))
            if gap in (1, 2) or 13 - gap in (1, 2):  # 13 - gap: A next to K, A-Q two apart
                count += 1
        elif other.rank == card.rank:
            count += 1
    return count


def _melded(arr: Arrangement) -> set[Card]:
    return {c for m in arr.melds for c in m.cards}


def choose_discard(
    hand: list[Card] | tuple[Card, ...],
    wild: WildRank,
    taken_from_pile: Card | None = None,
    options: MeldOptions = DEFAULT_MELD_OPTIONS,
) -> Card:
    """The card to discard from ``hand`` (14 cards after a draw).

    Melded cards (in the solver's best arrangement) are kept while a loose card is left; jokers
    are kept while a natural card is left; ``taken_from_pile`` is never returned. Among the
    candidates: fewest partners first, then most points, then a fixed order (so the choice is
    deterministic). Raises ValueError if no card may be discarded.
    """
    cards = list(hand)
    allowed = [c for c in cards if c != taken_from_pile]
    if not allowed:
        raise ValueError("no card of the hand may be discarded")
    melded = _melded(arrangement(cards, wild, options))
    loose = [c for c in allowed if c not in melded]
    pool = loose or allowed
    natural = [c for c in pool if not is_joker(c, wild)]
    pool = natural or pool

    def cost(c: Card) -> tuple[int, int, tuple[int, int, int]]:
        return (partners(c, cards, wild), -card_points(c, wild), fixed_card_order(c))

    return min(pool, key=cost)


def completes_meld(
    hand: list[Card] | tuple[Card, ...],
    card: Card,
    wild: WildRank,
    options: MeldOptions = DEFAULT_MELD_OPTIONS,
) -> bool:
    """True when ``card`` (a natural card) extends a meld of the hand's best arrangement, or
    forms a pure sequence or a set with two natural cards of ``hand`` that are not both melded
    already (judged by the rules library's ``classify_group``)."""
    if is_joker(card, wild):
        return False
    arr = arrangement(hand, wild, options)
    if any(classify_group((*m.cards, card), wild, options) is not None for m in arr.melds):
        return True
    melded = _melded(arr)
    naturals = [c for c in hand if not is_joker(c, wild) and c.face != card.face]
    for a, b in combinations(naturals, 2):
        if a in melded and b in melded:
            continue
        kind = classify_group((a, b, card), wild, options)
        if kind in (MeldKind.PURE_SEQUENCE, MeldKind.SET):
            return True
    return False


def choose_draw(
    hand: list[Card] | tuple[Card, ...],
    top_discard: Card | None,
    wild: WildRank,
    options: MeldOptions = DEFAULT_MELD_OPTIONS,
) -> DrawSource:
    """Where to draw from with ``hand`` (13 cards) and ``top_discard`` showing (None: empty pile).

    The pile's top card is taken when it is a joker, completes a meld (:func:`completes_meld`) or
    lowers the best points of the hand after the best discard; otherwise the stock.
    """
    if top_discard is None:
        return DrawSource.STOCK
    if is_joker(top_discard, wild) or completes_meld(hand, top_discard, wild, options):
        return DrawSource.DISCARD_PILE
    cards = list(hand)
    now = arrangement(cards, wild, options).points
    taken = [*cards, top_discard]
    discard = choose_discard(taken, wild, top_discard, options)
    after = [c for c in taken if c != discard]
    if arrangement(after, wild, options).points < now:
        return DrawSource.DISCARD_PILE
    return DrawSource.STOCK


def declaration(
    hand: list[Card] | tuple[Card, ...],
    wild: WildRank,
    taken_from_pile: Card | None = None,
    options: MeldOptions = DEFAULT_MELD_OPTIONS,
) -> Card | None:
    """The card to lay face down for a valid declare with ``hand`` (14 cards), or None when the
    hand holds no valid show (or only by laying aside the card just taken from the pile)."""
    for card in valid_discards(hand, wild, options):
        if card != taken_from_pile:
            return card
    return None


def is_hopeless(
    hand: list[Card] | tuple[Card, ...],
    wild: WildRank,
    options: MeldOptions = DEFAULT_MELD_OPTIONS,
) -> bool:
    """A first hand worth dropping: no pure sequence, no two same-suit neighbours (no pure sequence
    within one draw) and at least :data:`HOPELESS_POINTS` points in its best arrangement."""
    arr = arrangement(hand, wild, options)
    if any(m.kind is MeldKind.PURE_SEQUENCE for m in arr.melds):
        return False
    naturals = [c for c in hand if not is_joker(c, wild)]
    for a, b in combinations(naturals, 2):
        if a.suit == b.suit and a.rank is not None and b.rank is not None:
            gap = abs(int(a.rank) - int(b.rank))
            if gap == 1 or gap == 12:
                return False
    return arr.points >= HOPELESS_POINTS


class IndianJudgement(Protocol):
    """The four judgements an Indian strategy makes (this module's functions of the same
    names; the benchmarks' quicker ``QuickIndianBot`` has the same shape)."""

    def choose_draw(
        self, hand: Hand, top_discard: Card | None, wild: WildRank, options: MeldOptions
    ) -> DrawSource: ...

    def choose_discard(
        self, hand: Hand, wild: WildRank, taken_from_pile: Card | None, options: MeldOptions
    ) -> Card: ...

    def declaration(
        self, hand: Hand, wild: WildRank, taken_from_pile: Card | None, options: MeldOptions
    ) -> Card | None: ...

    def is_hopeless(self, hand: Hand, wild: WildRank, options: MeldOptions) -> bool: ...


class _Functions:
    choose_draw = staticmethod(choose_draw)
    choose_discard = staticmethod(choose_discard)
    declaration = staticmethod(declaration)
    is_hopeless = staticmethod(is_hopeless)


@dataclass(frozen=True)
class IndianBot:
    """The Indian points strategy as a ``rummy_rules.bot.VariantBot``: it picks among the moves
    the variant lists (``legal_commands``) by ``judgement`` (this module's functions by default)
    under ``options`` (the house rules' meld options by default). Stateless."""

    judgement: IndianJudgement = field(default_factory=_Functions)
    options: MeldOptions = DEFAULT_MELD_OPTIONS

    def choose(self, situation: Situation, legal: Sequence[Command]) -> Command:
        """Before drawing: the pile or the stock as ``choose_draw`` says (the other when only
        it is listed); after: a valid declare when ``declaration`` finds one, else the discard
        ``choose_discard`` picks (the first listed discard if it is not listed)."""
        wild = situation.wild_cut.rank if situation.wild_cut is not None else None
        hand, taken = situation.cards, situation.taken_from_pile
        if not situation.has_drawn:
            draws = [c for c in legal if isinstance(c, DrawFromStock | DrawFromDiscardPile)]
            if not draws:
                return legal[0]
            source = self.judgement.choose_draw(hand, situation.discard_top, wild, self.options)
            wanted = DrawFromStock if source is DrawSource.STOCK else DrawFromDiscardPile
            return next((c for c in draws if isinstance(c, wanted)), draws[0])
        face_down = self.judgement.declaration(hand, wild, taken, self.options)
        if face_down is not None:
            declare = next(
                (c for c in legal if isinstance(c, Declare) and c.face_down == face_down), None
            )
            if declare is not None:
                return declare
        discards = [c for c in legal if isinstance(c, Discard)]
        if not discards:
            return legal[0]
        card = self.judgement.choose_discard(hand, wild, taken, self.options)
        return next((c for c in discards if c.card == card), discards[0])

    def give_up(self, situation: Situation, legal: Sequence[Command]) -> Command | None:
        """A drop on the seat's first turn, before drawing, of a hopeless hand
        (:func:`is_hopeless`); None otherwise."""
        if situation.has_drawn or situation.turns != 1:
            return None
        drop = next((c for c in legal if isinstance(c, Drop)), None)
        wild = situation.wild_cut.rank if situation.wild_cut is not None else None
        if drop is None or not self.judgement.is_hopeless(situation.cards, wild, self.options):
            return None
        return drop

    @staticmethod
    def give_up_points(deal_rules: DealRules) -> int | None:
        """The format's first drop (``rules.format_deal_options``; 20 at a pool 101, 25 at a
        201), None for a format Indian points plays no deals of."""
        try:
            return format_deal_options(deal_rules).first_drop_points
        except RuleSetError:
            return None


#: The Indian points bot strategy (``IndianPoints.bot``).
INDIAN_BOT = IndianBot()
