"""Fairness handlers on real PostgreSQL (schema ``fairness``) and the in-memory event log, with a
fixed seed source injected in place of the OS CSPRNG (the production default, ``os_seed``)."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_fairness.adapters import db
from rummy_fairness.adapters.events import outbox_relay, table_reactor
from rummy_fairness.application import Fairness, os_seed
from rummy_platform.db import apply_migrations, open_pool
from rummy_platform.envelope import Envelope
from rummy_platform.errors import NotFound
from rummy_platform.eventlog import InMemoryEventLog
from rummy_platform.topics import FAIRNESS_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules.shuffle import SHUFFLE_VERSION

VECTOR = json.loads(
    (Path(__file__).resolve().parents[3] / "libs/rules/vectors/shuffle-v1.json").read_text()
)["deals"][0]
FIXED_SEED = bytes.fromhex(VECTOR["server_seed_hex"])


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
def log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics(event_topic_specs(partitions=2))
    return log


def table_event(table_id: str, version: int, payload: object) -> Envelope:
    return Envelope.new(
        payload,  # type: ignore[arg-type]
        stream_id=table_id,
        stream_version=version,
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        correlation_id=payload.hand_id,  # type: ignore[attr-defined]
        rules_version="indian13-points/1",
        shuffle_version=SHUFFLE_VERSION,
    )


def run(log: InMemoryEventLog, pool: ConnectionPool, fairness: Fairness) -> list[Envelope]:
    """Let the reactor handle everything appended, publish the outbox, return fairness-events."""
    reactor = table_reactor(log, pool, fairness)
    while reactor.run_once():
        pass
    reactor.close()
    while outbox_relay(log, pool).publish_pending():
        pass
    return [r.envelope for r in log.read_stream(FAIRNESS_EVENTS, "table-1")]


def test_a_fixed_seed_is_committed_by_its_sha256_and_revealed_once_after_the_hand(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    fairness = Fairness(seed_source=lambda: FIXED_SEED)
    started = table_event("table-1", 1, table_events.HandStarted(hand_id="hand-1"))
    log.append(TABLE_EVENTS, started)
    [committed] = run(log, pool, fairness)
    assert committed.payload == fairness_events.SeedCommitted(
        hand_id="hand-1", commitment_sha256=bytes.fromhex(VECTOR["expected"]["commitment_hex"])
    )
    assert committed.causation_id == started.event_id and committed.stream_version == 1

    proof = fairness.get_proof(pool, "hand-1")
    assert not proof.revealed and proof.server_seed == b""

    for version in (2, 3):  # HandEnded, then a (wrong) second end: one reveal
        log.append(
            TABLE_EVENTS, table_event("table-1", version, table_events.HandEnded(hand_id="hand-1"))
        )
    published = run(log, pool, fairness)
    revealed = [e for e in published if isinstance(e.payload, fairness_events.SeedRevealed)]
    assert [e.payload.server_seed for e in revealed] == [FIXED_SEED]
    assert fairness.get_proof(pool, "hand-1").server_seed == FIXED_SEED


def test_the_proof_lists_the_client_seeds_exactly_as_locked(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    fairness = Fairness(seed_source=lambda: FIXED_SEED)
    log.append(TABLE_EVENTS, table_event("table-1", 1, table_events.HandStarted(hand_id="hand-2")))
    seeds = [
        table_events.ClientSeed(seat=2, client_seed=b""),
        table_events.ClientSeed(seat=0, client_seed=b"hi"),
    ]
    log.append(
        TABLE_EVENTS,
        table_event("table-1", 2, table_events.SeedsLocked(hand_id="hand-2", client_seeds=seeds)),
    )
    run(log, pool, fairness)
    assert fairness.get_proof(pool, "hand-2").client_seeds == ((0, b"hi"), (2, b""))


def test_an_unknown_hand_has_no_proof_and_no_seed(pool: ConnectionPool) -> None:
    with pytest.raises(NotFound):
        Fairness().get_proof(pool, "never-started")
    with pytest.raises(NotFound):
        Fairness().get_server_seed(pool, "never-started")


def test_the_database_refuses_a_commitment_that_is_not_the_seeds_sha256(
    pool: ConnectionPool,
) -> None:
    with pytest.raises(psycopg.errors.CheckViolation), pool.connection() as conn:
        db.insert_seed(
            conn,
            hand_id="hand-x",
            table_id="table-x",
            server_seed=FIXED_SEED,
            commitment_sha256=hashlib.sha256(b"another seed").digest(),
            rules_version="",
            shuffle_version=SHUFFLE_VERSION,
        )


def test_production_seeds_are_32_fresh_bytes() -> None:
    seeds = {os_seed() for _ in range(8)}
    assert len(seeds) == 8 and all(len(s) == 32 for s in seeds)
