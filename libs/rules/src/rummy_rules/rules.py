"""The rule set of a table, as data.

A :class:`RuleSet` says everything a hand needs that is not a card: which shoe by seat count, how
many cards a hand gets, the clock, the money (point value in hundredths of a House Token, commission
in basis points) and the variant's own numbers. The generic part names nothing Indian; the Indian
13-card points numbers (drops, wrong declare, cap, meld options) live in :class:`IndianPointsRules`
in the section at the end, which a later variant (pool, deals, gin, rummy 500) replaces by its own.
Nothing here assumes one deal per match: a rule set describes one hand; a match format wraps hands.

Validation (the one home of a table's option bounds, used by the table service's OpenTable, the
table and the replay tool alike): every numeric option has stated bounds, and a value outside
them raises :class:`RuleSetError` naming the option and its bounds. Building a :class:`RuleSet`
checks everything a rule set alone decides (seats, clock seconds, missed-turn limit, penalties
within the most counted cards can cost, the commission, a point value whose largest hand fits a
signed 64-bit amount); :func:`validate_table_options` adds what a host decides (its start delay
and its configured maximum reservation). Bounds, inclusive:

- seats: a seat count of the rule set's shoes (4, 6 or 8 at Bombay Baazi);
- ``turn_seconds`` 1..3600, ``seed_window_seconds`` 1..600, start delay 0..3600 seconds (0: a
  hand starts as soon as enough players sit; it is no deadline anyone must meet);
- ``max_missed_turns`` 1..10;
- ``points_cap``: None or 1..``hand_size`` x 10 (130);
- first drop, middle drop, wrong declare: 0..the most a loser's counted cards can cost (130 uncapped
  at 13 cards, or the cap): the reservation is made for that maximum, so no penalty exceeds it;
- ``commission_bps`` 0..10000 (100%);
- ``point_value_cents`` >= 0 with (seats - 1) x max loss x point value <= 2^63 - 1 (what a winner
  can receive fits an int64), and, at a host, max loss x point value <= its maximum reservation.

Rules: ``docs/rules/rule-set.md`` (the house rule set, its options and their bounds,
``docs/rules/rule-set.md#validation``), ``docs/rules/cards.md#shoe`` (decks by seat count) and
``docs/rules/scoring.md`` (drops, wrong declare, the cap, missed turns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .deck import Shoe
from .melds import DEFAULT_MELD_OPTIONS, MeldOptions
from .wild import MAX_CARD_POINTS

BASIS_POINTS_PER_UNIT = 10_000
#: The largest amount a signed 64-bit field holds (every amount on the wire and in the ledger).
INT64_MAX = 2**63 - 1
MAX_TURN_SECONDS = 3_600
MAX_SEED_WINDOW_SECONDS = 600
MAX_START_DELAY_SECONDS = 3_600
MAX_MISSED_TURNS = 10


class RuleSetError(ValueError):
    """A rule-set option out of its bounds (a host answers INVALID_ARGUMENT).

    ``option`` is the option's name in this library (``first_drop_points``, ``point_value_cents``,
    ``seats`` ...); ``bounds`` says what is allowed (``"0..130"``); ``value`` is what was given;
    ``why`` (may be empty) says where the bound comes from. The message never echoes more than
    the number given.
    """

    def __init__(self, option: str, bounds: str, value: object, why: str = "") -> None:
        self.option = option
        self.bounds = bounds
        self.value = value
        self.why = why
        super().__init__(self.describe(option))

    def describe(self, name: str) -> str:
        """The message with the option called ``name`` (a host's name for it, e.g. the request
        field ``rule_set.first_drop_points``)."""
        why = f" ({self.why})" if self.why else ""
        return f"{name} must be {self.bounds}{why}, got {self.value}"


def check_bounds(option: str, value: int, low: int, high: int, why: str = "") -> None:
    """Raise :class:`RuleSetError` unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise RuleSetError(option, f"{low}..{high}", value, why)


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

    Raises RuleSetError for negative points or a cap below 1 (the bounds that depend on the hand
    size are checked by :class:`RuleSet`).
    """

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

    def max_loss_points(self, hand_size: int) -> int:
        """The most points one seat can be charged in a hand of ``hand_size`` cards
        (``docs/rules/scoring.md#maximum-loss``).

        The largest of: the most counted cards can cost (:meth:`max_counted_points`), a wrong
        declare, a middle drop, a first drop. 130 at Bombay Baazi (13 x 10, uncapped); 80 with
        the 80 cap. A valid :class:`RuleSet` keeps every penalty within the counted maximum, so
        this is the counted maximum there.
        """
        return max(
            self.max_counted_points(hand_size),
            self.wrong_declare_points,
            self.middle_drop_points,
            self.first_drop_points,
        )

    def check(self, hand_size: int) -> None:
        """Raise :class:`RuleSetError` for a cap above what ``hand_size`` cards can count, or a
        penalty above the most counted cards can cost (the reservation is made for that)."""
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

    Raises RuleSetError (a ValueError) naming the option and its bounds for any value out of
    range (the bounds are in this module's docstring).
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
            raise RuleSetError("name", "a non-empty name", "''")
        if self.version < 1:
            raise RuleSetError("version", ">= 1", self.version)
        seat_counts = [s for s, _ in self.shoes]
        if len(set(seat_counts)) != len(seat_counts):
            raise RuleSetError("shoes", "one shoe per seat count", seat_counts)
        if self.seats not in seat_counts:
            allowed = "/".join(str(s) for s in sorted(seat_counts))
            raise RuleSetError("seats", f"one of {allowed}", self.seats)
        if self.hand_size < 1:
            raise RuleSetError("hand_size", ">= 1", self.hand_size)
        if self.min_players < 2:
            raise RuleSetError("min_players", ">= 2", self.min_players)
        check_bounds("min_players", self.min_players, 2, self.seats, "it cannot exceed the seats")
        # Every seat's hand, the wild cut and the first open card must come out of the shoe,
        # with at least one card left for the stock.
        needed = self.seats * self.hand_size + 3
        if self.shoe.size < needed:
            raise RuleSetError(
                "hand_size",
                f"at most {(self.shoe.size - 3) // self.seats}",
                self.hand_size,
                f"a shoe of {self.shoe.size} cards cannot deal {self.hand_size} cards to "
                f"{self.seats} seats plus the cut, the open card and a stock ({needed} needed)",
            )
        check_bounds("max_missed_turns", self.max_missed_turns, 1, MAX_MISSED_TURNS)
        check_bounds("turn_seconds", self.turn_seconds, 1, MAX_TURN_SECONDS)
        check_bounds("seed_window_seconds", self.seed_window_seconds, 1, MAX_SEED_WINDOW_SECONDS)
        check_bounds(
            "commission_bps", self.commission_bps, 0, BASIS_POINTS_PER_UNIT, "basis points, 100%"
        )
        self.indian.check(self.hand_size)
        most = self.max_point_value_cents
        check_bounds(
            "point_value_cents",
            self.point_value_cents,
            0,
            most,
            f"hundredths of a House Token; {self.seats - 1} losers x {self.max_loss_points} "
            "points x the point value must fit a signed 64-bit amount",
        )

    @property
    def max_point_value_cents(self) -> int:
        """The largest point value whose biggest hand (every other seat losing the most a hand
        can cost to one winner) is an amount a signed 64-bit field holds."""
        return INT64_MAX // (max(self.seats - 1, 1) * max(self.max_loss_points, 1))

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
    Raises RuleSetError for any value out of range.
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


#: The default of a host's maximum reservation per seat and hand: 1,000,000 House Tokens.
DEFAULT_MAX_RESERVATION_CENTS = 100_000_000


def validate_table_options(
    rule_set: RuleSet,
    start_delay_seconds: int,
    max_reservation_cents: int = DEFAULT_MAX_RESERVATION_CENTS,
) -> None:
    """Check what a host adds to a valid ``rule_set`` before it opens a table: the start delay
    (seconds after the last seat change or hand end before a hand may start, 0..3600) and the
    host's maximum reservation per seat and hand (hundredths of a House Token): the max loss x the
    point value may not exceed it. Raises RuleSetError (``start_delay_seconds`` or
    ``point_value_cents``)."""
    check_bounds("start_delay_seconds", start_delay_seconds, 0, MAX_START_DELAY_SECONDS)
    most = min(rule_set.max_point_value_cents, max_reservation_cents // rule_set.max_loss_points)
    check_bounds(
        "point_value_cents",
        rule_set.point_value_cents,
        0,
        most,
        f"hundredths of a House Token; {rule_set.max_loss_points} points x the point value, the "
        f"reservation, may not exceed this table service's maximum of {max_reservation_cents}",
    )
