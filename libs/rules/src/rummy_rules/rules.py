"""The rule set of a table, as data.

A :class:`RuleSet` says everything a hand needs that is not a card: which shoe by seat count, how
many cards a hand gets, the clock, the money (point value in hundredths of a House Token, commission
in basis points) and the variant's own numbers. The generic part names nothing Indian; the Indian
13-card points numbers (drops, wrong declare, cap, meld options) live in :class:`IndianPointsRules`
in the section at the end, which a later variant (pool, deals, gin, rummy 500) replaces by its own.
Nothing here assumes one deal per match: a rule set describes one hand; a match format wraps hands.

Rules: ``docs/rules/rule-set.md`` (the house rule set and its options), ``docs/rules/cards.md#shoe``
(decks by seat count) and ``docs/rules/scoring.md`` (drops, wrong declare, the cap, missed turns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .deck import Shoe
from .melds import DEFAULT_MELD_OPTIONS, MeldOptions
from .wild import MAX_CARD_POINTS

BASIS_POINTS_PER_UNIT = 10_000


# --------------------------------------------------------------------------------------------------
# Indian 13-card points rummy (Bombay Baazi) section
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndianPointsRules:
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

    Raises ValueError for negative points or a cap below 1.
    """

    first_drop_points: int = 20
    middle_drop_points: int = 40
    wrong_declare_points: int = 80
    points_cap: int | None = None
    meld_options: MeldOptions = DEFAULT_MELD_OPTIONS
    no_discard_of_card_taken_from_pile: bool = True

    def __post_init__(self) -> None:
        for name in ("first_drop_points", "middle_drop_points", "wrong_declare_points"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.points_cap is not None and self.points_cap < 1:
            raise ValueError(f"points_cap must be None or >= 1, got {self.points_cap}")

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

    def max_loss_points(self, hand_size: int) -> int:
        """The most points one seat can be charged in a hand of ``hand_size`` cards
        (``docs/rules/scoring.md#maximum-loss``).

        The largest of: every card counting at the highest card value (10, after the cap), a wrong
        declare, a middle drop, a first drop. 130 at Bombay Baazi (13 x 10, uncapped); 80 with
        the 80 cap.
        """
        return max(
            self.capped(hand_size * MAX_CARD_POINTS),
            self.wrong_declare_points,
            self.middle_drop_points,
            self.first_drop_points,
        )


# --------------------------------------------------------------------------------------------------
# Generic rule set
# --------------------------------------------------------------------------------------------------

BOMBAY_BAAZI_SHOES: tuple[tuple[int, Shoe], ...] = (
    (4, Shoe(decks=2, printed_jokers=2)),
    (6, Shoe(decks=2, printed_jokers=2)),
    (8, Shoe(decks=3, printed_jokers=3)),
)
"""Seat count -> shoe at Bombay Baazi: 4 and 6 seats 2 decks + 2 jokers, 8 seats 3 + 3
(``docs/rules/cards.md#shoe``)."""


@dataclass(frozen=True)
class RuleSet:
    """Everything about a table's hands that is not a card (``docs/rules/rule-set.md#options``).

    - ``name``, ``version``: identify the rule set (``"bombay-baazi"``, 1); recorded with each hand.
    - ``variant``: which state machine plays it (``"indian-points"``).
    - ``seats``: the table's seat count; must be a key of ``shoes``.
    - ``shoes``: seat count -> shoe, as ``(seats, Shoe)`` pairs.
    - ``hand_size``: cards dealt to each seat (13).
    - ``min_players``: seats that must be dealt in for a hand to start (2).
    - ``max_missed_turns``: turns in a row a seat may miss before it is dropped (3).
    - ``turn_seconds``: seconds a seat has for one turn.
    - ``seed_window_seconds``: seconds the client-seed window stays open.
    - ``point_value_cents``: what one point costs, in hundredths of a House Token (0 = free table).
    - ``commission_bps``: the house commission on the winner's takings, in basis points (1/10000).
    - ``indian``: the Indian points numbers (drops, wrong declare, cap, meld options).

    Raises ValueError with a clear message for any value out of range.
    """

    name: str
    version: int
    variant: str
    seats: int
    shoes: tuple[tuple[int, Shoe], ...]
    hand_size: int
    min_players: int
    max_missed_turns: int
    turn_seconds: int
    seed_window_seconds: int
    point_value_cents: int
    commission_bps: int
    indian: IndianPointsRules = field(default_factory=IndianPointsRules)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a rule set needs a name")
        if self.version < 1:
            raise ValueError(f"version must be >= 1, got {self.version}")
        seat_counts = [s for s, _ in self.shoes]
        if len(set(seat_counts)) != len(seat_counts):
            raise ValueError(f"shoes lists a seat count twice: {seat_counts}")
        if self.seats not in seat_counts:
            allowed = "/".join(str(s) for s in sorted(seat_counts))
            raise ValueError(f"seat count must be one of {allowed}, got {self.seats}")
        if self.hand_size < 1:
            raise ValueError(f"hand_size must be >= 1, got {self.hand_size}")
        if self.min_players < 2:
            raise ValueError(f"min_players must be >= 2, got {self.min_players}")
        if self.min_players > self.seats:
            raise ValueError(
                f"min_players ({self.min_players}) cannot exceed the seat count ({self.seats})"
            )
        # Every seat's hand, the wild cut and the first open card must come out of the shoe,
        # with at least one card left for the stock.
        needed = self.seats * self.hand_size + 3
        if self.shoe.size < needed:
            raise ValueError(
                f"a shoe of {self.shoe.size} cards cannot deal {self.hand_size} cards to "
                f"{self.seats} seats plus the cut, the open card and a stock ({needed} needed)"
            )
        if self.max_missed_turns < 1:
            raise ValueError(f"max_missed_turns must be >= 1, got {self.max_missed_turns}")
        if self.turn_seconds < 1:
            raise ValueError(f"turn_seconds must be >= 1, got {self.turn_seconds}")
        if self.seed_window_seconds < 1:
            raise ValueError(f"seed_window_seconds must be >= 1, got {self.seed_window_seconds}")
        if self.point_value_cents < 0:
            raise ValueError(
                "point value must be >= 0 hundredths of a House Token, "
                f"got {self.point_value_cents}"
            )
        if not 0 <= self.commission_bps <= BASIS_POINTS_PER_UNIT:
            raise ValueError(
                f"commission must be 0..{BASIS_POINTS_PER_UNIT} basis points, "
                f"got {self.commission_bps}"
            )

    @property
    def shoe(self) -> Shoe:
        """The shoe for this table's seat count."""
        return self.shoes_by_seats[self.seats]

    @property
    def shoes_by_seats(self) -> Mapping[int, Shoe]:
        """``shoes`` as a mapping seat count -> shoe."""
        return dict(self.shoes)

    @property
    def max_loss_points(self) -> int:
        """The most points one seat can be charged in a hand (130 at Bombay Baazi, 80 if capped)."""
        return self.indian.max_loss_points(self.hand_size)


BOMBAY_BAAZI_NAME = "bombay-baazi"
BOMBAY_BAAZI_VERSION = 1
INDIAN_POINTS_VARIANT = "indian-points"


def bombay_baazi(
    seats: int,
    point_value_cents: int,
    commission_bps: int,
    *,
    points_cap: int | None = None,
    turn_seconds: int = 30,
    seed_window_seconds: int = 5,
    max_missed_turns: int = 3,
) -> RuleSet:
    """The Bombay Baazi 13-card points rule set for a table of ``seats`` (4, 6 or 8) seats
    (``docs/rules/rule-set.md#house-rule-set``).

    ``point_value_cents`` is in hundredths of a House Token per point (0 for a free table);
    ``commission_bps`` in basis points (0..10000); ``points_cap`` None (the house rule) or e.g. 80.
    Raises ValueError for any value out of range.
    """
    return RuleSet(
        name=BOMBAY_BAAZI_NAME,
        version=BOMBAY_BAAZI_VERSION,
        variant=INDIAN_POINTS_VARIANT,
        seats=seats,
        shoes=BOMBAY_BAAZI_SHOES,
        hand_size=13,
        min_players=2,
        max_missed_turns=max_missed_turns,
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        point_value_cents=point_value_cents,
        commission_bps=commission_bps,
        indian=IndianPointsRules(points_cap=points_cap),
    )
