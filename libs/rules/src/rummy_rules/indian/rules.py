"""The Indian 13-card points rule set (Bombay Baazi): its options, their bounds and the house rule.

:class:`IndianPointsRules` is the ``options`` of a ``rummy_rules.rules.RuleSet`` whose variant is
``indian-points``: drops, wrong declare, the cap, the meld options, and the Indian deal (a wild
cut and an upcard). :func:`bombay_baazi` is the house rule set for 4, 6 or 8 seats (or 2 to 6
on the rulebook's shoes, :class:`IndianShoes`); :func:`match_deal_rule_set` is one deal of a
match format (``rummy_rules.formats``). Rules:
``docs/rules/rule-set.md``, ``docs/rules/cards.md#shoe``, ``docs/rules/scoring.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from .. import json_form
from ..deck import Shoe
from ..formats.messages import DealRules
from ..melds import DEFAULT_MELD_OPTIONS, MeldOptions
from ..rules import CUT_AND_UPCARD, DealShape, RuleSet, RuleSetError, VariantOptions, check_bounds
from ..wild import MAX_CARD_POINTS


@json_form.tag("indian.PointsRules")
@dataclass(frozen=True)
class IndianPointsRules(VariantOptions):
    """Scoring numbers of Indian points rummy, in points (``docs/rules/scoring.md#outcomes``).

    - ``first_drop_points``: dropping before one's first draw (20).
    - ``middle_drop_points``: dropping after one's first draw, or leaving mid-hand (40); also what a
      seat that misses ``RuleSet.max_missed_turns`` turns in a row is charged.
    - ``wrong_declare_points``: showing 13 cards that do not form a valid declaration (80).
    - ``points_cap``: the most a loser's counted cards can cost, or ``None`` for no cap (Bombay
      Baazi); 80 is the usual option elsewhere. Penalties above are fixed and not capped.
    - ``meld_options``: the meld rulings that are options (``rummy_rules.melds.MeldOptions``): a
      group made only of jokers counts as an impure sequence (on); the same face never twice in one
      group, even when one copy stands in as a joker (on); the ace runs high as well as low (on).
    - ``no_discard_of_card_taken_from_pile``: the card drawn from the discard pile cannot be
      discarded in the same turn (ruling, on).

    Raises RuleSetError for negative points or a cap below 1 (the bounds that depend on the hand
    size are checked by :meth:`check`, which :class:`RuleSet` calls).
    """

    #: The Indian deal: a wild-rank cut card (out of play) and the first open card.
    deal_shape: ClassVar[DealShape] = CUT_AND_UPCARD

    first_drop_points: int = 20
    middle_drop_points: int = 40
    wrong_declare_points: int = 80
    points_cap: int | None = None
    meld_options: MeldOptions = DEFAULT_MELD_OPTIONS
    no_discard_of_card_taken_from_pile: bool = True

    def __post_init__(self) -> None:
        for name in PENALTY_OPTIONS:
            if getattr(self, name) < 0:
                raise RuleSetError(name, ">= 0", getattr(self, name))
        if self.points_cap is not None and self.points_cap < 1:
            raise RuleSetError("points_cap", "None or >= 1", self.points_cap)

    @property
    def leave_points(self) -> int:
        """Points for leaving mid-hand: the middle drop."""
        return self.middle_drop_points

    def capped(self, counted_points: int) -> int:
        """A loser's counted points after the cap, unchanged when uncapped
        (``docs/rules/scoring.md#cap``).

        Raises ValueError if ``counted_points`` < 0.
        """
        if counted_points < 0:
            raise ValueError(f"counted points must be >= 0, got {counted_points}")
        if self.points_cap is None:
            return counted_points
        return min(counted_points, self.points_cap)

    def max_counted_points(self, hand_size: int) -> int:
        """The most a loser's counted cards can cost in a hand of ``hand_size`` cards: every card
        at the highest card value (10), after the cap. 130 at Bombay Baazi; 80 with the 80 cap."""
        return self.capped(hand_size * MAX_CARD_POINTS)

    def max_loss_points(self, rule_set: RuleSet) -> int:
        """The most points one seat can be charged in a hand of ``rule_set`` (its hand size)
        (``docs/rules/scoring.md#maximum-loss``).

        The largest of: the most counted cards can cost (:meth:`max_counted_points`), a wrong
        declare, a middle drop, a first drop. 130 at Bombay Baazi (13 x 10, uncapped); 80 with
        the 80 cap. A valid :class:`RuleSet` keeps every penalty within the counted maximum, so
        this is the counted maximum there.
        """
        return max(
            self.max_counted_points(rule_set.hand_size),
            self.wrong_declare_points,
            self.middle_drop_points,
            self.first_drop_points,
        )

    def check(self, rule_set: RuleSet) -> None:
        """Raise :class:`RuleSetError` for a cap above what the rule set's hand of cards can
        count, or a penalty above the most counted cards can cost (the reservation is made for
        that)."""
        hand_size = rule_set.hand_size
        most = hand_size * MAX_CARD_POINTS
        if self.points_cap is not None:
            check_bounds(
                "points_cap", self.points_cap, 1, most, f"{hand_size} cards count at most {most}"
            )
        counted = self.max_counted_points(hand_size)
        why = (
            f"no more than the cap of {counted} points the reservation is made for"
            if self.points_cap is not None
            else f"no more than the {counted} points {hand_size} cards can count, "
            "which the reservation is made for"
        )
        for name in PENALTY_OPTIONS:
            check_bounds(name, getattr(self, name), 0, counted, why)


#: The fixed penalties of Indian points rummy, each within the most counted cards can cost.
PENALTY_OPTIONS = ("first_drop_points", "middle_drop_points", "wrong_declare_points")


json_form.register(IndianPointsRules)

BOMBAY_BAAZI_SHOES: tuple[tuple[int, Shoe], ...] = (
    (4, Shoe(decks=2, printed_jokers=2)),
    (6, Shoe(decks=2, printed_jokers=2)),
    (8, Shoe(decks=3, printed_jokers=3)),
)
"""Seat count -> shoe at Bombay Baazi: 4 and 6 seats 2 decks + 2 jokers, 8 seats 3 + 3
(``docs/rules/cards.md#shoe``)."""

#: The rulebook's shoe ("Indian Rummy", "Players and Cards"): two decks and four printed jokers.
RULEBOOK_SHOE = Shoe(decks=2, printed_jokers=4)
#: The rulebook's heads-up option: one deck and two printed jokers for two players.
HEADS_UP_SHOE = Shoe(decks=1, printed_jokers=2)
#: The cap on a loser's counted cards "most platforms" use (rulebook "Scoring and Points").
RULEBOOK_POINTS_CAP = 80


class IndianShoes(Enum):
    """Which shoes a table deals from, by seat count (``docs/rules/cards.md#shoe``):

    - ``BOMBAY_BAAZI``: 4 or 6 seats 2 decks + 2 printed jokers (106), 8 seats 3 + 3 (159);
    - ``RULEBOOK``: 2 to 6 seats, 2 decks + 4 printed jokers (108);
    - ``RULEBOOK_ONE_DECK_HEADS_UP``: as ``RULEBOOK``, but 2 seats 1 deck + 2 printed jokers (54).
    """

    BOMBAY_BAAZI = "bombay-baazi"
    RULEBOOK = "rulebook"
    RULEBOOK_ONE_DECK_HEADS_UP = "rulebook-one-deck-heads-up"

    @property
    def shoes(self) -> tuple[tuple[int, Shoe], ...]:
        """Seat count -> shoe, as a rule set's ``shoes``."""
        if self is IndianShoes.BOMBAY_BAAZI:
            return BOMBAY_BAAZI_SHOES
        rulebook = tuple((seats, RULEBOOK_SHOE) for seats in range(2, 7))
        if self is IndianShoes.RULEBOOK:
            return rulebook
        return ((2, HEADS_UP_SHOE), *rulebook[1:])


BOMBAY_BAAZI_NAME = "bombay-baazi"
BOMBAY_BAAZI_VERSION = 1
INDIAN_POINTS_VARIANT = "indian-points"


def bombay_baazi(
    seats: int,
    point_value_hundredths: int,
    commission_bps: int,
    *,
    points_cap: int | None = None,
    turn_seconds: int = 30,
    seed_window_seconds: int = 5,
    max_missed_turns: int = 3,
    shoes: IndianShoes = IndianShoes.BOMBAY_BAAZI,
) -> RuleSet:
    """The Bombay Baazi 13-card points rule set for a table of ``seats`` seats (4, 6 or 8; with
    the rulebook's ``shoes``, 2 to 6) (``docs/rules/rule-set.md#house-rule-set``).

    ``point_value_hundredths`` is in hundredths of a House Token per point (0 for a free table);
    ``commission_bps`` in basis points (0..10000); ``points_cap`` None (the house rule) or the
    rulebook's :data:`RULEBOOK_POINTS_CAP` (80; any cap 1..130 is accepted), which makes the
    reservation cap x point value. Raises RuleSetError for any value out of range (a seat count
    the shoes have no shoe for included).
    """
    return _indian_rule_set(
        seats,
        point_value_hundredths,
        commission_bps,
        IndianPointsRules(points_cap=points_cap),
        shoes,
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        max_missed_turns=max_missed_turns,
    )


#: The Indian rules of one deal of each match format (house plan "Indian formats";
#: ``docs/rules/formats.md#deal-rules``): (format kind, target) -> (first drop, middle drop
#: (also leaving mid-deal and missed turns), wrong declare, counted cards capped at), points.
FORMAT_DEAL_POINTS: dict[tuple[str, int], tuple[int, int, int, int]] = {
    ("pool", 101): (20, 40, 80, 80),
    ("pool", 201): (25, 50, 80, 80),
    ("deals", 0): (20, 40, 80, 80),
    ("best-of", 0): (20, 40, 80, 80),
}
#: The seats of an Indian pool, deals or best-of table (the rulebook's 2-6 players; house plan
#: "Indian formats"), whatever the format itself would seat.
FORMAT_SEATS = (2, 6)


def format_deal_options(deal_rules: DealRules) -> IndianPointsRules:
    """The Indian options of one deal of the format ``deal_rules`` asks for
    (:data:`FORMAT_DEAL_POINTS`). Raises RuleSetError (option ``format``) for a format Indian
    points deals no such deals of."""
    points = FORMAT_DEAL_POINTS.get((deal_rules.kind, deal_rules.target))
    if points is None:
        asked = f"{deal_rules.kind}" + (f" {deal_rules.target}" if deal_rules.target else "")
        raise RuleSetError("format", "a pool 101 or 201, deals or best of N", repr(asked))
    first, middle, wrong, cap = points
    return IndianPointsRules(
        first_drop_points=first,
        middle_drop_points=middle,
        wrong_declare_points=wrong,
        points_cap=cap,
    )


def match_deal_rule_set(
    seats: int,
    deal_rules: DealRules,
    *,
    shoes: IndianShoes = IndianShoes.RULEBOOK,
    turn_seconds: int = 30,
    seed_window_seconds: int = 5,
    max_missed_turns: int = 3,
) -> RuleSet:
    """The rule set of one deal of an Indian match format (pool, deals, best of N) at a table of
    ``seats`` (:data:`FORMAT_SEATS`: 2 to 6) seats: the drops, wrong declare and cap of the
    format ``deal_rules`` asks for (:func:`format_deal_options`; e.g.
    ``rummy_rules.formats.Pool(target=201).deal_rules``) on the rulebook's shoes, played free
    (point value 0, no commission): the format owns the match's money
    (``docs/rules/formats.md#deal-rules``). Raises RuleSetError for another format, a seat count
    outside 2 to 6 or any value out of range."""
    options = format_deal_options(deal_rules)
    check_bounds("seats", seats, *FORMAT_SEATS, "the seats of an Indian pool, deals or best of N")
    return _indian_rule_set(
        seats,
        0,
        0,
        options,
        shoes,
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        max_missed_turns=max_missed_turns,
    )


def _indian_rule_set(
    seats: int,
    point_value_hundredths: int,
    commission_bps: int,
    options: IndianPointsRules,
    shoes: IndianShoes,
    *,
    turn_seconds: int,
    seed_window_seconds: int,
    max_missed_turns: int,
) -> RuleSet:
    return RuleSet(
        name=BOMBAY_BAAZI_NAME,
        version=BOMBAY_BAAZI_VERSION,
        variant=INDIAN_POINTS_VARIANT,
        seats=seats,
        shoes=shoes.shoes,
        hand_size=13,
        min_players=2,
        max_missed_turns=max_missed_turns,
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        point_value_hundredths=point_value_hundredths,
        commission_bps=commission_bps,
        options=options,
    )


def indian_rules(rule_set: RuleSet) -> IndianPointsRules:
    """The Indian options of ``rule_set``. Raises RuleSetError if it is another variant's."""
    if not isinstance(rule_set.options, IndianPointsRules):
        raise RuleSetError("options", "IndianPointsRules", type(rule_set.options).__name__)
    return rule_set.options
