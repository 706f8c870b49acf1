"""A cheap Indian points strategy for load tests: the exact solver once per turn.

The variant's own strategy (``rummy_rules.indian.bot``, the demo's bots) judges every draw and
discard with the exact solver: four to six ``best_arrangement`` / ``valid_discards`` calls a turn,
about 6 ms of CPU on the benchmark's machine, more than the table service spends on the turn's
two actions. A benchmark's bots must still play legal, complete hands (draw, discard, declare a
valid show as soon as they hold one, drop hopeless first hands now and then) so that reveals and
settlements happen, but need not play well. :class:`QuickIndianBot` has the shape of the
variant's judgements (``rummy_rules.indian.bot.IndianJudgement``: ``choose_draw``,
``choose_discard``, ``declaration``, ``is_hopeless``; give it to
:class:`~rummy_ops.bots.strategy.BotBrain` as ``strategy=IndianBot(QuickIndianBot())``, which plays
it over the variant's legal moves; it lives beside the benchmark
because it is the Indian variant's, and hosts such as ``rummy_ops`` import no variant's
package) and plays like this:

- **hopeless** (first turn, before drawing): no two natural cards of one suit are neighbours (so
  no pure sequence is within one draw) and the cards count at least
  ``rummy_rules.indian.bot.HOPELESS_POINTS`` (without a pure sequence every card counts); no
  solver call.
- **draw**: the discard pile's top card when it is a joker or makes a pure sequence or a set with
  two natural cards of the hand that are not both melded (as the melds kept from the bot's last
  discard say; none kept: every card counts as loose); otherwise the stock. No solver call.
- **after the draw** (14 cards): one ``best_arrangement``. Its points bound every show: laying
  down a card X and melding the other 13 is a grouping of the 14 counting X's points (at most
  ``MAX_CARD_POINTS``), so the valid face-down cards (``valid_discards``) are looked for only
  when the best points are at most that. The discard: among the arrangement's loose natural
  cards (never the card just taken from the pile), the one with the fewest partners among the
  loose cards (same suit one or two ranks away, same rank in another suit), the most points
  among those, then a fixed order; jokers only when nothing else is loose; a hand whose every
  card is melded falls back to the variant's ``choose_discard``.

The 14-card arrangement less its discarded loose card is the best arrangement of the 13 cards
kept (any better one, plus that loose card, would beat the 14-card best), so its melds are kept
for the next turn's draw. One instance per bot (it remembers that hand); not thread-safe.
"""

from __future__ import annotations

from itertools import combinations

from rummy_rules.cards import Card
from rummy_rules.events import DrawSource
from rummy_rules.indian import bot as indian_bot
from rummy_rules.indian.arrangement import Arrangement, best_arrangement, valid_discards
from rummy_rules.indian.decide import fixed_card_order
from rummy_rules.melds import DEFAULT_MELD_OPTIONS, MeldKind, MeldOptions, classify_group
from rummy_rules.wild import MAX_CARD_POINTS, WildRank, card_points, is_joker

Hand = list[Card] | tuple[Card, ...]


def _neighbours(a: Card, b: Card) -> bool:
    """Same suit, ranks one apart (the ace also next to the king)."""
    if a.suit != b.suit or a.rank is None or b.rank is None:
        return False
    gap = abs(int(a.rank) - int(b.rank))
    return gap in (1, 12)


def _partners(card: Card, cards: Hand) -> int:
    """Cards of ``cards`` that could share a meld with natural ``card``: the same suit one or two
    ranks away (the ace next to the king), or the same rank in another suit (itself and its
    copies from other decks do not count)."""
    count = 0
    for other in cards:
        if other.rank is None:
            continue
        if other.suit == card.suit:
            gap = abs(int(other.rank) - int(card.rank))  # type: ignore[arg-type]
            if gap in (1, 2, 11, 12):
                count += 1
        elif other.rank == card.rank:
            count += 1
    return count


