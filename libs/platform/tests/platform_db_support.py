"""Shared by the outbox and reactor tests: a throwaway schema with the plumbing tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql

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
