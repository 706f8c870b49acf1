"""The ledger's use cases, one handler per use case, each one transaction of the unit of work.

Every handler takes a :class:`~rummy_ledger.application.ports.LedgerUnitOfWork` (PostgreSQL in the
service, whose ``transaction()`` is a savepoint when the caller already holds one open, as
``rummy_platform.reactor.PostgresReactor`` does; the in-memory fake in the application tests)
and a command (``rummy_ledger.domain.accounts``), plus:

- ``consumed``: the Kafka position the command came from, stored in the same transaction as the
  effects (``consumer_offsets``), so a consumer that restarts resumes after it;
- ``outbox``: events to publish, written to the outbox in the same transaction. Either a sequence
  of :class:`OutgoingEvent`, or a function of the handler's result returning them (the events of
  ``reserve_stakes`` depend on which seats were reserved). Payloads are already-serialised bytes.

Each command has an idempotency key (a grant's key, or the hand id): the first result is stored
with a hash of the command's body. A retry with the same body returns the first result with
``replayed=True`` and writes no outbox event again; a retry with another body raises
:class:`~rummy_ledger.domain.accounts.Conflict`. Errors raised: ``InvalidCommand``, ``Conflict``,
``AccountNotFound``, ``SettlementRefused`` (all ``LedgerError``); on any error nothing moves
(a refused settlement is then recorded by :func:`refuse_settlement`, which releases the holds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from rummy_ledger.application import history
from rummy_ledger.application.limits import record_losses, reservation_refusal
from rummy_ledger.application.ports import LedgerUnitOfWork, OutgoingEvent, StatementRow
from rummy_ledger.domain.accounts import (
    DEFAULT_GRANT_LIMITS,
    HOUSE_COMMISSION_ACCOUNT,
    ISSUANCE_ACCOUNT,
    AbortHand,
    AccountNotFound,
    Grant,
    GrantLimits,
    InvalidCommand,
    LineKind,
    RefuseSettlement,
    ReserveStakes,
    SettleHand,
    check_balance_limit,
    grant_transaction,
    rejection_reason,
    request_hash,
    settlement_transaction,
    validate_reserve,
)
from rummy_rules.rules import INT64_MAX

if TYPE_CHECKING:  # the stdlib stubs' protocol of a dataclass instance
    from _typeshed import DataclassInstance

__all__ = ["OutgoingEvent"]  # the outbox row, defined beside the storage interface

#: The consumer group whose offsets the ledger stores when a position names none.
DEFAULT_CONSUMER_GROUP = "ledger"


@dataclass(frozen=True)
class ConsumedPosition:
    """The Kafka record a command came from; stored as handled in the command's transaction."""

    topic: str
    partition: int
    offset: int
    consumer_group: str = DEFAULT_CONSUMER_GROUP


R = TypeVar("R", bound="DataclassInstance")  # a result: stored as its fields' JSON
Outbox = Sequence[OutgoingEvent] | Callable[[Any], Sequence[OutgoingEvent]]


# ------------------------------------------------------------------------------------ results


@dataclass(frozen=True)
class GrantResult:
    transaction_id: str
    account_id: str
    amount_hundredths: int
    balance_hundredths: int  # the account's balance right after the grant
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class SeatReservation:
    """One seat's outcome: ``reserved`` with the amount held, or not, with ``reason``."""

    seat: int
    account_id: str
    amount_hundredths: int
    reserved: bool
    available_hundredths: int  # the account's available balance before this reservation
    reason: str | None = None
    # The player's own limit that refused it (``domain.limits.Reason`` value), or None.
    refused_by: str | None = None


@dataclass(frozen=True)
class ReserveResult:
    hand_id: str
    seats: tuple[SeatReservation, ...]
    replayed: bool = field(default=False, compare=False)

    @property
    def reserved(self) -> tuple[SeatReservation, ...]:
        return tuple(s for s in self.seats if s.reserved)

    @property
    def rejected(self) -> tuple[SeatReservation, ...]:
        return tuple(s for s in self.seats if not s.reserved)


