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

from rummy_game.table import Table
from rummy_platform.errors import FailedPrecondition, Unavailable
from rummy_rules.settlement import reservation_hundredths


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


def seat_stake_hundredths(table: Table) -> int:
    """The most one reservation at ``table`` holds from a seat (hundredths): a points hand's
    (max loss x point value), a match's entry fee, a game's cap x point value (Hollywood: three
    columns' caps, reserved at once); 0 at a free table."""
    match = table.opened.match if table.opened.HasField("match") else None
    chosen = None if match is None else match.WhichOneof("format")
    if match is None or chosen in (None, "single"):
        return reservation_hundredths(table.rule_set)
    if chosen == "pool":
        return match.pool.entry_fee_hundredths
    if chosen == "deals":
        return match.deals.entry_fee_hundredths
    if chosen == "best_of":
        return match.best_of.entry_fee_hundredths
    if chosen == "game_to":
        return match.game_to.point_value_hundredths * match.game_to.max_game_points
    if chosen == "hollywood":
        return 3 * match.hollywood.point_value_hundredths * match.hollywood.max_game_points
    return 0


def ask_before_seating(limits: SeatLimits | None, table: Table | None, account_id: str) -> None:
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
