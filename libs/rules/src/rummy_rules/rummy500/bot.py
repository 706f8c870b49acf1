"""The Rummy 500 bot strategy (``RUMMY500.bot``, a ``rummy_rules.bot.VariantBot``): pure,
deterministic choices among the round's listed moves, from the seat's own cards and the whole
discard pile (``Situation.discard_pile``).

- At the draw: dig when the deepest card's meld or lay-off is worth more than the cards taken
  above it that fit no group of the hand and cost points in hand (the best such dig, the
  shallowest on a tie); otherwise draw from the stock.
- Then: lay off every card that extends a meld on the table (anyone's), the highest value first;
  meld every group it holds, the most points first.
- Then discard: never a card that would complete a group with the pile's top (it would feed the
  next seat a dig), if it can help it; among the rest, the card that belongs to no pair or two of
  a run in hand, the highest value (ties: the greatest in the fixed card order).
- It never gives a round up (Rummy 500 has no drop).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..bot import Situation
from ..cards import Card
from ..commands import Command, Discard, DrawFromStock
from ..formats.messages import DealRules
from .melds import card_points, fixed_order
from .play import Rummy500LayOff, Rummy500Meld, Rummy500TakeFromPile, groups_with

#: The least a dig must gain (points) over drawing from the stock.
DIG_MARGIN = 1


def _gain(dig: Rummy500TakeFromPile, cards: Sequence[Card], pile: Sequence[Card]) -> int:
    """What a dig is worth: its meld's points (or the laid-off card's) minus the points of the
    other cards it takes that fit no group with the hand."""
    taken = tuple(pile[-dig.depth :]) if dig.depth <= len(pile) else ()
    if not taken:
        return 0
    used = set(dig.meld) if dig.meld else {taken[0]}
    gained = sum(card_points(c) for c in used)
    pool = (*cards, *taken)
    loose = [c for c in taken if c not in used and not groups_with(pool, c)]
    return gained - sum(card_points(c) for c in loose)


def _partners(card: Card, cards: Sequence[Card]) -> int:
    """How many other cards of the hand could share a group with ``card`` (same rank, or the
    same suit within two ranks)."""
    assert card.rank is not None
    out = 0
    for other in cards:
        if other is card or other.face == card.face or other.rank is None:
            continue
        if other.rank == card.rank or (
            other.suit == card.suit and abs(int(other.rank) - int(card.rank)) <= 2
        ):
            out += 1
    return out


def _feeds(card: Card, top: Card | None) -> bool:
    """Whether discarding ``card`` on ``top`` lets the two start a group the next seat could
    dig for (same rank, or the same suit next to each other)."""
    if top is None or top.rank is None or card.rank is None:
        return False
    return top.rank == card.rank or (
        top.suit == card.suit and abs(int(top.rank) - int(card.rank)) == 1
    )


class Rummy500Bot:
    """The Rummy 500 strategy (stateless)."""

    @staticmethod
    def choose(situation: Situation, legal: Sequence[Command]) -> Command:
        """One of ``legal`` (see the module)."""
        cards = situation.cards
        if not situation.has_drawn:
            digs = [c for c in legal if isinstance(c, Rummy500TakeFromPile)]
            scored = [(_gain(d, cards, situation.discard_pile), -d.depth, d) for d in digs]
            best = max(scored, key=lambda s: (s[0], s[1]), default=None)
            if best is not None and best[0] >= DIG_MARGIN:
                return best[2]
            stock = next((c for c in legal if isinstance(c, DrawFromStock)), None)
            return stock if stock is not None else legal[0]
        layoffs = [c for c in legal if isinstance(c, Rummy500LayOff)]
        if layoffs:
            return max(
                layoffs, key=lambda c: (card_points(c.card), fixed_order(c.card), -c.meld_id)
            )
        melds = [c for c in legal if isinstance(c, Rummy500Meld)]
        if melds:
            return max(
                melds,
                key=lambda c: (
                    sum(card_points(x) for g in c.groups for x in g),
                    len(c.groups[0]),
                    [fixed_order(x) for x in c.groups[0]],
                ),
            )
        discards = [c for c in legal if isinstance(c, Discard)]
        if not discards:
            return legal[0]
        top = situation.discard_pile[-1] if situation.discard_pile else situation.discard_top
        safe = [c for c in discards if not _feeds(c.card, top)] or discards
        return max(
            safe,
            key=lambda c: (
                -_partners(c.card, cards),
                card_points(c.card),
                fixed_order(c.card),
            ),
        )

    @staticmethod
    def give_up(situation: Situation, legal: Sequence[Command]) -> Command | None:
        return None  # Rummy 500 has no drop

    @staticmethod
    def give_up_points(deal_rules: DealRules) -> int | None:
        return None


RUMMY500_BOT = Rummy500Bot()
