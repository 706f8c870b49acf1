"""The toy's bot strategy (``ToyKnock.bot``): pure choices from a seat's own five cards, in the
shape a bot host asks (``rummy_ops.bots.strategy.BotBrain``).

- before drawing: knock (the toy's own command, :data:`KNOCK_MOVE`, sent through ``Play``) when
  the hand's total is at most :data:`KNOCK_AT` points; otherwise draw;
- draw: always from the stock (the toy draws nothing else);
- discard: the costliest card (ace 1, faces 10), the card just drawn when it ties;
- no declare, and no hand is hopeless (the toy has no drop).
"""

from __future__ import annotations

from rummy_rules.cards import Card
from rummy_rules.events import DrawSource

from .game import card_value

#: A total (points) at or under which the bot knocks instead of drawing.
KNOCK_AT = 14
#: The bot's name for the toy's Knock (``ToyWire.bot_command`` makes the command of it).
KNOCK_MOVE = "knock"


def total(hand: list[Card] | tuple[Card, ...]) -> int:
    """The points ``hand`` counts at the showdown."""
    return sum(card_value(c) for c in hand)


class ToyBot:
    """The toy strategy as one value (stateless; ``wild`` and ``options`` are ignored: the toy
    has no wild card and no meld options)."""

    @staticmethod
    def move_before_draw(
        hand: list[Card] | tuple[Card, ...], top_discard: Card | None, wild: object
    ) -> str | None:
        return KNOCK_MOVE if total(hand) <= KNOCK_AT else None

    @staticmethod
    def choose_draw(
        hand: list[Card] | tuple[Card, ...], top: Card | None, wild: object, options: object
    ) -> DrawSource:
        return DrawSource.STOCK

    @staticmethod
    def choose_discard(
        hand: list[Card] | tuple[Card, ...], wild: object, taken: Card | None, options: object
    ) -> Card:
        costliest = max(card_value(c) for c in hand)
        return next(c for c in reversed(hand) if card_value(c) == costliest)

    @staticmethod
    def declaration(
        hand: list[Card] | tuple[Card, ...], wild: object, taken: Card | None, options: object
    ) -> Card | None:
        return None

    @staticmethod
    def is_hopeless(hand: list[Card] | tuple[Card, ...], wild: object, options: object) -> bool:
        return False


TOY_BOT = ToyBot()
