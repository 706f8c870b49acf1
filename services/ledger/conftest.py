"""Fixtures of the ledger tests (services/ledger/tests; this file sits one folder up so that mypy
names it ``services.ledger.conftest``: the root pyproject's ``[tool.mypy]`` says why): the
in-memory unit of work (``uow``, the application tests'),
and a fresh, migrated PostgreSQL database per test module (``pool``, ``pg_uow``, ``conn``).

The server comes from the repository plugin's ``database_url`` fixture (``rummy_testing``:
``DATABASE_URL``, else ``deploy/local/postgres.sh``); its role may create databases. The same
plugin loads the hypothesis profiles (derandomized in the whole suite, ``rummy_testing.profiles``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from rummy_ledger.adapters.db import SCHEMA, apply_migrations, open_pool
from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_testing.service_process import fresh_database
from rummy_testing.storage import IMPLEMENTATIONS


def wall_clock() -> datetime:
    """The system clock in UTC, for the tests that do not move time."""
    return datetime.now(UTC)


@pytest.fixture()
def uow() -> InMemoryUnitOfWork:
    """A new, empty ledger in memory (no database): what the application tests run on."""
    return InMemoryUnitOfWork(clock=wall_clock)


@pytest.fixture(params=IMPLEMENTATIONS)
def where(request: pytest.FixtureRequest) -> InMemoryUnitOfWork | ConnectionPool:
    """The in-memory unit of work, or the module's PostgreSQL pool (``[memory]``,
    ``[postgresql]``): what ``ledger_support.Wired`` runs the reactions on."""
    if request.param == "memory":
        return InMemoryUnitOfWork(clock=wall_clock)
    pool: ConnectionPool = request.getfixturevalue("pool")
    return pool


@pytest.fixture(scope="module")
def ledger_database_url(database_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new database holding only the ledger's schema, dropped after the module."""
    with fresh_database(
        database_url, f"ledger_{request.module.__name__.rsplit('.', 1)[-1]}"
    ) as url:
        apply_migrations(url)
        yield url


@pytest.fixture(scope="module")
def pool(ledger_database_url: str) -> Iterator[ConnectionPool]:
    with open_pool(ledger_database_url, min_size=1, max_size=4) as pool:  # closed on exit
        yield pool


@pytest.fixture(scope="module")
def pg_uow(pool: ConnectionPool) -> PostgresUnitOfWork:
    """The ledger's PostgreSQL unit of work on the module's database."""
    return PostgresUnitOfWork(pool)


@pytest.fixture()
def conn(ledger_database_url: str) -> Iterator[psycopg.Connection]:
    """A raw connection (autocommit, search_path = the ledger schema) for tests that go around
    the application."""
    with psycopg.connect(
        ledger_database_url, autocommit=True, options=f"-c search_path={SCHEMA}"
    ) as connection:
        yield connection
