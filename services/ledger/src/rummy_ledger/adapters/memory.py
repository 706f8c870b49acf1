"""The ledger's unit of work in memory: the fake the application tests run on.

Same semantics as ``PostgresUnitOfWork`` (``tests/test_ledger_storage_contract.py`` runs one
suite against both): idempotent command keys (a retry with another body is a ``Conflict``), a
``transaction()`` that undoes everything on an exception (a savepoint when nested), the outbox
in order with dense stream versions, consumer offsets that never go back. It raises
:class:`ConstraintViolation` where the schema (``migrations/``) refuses a write by constraint
or trigger:

- an account id of 1..200 characters, no player id starting ``house:``;
- a journal transaction: a new id, at least two entries, summing to zero, a settlement naming
  its hand and table, at most one settlement per hand, every entry's account existing, seats
  and points not negative;
- no account but issuance with a negative balance or available balance (checked entry by entry,
  as the CHECKs on ``balances`` fire per row);
- a reservation: its account existing, amount and seat not negative, one per (hand, account)
  and per (hand, seat); it resolves once (``settle``/``release`` of a reservation no longer held
  change nothing, as the SQL's ``WHERE state = 'held'``), settled at 0..its amount;
- a loss line only in a settlement, matching a reservation of the hand and account settled at
  exactly that amount (PostgreSQL checks it at commit, the fake at the insert: the ledger
  settles the reservations before it posts);
- a match's ``forfeit`` line only in a settlement, equal to what the account's reservations in
  the groups the settlement covers were settled at; a ``prize`` line never negative
  (``0006_match_money``);
- a table's commission rate of 0..10000 bps, its first record kept;
- an outbox event id used once.

What only PostgreSQL can show (``test_ledger_schema_guards.py``, ``test_ledger_concurrency.py``):
the append-only triggers against raw ``UPDATE``/``DELETE``/``TRUNCATE`` (the fake offers no way
to change a row), balances written only by the triggers, deferred checks on rows inserted by
raw SQL, and two writers at once (row locks, a claim waiting for a concurrent one): the fake
serialises whole transactions under one lock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from typing import Any

from rummy_ledger.application.ports import (
    Accounts,
    BalanceRow,
    Clock,
    Commands,
    History,
    Journal,
    JournalEntry,
    LedgerUnitOfWork,
    Limits,
    Matches,
    Offsets,
    Outbox,
    OutboxRow,
    OutgoingEvent,
    PlayedEntry,
    PlayedRow,
    ReservationRow,
    Reservations,
    StatementRow,
    StoredCommand,
)
from rummy_ledger.domain.accounts import (
    HOUSE_COMMISSION_ACCOUNT,
    ISSUANCE_ACCOUNT,
    AccountKind,
    Conflict,
    HeldReservation,
    JournalTransaction,
    LineKind,
    TransactionKind,
)
from rummy_ledger.domain.limits import PlayerLimits
from rummy_ledger.domain.matches import MatchBook
from rummy_platform.unit_of_work import SnapshotTransactions


class ConstraintViolation(Exception):
    """A write the ledger's schema would refuse (PostgreSQL raises an IntegrityError there)."""


@dataclass
class _Transaction:
    seq: int
    id: str
    kind: str
    hand_id: str | None
    table_id: str | None
    posted_at: datetime
    metadata: dict[str, Any]


@dataclass
class _Reservation:
    hand_id: str
    table_id: str
    seat: int
    account_id: str
    amount: int
    state: str = "held"
    settled_amount: int | None = None


@dataclass
class LedgerState:
    """Everything the fake stores (its tables)."""

    accounts: dict[str, AccountKind] = field(
        default_factory=lambda: {
            ISSUANCE_ACCOUNT: AccountKind.ISSUANCE,
            HOUSE_COMMISSION_ACCOUNT: AccountKind.HOUSE,
        }
    )
    balances: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)
    transactions: list[_Transaction] = field(default_factory=list)
    entries: list[JournalEntry] = field(default_factory=list)
    reservations: list[_Reservation] = field(default_factory=list)
    commands: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    outbox: list[tuple[OutboxRow, bool]] = field(default_factory=list)  # (row, published)
    stream_versions: dict[str, int] = field(default_factory=dict)
    offsets: dict[tuple[str, str, int], int] = field(default_factory=dict)
    match_tables: dict[str, int] = field(default_factory=dict)
    matches: dict[tuple[str, str], str] = field(default_factory=dict)  # (table, match) -> JSON
    player_limits: dict[str, str] = field(default_factory=dict)  # account -> JSON
    period_losses: dict[tuple[str, str, date], int] = field(default_factory=dict)
    table_variants: dict[str, str] = field(default_factory=dict)
    #: (kind, table, ref id, account) -> the row (``played``; its id in insertion order).
    played: dict[tuple[str, str, str, str], PlayedEntry] = field(default_factory=dict)
    played_ids: dict[tuple[str, str, str, str], int] = field(default_factory=dict)


