"""Rummy 500's rule set (house plan "Rummy 500"; rulebook "Rummy 500", "Players and Cards").

One variant, ``rummy500``, one rule set ``rummy-500/1``. The shoe is one 52-card deck without
jokers for a table of 2-4 seats and two decks for 5-8 (the table's seat count picks it, as at
every table). Seven cards each; 13 is an option where at least 12 cards are left in the stock
after the deal and the upcard (up to 3 seats with one deck, up to 7 with two). The deal
(``docs/rules/shuffle-spec.md#the-deal``, no cut): the hands one card at a time from the seat
after the dealer, then the upcard (the discard pile's first card), the rest the stock.
``docs/rules/rummy500.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .. import json_form
from ..deck import Shoe
from ..rules import DealShape, RuleSet, RuleSetError, VariantOptions

RUMMY500_VARIANT = "rummy500"
RUMMY500_NAME = "rummy-500"
RUMMY500_RULES_VERSION = 1
MIN_SEATS = 2
MAX_SEATS = 8
#: The most seats one deck serves; more take two decks.
ONE_DECK_SEATS = 4
HAND_SIZE = 7
LONG_HAND_SIZE = 13
#: The fewest stock cards the 13-card option must leave after the deal and the upcard.
MIN_STOCK_FOR_LONG_HANDS = 12
ONE_DECK = Shoe(decks=1, printed_jokers=0)
TWO_DECKS = Shoe(decks=2, printed_jokers=0)
TURN_SECONDS = 30
SEED_WINDOW_SECONDS = 3
MAX_MISSED_TURNS = 3
#: The points of one deck's cards (aces 15, faces 10, others face value): 4 x (15 + 54 + 30).
DECK_POINTS = 396


def shoe_for(seats: int) -> Shoe:
    """The shoe of a table of ``seats`` seats: one deck for 2-4, two for 5-8."""
    return ONE_DECK if seats <= ONE_DECK_SEATS else TWO_DECKS


@json_form.tag("rummy500.Options")
@dataclass(frozen=True)
class Rummy500Options(VariantOptions):
    """A Rummy 500 round's options: ``low_ace_one`` (an ace melded low, in A-2-3..., counts 1
    point instead of 15; off by default: every ace counts 15). ``docs/rules/rummy500.md#scores``.
    """

    deal_shape: ClassVar[DealShape] = DealShape(wild_cut=False, upcard=True)

    low_ace_one: bool = False

    def check(self, rule_set: RuleSet) -> None:
        """2-8 seats, the shoe of the seat count, 7 cards or 13 where the stock keeps 12.
        Raises RuleSetError."""
        if not MIN_SEATS <= rule_set.seats <= MAX_SEATS:
            raise RuleSetError("seats", f"{MIN_SEATS}..{MAX_SEATS}", rule_set.seats)
        want = shoe_for(rule_set.seats)
        if rule_set.shoe != want:
            raise RuleSetError(
                "shoes",
                f"{want.decks} deck(s) without jokers at {rule_set.seats} seats",
                rule_set.shoe,
            )
        if rule_set.hand_size not in (HAND_SIZE, LONG_HAND_SIZE):
            raise RuleSetError("hand_size", f"{HAND_SIZE} or {LONG_HAND_SIZE}", rule_set.hand_size)
        stock = rule_set.shoe.size - rule_set.seats * rule_set.hand_size - 1
        if rule_set.hand_size == LONG_HAND_SIZE and stock < MIN_STOCK_FOR_LONG_HANDS:
            raise RuleSetError(
                "hand_size",
                str(HAND_SIZE),
                rule_set.hand_size,
                f"13 cards at {rule_set.seats} seats leave {stock} stock cards, "
                f"fewer than {MIN_STOCK_FOR_LONG_HANDS}",
            )

    def max_loss_points(self, rule_set: RuleSet) -> int:
        """A round charges nobody (every seat scores, and the match format holds the money), so
        this is only the bound of a round's score below zero: every card of the shoe in one
        hand."""
        return DECK_POINTS * rule_set.shoe.decks


json_form.register(Rummy500Options)


def rummy500_rule_set(
    seats: int = 4,
    *,
    hand_size: int = HAND_SIZE,
    low_ace_one: bool = False,
    turn_seconds: int = TURN_SECONDS,
    seed_window_seconds: int = SEED_WINDOW_SECONDS,
    max_missed_turns: int = MAX_MISSED_TURNS,
) -> RuleSet:
    """The rule set ``rummy-500/1`` for a table of ``seats`` (2-8). A round is free (point
    value 0): the match to 500 holds the money (``rummy_rules.formats.race_to``). Raises
    RuleSetError."""
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise RuleSetError("seats", f"{MIN_SEATS}..{MAX_SEATS}", seats)
    return RuleSet(
        name=RUMMY500_NAME,
        version=RUMMY500_RULES_VERSION,
        variant=RUMMY500_VARIANT,
        seats=seats,
        shoes=((seats, shoe_for(seats)),),
        hand_size=hand_size,
        min_players=MIN_SEATS,
        max_missed_turns=max_missed_turns,
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        point_value_hundredths=0,
        commission_bps=0,
        options=Rummy500Options(low_ace_one=low_ace_one),
    )


def rummy500_options(rule_set: RuleSet) -> Rummy500Options:
    """``rule_set``'s options. Raises RuleSetError if it is not a Rummy 500 rule set."""
    if not isinstance(rule_set.options, Rummy500Options):
        raise RuleSetError("options", "Rummy500Options", type(rule_set.options).__name__)
    return rule_set.options