@dataclass(frozen=True)
class JournalLine:
    account_id: str
    amount_hundredths: int
    line_kind: str
    seat: int | None = None
    points: int | None = None


def line_memo(line_kind: str, seat: int | None, points: int | None = None) -> str:
    """A journal line's memo on ledger-events: ``"loss seat 1, 40 points"``, ``"win seat 0"``,
    ``"forfeit seat 2"``, ``"commission"`` (the house's line)."""
    memo = line_kind if seat is None else f"{line_kind} seat {seat}"
    return memo if not points else f"{memo}, {points} points"


@dataclass(frozen=True)
class SettleResult:
    hand_id: str
    transaction_id: str
    lines: tuple[JournalLine, ...]
    commission_hundredths: int
    # Held seats that were not in the result, released (always empty since every held seat must
    # be in the settlement; kept for results stored before).
    released_seats: tuple[int, ...]
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class ReleasedReservation:
    seat: int
    account_id: str
    amount_hundredths: int


@dataclass(frozen=True)
class AbortResult:
    hand_id: str
    released: tuple[ReleasedReservation, ...]
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class RefusalResult:
    """A refused settlement: why (the first refusal's reason) and the holds released."""

    hand_id: str
    reason: str
    released: tuple[ReleasedReservation, ...]
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class Balance:
    account_id: str
    balance_hundredths: int  # posted
    reserved_hundredths: int  # held for hands in progress
    available_hundredths: int  # balance - reserved


@dataclass(frozen=True)
class StatementLine:
    line_kind: str
    amount_hundredths: int
    seat: int | None
    points: int | None


@dataclass(frozen=True)
class StatementItem:
    """One journal transaction as the account saw it. For a hand: the account's ``points``,
    ``cost_hundredths`` (what it paid as a loser), ``winnings_hundredths`` (the losers' total,
    if it won alone; its share after the commission, if it shared the pot) and the hand's
    ``commission_hundredths``; ``amount_hundredths`` is the net."""

    seq: int  # pass as ``before`` to read the next page
    transaction_id: str
    kind: str
    hand_id: str | None
    table_id: str | None
    posted_at: datetime
    amount_hundredths: int
    balance_after_hundredths: int
    points: int | None
    cost_hundredths: int
    winnings_hundredths: int
    commission_hundredths: int
    lines: tuple[StatementLine, ...]


# ----------------------------------------------------------------------------------- handlers


def grant(
    uow: LedgerUnitOfWork,
    command: Grant,
    *,
    limits: GrantLimits = DEFAULT_GRANT_LIMITS,
    consumed: ConsumedPosition | None = None,
    outbox: Outbox = (),
) -> GrantResult:
    """Credit a player (opening the account if new), debiting issuance. Idempotent on
    ``command.idempotency_key``. Raises InvalidCommand (also for an amount over
    ``limits.max_grant_hundredths``, a balance that would pass ``limits.max_balance_hundredths``
    or an issuance account that would pass int64; nothing moves) or Conflict."""
    transaction = grant_transaction(command, limits)  # validates
    key = transaction.id

    def work() -> GrantResult:
        uow.accounts.ensure_players([command.account_id])
        rows = uow.accounts.lock_balances([ISSUANCE_ACCOUNT, command.account_id])
        check_balance_limit(
            rows[command.account_id].balance_hundredths, command.amount_hundredths, limits
        )
        issuance = rows.get(ISSUANCE_ACCOUNT)
        if (
            issuance is not None
            and issuance.balance_hundredths - command.amount_hundredths < -INT64_MAX
        ):
            raise InvalidCommand("the issuance account cannot issue this much more")
        uow.journal.insert(transaction)
        after = uow.accounts.balance(command.account_id)
        assert after is not None
        return GrantResult(
            transaction.id, command.account_id, command.amount_hundredths, after.balance_hundredths
        )

    return _run(uow, key, command, work, _grant_from_json, consumed, outbox)