class _Repository:
    def __init__(self, uow: InMemoryUnitOfWork) -> None:
        self._uow = uow

    @property
    def _state(self) -> LedgerState:
        return self._uow.state


class _Commands(_Repository, Commands):
    def claim(self, key: str, command: str, request_hash: str) -> StoredCommand | None:
        stored = self._state.commands.get(key)
        if stored is None:
            self._state.commands[key] = (command, request_hash, None)
            return None
        stored_command, stored_hash, result = stored
        if stored_command != command or stored_hash != request_hash:
            raise Conflict(
                f"idempotency key {key!r} was already used for a different {stored_command} request"
            )
        return StoredCommand(None if result is None else json.loads(result))

    def store_result(self, key: str, result: Any) -> None:
        command, request_hash, _ = self._state.commands[key]
        self._state.commands[key] = (command, request_hash, json.dumps(result))


class _Accounts(_Repository, Accounts):
    def ensure_players(self, account_ids: Iterable[str]) -> None:
        for account_id in sorted(set(account_ids)):
            if account_id in self._state.accounts:
                continue
            if not 1 <= len(account_id) <= 200:
                raise ConstraintViolation(f"account id {account_id!r}: 1..200 characters")
            if account_id.startswith("house:"):
                raise ConstraintViolation(f"a player id is not a house id: {account_id!r}")
            self._state.accounts[account_id] = AccountKind.PLAYER

    def lock_balances(self, account_ids: Iterable[str]) -> dict[str, BalanceRow]:
        rows = (self.balance(a) for a in sorted(set(account_ids)))
        return {r.account_id: r for r in rows if r is not None}

    def balance(self, account_id: str) -> BalanceRow | None:
        kind = self._state.accounts.get(account_id)
        if kind is None:
            return None
        return BalanceRow(
            account_id,
            kind,
            self._state.balances.get(account_id, 0),
            self._state.reserved.get(account_id, 0),
        )


def _check_balance(state: LedgerState, account_id: str) -> None:
    if state.accounts[account_id] is AccountKind.ISSUANCE:
        return
    balance, reserved = state.balances.get(account_id, 0), state.reserved.get(account_id, 0)
    if balance < 0 or balance - reserved < 0:
        raise ConstraintViolation(
            f"{account_id}: balance {balance}, reserved {reserved} (balance_not_negative, "
            "available_not_negative)"
        )


def _check_match_line(
    state: LedgerState,
    transaction: JournalTransaction,
    account_id: str,
    kind: LineKind,
    amount: int,
) -> None:
    """``ledger_forfeit_matches_holds``: a forfeit equals what the account's covered holds were
    settled at; a prize is not negative; both only in a settlement."""
    if transaction.kind is not TransactionKind.SETTLEMENT:
        raise ConstraintViolation(f"a {kind.value} line belongs to a settlement")
    if kind is LineKind.PRIZE:
        if amount < 0:
            raise ConstraintViolation(f"a prize line is never negative ({amount})")
        return
    prefix = f"{transaction.hand_id}:"
    settled = sum(
        r.settled_amount or 0
        for r in state.reservations
        if r.hand_id.startswith(prefix)
        and r.table_id == transaction.table_id
        and r.account_id == account_id
        and r.state == "settled"
    )
    if amount >= 0 or settled != -amount:
        raise ConstraintViolation(
            f"forfeit of {-amount} hundredths for {account_id} in {transaction.hand_id} matches "
            f"no holds settled at that amount ({settled})"
        )


