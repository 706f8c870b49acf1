"""Fixtures of the ledger tests: a fresh, migrated PostgreSQL database per test module.

The server comes from the repository plugin's ``database_url`` fixture (``rummy_testing``:
``DATABASE_URL``, else ``deploy/local/postgres.sh``); its role may create databases. The same
plugin loads the hypothesis profiles (derandomized when CI=true).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy_ledger.adapters.db import SCHEMA, apply_migrations, open_pool


@pytest.fixture(scope="module")
def ledger_database_url(database_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new database holding only the ledger's schema, dropped after the module."""
    name = f"ledger_{request.module.__name__.rsplit('.', 1)[-1]}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlsplit(database_url)._replace(path=f"/{name}").geturl()
    try:
        apply_migrations(url)
        yield url
    finally:
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="module")
def pool(ledger_database_url: str) -> Iterator[ConnectionPool]:
    pool = open_pool(ledger_database_url, min_size=1, max_size=4)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture()
def conn(ledger_database_url: str) -> Iterator[psycopg.Connection]:
    """A raw connection (autocommit, search_path = the ledger schema) for tests that go around
    the application."""
    with psycopg.connect(
        ledger_database_url, autocommit=True, options=f"-c search_path={SCHEMA}"
    ) as connection:
        yield connection
