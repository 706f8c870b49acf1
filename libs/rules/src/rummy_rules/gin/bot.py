"""The gin bot strategy (``GIN.bot``, a ``rummy_rules.bot.VariantBot``): pure, deterministic
choices among the hand's listed moves, from the seat's own cards and the pile's top only.

- The upcard at the first-turn offer, or the pile's top at a draw: taken when the eleven cards
  it makes leave less deadwood (its best discard, never the taken card) than the ten held now;
  otherwise pass the offer or draw from the stock.
- With eleven cards: big gin when listed; gin when some discard leaves 0; a knock when the
  deadwood left is within the limit (the knock is listed) unless it is :data:`GIN_CLOSE` or less
  early in the hand (before turn :data:`GIN_UNTIL_TURN`), when it plays on for gin; otherwise
  discard the card whose removal leaves the least deadwood, the highest-valued among those (the
  high deadwood goes first).
- It never gives a hand up (gin has no drop).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..bot import Situation
from ..cards import Card
from ..commands import Command, Discard, DrawFromDiscardPile, DrawFromStock
from ..formats.messages import DealRules
from .arrangement import card_index, card_value, deadwood_of
from .hand import DeclareBigGin, DeclareGin, GinKnock, GinPassUpcard

#: Deadwood (points) at or under which the bot plays on for gin rather than knock, early on.
GIN_CLOSE = 2
#: The seat's own turn before which it plays on for gin at :data:`GIN_CLOSE` or less.
GIN_UNTIL_TURN = 6


def _left(cards: Sequence[Card], card: Card) -> int:
    return deadwood_of([c for c in cards if c != card])


def _best_discard(cards: Sequence[Card], allowed: Sequence[Card]) -> tuple[Card, int]:
    """Among ``allowed`` discards, the one leaving the least deadwood, the highest-valued (then
    the last in card order) among those: ``(card, deadwood left)``."""
    scored = [(card, _left(cards, card)) for card in allowed]
    return min(scored, key=lambda cs: (cs[1], -card_value(cs[0]), -card_index(cs[0])))


def takes(cards: Sequence[Card], top: Card) -> bool:
    """Whether taking ``top`` leaves less deadwood (after the best discard other than it) than
    the ten ``cards`` have now."""
    eleven = [*cards, top]
    _, after = _best_discard(eleven, [c for c in cards])
    return after < deadwood_of(cards)


class GinBot:
    """The gin strategy (stateless)."""

    @staticmethod
    def choose(situation: Situation, legal: Sequence[Command]) -> Command:
        """One of ``legal`` (see the module)."""
        if not situation.has_drawn:
            take = next((c for c in legal if isinstance(c, DrawFromDiscardPile)), None)
            top = situation.discard_top
            if take is not None and top is not None and takes(situation.cards, top):
                return take
            other = next((c for c in legal if isinstance(c, GinPassUpcard | DrawFromStock)), None)
            return other if other is not None else legal[0]
        big = next((c for c in legal if isinstance(c, DeclareBigGin)), None)
        if big is not None:
            return big
        gin = next((c for c in legal if isinstance(c, DeclareGin)), None)
        if gin is not None:
            return gin
        discards = [c for c in legal if isinstance(c, Discard)]
        card, left = _best_discard(situation.cards, [c.card for c in discards])
        knock = next((c for c in legal if isinstance(c, GinKnock) and c.face_down == card), None)
        if knock is not None and not (left <= GIN_CLOSE and situation.turns < GIN_UNTIL_TURN):
            return knock
        return next(c for c in discards if c.card == card)

    @staticmethod
    def give_up(situation: Situation, legal: Sequence[Command]) -> Command | None:
        return None  # gin has no drop

    @staticmethod
    def give_up_points(deal_rules: DealRules) -> int | None:
        return None


GIN_BOT = GinBot()