class _Journal(_Repository, Journal):
    def insert(self, transaction: JournalTransaction) -> None:
        state = self._state
        postings = transaction.in_posting_order()
        if not 1 <= len(transaction.id) <= 300:
            raise ConstraintViolation(f"transaction id {transaction.id!r}: 1..300 characters")
        if any(t.id == transaction.id for t in state.transactions):
            raise ConstraintViolation(f"journal transaction {transaction.id!r} exists")
        settlement = transaction.kind is TransactionKind.SETTLEMENT
        if settlement and not (transaction.hand_id and transaction.table_id):
            raise ConstraintViolation("a settlement names its hand and table")
        if settlement and any(
            t.kind == TransactionKind.SETTLEMENT.value and t.hand_id == transaction.hand_id
            for t in state.transactions
        ):
            raise ConstraintViolation(f"hand {transaction.hand_id!r} is already settled")
        if len(postings) < 2:
            raise ConstraintViolation(f"journal transaction {transaction.id} has < 2 entries")
        if sum(p.amount_hundredths for p in postings) != 0:
            raise ConstraintViolation(f"journal transaction {transaction.id} does not sum to 0")
        for p in postings:
            if p.account_id not in state.accounts:
                raise ConstraintViolation(f"no account {p.account_id!r}")
            if (p.seat is not None and p.seat < 0) or (p.points is not None and p.points < 0):
                raise ConstraintViolation("seat and points are not negative")
            if p.line_kind is LineKind.LOSS and not (
                settlement
                and any(
                    r.hand_id == transaction.hand_id
                    and r.account_id == p.account_id
                    and r.state == "settled"
                    and r.settled_amount == -p.amount_hundredths
                    for r in state.reservations
                )
            ):
                raise ConstraintViolation(
                    f"loss of {-p.amount_hundredths} hundredths for {p.account_id} in hand "
                    f"{transaction.hand_id} matches no reservation settled at that amount"
                )
            if p.line_kind in (LineKind.FORFEIT, LineKind.PRIZE):
                _check_match_line(
                    state, transaction, p.account_id, p.line_kind, p.amount_hundredths
                )
            state.entries.append(JournalEntry.of(transaction.id, p))
            state.balances[p.account_id] = state.balances.get(p.account_id, 0) + p.amount_hundredths
            _check_balance(state, p.account_id)
        state.transactions.append(
            _Transaction(
                len(state.transactions) + 1,
                transaction.id,
                transaction.kind.value,
                transaction.hand_id,
                transaction.table_id,
                self._uow.clock(),
                json.loads(json.dumps(dict(transaction.metadata))),
            )
        )

    def statement(self, account_id: str, limit: int, before_seq: int | None) -> list[StatementRow]:
        mine: dict[str, list[JournalEntry]] = {}
        for entry in self._state.entries:
            if entry.account_id == account_id:
                mine.setdefault(entry.transaction_id, []).append(entry)
        rows: list[StatementRow] = []
        running = 0
        for t in self._state.transactions:  # in seq order
            if t.id not in mine:
                continue
            net = sum(e.amount for e in mine[t.id])
            running += net
            rows.append(
                StatementRow(
                    seq=t.seq,
                    transaction_id=t.id,
                    kind=t.kind,
                    hand_id=t.hand_id,
                    table_id=t.table_id,
                    posted_at=t.posted_at,
                    metadata=t.metadata,
                    net_hundredths=net,
                    balance_after_hundredths=running,
                    lines=tuple((e.line_kind, e.amount, e.seat, e.points) for e in mine[t.id]),
                )
            )
        newest_first = [r for r in reversed(rows) if before_seq is None or r.seq < before_seq]
        return newest_first[:limit]


