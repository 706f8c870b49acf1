"""Fairness wired as the service runs it, on real PostgreSQL (schema ``fairness``): the reactor's
transaction, the outbox relay to the (in-memory) event log, the gRPC queries' unit of work, and
the schema's own CHECK. The use cases themselves run on the in-memory unit of work in
test_fairness_application.py; the storage contract in test_fairness_storage_contract.py."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import psycopg
import pytest
from fairness_support import FIXED_SEED, VECTOR, table_event
from psycopg_pool import ConnectionPool

from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_fairness.adapters import db
from rummy_fairness.adapters.postgres import PostgresUnitOfWork
from rummy_fairness.application.ports import SeedRow
from rummy_fairness.application.seeds import Fairness
from rummy_fairness.entrypoints.events import table_reactor
from rummy_platform.envelope import Envelope, has_payload
from rummy_platform.eventlog import InMemoryEventLog
from rummy_platform.outbox import OutboxRelay
from rummy_platform.topics import FAIRNESS_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules.shuffle import SHUFFLE_VERSION

pytestmark = pytest.mark.integration


@pytest.fixture()
def log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics(event_topic_specs(partitions=2))
    return log


def run(log: InMemoryEventLog, pool: ConnectionPool, fairness: Fairness) -> list[Envelope]:
    """Let the reactor handle everything appended, publish the outbox, return fairness-events."""
    reactor = table_reactor(log, pool, fairness)
    while reactor.run_once():
        pass
    reactor.close()
    while OutboxRelay(pool, log).publish_pending():
        pass
    return [r.envelope for r in log.read_stream(FAIRNESS_EVENTS, "table-1")]


def test_a_fixed_seed_is_committed_by_its_sha256_and_revealed_once_after_the_hand(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    fairness = Fairness(seed_source=lambda _hand: FIXED_SEED)
    started = table_event("table-1", 1, table_events.HandStarted(hand_id="hand-1"))
    log.append(TABLE_EVENTS, started)
    [committed] = run(log, pool, fairness)
    assert committed.payload == fairness_events.SeedCommitted(
        hand_id="hand-1", commitment_sha256=bytes.fromhex(VECTOR["expected"]["commitment_hex"])
    )
    assert committed.causation_id == started.event_id and committed.stream_version == 1

    proof = fairness.get_proof(PostgresUnitOfWork(pool), "hand-1")
    assert not proof.revealed and proof.server_seed == b""

    for version in (2, 3):  # HandEnded, then a (wrong) second end: one reveal
        log.append(
            TABLE_EVENTS, table_event("table-1", version, table_events.HandEnded(hand_id="hand-1"))
        )
    published = run(log, pool, fairness)
    revealed = [e for e in published if has_payload(e, fairness_events.SeedRevealed)]
    assert [e.payload.server_seed for e in revealed] == [FIXED_SEED]
    assert fairness.get_proof(PostgresUnitOfWork(pool), "hand-1").server_seed == FIXED_SEED


def unrevealed(hand_id: str) -> SeedRow:
    """A new seed of ``hand_id`` (the fixed seed, its commitment its SHA-256)."""
    return SeedRow(
        hand_id, "table-x", FIXED_SEED, hashlib.sha256(FIXED_SEED).digest(), "", SHUFFLE_VERSION
    )


def test_the_database_refuses_a_commitment_that_is_not_the_seeds_sha256(
    pool: ConnectionPool,
) -> None:
    with pytest.raises(psycopg.errors.CheckViolation), pool.connection() as conn:
        db.insert_seed(
            conn,
            replace(unrevealed("hand-x"), commitment_sha256=hashlib.sha256(b"another").digest()),
        )
