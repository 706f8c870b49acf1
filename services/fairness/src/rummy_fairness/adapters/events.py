"""Kafka for the fairness service (the only module that builds Kafka clients): the event log,
the reactor on table-events and the outbox relay to fairness-events."""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from rummy.table.v1 import events_pb2 as table_events
from rummy_fairness.application import Fairness
from rummy_platform.envelope import type_name
from rummy_platform.eventlog import EventLog, KafkaEventLog
from rummy_platform.outbox import OutboxRelay, RelayHook
from rummy_platform.reactor import PostgresReactor
from rummy_platform.topics import TABLE_EVENTS

CONSUMER_GROUP = "fairness"


def kafka_log(bootstrap_servers: str) -> EventLog:
    return KafkaEventLog(bootstrap_servers, client_id="fairness")


def table_reactor(
    log: EventLog,
    pool: ConnectionPool,
    fairness: Fairness,
    *,
    topic: str = TABLE_EVENTS,
    group_id: str = CONSUMER_GROUP,
) -> PostgresReactor:
    """The reactor turning table-events into seeds, locks and reveals (offsets and processed
    event ids in Postgres, in each handler's transaction)."""
    return PostgresReactor(
        log,
        pool,
        group_id=group_id,
        topics=[topic],
        handlers={
            type_name(table_events.HandStarted): fairness.on_hand_started,
            type_name(table_events.SeedsLocked): fairness.on_seeds_locked,
            type_name(table_events.HandEnded): fairness.on_hand_over,
            type_name(table_events.HandAborted): fairness.on_hand_over,
        },
        processed_table="processed_events",
    )


def outbox_relay(
    log: EventLog,
    pool: ConnectionPool,
    *,
    before_append: RelayHook | None = None,
    after_append: RelayHook | None = None,
) -> OutboxRelay:
    return OutboxRelay(
        pool, log, table="outbox", before_append=before_append, after_append=after_append
    )
