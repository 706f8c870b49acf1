"""A gin hand's score: knock, undercut, gin, big gin; Oklahoma's knock limit and spade doubling.

Rules: ``docs/rules/gin.md#hand-score`` (rulebook "Knocking", "Scoring after a knock", "Gin",
"Big Gin"): with the knocker's deadwood K and the defender's D after lay-offs, K < D: the knocker
scores D - K; D <= K: undercut, the defender scores K - D + 25; gin: the defender's deadwood (no
lay-offs) + 25; big gin: + 31. ``docs/rules/gin.md#oklahoma`` (rulebook "Oklahoma Gin"): the knock
limit is the upcard's value (ace 1, face cards 10); a spade upcard doubles the score, bonuses
included. ``docs/rules/gin.md#knocker-melds``: the knocker's named melds are accepted when valid
and within the limit, and its deadwood is then theirs. All amounts are points.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from rummy_rules import json_form
from rummy_rules.cards import Card, Suit

from . import solver
from .arrangement import (
    KNOCK_LIMIT,
    Arrangement,
    GinCardError,
    arrangement_of,
    best_arrangements_of_mask,
    card_value,
    hand_mask,
)
from .layoffs import Layoff, best_layoffs, knocker_arrangement

GIN_BONUS = 25
UNDERCUT_BONUS = 25
BIG_GIN_BONUS = 31


class IllegalKnock(ValueError):
    """A knock the rules refuse: deadwood over the limit, or big gin that is not (or is off)."""


@json_form.tag("gin.HandRules")
@dataclass(frozen=True, slots=True)
class HandRules:
    """What one gin hand is scored under (``docs/rules/gin.md#hand-score``).

    ``knock_limit`` in points (10; Oklahoma: the upcard's value); ``doubled``: the score counts
    twice (Oklahoma's spade upcard); ``big_gin``: big gin is allowed (on by default); the bonuses
    in points.
    """

    knock_limit: int = KNOCK_LIMIT
    doubled: bool = False
    big_gin: bool = True
    gin_bonus: int = GIN_BONUS
    undercut_bonus: int = UNDERCUT_BONUS
    big_gin_bonus: int = BIG_GIN_BONUS


def oklahoma_rules(upcard: Card, *, big_gin: bool = True) -> HandRules:
    """The hand rules of an Oklahoma hand whose upcard is ``upcard``: the limit its value (ace 1,
    face cards 10), doubled when it is a spade (``docs/rules/gin.md#oklahoma``). Raises
    GinCardError for a card that is not of the deck."""
    return HandRules(
        knock_limit=card_value(upcard), doubled=upcard.suit is Suit.SPADES, big_gin=big_gin
    )


class Outcome(Enum):
    """How a scored hand ended."""

    KNOCK = "knock"
    UNDERCUT = "undercut"
    GIN = "gin"
    BIG_GIN = "big_gin"


class Side(Enum):
    """Who scores the hand."""

    KNOCKER = "knocker"
    DEFENDER = "defender"


@dataclass(frozen=True, slots=True)
class HandPoints:
    """Who scores and how many points, the doubling included."""

    outcome: Outcome
    winner: Side
    points: int


def hand_points(
    outcome: Outcome, knocker_deadwood: int, defender_deadwood: int, rules: HandRules
) -> HandPoints:
    """The score of a hand from its deadwoods (``docs/rules/gin.md#hand-score``).

    ``outcome`` is GIN or BIG_GIN for those (``knocker_deadwood`` is then 0 and
    ``defender_deadwood`` is without lay-offs); for a knock pass KNOCK, and an undercut
    (``defender_deadwood <= knocker_deadwood``) is found here. Raises IllegalKnock for a knock over
    the limit or a big gin the rules turn off.
    """
    factor = 2 if rules.doubled else 1
    if outcome is Outcome.BIG_GIN:
        if not rules.big_gin:
            raise IllegalKnock("big gin is not played at this table")
        return HandPoints(outcome, Side.KNOCKER, factor * (defender_deadwood + rules.big_gin_bonus))
    if outcome is Outcome.GIN or knocker_deadwood == 0:
        return HandPoints(Outcome.GIN, Side.KNOCKER, factor * (defender_deadwood + rules.gin_bonus))
    if knocker_deadwood > rules.knock_limit:
        raise IllegalKnock(
            f"deadwood {knocker_deadwood} is over the knock limit {rules.knock_limit}"
        )
    if knocker_deadwood < defender_deadwood:
        return HandPoints(
            Outcome.KNOCK, Side.KNOCKER, factor * (defender_deadwood - knocker_deadwood)
        )
    return HandPoints(
        Outcome.UNDERCUT,
        Side.DEFENDER,
        factor * (knocker_deadwood - defender_deadwood + rules.undercut_bonus),
    )


@dataclass(frozen=True, slots=True)
class HandScore:
    """A scored knock, gin or big gin.

    ``knocker``: the knocker's arrangement (its melds are what the defender laid off onto);
    ``defender``: the best arrangement of the cards the defender kept; ``layoffs`` onto the
    knocker's melds (none for gin and big gin); the deadwoods in points, the defender's after
    lay-offs; ``points`` to ``winner``.
    """

    outcome: Outcome
    winner: Side
    points: int
    knocker: Arrangement
    defender: Arrangement
    layoffs: tuple[Layoff, ...]
    knocker_deadwood: int
    defender_deadwood: int


def score_knock(
    knocker_cards: Sequence[Card],
    defender_cards: Sequence[Card],
    rules: HandRules = HandRules(),
    named_melds: Iterable[Sequence[Card]] | None = None,
) -> HandScore:
    """Score a knock (gin when the knocker's deadwood is 0) with ten cards each, the knock card
    already laid down.

    With ``named_melds`` the knocker's arrangement is those melds
    (``docs/rules/gin.md#knocker-melds``); otherwise the server's choice of
    ``knocker_arrangement``. Raises IllegalKnock when the knocker's deadwood is over the limit,
    GinCardError for bad cards, bad melds or hands of another size.
    """
    if len(knocker_cards) != 10 or len(defender_cards) != 10:
        raise GinCardError("a knock is scored with ten cards each")
    if hand_mask(knocker_cards) & hand_mask(defender_cards):
        raise GinCardError("the knocker and the defender hold the same card")
    if named_melds is not None:
        knocker = arrangement_of(knocker_cards, named_melds)
    else:
        knocker = best_arrangements_of_mask(hand_mask(knocker_cards))[0]
    if knocker.deadwood == 0:
        return _gin(Outcome.GIN, knocker, defender_cards, rules)
    if knocker.deadwood > rules.knock_limit:
        raise IllegalKnock(
            f"deadwood {knocker.deadwood} is over the knock limit {rules.knock_limit}"
        )
    if named_melds is not None:
        answer = best_layoffs(defender_cards, knocker.melds)
    else:
        choice = knocker_arrangement(knocker_cards, defender_cards)
        knocker, answer = choice.knocker, choice.defender
    result = hand_points(Outcome.KNOCK, knocker.deadwood, answer.deadwood, rules)
    return HandScore(
        result.outcome,
        result.winner,
        result.points,
        knocker,
        answer.kept,
        answer.layoffs,
        knocker.deadwood,
        answer.deadwood,
    )


def score_big_gin(
    knocker_cards: Sequence[Card],
    defender_cards: Sequence[Card],
    rules: HandRules = HandRules(),
) -> HandScore:
    """Score big gin: eleven knocker cards all melded, the defender's ten with no lay-off
    (``docs/rules/gin.md#gin``). Raises IllegalKnock when the eleven are not all melded or big gin
    is off, GinCardError for bad cards."""
    if len(knocker_cards) != 11 or len(defender_cards) != 10:
        raise GinCardError("big gin is scored with eleven cards against ten")
    if hand_mask(knocker_cards) & hand_mask(defender_cards):
        raise GinCardError("the knocker and the defender hold the same card")
    knocker = best_arrangements_of_mask(hand_mask(knocker_cards))[0]
    if knocker.deadwood:
        raise IllegalKnock("big gin needs all eleven cards melded")
    return _gin(Outcome.BIG_GIN, knocker, defender_cards, rules)


def _gin(
    outcome: Outcome, knocker: Arrangement, defender_cards: Sequence[Card], rules: HandRules
) -> HandScore:
    defender = best_arrangements_of_mask(hand_mask(defender_cards))[0]
    result = hand_points(outcome, 0, defender.deadwood, rules)
    return HandScore(
        result.outcome, result.winner, result.points, knocker, defender, (), 0, defender.deadwood
    )


def deadwood_points(cards: Iterable[Card]) -> int:
    """The exact deadwood (points) of any cards (``docs/rules/gin.md#deadwood``)."""
    return solver.deadwood(hand_mask(cards))
