"""Fairness's unit of work on PostgreSQL (psycopg 3) over the SQL of
:mod:`rummy_fairness.adapters.db` and the platform's outbox.

``PostgresUnitOfWork(pool)`` serves the gRPC queries (one connection per thread);
``PostgresUnitOfWork.joining(conn)`` runs a reaction inside the ``PostgresReactor``'s open
transaction (which stores the consumed offset and commits).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy_fairness.adapters import db
from rummy_fairness.application.ports import FairnessUnitOfWork, Outbox, SeedRow, Seeds
from rummy_platform.envelope import Envelope
from rummy_platform.outbox import DEFAULT_TABLE, next_stream_version, write_outbox
from rummy_platform.unit_of_work import PostgresTransactions

Connection = Callable[[], psycopg.Connection[Any]]


class _Seeds(Seeds):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def insert(self, seed: SeedRow) -> bool:
        return db.insert_seed(self._conn(), seed)

    def get(self, hand_id: str) -> SeedRow | None:
        return db.seed_row(self._conn(), hand_id)

    def mark_revealed(self, hand_id: str) -> SeedRow | None:
        return db.mark_revealed(self._conn(), hand_id)

    def insert_locked_client_seeds(self, hand_id: str, seeds: Sequence[tuple[int, bytes]]) -> None:
        db.insert_locked_client_seeds(self._conn(), hand_id, seeds)

    def locked_client_seeds(self, hand_id: str) -> list[tuple[int, bytes]]:
        return db.locked_client_seeds(self._conn(), hand_id)


class _Outbox(Outbox):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def next_stream_version(self, stream_id: str) -> int:
        return next_stream_version(self._conn(), stream_id)

    def write(self, events: Sequence[tuple[str, Envelope]]) -> None:
        write_outbox(self._conn(), events)

    def unpublished(self) -> list[tuple[str, str, str]]:
        rows = self._conn().execute(
            sql.SQL(
                "SELECT topic, id, type FROM {} WHERE published_at IS NULL ORDER BY position"
            ).format(sql.Identifier(DEFAULT_TABLE))
        )
        return [(topic, event_id, type_) for topic, event_id, type_ in rows]


class PostgresUnitOfWork(FairnessUnitOfWork):
    """Fairness's storage on ``pool`` (connections in the ``fairness`` schema)."""

    def __init__(self, pool: ConnectionPool | None = None, *, connection: Any = None) -> None:
        self._transactions = PostgresTransactions(pool, connection=connection)

        def conn() -> psycopg.Connection[Any]:
            return self._transactions.connection

        self.seeds = _Seeds(conn)
        self.outbox = _Outbox(conn)

    @classmethod
    def joining(cls, connection: psycopg.Connection[Any]) -> PostgresUnitOfWork:
        """A unit of work inside ``connection``'s open transaction (the caller commits)."""
        return cls(connection=connection)

    def transaction(self) -> AbstractContextManager[None]:
        return self._transactions.transaction()