def reserve_stakes(
    uow: LedgerUnitOfWork,
    command: ReserveStakes,
    *,
    consumed: ConsumedPosition | None = None,
    outbox: Outbox = (),
    at: datetime | None = None,
) -> ReserveResult:
    """Hold each seat's amount, all-or-nothing per seat: a seat whose available balance is short
    is rejected with a reason such as ``"balance 1200 < reservation 2600 hundredths"`` and holds
    nothing; so is a seat whose own limits refuse it at ``at`` (the HandStarted's time;
    ``refused_by`` says which, ``application.limits.reservation_refusal``). Unknown player
    accounts are opened with balance 0. Idempotent on the hand id. Raises InvalidCommand or
    Conflict."""
    validate_reserve(command)

    def work() -> ReserveResult:
        accounts = [s.account_id for s in command.seats]
        uow.accounts.ensure_players(accounts)
        balances = uow.accounts.lock_balances(accounts)
        outcomes = []
        for stake in sorted(command.seats, key=lambda s: s.seat):
            row = balances[stake.account_id]
            available = row.balance_hundredths - row.reserved_hundredths
            reason = rejection_reason(
                row.balance_hundredths, row.reserved_hundredths, stake.amount_hundredths
            )
            limit = None
            if reason is None:
                limit = reservation_refusal(uow, row, stake.amount_hundredths, at)
                reason = None if limit is None else limit.describe()
            if reason is None:
                uow.reservations.insert(
                    command.hand_id,
                    command.table_id,
                    stake.seat,
                    stake.account_id,
                    stake.amount_hundredths,
                )
            outcomes.append(
                SeatReservation(
                    stake.seat,
                    stake.account_id,
                    stake.amount_hundredths,
                    reason is None,
                    available,
                    reason,
                    None if limit is None else limit.reason.value,
                )
            )
        return ReserveResult(command.hand_id, tuple(outcomes))

    return _run(
        uow, f"reserve:{command.hand_id}", command, work, _reserve_from_json, consumed, outbox
    )


def settle_hand(
    uow: LedgerUnitOfWork,
    command: SettleHand,
    *,
    consumed: ConsumedPosition | None = None,
    outbox: Outbox = (),
    at: datetime | None = None,
    outcomes: Mapping[int, str] | None = None,
) -> SettleResult:
    """Post the hand's settlement exactly once, as the table computed it, after checking its
    invariants (``domain.accounts.check_settlement``), and settle every reservation of the hand (a
    loser's at its cost, each winner's at 0). A second call returns the first result. Raises
    InvalidCommand (no hand or table named), SettlementRefused (an invariant fails: nothing
    moved; the caller records the refusal with :func:`refuse_settlement`) or Conflict (the hand
    was settled with other results). ``at``: the HandEnded's time, the period its net losses
    count in (``application.limits.record_losses``) and the hand's end in each player's history
    (``application.history``, with ``outcomes``: each seat's ``SeatResult.outcome``); None:
    neither is written."""

    def work() -> SettleResult:
        held = uow.reservations.lock_held(command.hand_id)
        transaction, settled = settlement_transaction(command, held)
        uow.accounts.lock_balances([r.account_id for r in held] + [HOUSE_COMMISSION_ACCOUNT])
        for reservation in held:
            uow.reservations.settle(command.hand_id, reservation.seat, settled[reservation.seat])
        uow.journal.insert(transaction)
        if at is not None:
            record_losses(uow, transaction, at)
            seats = {r.account_id: r.seat for r in held}
            uow.history.add(
                history.hand_entries(
                    uow,
                    command.table_id,
                    command.hand_id,
                    history.net_by_account(transaction, seats),
                    {a: (outcomes or {}).get(s, "") for a, s in seats.items()},
                    at,
                )
            )
        return SettleResult(
            command.hand_id,
            transaction.id,
            tuple(
                JournalLine(p.account_id, p.amount_hundredths, p.line_kind.value, p.seat, p.points)
                for p in transaction.in_posting_order()
            ),
            command.commission_hundredths,
            (),
        )

    return _run(
        uow, f"settle:{command.hand_id}", command, work, _settle_from_json, consumed, outbox
    )


