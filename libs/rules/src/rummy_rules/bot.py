"""What a variant's bot strategy is to a bot host: :class:`VariantBot`, choosing one of the moves
the variant lists (``Variant.legal_commands``) from what the seat knows (:class:`Situation`).

A host (``rummy_ops.bots.strategy.BotBrain``) adds the bot's temperament and randomness around
it; the strategy itself is pure and deterministic, and it never chooses a move that was not
listed. Nothing here fixes a hand size, a command or a way to end a hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .cards import Card
from .commands import Command
from .formats.messages import DealRules


@dataclass(frozen=True)
class Situation:
    """What ``seat`` knows on its turn, from its own view: its ``cards`` (drawn card included),
    the discard pile's top (``discard_top``), the ``wild_cut`` (None: the variant cuts none),
    whether it has drawn this turn, the card it took from the discard pile this turn
    (``taken_from_pile``; None if it drew from the stock or has not drawn), how many turns it
    has started in this hand, this one included (``turns``, from 1), and the whole discard pile
    as its view shows it (``discard_pile``, bottom first; a game that digs the pile weighs the
    cards above a card it would take)."""

    seat: int
    cards: tuple[Card, ...]
    discard_top: Card | None = None
    wild_cut: Card | None = None
    has_drawn: bool = False
    taken_from_pile: Card | None = None
    turns: int = 1
    discard_pile: tuple[Card, ...] = ()


class VariantBot(Protocol):
    """A variant's bot strategy (``Variant.bot``)."""

    def choose(self, situation: Situation, legal: Sequence[Command]) -> Command:
        """One of ``legal`` (never empty): the move the strategy plays."""
        ...

    def give_up(self, situation: Situation, legal: Sequence[Command]) -> Command | None:
        """One of ``legal`` that gives the hand up for a fixed price (Indian points: a drop)
        when the strategy judges the hand not worth playing; None otherwise. The host decides
        whether to take it (its temperament, a match's standing)."""
        ...

    def give_up_points(self, deal_rules: DealRules) -> int | None:
        """What giving a hand up (:meth:`give_up`) costs, in points, in a deal of the match
        format asking ``deal_rules`` (Indian points: the format's first drop), or None when the
        strategy never gives a hand up there. A host weighs it against the match's standing
        (a pool seat stays in only while its total plus this is below the target)."""
        ...
