"""The gin family's rule sets (house plan "Gin family"; rulebook "Gin Rummy", "Oklahoma Gin").

One variant, ``gin``, plays Gin Rummy, Oklahoma Gin and Hollywood Gin: their hands differ only
by options (:class:`GinOptions`: Oklahoma's upcard limit and spade doubling, big gin, the
missed-turns forfeit), and Hollywood differs from Gin Rummy only by its match format (three
columns, ``rummy_rules.gin.match.hollywood_game``), not by anything of a hand. Two rule sets
name them for people and records: ``gin-rummy/1`` (Gin Rummy and Hollywood) and
``oklahoma-gin/1``.

The deal (``docs/rules/shuffle-spec.md#the-deal``, no cut): one 52-card deck without jokers, ten
cards each dealt one at a time from the non-dealer, then the upcard, the rest the stock.
``docs/rules/gin.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .. import json_form
from ..cards import Card
from ..deck import Shoe
from ..rules import DealShape, RuleSet, RuleSetError, VariantOptions
from .scoring import BIG_GIN_BONUS, GIN_BONUS, HandRules, oklahoma_rules

GIN_VARIANT = "gin"
GIN_RUMMY_NAME = "gin-rummy"
OKLAHOMA_GIN_NAME = "oklahoma-gin"
GIN_RULES_VERSION = 1
GIN_SEATS = 2
GIN_HAND_SIZE = 10
GIN_SHOE = Shoe(decks=1, printed_jokers=0)
#: The most deadwood ten cards can hold (two each of K, Q, J, 10, 9 with no run: 98 points).
MAX_DEADWOOD = 98
GIN_TURN_SECONDS = 30
GIN_SEED_WINDOW_SECONDS = 3
GIN_MAX_MISSED_TURNS = 3


@json_form.tag("gin.Options")
@dataclass(frozen=True)
class GinOptions(VariantOptions):
    """A gin hand's options: ``oklahoma`` (the upcard's value is the knock limit, ace 1, and a
    spade upcard doubles the hand's score; off: the limit is 10), ``big_gin`` (allowed; on by
    default), ``missed_turns_forfeit`` (a seat that misses the rule set's ``max_missed_turns``
    turns in a row forfeits: the match format takes the game from it at the cap; on by default).
    ``docs/rules/gin.md``."""

    deal_shape: ClassVar[DealShape] = DealShape(wild_cut=False, upcard=True)

    oklahoma: bool = False
    big_gin: bool = True
    missed_turns_forfeit: bool = True

    def check(self, rule_set: RuleSet) -> None:
        """Two seats, ten cards, one deck without jokers. Raises RuleSetError."""
        if rule_set.seats != GIN_SEATS or rule_set.min_players != GIN_SEATS:
            raise RuleSetError("seats", str(GIN_SEATS), rule_set.seats, "gin is for two players")
        if rule_set.hand_size != GIN_HAND_SIZE:
            raise RuleSetError("hand_size", str(GIN_HAND_SIZE), rule_set.hand_size)
        if rule_set.shoe != GIN_SHOE:
            raise RuleSetError("shoes", "one 52-card deck without jokers", rule_set.shoe)

    def max_loss_points(self, rule_set: RuleSet) -> int:
        """Big gin (or gin) against the most deadwood ten cards hold, doubled at Oklahoma."""
        bonus = BIG_GIN_BONUS if self.big_gin else GIN_BONUS
        return (MAX_DEADWOOD + bonus) * (2 if self.oklahoma else 1)

    def hand_rules(self, upcard: Card) -> HandRules:
        """The hand's scoring rules once its upcard is known: Oklahoma's limit and doubling, or
        the limit 10."""
        if self.oklahoma:
            return oklahoma_rules(upcard, big_gin=self.big_gin)
        return HandRules(big_gin=self.big_gin)


json_form.register(GinOptions)


def gin_rule_set(
    point_value_hundredths: int = 0,
    commission_bps: int = 0,
    *,
    oklahoma: bool = False,
    big_gin: bool = True,
    missed_turns_forfeit: bool = True,
    turn_seconds: int = GIN_TURN_SECONDS,
    seed_window_seconds: int = GIN_SEED_WINDOW_SECONDS,
    max_missed_turns: int = GIN_MAX_MISSED_TURNS,
) -> RuleSet:
    """A gin rule set (``gin-rummy/1``, or ``oklahoma-gin/1`` with ``oklahoma``) at two seats.
    A gin table plays games, so its hands are free (point value 0) and the match format holds
    the money; a point value is a hand's own stake. Raises RuleSetError."""
    return RuleSet(
        name=OKLAHOMA_GIN_NAME if oklahoma else GIN_RUMMY_NAME,
        version=GIN_RULES_VERSION,
        variant=GIN_VARIANT,
        seats=GIN_SEATS,
        shoes=((GIN_SEATS, GIN_SHOE),),
        hand_size=GIN_HAND_SIZE,
        min_players=GIN_SEATS,
        max_missed_turns=max_missed_turns,
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        point_value_hundredths=point_value_hundredths,
        commission_bps=commission_bps,
        options=GinOptions(
            oklahoma=oklahoma, big_gin=big_gin, missed_turns_forfeit=missed_turns_forfeit
        ),
    )


def gin_options(rule_set: RuleSet) -> GinOptions:
    """``rule_set``'s gin options. Raises RuleSetError if it is not a gin rule set."""
    if not isinstance(rule_set.options, GinOptions):
        raise RuleSetError("options", "GinOptions", type(rule_set.options).__name__)
    return rule_set.options