def abort_hand(
    uow: LedgerUnitOfWork,
    command: AbortHand,
    *,
    consumed: ConsumedPosition | None = None,
    outbox: Outbox = (),
) -> AbortResult:
    """Release every held reservation of the hand (none, if it was already settled); nothing
    else moves (the hand is not in anyone's history). Idempotent on the hand id."""
    if not command.hand_id:
        raise InvalidCommand("an abort names its hand")

    def work() -> AbortResult:
        return AbortResult(command.hand_id, _release_held(uow, command.hand_id))

    return _run(uow, f"abort:{command.hand_id}", command, work, _abort_from_json, consumed, outbox)


def refuse_settlement(
    uow: LedgerUnitOfWork,
    command: RefuseSettlement,
    reason: str,
    *,
    consumed: ConsumedPosition | None = None,
    outbox: Outbox = (),
    at: datetime | None = None,
) -> RefusalResult:
    """Record that the hand's settlement was refused (``reason``: the invariant it failed) and
    release every held reservation of the hand; nothing else moves. Idempotent on the hand id:
    a second refusal returns the first result (and its reason). ``at`` given: the hand ends
    ``void`` (net 0) in the history of each account it released. Raises InvalidCommand."""
    if not command.hand_id:
        raise InvalidCommand("a refusal names its hand")

    def work() -> RefusalResult:
        released = _release_held(uow, command.hand_id)
        if at is not None and released:
            void = {r.account_id: history.VOID for r in released}
            uow.history.add(
                history.hand_entries(
                    uow, command.table_id, command.hand_id, dict.fromkeys(void, 0), void, at
                )
            )
        return RefusalResult(command.hand_id, reason, released)

    return _run(
        uow, f"refuse:{command.hand_id}", command, work, _refusal_from_json, consumed, outbox
    )


def _release_held(uow: LedgerUnitOfWork, hand_id: str) -> tuple[ReleasedReservation, ...]:
    """Release every reservation of ``hand_id`` still held; the reservations released."""
    held = uow.reservations.lock_held(hand_id)
    uow.accounts.lock_balances([r.account_id for r in held])
    for reservation in held:
        uow.reservations.release(hand_id, reservation.seat)
    return tuple(ReleasedReservation(r.seat, r.account_id, r.amount_hundredths) for r in held)


def get_balance(uow: LedgerUnitOfWork, account_id: str, *, opened_at_zero: bool = False) -> Balance:
    """The account's posted balance, reserved amount and available balance (hundredths).

    ``opened_at_zero``: the caller asks about its own account, which exists from the start (every
    player has a wallet, opened at 0), so one the ledger has never posted to reads as zeros.
    Raises AccountNotFound otherwise, InvalidCommand for an empty id."""
    if not account_id:
        raise InvalidCommand("an account id is required")
    with uow.transaction():
        row = uow.accounts.balance(account_id)
    if row is None:
        if opened_at_zero:
            return Balance(account_id, 0, 0, 0)
        raise AccountNotFound(f"no account {account_id!r}")
    return Balance(
        row.account_id,
        row.balance_hundredths,
        row.reserved_hundredths,
        row.balance_hundredths - row.reserved_hundredths,
    )


