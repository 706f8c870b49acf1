"""The rule set of a table, as data.

A :class:`RuleSet` says everything a hand needs that is not a card: which shoe by seat count, how
many cards a hand gets, the clock, the money (point value in hundredths of a House Token, commission
in basis points) and the variant's own options (``options``: a :class:`VariantOptions` of the
variant's package, e.g. ``rummy_rules.indian.rules.IndianPointsRules``), which also say the deal's
shape (:class:`DealShape`: a wild cut or none, an upcard or none) and the most one seat can lose.
This module names no variant. Nothing here assumes one deal per match: a rule set describes one
hand; a match format wraps hands.

Validation (the one home of a table's option bounds, used by the table service's OpenTable, the
table and the replay tool alike): every numeric option has stated bounds, and a value outside
them raises :class:`RuleSetError` naming the option and its bounds. Building a :class:`RuleSet`
checks everything a rule set alone decides (seats, clock seconds, missed-turn limit, penalties
within the most counted cards can cost, the commission, a point value whose largest hand fits a
signed 64-bit amount); :func:`validate_table_options` adds what a host decides (its start delay
and its configured maximum reservation). Bounds, inclusive:

- seats: a seat count of the rule set's shoes (4, 6 or 8 at Bombay Baazi);
- ``hand_size``: the shoe deals every seat its cards, the deal shape's cut and upcard, and a
  stock of at least one card;
- ``turn_seconds`` 1..3600, ``seed_window_seconds`` 1..600, start delay 0..3600 seconds (0: a
  hand starts as soon as enough players sit; it is no deadline anyone must meet);
- ``max_missed_turns`` 1..10;
- the variant's options: as its ``VariantOptions.check`` says (Indian points: ``points_cap`` None or
  1..``hand_size`` x 10, every penalty within the most counted cards can cost);
- ``commission_bps`` 0..10000 (100%);
- ``point_value_hundredths`` >= 0 with (seats - 1) x max loss x point value <= 2^63 - 1 (what a
winner
  can receive fits an int64), and, at a host, max loss x point value <= its maximum reservation.

Rules: ``docs/rules/rule-set.md`` (the house rule set, its options and their bounds,
``docs/rules/rule-set.md#validation``), ``docs/rules/cards.md#shoe`` (decks by seat count) and
``docs/rules/scoring.md`` (drops, wrong declare, the cap, missed turns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from .deck import Shoe

BASIS_POINTS_PER_UNIT = 10_000
#: The largest amount a signed 64-bit field holds (every amount on the wire and in the ledger).
INT64_MAX = 2**63 - 1
MAX_TURN_SECONDS = 3_600
MAX_SEED_WINDOW_SECONDS = 600
MAX_START_DELAY_SECONDS = 3_600
MAX_MISSED_TURNS = 10


class RuleSetError(ValueError):
    """A rule-set option out of its bounds (a host answers INVALID_ARGUMENT).

    ``option`` is the option's name in this library (``first_drop_points``,
    ``point_value_hundredths``,
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


def check_commission(bps: int, option: str = "commission_bps") -> None:
    """Raise :class:`RuleSetError` (for ``option``) unless ``bps`` is a commission in basis
    points: ``0..10000`` (10000 = 100% of what it is taken on)."""
    check_bounds(option, bps, 0, BASIS_POINTS_PER_UNIT, "basis points, 100%")


# --------------------------------------------------------------------------------------------------
# What a variant adds: its deal's shape and its options
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DealShape:
    """What a variant's deal turns up besides the seats' hands: ``wild_cut`` (a card cut face up
    that fixes the wild rank and is out of play) and ``upcard`` (the first card of the discard
    pile). Indian points: both; a game without wild cards: no cut."""

    wild_cut: bool
    upcard: bool

    @property
    def extra_cards(self) -> int:
        """Cards the deal turns up besides the hands (0, 1 or 2)."""
        return int(self.wild_cut) + int(self.upcard)


#: The deal that cuts a wild card and turns up the first open card (``docs/rules/shuffle-spec.md``).
CUT_AND_UPCARD = DealShape(wild_cut=True, upcard=True)


@dataclass(frozen=True)
class DealLayout:
    """What the dealer deals for one hand: ``hand_size`` cards to each seat from ``shoe``, then
    the cut and the upcard as ``shape`` says; the rest is the stock."""

    shape: DealShape
    shoe: Shoe
    hand_size: int

    def cards_needed(self, seats: int) -> int:
        """The fewest cards the shoe must hold to deal ``seats`` seats and leave a one-card
        stock."""
        return seats * self.hand_size + self.shape.extra_cards + 1


class VariantOptions:
    """Base class of a variant's own rule-set options: a frozen dataclass in the variant's
    package, registered with ``rummy_rules.json_form`` (a rule set's ``options`` is encoded with its
    type name). ``deal_shape`` is the variant's deal; :meth:`check` and :meth:`max_loss_points`
    are the variant's part of a rule set's validation and of its reservation."""

    __slots__ = ()

    #: The deal of every hand played under these options.
    deal_shape: ClassVar[DealShape]

    def check(self, rule_set: RuleSet) -> None:
        """Raise :class:`RuleSetError` for an option out of bounds for ``rule_set`` (its hand
        size, seats ...). Called by ``RuleSet.__post_init__``."""
        raise NotImplementedError

    def max_loss_points(self, rule_set: RuleSet) -> int:
        """The most points one seat can be charged in a hand of ``rule_set`` (>= 1)."""
        raise NotImplementedError


