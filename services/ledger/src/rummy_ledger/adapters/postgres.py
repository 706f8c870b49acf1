"""The ledger's unit of work on PostgreSQL (psycopg 3): the repositories of
:mod:`rummy_ledger.application.ports` over the SQL of :mod:`rummy_ledger.adapters.db`.

``PostgresUnitOfWork(pool)`` is the service's (gRPC threads share it: one connection per thread,
``rummy_platform.unit_of_work.PostgresTransactions``); ``PostgresUnitOfWork.joining(conn)`` runs
inside the transaction a ``PostgresReactor`` opened for one record (which stores the consumed
offset and commits), each ``transaction()`` a savepoint. Isolation is the server's default
(READ COMMITTED), as before this seam; locks are taken by the queries (``FOR UPDATE`` in
account-id and seat order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import date, datetime
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from rummy_ledger import contract as ledger_contract
from rummy_ledger.adapters import db
from rummy_ledger.application.ports import (
    Accounts,
    BalanceRow,
    Commands,
    History,
    Journal,
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
from rummy_ledger.domain.accounts import HeldReservation, JournalTransaction
from rummy_ledger.domain.limits import PlayerLimits
from rummy_ledger.domain.matches import MatchBook
from rummy_platform.outbox import next_stream_version
from rummy_platform.unit_of_work import PostgresTransactions

Connection = Callable[[], psycopg.Connection[Any]]


class _Commands(Commands):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def claim(self, key: str, command: str, request_hash: str) -> StoredCommand | None:
        return db.claim_command(self._conn(), key, command, request_hash)

    def store_result(self, key: str, result: Any) -> None:
        db.store_command_result(self._conn(), key, result)


class _Accounts(Accounts):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def ensure_players(self, account_ids: Iterable[str]) -> None:
        db.ensure_player_accounts(self._conn(), account_ids)

    def lock_balances(self, account_ids: Iterable[str]) -> dict[str, BalanceRow]:
        return db.lock_balances(self._conn(), account_ids)

    def balance(self, account_id: str) -> BalanceRow | None:
        return db.read_balance(self._conn(), account_id)


class _Journal(Journal):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def insert(self, transaction: JournalTransaction) -> None:
        db.insert_transaction(self._conn(), transaction)

    def statement(self, account_id: str, limit: int, before_seq: int | None) -> list[StatementRow]:
        return db.statement_rows(self._conn(), account_id, limit, before_seq)


class _Reservations(Reservations):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def insert(self, hand_id: str, table_id: str, seat: int, account_id: str, amount: int) -> None:
        db.insert_reservation(self._conn(), hand_id, table_id, seat, account_id, amount)

    def lock_held(self, hand_id: str) -> list[HeldReservation]:
        return db.lock_held_reservations(self._conn(), hand_id)

    def settle(self, hand_id: str, seat: int, settled_amount: int) -> None:
        db.settle_reservation(self._conn(), hand_id, seat, settled_amount)

    def release(self, hand_id: str, seat: int) -> None:
        db.release_reservation(self._conn(), hand_id, seat)

    def of_hand(self, hand_id: str) -> list[ReservationRow]:
        return db.reservations_of_hand(self._conn(), hand_id)


class _Matches(Matches):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def record_table(self, table_id: str, commission_bps: int) -> None:
        db.record_match_table(self._conn(), table_id, commission_bps)

    def table_commission_bps(self, table_id: str) -> int | None:
        return db.match_table_commission_bps(self._conn(), table_id)

    def lock(self, table_id: str, match_id: str) -> MatchBook | None:
        return db.lock_match(self._conn(), table_id, match_id)

    def save(self, book: MatchBook) -> None:
        db.save_match(self._conn(), book)


class _Limits(Limits):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def of(self, account_id: str) -> PlayerLimits | None:
        return db.player_limits(self._conn(), account_id)

    def save(self, limits: PlayerLimits) -> None:
        db.save_player_limits(self._conn(), limits)

    def add_loss(self, account_id: str, period: str, start: date, net_loss_hundredths: int) -> None:
        db.add_period_loss(self._conn(), account_id, period, start, net_loss_hundredths)

    def losses(self, account_id: str, periods: Sequence[tuple[str, date]]) -> dict[str, int]:
        return db.period_losses(self._conn(), account_id, periods)


class _History(History):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def record_table_variant(self, table_id: str, variant: str) -> None:
        db.record_table_variant(self._conn(), table_id, variant)

    def table_variant(self, table_id: str) -> str | None:
        return db.table_variant(self._conn(), table_id)

    def add(self, entries: Sequence[PlayedEntry]) -> None:
        db.add_played(self._conn(), entries)

    def page(
        self, account_id: str, limit: int, before: tuple[datetime, int] | None
    ) -> list[PlayedRow]:
        return db.played_page(self._conn(), account_id, limit, before)


class _Outbox(Outbox):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def next_stream_version(self, stream_id: str) -> int:
        return next_stream_version(self._conn(), stream_id)

    def write(self, events: Sequence[OutgoingEvent]) -> None:
        db.write_outbox(
            self._conn(), [(e.event_id, e.topic, e.key, e.type, e.payload) for e in events]
        )

    def unpublished(self, limit: int = 100) -> list[OutboxRow]:
        return db.unpublished_outbox(self._conn(), limit)

    def mark_published(self, event_ids: Sequence[str]) -> None:
        db.mark_published(self._conn(), event_ids)


class _Offsets(Offsets):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def store(self, consumer_group: str, topic: str, partition: int, offset: int) -> None:
        db.store_offset(self._conn(), consumer_group, topic, partition, offset)

    def next_offsets(self, consumer_group: str) -> dict[tuple[str, int], int]:
        return db.next_offsets(self._conn(), consumer_group)


class PostgresUnitOfWork(LedgerUnitOfWork):
    """The ledger's storage on ``pool`` (the ``ledger`` schema's pool of ``db.open_pool``)."""

    def __init__(self, pool: ConnectionPool | None = None, *, connection: Any = None) -> None:
        self._transactions = PostgresTransactions(pool, connection=connection)

        def conn() -> psycopg.Connection[Any]:
            return self._transactions.connection

        self.commands = _Commands(conn)
        self.accounts = _Accounts(conn)
        self.journal = _Journal(conn)
        self.reservations = _Reservations(conn)
        self.matches = _Matches(conn)
        self.limits = _Limits(conn)
        self.history = _History(conn)
        self.outbox = _Outbox(conn)
        self.offsets = _Offsets(conn)

    @classmethod
    def joining(cls, connection: psycopg.Connection[Any]) -> PostgresUnitOfWork:
        """A unit of work inside ``connection``'s open transaction (the caller commits)."""
        return cls(connection=connection)

    def transaction(self) -> AbstractContextManager[None]:
        return self._transactions.transaction()

    def invariant_violations(self) -> list[str]:
        with self.transaction():
            return ledger_contract.invariant_violations(self._transactions.connection)