class QuickIndianBot:
    """The Indian points strategy with one solver call a turn (see the module's docstring)."""

    def __init__(self) -> None:
        self._judged: tuple[tuple[Card, ...], WildRank, Arrangement] | None = None
        #: The cards kept after the last discard and which of them are melded.
        self._kept: tuple[frozenset[Card], frozenset[Card]] | None = None
        #: Solver calls made (``best_arrangement`` and ``valid_discards``), for benchmarks.
        self.solver_calls = 0

    def _arrangement(self, hand: Hand, wild: WildRank, options: MeldOptions) -> Arrangement:
        key = tuple(hand)
        if self._judged is not None and self._judged[0] == key and self._judged[1] == wild:
            return self._judged[2]
        self.solver_calls += 1
        arrangement = best_arrangement(key, wild, options)
        self._judged = (key, wild, arrangement)
        return arrangement

    def is_hopeless(
        self, hand: Hand, wild: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
    ) -> bool:
        """No two natural same-suit neighbours and at least ``HOPELESS_POINTS`` points."""
        naturals = [c for c in hand if not is_joker(c, wild)]
        if any(_neighbours(a, b) for a, b in combinations(naturals, 2)):
            return False
        return sum(card_points(c, wild) for c in hand) >= indian_bot.HOPELESS_POINTS

    def choose_draw(
        self,
        hand: Hand,
        top_discard: Card | None,
        wild: WildRank,
        options: MeldOptions = DEFAULT_MELD_OPTIONS,
    ) -> DrawSource:
        """The pile's top when it is a joker or makes a pure sequence or a set with two natural
        cards not both melded; else the stock."""
        if top_discard is None:
            return DrawSource.STOCK
        if is_joker(top_discard, wild):
            return DrawSource.DISCARD_PILE
        melded: frozenset[Card] = frozenset()
        if self._kept is not None and self._kept[0] == frozenset(hand):
            melded = self._kept[1]
        near = [c for c in hand if not is_joker(c, wild) and _partners(top_discard, (c,)) == 1]
        for a, b in combinations(near, 2):
            if a in melded and b in melded:
                continue
            if classify_group((a, b, top_discard), wild, options) in (
                MeldKind.PURE_SEQUENCE,
                MeldKind.SET,
            ):
                return DrawSource.DISCARD_PILE
        return DrawSource.STOCK

    def declaration(
        self,
        hand: Hand,
        wild: WildRank,
        taken_from_pile: Card | None = None,
        options: MeldOptions = DEFAULT_MELD_OPTIONS,
    ) -> Card | None:
        """A card to lay face down for a valid show with these 14 cards, or None; the solver's
        valid discards are asked only when the best arrangement counts at most 10 points."""
        if self._arrangement(hand, wild, options).points > MAX_CARD_POINTS:
            return None
        self.solver_calls += 1
        for card in valid_discards(hand, wild, options):
            if card != taken_from_pile:
                return card
        return None

    def choose_discard(
        self,
        hand: Hand,
        wild: WildRank,
        taken_from_pile: Card | None = None,
        options: MeldOptions = DEFAULT_MELD_OPTIONS,
    ) -> Card:
        """The loose natural card with the fewest loose partners, the costliest of those.
        Raises ValueError if no card may be discarded."""
        arrangement = self._arrangement(hand, wild, options)
        loose = [c for c in arrangement.deadwood if c != taken_from_pile]
        natural = [c for c in loose if not is_joker(c, wild)]
        if natural:
            card = min(
                natural,
                key=lambda c: (_partners(c, natural), -card_points(c, wild), fixed_card_order(c)),
            )
        elif loose:
            card = min(loose, key=fixed_card_order)
        else:  # every card melded: the variant's own choice (rare)
            self.solver_calls += 1
            card = indian_bot.choose_discard(hand, wild, taken_from_pile, options)
        kept = list(hand)
        kept.remove(card)
        melded = {c for m in arrangement.melds for c in m.cards} - {card}
        self._kept = (frozenset(kept), frozenset(melded))
        return card
