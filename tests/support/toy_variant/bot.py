"""The toy's bot strategy (``ToyKnock.bot``): pure choices from a seat's own five cards, in the
shape a bot host asks (``rummy_rules.bot.VariantBot``, over the toy's ``legal_commands``).

- before drawing: knock (the toy's own command, sent through ``Play``) when
  the hand's total is at most :data:`KNOCK_AT` points; otherwise draw;
- draw: always from the stock (the toy draws nothing else);
- discard: the costliest card (ace 1, faces 10), the card just drawn when it ties;
- it never gives a hand up (the toy has no drop).
"""

from __future__ import annotations

from collections.abc import Sequence

from rummy_rules.bot import Situation
from rummy_rules.cards import Card
from rummy_rules.commands import Command, Discard, DrawFromStock
from rummy_rules.formats.messages import DealRules

from .game import Knock, card_value

#: A total (points) at or under which the bot knocks instead of drawing.
KNOCK_AT = 14


def total(hand: list[Card] | tuple[Card, ...]) -> int:
    """The points ``hand`` counts at the showdown."""
    return sum(card_value(c) for c in hand)


class ToyBot:
    """The toy strategy as a ``rummy_rules.bot.VariantBot`` (stateless)."""

    @staticmethod
    def choose(situation: Situation, legal: Sequence[Command]) -> Command:
        """Knock at :data:`KNOCK_AT` points or under, else draw; then discard the costliest
        card (the card just drawn when it ties); always a listed move."""
        if not situation.has_drawn:
            knock = next((c for c in legal if isinstance(c, Knock)), None)
            draw = next((c for c in legal if isinstance(c, DrawFromStock)), None)
            if knock is not None and (total(situation.cards) <= KNOCK_AT or draw is None):
                return knock
            return draw if draw is not None else legal[0]
        hand = situation.cards
        costliest = max(card_value(c) for c in hand)
        card = next(c for c in reversed(hand) if card_value(c) == costliest)
        return next((c for c in legal if isinstance(c, Discard) and c.card == card), legal[0])

    @staticmethod
    def give_up(situation: Situation, legal: Sequence[Command]) -> Command | None:
        return None  # the toy has no drop

    @staticmethod
    def give_up_points(deal_rules: DealRules) -> int | None:
        return None


TOY_BOT = ToyBot()