class _Reservations(_Repository, Reservations):
    def insert(self, hand_id: str, table_id: str, seat: int, account_id: str, amount: int) -> None:
        state = self._state
        if account_id not in state.accounts:
            raise ConstraintViolation(f"no account {account_id!r}")
        if amount < 0 or seat < 0:
            raise ConstraintViolation("a reservation's amount and seat are not negative")
        for r in state.reservations:
            if r.hand_id == hand_id and (r.account_id == account_id or r.seat == seat):
                raise ConstraintViolation(
                    f"hand {hand_id!r} already holds a reservation for that account or seat"
                )
        state.reservations.append(_Reservation(hand_id, table_id, seat, account_id, amount))
        state.reserved[account_id] = state.reserved.get(account_id, 0) + amount
        _check_balance(state, account_id)

    def lock_held(self, hand_id: str) -> list[HeldReservation]:
        held = sorted(self._held(hand_id), key=lambda r: r.seat)
        return [HeldReservation(r.seat, r.account_id, r.amount) for r in held]

    def _held(self, hand_id: str) -> list[_Reservation]:
        return [r for r in self._state.reservations if r.hand_id == hand_id and r.state == "held"]

    def _resolve(self, hand_id: str, seat: int, state: str, settled_amount: int | None) -> None:
        for r in self._held(hand_id):
            if r.seat != seat:
                continue
            if settled_amount is not None and not 0 <= settled_amount <= r.amount:
                raise ConstraintViolation(
                    f"settled at {settled_amount}: 0..{r.amount} (resolution_shape)"
                )
            r.state, r.settled_amount = state, settled_amount
            self._state.reserved[r.account_id] -= r.amount

    def settle(self, hand_id: str, seat: int, settled_amount: int) -> None:
        self._resolve(hand_id, seat, "settled", settled_amount)

    def release(self, hand_id: str, seat: int) -> None:
        self._resolve(hand_id, seat, "released", None)

    def of_hand(self, hand_id: str) -> list[ReservationRow]:
        mine = sorted(
            (r for r in self._state.reservations if r.hand_id == hand_id), key=lambda r: r.seat
        )
        return [
            ReservationRow(r.hand_id, r.seat, r.account_id, r.amount, r.state, r.settled_amount)
            for r in mine
        ]


class _Matches(_Repository, Matches):
    def record_table(self, table_id: str, commission_bps: int) -> None:
        if not 0 <= commission_bps <= 10000:
            raise ConstraintViolation(f"commission_bps {commission_bps}: 0..10000")
        self._state.match_tables.setdefault(table_id, commission_bps)

    def table_commission_bps(self, table_id: str) -> int | None:
        return self._state.match_tables.get(table_id)

    def lock(self, table_id: str, match_id: str) -> MatchBook | None:
        body = self._state.matches.get((table_id, match_id))
        return None if body is None else MatchBook.from_json(json.loads(body))

    def save(self, book: MatchBook) -> None:
        self._state.matches[(book.table_id, book.match_id)] = json.dumps(book.to_json())


class _Outbox(_Repository, Outbox):
    def next_stream_version(self, stream_id: str) -> int:
        version = self._state.stream_versions.get(stream_id, 0) + 1
        self._state.stream_versions[stream_id] = version
        return version

    def write(self, events: Sequence[OutgoingEvent]) -> None:
        outbox = self._state.outbox
        for e in events:
            if any(row.event_id == e.event_id for row, _ in outbox):
                raise ConstraintViolation(f"outbox event {e.event_id!r} exists")
            row = OutboxRow(
                e.event_id, len(outbox) + 1, e.topic, e.key, e.type, e.payload, self._uow.clock()
            )
            outbox.append((row, False))

    def unpublished(self, limit: int = 100) -> list[OutboxRow]:
        return [row for row, published in self._state.outbox if not published][:limit]

    def mark_published(self, event_ids: Sequence[str]) -> None:
        ids = set(event_ids)
        self._state.outbox = [
            (row, published or row.event_id in ids) for row, published in self._state.outbox
        ]


class _Limits(_Repository, Limits):
    def of(self, account_id: str) -> PlayerLimits | None:
        body = self._state.player_limits.get(account_id)
        return None if body is None else PlayerLimits.from_json(json.loads(body))

    def save(self, limits: PlayerLimits) -> None:
        self._state.player_limits[limits.account_id] = json.dumps(limits.to_json())

    def add_loss(self, account_id: str, period: str, start: date, net_loss_hundredths: int) -> None:
        if period not in ("day", "week", "month"):
            raise ConstraintViolation(f"period {period!r}")
        key = (account_id, period, start)
        self._state.period_losses[key] = self._state.period_losses.get(key, 0) + net_loss_hundredths

    def losses(self, account_id: str, periods: Sequence[tuple[str, date]]) -> dict[str, int]:
        return {p: self._state.period_losses.get((account_id, p, s), 0) for p, s in periods}


