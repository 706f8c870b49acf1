"""Responsible play's use cases, on the unit of work (``rummy_ledger.domain.limits``).

- :func:`change_limits`: a player's command (set, lower, raise or remove a limit, a time zone, a
  break, a self-exclusion, a return), one transaction under the lock of the player's balance row,
  the facts written to the outbox (``outbox(facts)``) in the same transaction.
- :func:`read_limits`: the limits in force at ``now``, the pending changes and when each applies,
  each period's net losses so far.
- :func:`reservation_refusal`: called by the reservation handlers (a hand's stake, a match's
  entry, rejoin or game stake) with the account's balance row already locked, so reservations
  of one account at several tables are serialised and each counts every other one held.
- :func:`record_losses`: called where a settlement posts; adds each player's net loss to the
  totals of the periods containing the settlement's event time in the player's zone then in
  force (the check reads one row per period, never the journal).

Times: ``now`` is the ledger's clock (a player's request); ``at`` an event's time (the table
event that asked for the reservation, or settled), so a replay re-checks a refusal against the
limits in force then. Amounts are hundredths of a House Token. Errors: ``InvalidCommand``
(bad input), ``LimitRefused`` (not allowed now): nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from rummy_ledger.application.ports import BalanceRow, LedgerUnitOfWork, OutgoingEvent
from rummy_ledger.domain.accounts import AccountKind, InvalidCommand, JournalTransaction
from rummy_ledger.domain.limits import (
    PERIODS,
    LimitCommand,
    LimitFact,
    PlayerLimits,
    Refusal,
    apply,
    decide,
    in_force,
    period_end,
    period_keys,
    refusal,
)

LimitsOutbox = Callable[[tuple[LimitFact, ...]], Sequence[OutgoingEvent]]


@dataclass(frozen=True)
class PeriodLosses:
    """One period's net losses so far (hundredths; negative when up) and when it ends."""

    period: str
    net_loss_hundredths: int
    ends_at: datetime


@dataclass(frozen=True)
class LimitsReport:
    """What a player (or an operator) reads: the limits in force at ``at`` with their pending
    changes, each period's net losses, and why play is closed now (None when open)."""

    limits: PlayerLimits
    at: datetime
    losses: tuple[PeriodLosses, ...]
    closed: Refusal | None
    facts: tuple[LimitFact, ...] = ()  # what the command changed (empty for a read)


def _stored(uow: LedgerUnitOfWork, account_id: str, at: datetime) -> PlayerLimits:
    return in_force(uow.limits.of(account_id) or PlayerLimits(account_id), at)


def _check_account(account_id: str) -> None:
    if not account_id:
        raise InvalidCommand("an account id is required")


def change_limits(
    uow: LedgerUnitOfWork,
    account_id: str,
    command: LimitCommand,
    now: datetime,
    *,
    outbox: LimitsOutbox,
) -> LimitsReport:
    """Apply a player's own command to its limits at ``now``; the facts go to the outbox.
    Raises InvalidCommand or LimitRefused (nothing changed)."""
    _check_account(account_id)
    with uow.transaction():
        uow.accounts.ensure_players([account_id])
        uow.accounts.lock_balances([account_id])  # the account's lock
        limits = _stored(uow, account_id, now)
        facts = decide(limits, command, now)
        for fact in facts:
            limits = apply(limits, fact)
        uow.limits.save(limits)
        uow.outbox.write(outbox(facts))
        return _report(uow, limits, now, facts)


def read_limits(uow: LedgerUnitOfWork, account_id: str, now: datetime) -> LimitsReport:
    """The player's limits in force at ``now`` (none set: no limits, UTC), its pending changes
    and each period's net losses so far. Raises InvalidCommand for an empty id."""
    _check_account(account_id)
    with uow.transaction():
        return _report(uow, _stored(uow, account_id, now), now, ())


def _report(
    uow: LedgerUnitOfWork, limits: PlayerLimits, at: datetime, facts: tuple[LimitFact, ...]
) -> LimitsReport:
    zone = limits.time_zone
    totals = uow.limits.losses(limits.account_id, period_keys(at, zone))
    losses = tuple(PeriodLosses(p, totals.get(p, 0), period_end(p, at, zone)) for p in PERIODS)
    closed = refusal(limits, at, 0, 0, {})
    return LimitsReport(limits, at, losses, closed, facts)


def reservation_refusal(
    uow: LedgerUnitOfWork, row: BalanceRow, amount_hundredths: int, at: datetime | None
) -> Refusal | None:
    """Why the player's limits refuse holding ``amount_hundredths`` more at ``at`` (the asking
    event's time), or None; ``row``: the account's balance row, locked by the caller (its
    ``reserved_hundredths`` counts every reservation held at any table). ``at`` None (a direct
    application call with no event): no limits are checked."""
    if at is None:
        return None
    stored = uow.limits.of(row.account_id)
    if stored is None:
        return None
    limits = in_force(stored, at)
    losses = uow.limits.losses(row.account_id, period_keys(at, limits.time_zone))
    return refusal(limits, at, amount_hundredths, row.reserved_hundredths, losses)


def record_losses(uow: LedgerUnitOfWork, transaction: JournalTransaction, at: datetime) -> None:
    """Add each player's net loss in ``transaction`` (what it paid minus what it received) to
    its period totals at ``at`` (the settlement event's time), in the zone in force then."""
    net: dict[str, int] = {}
    for posting in transaction.postings:
        net[posting.account_id] = net.get(posting.account_id, 0) - posting.amount_hundredths
    rows = uow.accounts.lock_balances(net)
    for account_id, loss in sorted(net.items()):
        row = rows.get(account_id)
        if loss == 0 or row is None or row.kind is not AccountKind.PLAYER:
            continue
        zone = _stored(uow, account_id, at).time_zone
        for period, start in period_keys(at, zone):
            uow.limits.add_loss(account_id, period, start, loss)


def seat_refusal(
    uow: LedgerUnitOfWork, account_id: str, amount_hundredths: int, now: datetime
) -> Refusal | None:
    """Whether the player's limits would refuse a seat whose reservations hold
    ``amount_hundredths`` each, at ``now`` (TakeSeat's question; the reservation check at the deal
    stays the authority). Raises InvalidCommand for an empty id or a negative amount."""
    _check_account(account_id)
    if amount_hundredths < 0:
        raise InvalidCommand(f"amount_hundredths must be >= 0, got {amount_hundredths}")
    with uow.transaction():
        stored = uow.limits.of(account_id)
        if stored is None:
            return None
        limits = in_force(stored, now)
        row = uow.accounts.balance(account_id)
        reserved = 0 if row is None else row.reserved_hundredths
        losses = uow.limits.losses(account_id, period_keys(now, limits.time_zone))
        return refusal(limits, now, amount_hundredths, reserved, losses)
