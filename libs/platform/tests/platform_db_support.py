"""Shared by the outbox and reactor tests: a throwaway schema with the plumbing tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy_platform.db import apply_migrations, open_pool

MIGRATIONS = Path(__file__).resolve().parent / "platform_migrations"


@contextmanager
def fresh_schema(database_url: str) -> Iterator[str]:
    """The name of a new, empty schema, dropped (with its tables) afterwards."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    try:
        yield schema
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def migrated_pool(database_url: str) -> Iterator[ConnectionPool]:
    """A pool (2 connections) on a fresh schema holding the platform's plumbing tables and the
    test ``effects`` table; the pool is closed and the schema dropped afterwards."""
    with fresh_schema(database_url) as schema:
        apply_migrations(database_url, MIGRATIONS, schema=schema)
        pool = open_pool(database_url, schema=schema, max_size=2)
        try:
            yield pool
        finally:
            pool.close()
