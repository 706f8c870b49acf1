"""PostgreSQL adapter of the fairness service: one function per query.

Every function takes a connection inside the caller's transaction and never commits. The seed
columns are secret until ``revealed_at`` is set: only :func:`server_seed` (service role) and the
reveal read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from rummy_fairness.application.ports import SeedRow

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
SCHEMA = "fairness"

Conn = psycopg.Connection[Any]


def insert_seed(conn: Conn, seed: SeedRow) -> bool:
    """Store a hand's new seed (its ``revealed_at`` is not stored); False (and nothing changes)
    if the hand already has one."""
    row = conn.execute(
        "INSERT INTO server_seeds (hand_id, table_id, server_seed, commitment_sha256, "
        "rules_version, shuffle_version) VALUES (%s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (hand_id) DO NOTHING RETURNING hand_id",
        (
            seed.hand_id,
            seed.table_id,
            seed.server_seed,
            seed.commitment_sha256,
            seed.rules_version,
            seed.shuffle_version,
        ),
    ).fetchone()
    return row is not None


def seed_row(conn: Conn, hand_id: str) -> SeedRow | None:
    """The hand's seed record, or None for an unknown hand."""
    row = conn.execute(
        "SELECT hand_id, table_id, server_seed, commitment_sha256, rules_version, "
        "shuffle_version, revealed_at FROM server_seeds WHERE hand_id = %s",
        (hand_id,),
    ).fetchone()
    if row is None:
        return None
    return SeedRow(row[0], row[1], bytes(row[2]), bytes(row[3]), row[4], row[5], row[6])


def mark_revealed(conn: Conn, hand_id: str) -> SeedRow | None:
    """Stamp the hand's seed revealed; returns it, or None if it is unknown or already revealed."""
    row = conn.execute(
        "UPDATE server_seeds SET revealed_at = now() WHERE hand_id = %s AND revealed_at IS NULL "
        "RETURNING hand_id, table_id, server_seed, commitment_sha256, rules_version, "
        "shuffle_version, revealed_at",
        (hand_id,),
    ).fetchone()
    if row is None:
        return None
    return SeedRow(row[0], row[1], bytes(row[2]), bytes(row[3]), row[4], row[5], row[6])


def insert_locked_client_seeds(
    conn: Conn, hand_id: str, seeds: Sequence[tuple[int, bytes]]
) -> None:
    """Record the client seeds as locked (a repeat of the same lock changes nothing)."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO locked_client_seeds (hand_id, seat, client_seed) VALUES (%s, %s, %s) "
            "ON CONFLICT (hand_id, seat) DO NOTHING",
            [(hand_id, seat, seed) for seat, seed in seeds],
        )


def locked_client_seeds(conn: Conn, hand_id: str) -> list[tuple[int, bytes]]:
    """``(seat, client seed)`` as locked, by seat; empty before the lock."""
    rows = conn.execute(
        "SELECT seat, client_seed FROM locked_client_seeds WHERE hand_id = %s ORDER BY seat",
        (hand_id,),
    ).fetchall()
    return [(int(r[0]), bytes(r[1])) for r in rows]
