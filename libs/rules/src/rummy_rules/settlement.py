"""Money at the end of a hand: who pays what, the winner's takings and the house commission.

All amounts are ints in hundredths of a House Token ("cents"). Points are ints.

- A loser's cost is ``points x point_value_cents``.
- The total is the sum of the losers' costs.
- The commission is ``floor(total x commission_bps / 10000)``: rounded down, in the players' favour,
  so it never exceeds the stated rate.
- The winner receives ``total - commission``; the house line receives the commission.
- Every settlement sums to zero: losers negative, winner zero or positive, house zero or positive.
- A free table (point value 0) settles to all zeros.

Rules: ``docs/rules/money.md#settlement``, ``docs/rules/money.md#commission``,
``docs/rules/money.md#reservation``, ``docs/rules/money.md#free-tables``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .rules import BASIS_POINTS_PER_UNIT, RuleSet


@dataclass(frozen=True)
class SettlementLine:
    """One seat's result: ``points`` charged (0 for the winner) and ``amount_cents`` moved.

    ``amount_cents`` is negative for a loser who pays, positive for the winner who receives.
    """

    seat: int
    points: int
    amount_cents: int


@dataclass(frozen=True)
class Settlement:
    """The money of one hand.

    ``lines`` holds one line per seat dealt in, in ascending seat order; ``commission_cents``
    is the house commission line. ``sum(line.amount_cents) + commission_cents == 0`` always.
    """

    winner_seat: int
    point_value_cents: int
    commission_bps: int
    lines: tuple[SettlementLine, ...]
    commission_cents: int

    @property
    def total_cents(self) -> int:
        """What the losers pay altogether (a positive number)."""
        return -sum(line.amount_cents for line in self.lines if line.seat != self.winner_seat)

    def amount_for(self, seat: int) -> int:
        """The amount moved for ``seat``. Raises KeyError if the seat was not dealt in."""
        for line in self.lines:
            if line.seat == seat:
                return line.amount_cents
        raise KeyError(seat)


def reservation_cents(rule_set: RuleSet) -> int:
    """What to reserve per seat at the deal, in hundredths of a House Token
    (``docs/rules/money.md#reservation``).

    ``rule_set.max_loss_points x rule_set.point_value_cents``: 130 x point value at Bombay Baazi
    (13 cards x 10 points, uncapped), cap x point value when capped, 0 at a free table.
    """
    return rule_set.max_loss_points * rule_set.point_value_cents


def commission_for(total_cents: int, commission_bps: int) -> int:
    """``floor(total_cents x commission_bps / 10000)`` (``docs/rules/money.md#commission``).
    Raises ValueError on negative input or ``commission_bps`` above 10000."""
    if total_cents < 0:
        raise ValueError(f"total must be >= 0, got {total_cents}")
    if not 0 <= commission_bps <= BASIS_POINTS_PER_UNIT:
        raise ValueError(f"commission must be 0..{BASIS_POINTS_PER_UNIT} bps, got {commission_bps}")
    return total_cents * commission_bps // BASIS_POINTS_PER_UNIT


def settle(rule_set: RuleSet, winner_seat: int, points_by_seat: Mapping[int, int]) -> Settlement:
    """Settle a hand won by ``winner_seat`` (``docs/rules/money.md#settlement``).

    ``points_by_seat`` maps every seat dealt in to the points it is charged (the winner's entry, if
    present, must be 0; it is added if missing). Points are already final (capped, penalties
    applied). Uses ``rule_set.point_value_cents`` and ``rule_set.commission_bps``.

    Raises ValueError if the winner has non-zero points, a seat has negative points or more than
    ``rule_set.max_loss_points`` (more than its reservation), or no loser is listed.
    """
    points = dict(points_by_seat)
    if points.setdefault(winner_seat, 0) != 0:
        raise ValueError(f"the winner (seat {winner_seat}) cannot be charged points")
    if len(points) < 2:
        raise ValueError("a settlement needs the winner and at least one loser")
    for seat, p in points.items():
        if p < 0:
            raise ValueError(f"seat {seat} has negative points ({p})")
        if p > rule_set.max_loss_points:
            raise ValueError(
                f"seat {seat} is charged {p} points, more than the most a hand can cost "
                f"({rule_set.max_loss_points}); its reservation would not cover it"
            )
    pv = rule_set.point_value_cents
    total = sum(p * pv for seat, p in points.items() if seat != winner_seat)
    house = commission_for(total, rule_set.commission_bps)
    lines = tuple(
        SettlementLine(
            seat=seat,
            points=p,
            amount_cents=(total - house) if seat == winner_seat else -p * pv,
        )
        for seat, p in sorted(points.items())
    )
    return Settlement(
        winner_seat=winner_seat,
        point_value_cents=pv,
        commission_bps=rule_set.commission_bps,
        lines=lines,
        commission_cents=house,
    )
