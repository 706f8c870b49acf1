"""Reactors on the in-memory event log: PostgresReactor against real PostgreSQL (effects and
offset in one transaction, event-id dedupe, retry in order, resume after restart) and
TransactionalReactor (outputs and consumed offsets in one append, stable reaction ids)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from platform_db_support import migrated_pool
from prometheus_client import REGISTRY
from psycopg_pool import ConnectionPool

from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope, reaction_event_id, type_name
from rummy_platform.eventlog import InMemoryEventLog, TopicPartition
from rummy_platform.eventlog.memory import StoredRecord
from rummy_platform.reactor import PostgresReactor, TransactionalReactor
from rummy_platform.topics import TopicSpec
from rummy_testing.events import FIXED_TIME, table_event

IN, OUT = "table-events", "dealer-events"
STARTED = type_name(table_events.HandStarted)
LOCKED = type_name(table_events.SeedsLocked)


@pytest.fixture()
def log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics([TopicSpec(IN, 2), TopicSpec(OUT, 2)])
    return log


@pytest.fixture()
def pool(database_url: str) -> Iterator[ConnectionPool]:
    with migrated_pool(database_url) as pool:
        yield pool


def started(table_id: str, hand_id: str, version: int = 1) -> Envelope:
    return table_event(
        table_id, version, table_events.HandStarted(hand_id=hand_id), occurred_at=FIXED_TIME
    )


def effects(pool: ConnectionPool) -> list[str]:
    with pool.connection() as conn:
        return [r[0] for r in conn.execute("SELECT note FROM effects ORDER BY note").fetchall()]


def note_hand(conn: psycopg.Connection, envelope: Envelope) -> None:
    conn.execute(
        "INSERT INTO effects (event_id, note) VALUES (%s, %s)",
        (envelope.event_id, envelope.payload.hand_id),  # type: ignore[attr-defined]
    )


def postgres_reactor(log: InMemoryEventLog, pool: ConnectionPool, handler=note_hand):  # type: ignore[no-untyped-def]
    return PostgresReactor(
        log,
        pool,
        group_id="test",
        topics=[IN],
        handlers={STARTED: handler},
        processed_table="processed_events",
        retry_pause_s=0,
    )


def test_effects_and_the_stored_offset_commit_together_and_other_types_are_not_delivered(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    first = log.append(IN, started("t1", "h1"))
    log.append(IN, locked("t1", "h1", 2))
    reactor = postgres_reactor(log, pool)
    assert reactor.run_once() == 1
    assert effects(pool) == ["h1"]
    assert reactor.stored_offsets() == {TopicPartition(IN, first.partition): first.offset + 1}


def test_a_record_of_a_type_without_handler_is_skipped_undecoded_and_the_next_offset_passes_it(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    log.append(IN, started("t1b", "h1b"))
    log.append_stored(IN, "t1b", StoredRecord(b"\xff not an envelope", LOCKED))
    last = log.append(IN, started("t1b", "h1c", 3))
    reactor = postgres_reactor(log, pool)
    assert reactor.run_once() == 2
    assert effects(pool) == ["h1b", "h1c"]
    assert reactor.stored_offsets() == {TopicPartition(IN, last.partition): last.offset + 1}


def test_a_redelivered_event_id_changes_nothing(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    once = started("t2", "h2")
    log.append(IN, once)
    log.append(IN, once)  # e.g. republished by a relay after a crash
    reactor = postgres_reactor(log, pool)
    assert reactor.run_once() == 2
    assert effects(pool) == ["h2"]


def test_a_failing_handler_keeps_neither_effect_nor_offset_and_its_table_is_retried_in_order(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    log.append(IN, started("t3", "h3a", 1))
    log.append(IN, started("t3", "h3b", 2))
    log.append(IN, started("t3", "h3c", 3))
    broken = {"h3b"}

    def flaky(conn: psycopg.Connection, envelope: Envelope) -> None:
        note_hand(conn, envelope)
        if envelope.payload.hand_id in broken:  # type: ignore[attr-defined]
            raise RuntimeError("database said no")

    reactor = postgres_reactor(log, pool, flaky)
    assert reactor.run_once() == 1  # h3b fails: table t3 is parked, h3c held behind it
    assert effects(pool) == ["h3a"]
    assert reactor.isolation.parked == {"t3"}
    broken.clear()
    assert reactor.run_once() == 2
    assert effects(pool) == ["h3a", "h3b", "h3c"]


def test_a_restarted_reactor_resumes_after_what_it_stored(
    log: InMemoryEventLog, pool: ConnectionPool
) -> None:
    log.append(IN, started("t4", "h4a"))
    first = postgres_reactor(log, pool)
    first.run_once()
    first.close()
    log.append(IN, started("t4", "h4b", 2))
    second = postgres_reactor(log, pool)
    assert second.run_once() == 1
    assert effects(pool) == ["h4a", "h4b"]


def deal_for(source: Envelope) -> list[tuple[str, Envelope]]:
    hand_id = source.payload.hand_id  # type: ignore[attr-defined]
    payload = dealer_events.HandDealt(hand_id=hand_id)
    return [
        (
            OUT,
            Envelope.new(
                payload,
                event_id=reaction_event_id(source, type_name(payload)),
                stream_id=source.stream_id,
                stream_version=1,
                occurred_at=source.occurred_at,
                causation_id=source.event_id,
            ),
        )
    ]


def transactional(log: InMemoryEventLog, handler=deal_for) -> TransactionalReactor:  # type: ignore[no-untyped-def]
    return TransactionalReactor(
        log,
        log.transactional_writer("dealer"),
        group_id="dealer",
        topics=[IN],
        handlers={LOCKED: handler},
        retry_pause_s=0,
    )


def locked(table_id: str, hand_id: str, version: int = 1) -> Envelope:
    return table_event(
        table_id, version, table_events.SeedsLocked(hand_id=hand_id), occurred_at=FIXED_TIME
    )


def dealt_hands(log: InMemoryEventLog, table_id: str) -> list[str]:
    return [r.envelope.payload.hand_id for r in log.read_stream(OUT, table_id)]  # type: ignore[attr-defined]


def test_outputs_and_consumed_offsets_are_appended_together_and_a_restart_resumes_after_them(
    log: InMemoryEventLog,
) -> None:
    position = log.append(IN, locked("t5", "h5a"))
    reactor = transactional(log)
    assert reactor.run_once() == 1
    assert dealt_hands(log, "t5") == ["h5a"]
    reactor.close()
    log.append(IN, locked("t5", "h5b", 2))
    again = transactional(log)
    assert again.run_once() == 1
    assert dealt_hands(log, "t5") == ["h5a", "h5b"]
    consumer = log.consumer("dealer", [IN])
    assert consumer.committed(TopicPartition(IN, position.partition)) == position.offset + 2


def test_an_emit_reactor_skips_records_without_handler_undecoded_and_commits_past_them(
    log: InMemoryEventLog,
) -> None:
    log.append(IN, locked("t5b", "h5c"))
    log.append_stored(IN, "t5b", StoredRecord(b"\xff not an envelope", STARTED))
    last = log.append(IN, locked("t5b", "h5d", 3))
    reactor = transactional(log)
    assert reactor.run_once() == 2
    assert dealt_hands(log, "t5b") == ["h5c", "h5d"]
    consumer = log.consumer("dealer", [IN])
    assert consumer.committed(TopicPartition(IN, last.partition)) == last.offset + 1


def test_the_same_input_seen_twice_yields_the_same_reaction_event_id(log: InMemoryEventLog) -> None:
    once = locked("t6", "h6")
    log.append(IN, once)
    log.append(IN, once)
    transactional(log).run_once()
    reactions = [r.envelope for r in log.read_stream(OUT, "t6")]
    assert len(reactions) == 2
    assert (
        reactions[0].event_id
        == reactions[1].event_id
        == reaction_event_id(once, type_name(dealer_events.HandDealt))
    )


def test_a_failing_emit_handler_commits_the_work_before_it_and_retries_its_table_later(
    log: InMemoryEventLog,
) -> None:
    log.append(IN, locked("t7", "h7a", 1))
    log.append(IN, locked("t7", "h7b", 2))
    broken = {"h7b"}

    def flaky(source: Envelope) -> list[tuple[str, Envelope]]:
        if source.payload.hand_id in broken:  # type: ignore[attr-defined]
            raise ConnectionError("fairness unavailable")
        return deal_for(source)

    reactor = transactional(log, flaky)
    assert reactor.run_once() == 1  # h7b fails: table t7 is parked
    assert dealt_hands(log, "t7") == ["h7a"]
    broken.clear()
    assert reactor.run_once() == 1
    assert dealt_hands(log, "t7") == ["h7a", "h7b"]


def one_partition_log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics([TopicSpec(IN, 1), TopicSpec(OUT, 1)])
    return log


def failures(group: str) -> float:
    value = REGISTRY.get_sample_value("rummy_stream_failures_total", {"group": group})
    return value or 0.0


def noting_hands_except(broken: set[str]):  # type: ignore[no-untyped-def]
    """A handler noting each hand, raising for the tables in ``broken`` (while they are)."""

    def handle(conn: psycopg.Connection, envelope: Envelope) -> None:
        if envelope.stream_id in broken:
            raise ValueError("reservation out of range")
        note_hand(conn, envelope)

    return handle


def test_a_failing_table_is_parked_while_every_other_table_on_its_partition_goes_on(
    pool: ConnectionPool,
) -> None:
    log = one_partition_log()
    log.append(IN, started("bad", "bad-1", 1))
    log.append(IN, started("good-a", "a-1", 1))
    log.append(IN, started("bad", "bad-2", 2))
    log.append(IN, started("good-b", "b-1", 1))
    broken = {"bad"}
    flaky = noting_hands_except(broken)

    counted = failures("test")
    reactor = postgres_reactor(log, pool, flaky)
    assert reactor.run_once() == 2
    assert effects(pool) == ["a-1", "b-1"]
    assert reactor.isolation.parked == {"bad"}
    assert failures("test") == counted + 1
    # The stored offset stays on the parked table's first event: a restart reads it again.
    assert reactor.stored_offsets() == {TopicPartition(IN, 0): 0}
    log.append(IN, started("good-a", "a-2", 2))
    assert reactor.run_once() == 1  # still failing: retried (and counted) with the others going on
    assert effects(pool) == ["a-1", "a-2", "b-1"]
    broken.clear()
    assert reactor.run_once() == 2  # the parked table's events, in order
    assert effects(pool) == ["a-1", "a-2", "b-1", "bad-1", "bad-2"]
    assert reactor.isolation.parked == frozenset()
    assert reactor.stored_offsets() == {TopicPartition(IN, 0): 5}


def test_a_restart_while_a_table_is_parked_reads_its_events_again_and_drops_the_others_repeats(
    pool: ConnectionPool,
) -> None:
    log = one_partition_log()
    log.append(IN, started("bad", "bad-1", 1))
    log.append(IN, started("good", "g-1", 1))
    broken = {"bad"}
    flaky = noting_hands_except(broken)

    first = postgres_reactor(log, pool, flaky)
    first.run_once()
    first.close()
    broken.clear()
    second = postgres_reactor(log, pool, flaky)
    while second.run_once():
        pass
    assert effects(pool) == ["bad-1", "g-1"]  # g-1 once, though delivered twice
    assert second.stored_offsets() == {TopicPartition(IN, 0): 2}


def test_a_failing_table_never_stops_the_deals_of_the_others_and_is_dealt_once_it_recovers() -> (
    None
):
    log = one_partition_log()
    log.append(IN, locked("bad", "bad-1", 1))
    log.append(IN, locked("good", "g-1", 1))
    log.append(IN, locked("bad", "bad-2", 2))
    log.append(IN, locked("good", "g-2", 2))
    broken = {"bad"}

    def flaky(source: Envelope) -> list[tuple[str, Envelope]]:
        if source.stream_id in broken:
            raise ValueError("no such shoe")
        return deal_for(source)

    reactor = transactional(log, flaky)
    assert reactor.run_once() == 2
    assert dealt_hands(log, "good") == ["g-1", "g-2"]
    assert dealt_hands(log, "bad") == []
    assert log.consumer("dealer", [IN]).committed(TopicPartition(IN, 0)) == 0
    broken.clear()
    assert reactor.run_once() == 2
    assert dealt_hands(log, "bad") == ["bad-1", "bad-2"]
    assert log.consumer("dealer", [IN]).committed(TopicPartition(IN, 0)) == 4
