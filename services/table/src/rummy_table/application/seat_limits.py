"""TakeSeat asks the ledger about the player's own limits (docs/rules/responsible-play.md): the
table's port to the ledger's ``CheckSeat`` (a service-role call; the adapter is
``rummy_table.adapters.ledger_limits.LedgerSeatLimits``), never the ledger's tables.

Its one call site is ``Seating.take_seat``: before a player who is not yet seated at the table
takes a seat, :func:`ask_before_seating` asks whether the player's limits allow one reservation
of this table (:func:`seat_stake_hundredths`); a seat above the stake limit, on a break or
excluded (at a free table too) is refused with FAILED_PRECONDITION naming the reason, to that
player only (the answer of its own call; nothing is written to the table stream). A ledger
that does not answer fails the call closed (UNAVAILABLE). The ledger's check before every
reservation stays the authority: a seat check can be stale by the deal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from rummy_platform.errors import FailedPrecondition, Unavailable
from rummy_rules.settlement import reservation_hundredths

from .held_table import HeldTable


class LimitsUnavailable(Exception):
    """The ledger did not answer the seat check (in time)."""


@dataclass(frozen=True)
class SeatCheck:
    """The ledger's answer: ``allowed``, else ``reason`` (``break``, ``self_exclusion``,
    ``stake_limit``, ``loss_limit``), a sentence for the player and until when (None: until the
    player acts, or indefinite)."""

    allowed: bool
    reason: str = ""
    detail: str = ""
    until: datetime | None = None


class SeatLimits(Protocol):
    """The ledger's seat check, as the table needs it."""

    def check(self, account_id: str, amount_hundredths: int) -> SeatCheck:
        """May ``account_id`` sit where one reservation holds ``amount_hundredths``? Raises
        LimitsUnavailable when the ledger does not answer."""


def seat_stake_hundredths(table: HeldTable) -> int:
    """The most one reservation at ``table`` holds from a seat (hundredths of a House Token):
    a match format's own hold (``MatchFormat.hold_hundredths``: an entry fee, a game's cap x
    point value, Hollywood's three columns), else a points hand's reservation (max loss x point
    value; 0 at a free table)."""
    if table.match is not None:
        return table.match.fmt.hold_hundredths
    return reservation_hundredths(table.rule_set)


def ask_before_seating(limits: SeatLimits | None, table: HeldTable | None, account_id: str) -> None:
    """Refuse a seat the player's own limits do not allow (FailedPrecondition naming the limit)
    or fail closed when the ledger does not answer (Unavailable). Nothing is asked without a
    port (``limits`` None: the ledger's address not configured), for a table this instance does
    not hold (the command reports that) or for a player already seated there (a retry)."""
    if limits is None or table is None or table.seat_of(account_id) is not None:
        return
    try:
        answer = limits.check(account_id, seat_stake_hundredths(table))
    except LimitsUnavailable as error:
        raise Unavailable(f"the ledger did not answer the seat's limits check: {error}") from None
    if not answer.allowed:
        raise FailedPrecondition(f"your own limits hold this seat back: {answer.detail}")
