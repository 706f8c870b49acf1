"""What ``rummy restore`` mends in a restored schema from the copied log (the events a service
wrote between the database's snapshot and the log's cut, ``docs/operations.md#backups``), on a
real PostgreSQL: stored offsets moved to their records' new places, outbox rows published iff
their event is in the log, stream versions raised to the log's, and fairness's seeds whose
commitment is in the log (and reveals it holds) merged in."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg import sql

from rummy_fairness.adapters.db import MIGRATIONS_DIR
from rummy_ops.backup.offsets import OffsetMap
from rummy_ops.backup.restore import LogFacts, fix_schema, merge_seeds
from rummy_platform.db import apply_migrations
from rummy_platform.eventlog import TopicPartition

SEED = bytes(range(32))


@pytest.fixture
def schema(database_url: str) -> Iterator[str]:
    name = f"fairness_bk_{uuid.uuid4().hex[:8]}"
    apply_migrations(database_url, MIGRATIONS_DIR, schema=name)
    yield name
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


def _seed_row(hand: str, revealed: str | None = None) -> dict[str, object]:
    return {
        "hand_id": hand,
        "table_id": "t-1",
        "server_seed": SEED.hex(),
        "commitment_sha256": hashlib.sha256(SEED).hexdigest(),
        "rules_version": "r1",
        "shuffle_version": "s1",
        "committed_at": datetime(2026, 12, 3, tzinfo=UTC).isoformat(),
        "revealed_at": revealed,
    }


def test_restore_mends_a_schema_older_than_its_log(database_url: str, schema: str) -> None:
    with psycopg.connect(database_url, options=f"-c search_path={schema}") as conn:
        conn.execute(
            "INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset) "
            "VALUES ('fairness', 'table-events', 0, 5)"
        )
        for event_id, published in (("in-log", False), ("lost", True), ("later", False)):
            conn.execute(
                "INSERT INTO outbox (id, topic, key, type, payload, published_at) "
                "VALUES (%s, 'fairness-events', 't-1', 'x', '', %s)",
                (event_id, datetime.now(UTC) if published else None),
            )
        conn.execute("INSERT INTO stream_versions (stream_id, version) VALUES ('t-1', 2)")
        conn.execute(
            "INSERT INTO server_seeds (hand_id, table_id, server_seed, commitment_sha256, "
            "rules_version, shuffle_version) VALUES ('h1', 't-1', %s, %s, 'r1', 's1')",
            (SEED, hashlib.sha256(SEED).digest()),
        )
        conn.commit()
        facts = LogFacts()
        facts.event_ids["fairness-events"] = {"in-log", "older"}
        facts.versions["fairness-events"] = {"t-1": 7, "t-2": 3}
        facts.committed = {"h1", "h2"}
        facts.revealed = {"h1"}
        maps = {TopicPartition("table-events", 0): OffsetMap([0, 1, 3, 7], [0, 1, 2, 3], 4)}
        assert fix_schema(conn, schema, maps, facts) == (1, 2)
        seeds = {
            "seeds": [
                _seed_row("h1", revealed=datetime(2026, 12, 3, 1, tzinfo=UTC).isoformat()),
                _seed_row("h2"),
                _seed_row("h3"),  # committed after the cut: fairness draws it again
            ],
            "locked": [{"hand_id": "h2", "seat": 0, "client_seed": "ab"}],
        }
        assert merge_seeds(conn, schema, seeds, facts) == (1, 1)
        conn.commit()
        (offset,) = conn.execute("SELECT next_offset FROM consumer_offsets").fetchone() or (0,)
        assert offset == 3  # old 5 lay between records 3 and 7: resume at 7's new place
        sent: dict[str, bool] = dict(
            conn.execute("SELECT id, published_at IS NOT NULL FROM outbox").fetchall()
        )
        assert sent == {"in-log": True, "lost": False, "later": False}
        versions: dict[str, int] = dict(
            conn.execute("SELECT stream_id, version FROM stream_versions").fetchall()
        )
        assert versions == {"t-1": 7, "t-2": 3}
        rows: dict[str, bool] = dict(
            conn.execute("SELECT hand_id, revealed_at IS NOT NULL FROM server_seeds").fetchall()
        )
        assert rows == {"h1": True, "h2": False}
        locked = conn.execute("SELECT hand_id, seat, client_seed FROM locked_client_seeds")
        assert locked.fetchall() == [("h2", 0, bytes.fromhex("ab"))]