# --------------------------------------------------------------------------------------------------
# Generic rule set
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleSet:
    """Everything about a table's hands that is not a card (``docs/rules/rule-set.md#options``).

    - ``name``, ``version``: identify the rule set (``"bombay-baazi"``, 1); recorded with each hand.
    - ``variant``: which state machine plays it (``"indian-points"``; ``rummy_rules.registry``).
    - ``seats``: the table's seat count; must be a key of ``shoes``.
    - ``shoes``: seat count -> shoe, as ``(seats, Shoe)`` pairs.
    - ``hand_size``: cards dealt to each seat (13).
    - ``min_players``: seats that must be dealt in for a hand to start (2).
    - ``max_missed_turns``: turns in a row a seat may miss before it is dropped (3).
    - ``turn_seconds``: seconds a seat has for one turn.
    - ``seed_window_seconds``: seconds the client-seed window stays open.
    - ``point_value_hundredths``: what one point costs, in hundredths of a House Token (0 = free
    table).
    - ``commission_bps``: the house commission on the winners' takings, in basis points (1/10000).
    - ``options``: the variant's own options (Indian points: drops, wrong declare, cap, melds).

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
    point_value_hundredths: int
    commission_bps: int
    options: VariantOptions

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
        # Every seat's hand, the cut and the upcard (as the variant deals them) must come out of
        # the shoe, with at least one card left for the stock.
        layout = self.layout
        needed = layout.cards_needed(self.seats)
        if self.shoe.size < needed:
            extra = layout.shape.extra_cards + 1
            raise RuleSetError(
                "hand_size",
                f"at most {(self.shoe.size - extra) // self.seats}",
                self.hand_size,
                f"a shoe of {self.shoe.size} cards cannot deal {self.hand_size} cards to "
                f"{self.seats} seats plus what the deal turns up and a stock ({needed} needed)",
            )
        check_bounds("max_missed_turns", self.max_missed_turns, 1, MAX_MISSED_TURNS)
        check_bounds("turn_seconds", self.turn_seconds, 1, MAX_TURN_SECONDS)
        check_bounds("seed_window_seconds", self.seed_window_seconds, 1, MAX_SEED_WINDOW_SECONDS)
        check_commission(self.commission_bps)
        self.options.check(self)
        most = self.max_point_value_hundredths
        check_bounds(
            "point_value_hundredths",
            self.point_value_hundredths,
            0,
            most,
            f"hundredths of a House Token; {_losers(self.seats - 1)} x {self.max_loss_points} "
            "points x the point value must fit a signed 64-bit amount",
        )

    @property
    def max_point_value_hundredths(self) -> int:
        """The largest point value whose biggest hand (every other seat losing the most a hand
        can cost) is an amount a signed 64-bit field holds."""
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
    def layout(self) -> DealLayout:
        """The deal of a hand of this rule set: the variant's shape, this shoe, this hand size."""
        return DealLayout(self.options.deal_shape, self.shoe, self.hand_size)

    @property
    def max_loss_points(self) -> int:
        """The most points one seat can be charged in a hand, as the variant's options say (130
        at Bombay Baazi, 80 if capped)."""
        return self.options.max_loss_points(self)


#: The default of a host's maximum reservation per seat and hand: 1,000,000 House Tokens.
DEFAULT_MAX_RESERVATION_HUNDREDTHS = 100_000_000


def validate_table_options(
    rule_set: RuleSet,
    start_delay_seconds: int,
    max_reservation_hundredths: int = DEFAULT_MAX_RESERVATION_HUNDREDTHS,
) -> None:
    """Check what a host adds to a valid ``rule_set`` before it opens a table: the start delay
    (seconds after the last seat change or hand end before a hand may start, 0..3600) and the
    host's maximum reservation per seat and hand (hundredths of a House Token): the max loss x the
    point value may not exceed it. Raises RuleSetError (``start_delay_seconds`` or
    ``point_value_hundredths``)."""
    check_bounds("start_delay_seconds", start_delay_seconds, 0, MAX_START_DELAY_SECONDS)
    most = min(
        rule_set.max_point_value_hundredths, max_reservation_hundredths // rule_set.max_loss_points
    )
    check_bounds(
        "point_value_hundredths",
        rule_set.point_value_hundredths,
        0,
        most,
        f"hundredths of a House Token; {rule_set.max_loss_points} points x the point value, the "
        f"reservation, may not exceed this table service's maximum of {max_reservation_hundredths}",
    )


def _losers(count: int) -> str:
    """``"1 loser"`` / ``"3 losers"``: the count of a seat's opponents, for a refusal's text."""
    return f"{count} loser" if count == 1 else f"{count} losers"