class _History(_Repository, History):
    def record_table_variant(self, table_id: str, variant: str) -> None:
        self._state.table_variants.setdefault(table_id, variant)

    def table_variant(self, table_id: str) -> str | None:
        return self._state.table_variants.get(table_id)

    def add(self, entries: Sequence[PlayedEntry]) -> None:
        for e in entries:
            key = (e.kind, e.table_id, e.ref_id, e.account_id)
            if e.kind not in ("hand", "match"):
                raise ConstraintViolation(f"played kind {e.kind!r}")
            row = self._state.played.get(key)
            if row is None:
                self._state.played_ids[key] = len(self._state.played_ids) + 1
                row = replace(e, net_hundredths=0, result=None, ended_at=None)
            if (e.result is None) != (e.ended_at is None):
                raise ConstraintViolation("a played row ends with both a result and a time")
            self._state.played[key] = replace(
                row,
                net_hundredths=row.net_hundredths + e.net_hundredths,
                result=row.result if row.result is not None else e.result,
                ended_at=row.ended_at if row.ended_at is not None else e.ended_at,
            )

    def page(
        self, account_id: str, limit: int, before: tuple[datetime, int] | None
    ) -> list[PlayedRow]:
        rows = [
            PlayedRow(id=self._state.played_ids[key], **asdict(replace(e, result=e.result or "")))
            for key, e in self._state.played.items()
            if e.account_id == account_id and e.ended_at is not None
        ]
        rows.sort(key=lambda r: (r.ended_at, r.id), reverse=True)
        if before is not None:
            rows = [r for r in rows if (r.ended_at, r.id) < before]
        return rows[:limit]


class _Offsets(_Repository, Offsets):
    def store(self, consumer_group: str, topic: str, partition: int, offset: int) -> None:
        key = (consumer_group, topic, partition)
        self._state.offsets[key] = max(self._state.offsets.get(key, 0), offset + 1)

    def next_offsets(self, consumer_group: str) -> dict[tuple[str, int], int]:
        return {(t, p): n for (g, t, p), n in self._state.offsets.items() if g == consumer_group}


class InMemoryUnitOfWork(LedgerUnitOfWork):
    """The ledger's storage in one :class:`LedgerState`; ``clock`` stamps journal transactions
    (``posted_at``) and outbox rows. Repositories may also be used outside a transaction (each
    call then stands alone, as on an autocommit connection)."""

    def __init__(self, *, clock: Clock) -> None:
        self._transactions = SnapshotTransactions(LedgerState())
        self.clock = clock
        self.commands = _Commands(self)
        self.accounts = _Accounts(self)
        self.journal = _Journal(self)
        self.reservations = _Reservations(self)
        self.matches = _Matches(self)
        self.limits = _Limits(self)
        self.history = _History(self)
        self.outbox = _Outbox(self)
        self.offsets = _Offsets(self)

    @property
    def state(self) -> LedgerState:
        return self._transactions.state

    def transaction(self) -> AbstractContextManager[None]:
        return self._transactions.transaction()

    def invariant_violations(self) -> list[str]:
        state = self.state
        problems: list[str] = []
        if sum(state.balances.values()) != 0:
            problems.append(f"balances sum to {sum(state.balances.values())}, not 0")
        posted: dict[str, int] = {}
        by_transaction: dict[str, int] = {}
        for e in state.entries:
            posted[e.account_id] = posted.get(e.account_id, 0) + e.amount
            by_transaction[e.transaction_id] = by_transaction.get(e.transaction_id, 0) + e.amount
        held: dict[str, int] = {}
        for r in state.reservations:
            if r.state == "held":
                held[r.account_id] = held.get(r.account_id, 0) + r.amount
        for account_id, kind in sorted(state.accounts.items()):
            balance = state.balances.get(account_id, 0)
            reserved = state.reserved.get(account_id, 0)
            if balance != posted.get(account_id, 0):
                problems.append(
                    f"{account_id}: balance {balance} but its entries sum to "
                    f"{posted.get(account_id, 0)}"
                )
            if reserved != held.get(account_id, 0):
                problems.append(
                    f"{account_id}: reserved {reserved} but held reservations sum to "
                    f"{held.get(account_id, 0)}"
                )
            if kind is not AccountKind.ISSUANCE and (balance < 0 or balance - reserved < 0):
                problems.append(f"{account_id}: balance {balance}, reserved {reserved}")
        problems.extend(f"transaction {t} sums to {s}" for t, s in by_transaction.items() if s)
        return problems
