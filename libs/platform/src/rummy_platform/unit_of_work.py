"""Transactions of a unit of work (the ledger's and fairness's): on PostgreSQL and in memory.

A service's unit of work (``rummy_ledger.application.ports``, ``rummy_fairness.application.ports``)
gives its application repositories and ``transaction()``; the concrete ones delegate the transaction
to one of these two:

- :class:`PostgresTransactions`: on a pool, the outermost ``transaction()`` takes a connection
  (one per thread, so a gRPC server's threads share one unit of work) and commits it at its end;
  a nested one is a savepoint. Joined to a connection the caller already holds in an open
  transaction (a :class:`rummy_platform.reactor.PostgresReactor` handler's), every
  ``transaction()`` is a savepoint and the caller commits. An exception rolls back to where the
  ``transaction()`` began and propagates.
- :class:`SnapshotTransactions`: the same shape over a plain Python state object, for the
  in-memory fakes: ``transaction()`` snapshots the state (a deep copy) and puts it back on an
  exception, so a refused command changes nothing, as a rolled-back savepoint. Transactions are
  serialised by one re-entrant lock (PostgreSQL's row locks let writers of other rows run
  together: only PostgreSQL can show that).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import psycopg
from psycopg_pool import ConnectionPool

S = TypeVar("S")


class PostgresTransactions:
    """Transactions on ``pool`` (one connection per thread) or joined to ``connection``."""

    def __init__(
        self,
        pool: ConnectionPool | None = None,
        *,
        connection: psycopg.Connection[Any] | None = None,
    ) -> None:
        if (pool is None) == (connection is None):
            raise ValueError("give a pool or a connection in an open transaction, not both")
        self._pool = pool
        self._joined = connection
        self._local = threading.local()

    @property
    def connection(self) -> psycopg.Connection[Any]:
        """The connection of the open transaction. Raises RuntimeError outside one."""
        conn = self._joined or getattr(self._local, "conn", None)
        if conn is None:
            raise RuntimeError("storage is reached only inside unit_of_work.transaction()")
        return conn

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A transaction (the outermost on a pool, committed at its end) or a savepoint."""
        conn = self._joined or getattr(self._local, "conn", None)
        if conn is not None:
            with conn.transaction():
                yield
            return
        assert self._pool is not None
        with self._pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None


class SnapshotTransactions(Generic[S]):
    """Transactions over ``state`` (a mutable object with a ``__dict__``, e.g. a dataclass)."""

    def __init__(self, state: S) -> None:
        self.state = state
        self._lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything done inside happens, or (on an exception, re-raised) none of it."""
        with self._lock:
            snapshot = copy.deepcopy(self.state.__dict__)
            try:
                yield
            except BaseException:
                self.state.__dict__.clear()
                self.state.__dict__.update(snapshot)
                raise
