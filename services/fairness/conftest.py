"""Fixtures of the fairness tests (services/fairness/tests; this file sits one folder up so that
mypy names it ``services.fairness.conftest``: the root pyproject's ``[tool.mypy]`` says why): the
in-memory unit of work (``uow``, the application tests'),
and a pool on a fresh PostgreSQL schema (``pool``, ``pg_uow``) for what needs the database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy_fairness.adapters import db
from rummy_fairness.adapters.memory import InMemoryUnitOfWork
from rummy_fairness.adapters.postgres import PostgresUnitOfWork
from rummy_platform.db import apply_migrations, open_pool


@pytest.fixture()
def uow() -> InMemoryUnitOfWork:
    """A new, empty fairness store in memory (no database)."""
    return InMemoryUnitOfWork()


@pytest.fixture()
def pool(database_url: str) -> Iterator[ConnectionPool]:
    """A pool on a fresh schema holding the fairness migrations, dropped afterwards."""
    schema = f"fairness_{uuid.uuid4().hex[:10]}"
    apply_migrations(database_url, db.MIGRATIONS_DIR, schema=schema)
    pool = open_pool(database_url, schema=schema, max_size=2)
    try:
        yield pool
    finally:
        pool.close()
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture()
def pg_uow(pool: ConnectionPool) -> PostgresUnitOfWork:
    return PostgresUnitOfWork(pool)
