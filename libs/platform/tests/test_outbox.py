"""The outbox relay on real PostgreSQL and the in-memory event log: order, exactly-once marking,
republication after a crash between append and mark (deduped downstream by event id)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from platform_db_support import MIGRATIONS, fresh_schema, migrated_pool
from psycopg import sql
from psycopg_pool import ConnectionPool

from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy_platform.db import apply_migrations, open_pool
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import InMemoryEventLog, drop_redelivered
from rummy_platform.outbox import OutboxRelay, write_outbox
from rummy_platform.topics import TopicSpec

TOPIC = "fairness-events"


@pytest.fixture()
def pool(database_url: str) -> Iterator[ConnectionPool]:
    with migrated_pool(database_url) as pool:
        yield pool


@pytest.fixture()
def log() -> InMemoryEventLog:
    log = InMemoryEventLog()
    log.ensure_topics([TopicSpec(TOPIC, 4)])
    return log


def committed(table_id: str, version: int) -> Envelope:
    return Envelope.new(
        fairness_events.SeedCommitted(hand_id=f"hand-{version}", commitment_sha256=b"\x01" * 32),
        stream_id=table_id,
        stream_version=version,
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        correlation_id=f"hand-{version}",
    )


def write(pool: ConnectionPool, *events: Envelope) -> None:
    with pool.connection() as conn, conn.transaction():
        write_outbox(conn, [(TOPIC, e) for e in events])


def test_relay_publishes_rows_in_the_order_they_were_written_and_only_once(
    pool: ConnectionPool, log: InMemoryEventLog
) -> None:
    events = [committed("table-a", v) for v in (1, 2, 3)]
    write(pool, *events)
    relay = OutboxRelay(pool, log)
    assert relay.publish_pending() == 3
    assert relay.publish_pending() == 0
    read = [r.envelope for r in log.read_stream(TOPIC, "table-a")]
    assert [e.event_id for e in read] == [e.event_id for e in events]
    assert read == events


def test_rows_of_a_rolled_back_transaction_are_never_published(
    pool: ConnectionPool, log: InMemoryEventLog
) -> None:
    with pytest.raises(RuntimeError), pool.connection() as conn, conn.transaction():
        write_outbox(conn, [(TOPIC, committed("table-b", 1))])
        raise RuntimeError("the effects failed")
    assert OutboxRelay(pool, log).publish_pending() == 0
    assert log.read_stream(TOPIC, "table-b") == []


def test_a_crash_after_the_append_republishes_the_same_event_which_dedupes_to_one(
    pool: ConnectionPool, log: InMemoryEventLog
) -> None:
    event = committed("table-c", 1)
    write(pool, event)

    class Crash(Exception):
        pass

    def crash(_event_id: str) -> None:
        raise Crash

    with pytest.raises(Crash):
        OutboxRelay(pool, log, after_append=crash).publish_pending()
    assert OutboxRelay(pool, log).publish_pending() == 1
    published = [r.envelope for r in log.read_stream(TOPIC, "table-c")]
    assert len(published) == 2
    assert drop_redelivered(published) == [event]


def test_outbox_age_is_zero_when_empty_and_grows_while_a_row_waits(
    pool: ConnectionPool, log: InMemoryEventLog
) -> None:
    relay = OutboxRelay(pool, log)
    assert relay.oldest_unpublished_age_s() == 0.0
    write(pool, committed("table-d", 1))
    with pool.connection() as conn:
        conn.execute("UPDATE outbox SET created_at = now() - interval '5 seconds'")
    assert relay.oldest_unpublished_age_s() >= 5.0
    relay.publish_pending()
    assert relay.oldest_unpublished_age_s() == 0.0


def test_a_second_row_with_the_same_event_id_is_refused(pool: ConnectionPool) -> None:
    event = committed("table-e", 1)
    write(pool, event)
    with pytest.raises(psycopg.errors.UniqueViolation):
        write(pool, event)


def test_search_path_keeps_each_schema_apart(database_url: str) -> None:
    with fresh_schema(database_url) as one, fresh_schema(database_url) as two:
        apply_migrations(database_url, MIGRATIONS, schema=one)
        apply_migrations(database_url, MIGRATIONS, schema=two)
        with open_pool(database_url, schema=one, max_size=1) as p1:
            write(p1, committed("table-f", 1))
        with psycopg.connect(database_url) as conn:
            counts = [
                conn.execute(
                    sql.SQL("SELECT count(*) FROM {}.outbox").format(sql.Identifier(s))
                ).fetchone()
                for s in (one, two)
            ]
        assert counts == [(1,), (0,)]


def test_a_running_relay_publishes_a_row_when_its_transaction_commits_not_at_its_next_poll(
    pool: ConnectionPool, log: InMemoryEventLog
) -> None:
    relay = OutboxRelay(pool, log, poll_interval_s=60.0)  # a poll would come a minute later
    stop = threading.Event()
    runner = threading.Thread(target=relay.run, args=(stop,), daemon=True)
    runner.start()
    try:
        time.sleep(1.0)  # the relay found the outbox empty and waits
        event = committed("table-g", 1)
        write(pool, event)  # another connection's commit: the trigger notifies the relay
        deadline = time.monotonic() + 10.0
        while not log.read_stream(TOPIC, "table-g") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [r.envelope for r in log.read_stream(TOPIC, "table-g")] == [event]
    finally:
        stop.set()
        runner.join(5.0)
    assert not runner.is_alive()  # stop is seen within the relay's wake_check_s
