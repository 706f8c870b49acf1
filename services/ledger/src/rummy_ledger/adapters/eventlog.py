"""The ledger service's event log and outbox relay (outbound): the platform's Kafka event log,
and the relay publishing the ``outbox`` table to ledger-events."""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from rummy_platform.eventlog import EventLog, KafkaEventLog
from rummy_platform.outbox import OutboxRelay, RelayHook


def kafka_log(bootstrap_servers: str) -> EventLog:
    """The event log on the brokers ``host:port[,host:port]``."""
    return KafkaEventLog(bootstrap_servers, client_id="ledger")


def outbox_relay(
    log: EventLog,
    pool: ConnectionPool,
    *,
    before_append: RelayHook | None = None,
    after_append: RelayHook | None = None,
) -> OutboxRelay:
    """The relay publishing the ``outbox`` table at least once (consumers drop repeats by
    event id); the hooks are test-only fault points."""
    return OutboxRelay(
        pool, log, table="outbox", before_append=before_append, after_append=after_append
    )
