"""A bot's play, as pure functions of its own cards (no I/O, no clock; randomness is passed in).

The bot judges its cards with the rules library: ``best_arrangement`` (the solver) says which cards
sit in melds and what the hand would cost, ``valid_discards`` says whether 14 cards hold a valid
show, ``classify_group`` whether a card completes a meld with two cards already held. Before the
hand has a pure sequence the solver counts every card, so among loose cards the bot also looks at
each card's *partners* (cards of the same suit one or two ranks away, or of the same rank in another
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

:class:`BotBrain` wraps these with a seeded ``random.Random`` and a :class:`Temperament` that
makes a bot stall (so the clock's automatic play and the timeout drop run) or declare wrongly once
in a while.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum
from itertools import combinations

from rummy_rules.cards import Card
from rummy_rules.indian.arrangement import Arrangement, best_arrangement, valid_discards
from rummy_rules.indian.decide import fixed_card_order
from rummy_rules.melds import DEFAULT_MELD_OPTIONS, MeldKind, MeldOptions, classify_group
from rummy_rules.wild import WildRank, card_points, is_joker

#: A first hand whose best arrangement counts at least this many points, with no pure sequence and
#: no two same-suit neighbours, is hopeless (130 is the most a hand can count).
HOPELESS_POINTS = 70


class Source(Enum):
    """Where a bot draws from."""

    STOCK = "stock"
    DISCARD_PILE = "discard_pile"


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
) -> Source:
    """Where to draw from with ``hand`` (13 cards) and ``top_discard`` showing (None: empty pile).

    The pile's top card is taken when it is a joker, completes a meld (:func:`completes_meld`) or
    lowers the best points of the hand after the best discard; otherwise the stock.
    """
    if top_discard is None:
        return Source.STOCK
    if is_joker(top_discard, wild) or completes_meld(hand, top_discard, wild, options):
        return Source.DISCARD_PILE
    cards = list(hand)
    now = arrangement(cards, wild, options).points
    taken = [*cards, top_discard]
    discard = choose_discard(taken, wild, top_discard, options)
    after = [c for c in taken if c != discard]
    if arrangement(after, wild, options).points < now:
        return Source.DISCARD_PILE
    return Source.STOCK


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


@dataclass(frozen=True)
class Temperament:
    """How a bot misbehaves, as probabilities (0..1).

    ``stall_hand``: per hand, never act at all that hand (the clock plays for it and, after the
    rule set's missed turns, drops it); ``stall_turn``: per turn, let that one turn time out;
    ``wrong_declare``: per turn from the seat's fifth turn on, declare a hand that is not valid;
    ``drop_hopeless``: on a hopeless first hand, drop.
    """

    stall_hand: float = 0.0
    stall_turn: float = 0.0
    wrong_declare: float = 0.0
    drop_hopeless: float = 0.5


class Kind(Enum):
    """What a bot does on its turn."""

    STALL = "stall"
    DROP = "drop"
    DRAW = "draw"
    DISCARD = "discard"
    DECLARE = "declare"


@dataclass(frozen=True)
class Move:
    """One step of a turn: ``source`` for a draw, ``card`` for a discard or the face-down card of
    a declare; ``valid`` is False for a declare the bot knows is wrong."""

    kind: Kind
    source: Source | None = None
    card: Card | None = None
    valid: bool = True


@dataclass
class BotBrain:
    """A bot's decisions across hands, reproducible from ``seed``.

    Call :meth:`new_hand` when a hand is dealt, :meth:`before_draw` at the start of the bot's turn
    and :meth:`after_draw` with its 14 cards once it has drawn. Stateful only in the randomness and
    the per-hand flags; everything it judges comes from the arguments.
    """

    seed: int
    temperament: Temperament = field(default_factory=Temperament)
    options: MeldOptions = DEFAULT_MELD_OPTIONS
    _rng: random.Random = field(init=False, repr=False)
    _stalling_hand: bool = field(init=False, default=False)
    _turns: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def client_seed(self) -> bytes:
        """32 bytes to contribute to a hand's deal (from the bot's seeded randomness)."""
        return self._rng.randbytes(32)

    def new_hand(self) -> None:
        """Forget the last hand; decide whether this whole hand is stalled."""
        self._turns = 0
        self._stalling_hand = self._rng.random() < self.temperament.stall_hand

    def before_draw(
        self, hand: list[Card] | tuple[Card, ...], top_discard: Card | None, wild: WildRank
    ) -> Move:
        """The first step of a turn with 13 cards: STALL, DROP or DRAW (with its source)."""
        self._turns += 1
        if self._stalling_hand or self._rng.random() < self.temperament.stall_turn:
            return Move(Kind.STALL)
        if (
            self._turns == 1
            and is_hopeless(hand, wild, self.options)
            and self._rng.random() < self.temperament.drop_hopeless
        ):
            return Move(Kind.DROP)
        return Move(Kind.DRAW, source=choose_draw(hand, top_discard, wild, self.options))

    def after_draw(
        self, hand: list[Card] | tuple[Card, ...], wild: WildRank, taken_from_pile: Card | None
    ) -> Move:
        """The second step with 14 cards: DECLARE (valid, or wrong once in a while) or DISCARD."""
        face_down = declaration(hand, wild, taken_from_pile, self.options)
        if face_down is not None:
            return Move(Kind.DECLARE, card=face_down)
        discard = choose_discard(hand, wild, taken_from_pile, self.options)
        if self._turns >= 5 and self._rng.random() < self.temperament.wrong_declare:
            return Move(Kind.DECLARE, card=discard, valid=False)
        return Move(Kind.DISCARD, card=discard)