def get_statement(
    uow: LedgerUnitOfWork,
    account_id: str,
    *,
    limit: int = 50,
    before: int | None = None,
    opened_at_zero: bool = False,
) -> tuple[StatementItem, ...]:
    """The account's journal transactions, newest first, at most ``limit`` (1..500), older than
    the item whose ``seq`` is ``before`` when given; ``opened_at_zero`` as for
    :func:`get_balance` (the caller's own account never posted to: an empty statement). Raises
    AccountNotFound or InvalidCommand."""
    if not 1 <= limit <= 500:
        raise InvalidCommand(f"limit must be 1..500, got {limit}")
    if not account_id:
        raise InvalidCommand("an account id is required")
    with uow.transaction():
        if uow.accounts.balance(account_id) is None:
            if opened_at_zero:
                return ()
            raise AccountNotFound(f"no account {account_id!r}")
        rows = uow.journal.statement(account_id, limit, before)
    return tuple(_statement_item(r) for r in rows)


#: The line kinds a statement shows as what was paid and what was won (a hand's, a match's).
_COSTS = (LineKind.LOSS, LineKind.FORFEIT)
_WINNINGS = (LineKind.WIN, LineKind.PRIZE)


def _statement_item(row: StatementRow) -> StatementItem:
    lines = tuple(StatementLine(k, a, s, p) for k, a, s, p in row.lines)
    points = next((ln.points for ln in lines if ln.points is not None), None)
    return StatementItem(
        seq=row.seq,
        transaction_id=row.transaction_id,
        kind=row.kind,
        hand_id=row.hand_id,
        table_id=row.table_id,
        posted_at=row.posted_at,
        amount_hundredths=row.net_hundredths,
        balance_after_hundredths=row.balance_after_hundredths,
        points=points,
        cost_hundredths=-sum(ln.amount_hundredths for ln in lines if ln.line_kind in _COSTS),
        winnings_hundredths=sum(ln.amount_hundredths for ln in lines if ln.line_kind in _WINNINGS),
        commission_hundredths=int(row.metadata.get("commission_hundredths", 0)),
        lines=lines,
    )


# ------------------------------------------------------------------------------------ plumbing


def _run(
    uow: LedgerUnitOfWork,
    key: str,
    command: DataclassInstance,
    work: Callable[[], R],
    from_json: Callable[[Any], R],
    consumed: ConsumedPosition | None,
    outbox: Outbox,
) -> R:
    """One transaction: claim the idempotency key (or return the stored first result), do the
    work, store its result, write the outbox and the consumed position, commit."""
    with uow.transaction():
        stored = uow.commands.claim(key, type(command).__name__, request_hash(command))
        if stored is not None:
            result = from_json(stored.result)
        else:
            result = work()
            uow.commands.store_result(key, _to_json(result))
            uow.outbox.write(outbox(result) if callable(outbox) else outbox)
        if consumed is not None:
            uow.offsets.store(
                consumed.consumer_group, consumed.topic, consumed.partition, consumed.offset
            )
    return result


def _to_json(result: DataclassInstance) -> dict[str, Any]:
    body = asdict(result)
    body.pop("replayed", None)
    return body


def _grant_from_json(body: dict[str, Any]) -> GrantResult:
    return GrantResult(**body, replayed=True)


def _reserve_from_json(body: dict[str, Any]) -> ReserveResult:
    return ReserveResult(
        body["hand_id"], tuple(SeatReservation(**s) for s in body["seats"]), replayed=True
    )


def _settle_from_json(body: dict[str, Any]) -> SettleResult:
    return SettleResult(
        body["hand_id"],
        body["transaction_id"],
        tuple(JournalLine(**ln) for ln in body["lines"]),
        body["commission_hundredths"],
        tuple(body["released_seats"]),
        replayed=True,
    )


def _abort_from_json(body: dict[str, Any]) -> AbortResult:
    return AbortResult(
        body["hand_id"], tuple(ReleasedReservation(**r) for r in body["released"]), replayed=True
    )


def _refusal_from_json(body: dict[str, Any]) -> RefusalResult:
    return RefusalResult(
        body["hand_id"],
        body["reason"],
        tuple(ReleasedReservation(**r) for r in body["released"]),
        replayed=True,
    )
