"""Money at the end of a hand: who pays what, the winner's takings and the house commission.

All amounts are ints in hundredths of a House Token. Points are ints.

- A loser's cost is ``points x point_value_hundredths``.
- The total is the sum of the losers' costs.
- The commission is ``floor(total x commission_bps / 10000)``: rounded down, in the players' favour,
  so it never exceeds the stated rate.
- The winner receives ``total - commission``; the house line receives the commission. When a
  variant's hand ends with several winners sharing the pot (:func:`settle_shared`), each receives
  an equal share of ``total - commission``, the remainder hundredths one each to the first
  winners in the variant's order of precedence (the order it lists them in).
- Every settlement sums to zero: losers negative, winners zero or positive, house zero or positive.
- A free table (point value 0) settles to all zeros.

Rules: ``docs/rules/money.md#settlement``, ``docs/rules/money.md#commission``,
``docs/rules/money.md#reservation``, ``docs/rules/money.md#free-tables``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .rules import BASIS_POINTS_PER_UNIT, RuleSet


@dataclass(frozen=True)
class SettlementLine:
    """One seat's result: ``points`` charged (0 for the winner) and ``amount_hundredths`` moved.

    ``amount_hundredths`` is negative for a loser who pays, positive for the winner who receives.
    """

    seat: int
    points: int
    amount_hundredths: int


@dataclass(frozen=True)
class Settlement:
    """The money of one hand.

    ``lines`` holds one line per seat dealt in, in ascending seat order; ``commission_hundredths``
    is the house commission line. ``sum(line.amount_hundredths) + commission_hundredths == 0``
    always.
    ``winner_seat`` is the hand's winner (the declarer; first in the variant's order of
    precedence); ``co_winner_seats`` (empty in a one-winner hand) are the other seats that share
    the pot with it, in that order (the remainder hundredths went one each along it).
    """

    winner_seat: int
    point_value_hundredths: int
    commission_bps: int
    lines: tuple[SettlementLine, ...]
    commission_hundredths: int
    co_winner_seats: tuple[int, ...] = ()

    @property
    def winner_seats(self) -> tuple[int, ...]:
        """Every seat that shares the pot, ascending."""
        return tuple(sorted((self.winner_seat, *self.co_winner_seats)))

    @property
    def total_hundredths(self) -> int:
        """What the losers pay altogether (a positive number)."""
        winners = self.winner_seats
        return -sum(line.amount_hundredths for line in self.lines if line.seat not in winners)

    def amount_for(self, seat: int) -> int:
        """The amount moved for ``seat``. Raises KeyError if the seat was not dealt in."""
        for line in self.lines:
            if line.seat == seat:
                return line.amount_hundredths
        raise KeyError(seat)


def reservation_hundredths(rule_set: RuleSet) -> int:
    """What to reserve per seat at the deal, in hundredths of a House Token
    (``docs/rules/money.md#reservation``).

    ``rule_set.max_loss_points x rule_set.point_value_hundredths``: 130 x point value at Bombay
    Baazi
    (13 cards x 10 points, uncapped), cap x point value when capped, 0 at a free table.
    """
    return rule_set.max_loss_points * rule_set.point_value_hundredths


def commission_for(total_hundredths: int, commission_bps: int) -> int:
    """``floor(total_hundredths x commission_bps / 10000)`` (``docs/rules/money.md#commission``).
    Raises ValueError on negative input or ``commission_bps`` above 10000."""
    if total_hundredths < 0:
        raise ValueError(f"total must be >= 0, got {total_hundredths}")
    if not 0 <= commission_bps <= BASIS_POINTS_PER_UNIT:
        raise ValueError(f"commission must be 0..{BASIS_POINTS_PER_UNIT} bps, got {commission_bps}")
    return total_hundredths * commission_bps // BASIS_POINTS_PER_UNIT


def settle(rule_set: RuleSet, winner_seat: int, points_by_seat: Mapping[int, int]) -> Settlement:
    """Settle a hand won by ``winner_seat`` (``docs/rules/money.md#settlement``):
    :func:`settle_shared` with one winner. Raises ValueError as it does."""
    return settle_shared(rule_set, (winner_seat,), points_by_seat)


def settle_shared(
    rule_set: RuleSet, winner_seats: Sequence[int], points_by_seat: Mapping[int, int]
) -> Settlement:
    """Settle a hand whose pot ``winner_seats`` share, listed in the variant's order of
    precedence (the first is the hand's ``winner_seat``; ``docs/rules/money.md#shared-pot``).

    ``points_by_seat`` maps every seat dealt in to the points it is charged (a winner's entry, if
    present, must be 0; it is added if missing). Points are already final (capped, penalties
    applied). Each loser pays ``points x rule_set.point_value_hundredths``; the commission is taken
    once from the pot (:func:`commission_for`); each winner receives
    ``(total - commission) // len(winner_seats)``, and the remainder hundredths go one each to
    the first winners in the order listed (a variant that follows the pool split lists the
    lowest total first, ties to the earliest seat). With one winner this is :func:`settle`.

    Raises ValueError if there is no winner or a winner is listed twice, a winner has non-zero
    points, a seat has negative points or more than ``rule_set.max_loss_points`` (more than its
    reservation), or no loser is listed.
    """
    if not winner_seats or len(set(winner_seats)) != len(winner_seats):
        raise ValueError(f"a settlement needs distinct winners, got {list(winner_seats)}")
    points = dict(points_by_seat)
    for seat in winner_seats:
        if points.setdefault(seat, 0) != 0:
            raise ValueError(f"the winner (seat {seat}) cannot be charged points")
    if len(points) <= len(winner_seats):
        raise ValueError("a settlement needs the winners and at least one loser")
    for seat, p in points.items():
        if p < 0:
            raise ValueError(f"seat {seat} has negative points ({p})")
        if p > rule_set.max_loss_points:
            raise ValueError(
                f"seat {seat} is charged {p} points, more than the most a hand can cost "
                f"({rule_set.max_loss_points}); its reservation would not cover it"
            )
    pv = rule_set.point_value_hundredths
    winners = tuple(winner_seats)
    total = sum(p * pv for seat, p in points.items() if seat not in winners)
    house = commission_for(total, rule_set.commission_bps)
    share, remainder = divmod(total - house, len(winners))
    takings = {seat: share + (1 if i < remainder else 0) for i, seat in enumerate(winners)}
    lines = tuple(
        SettlementLine(seat=seat, points=p, amount_hundredths=takings.get(seat, -p * pv))
        for seat, p in sorted(points.items())
    )
    return Settlement(
        winner_seat=winner_seats[0],
        point_value_hundredths=pv,
        commission_bps=rule_set.commission_bps,
        lines=lines,
        commission_hundredths=house,
        co_winner_seats=winners[1:],
    )
