"""Wires the ledger service from its environment (the only place adapters are built).

Environment (read here, when the process starts):

=========================  =================================================================
``RUMMY_JWT_SECRET``       shared HS256 token secret (required)
``DATABASE_URL``           PostgreSQL; the ledger's tables live in its schema ``ledger``
                           (migrations applied at start) (required)
``KAFKA_BOOTSTRAP_SERVERS``  Kafka brokers (required)
``RUMMY_GRPC_PORT``        gRPC port, default 50053 (0 = any free port)
``RUMMY_METRICS_PORT``     ``/metrics`` port, default 9103
``RUMMY_TOPIC_PREFIX``     prepended to topic and consumer-group names (tests isolate runs)
``RUMMY_FAULT_POINT``      TEST ONLY, never set in production: ``settlement-before-publish``
                           SIGKILLs the process when the outbox relay is about to publish a
                           committed ``HandSettled`` (after the settlement's database commit,
                           before the publish); ``settlement-after-publish`` right after that
                           publish, before the row is marked published (so it is published
                           again after a restart, under the same event id)
=========================  =================================================================

Plus the platform's ``RUMMY_LOG_LEVEL``, ``RUMMY_BIND_HOST``... (``rummy_platform.config``).
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy_ledger import metrics
from rummy_ledger.adapters import db, events
from rummy_ledger.adapters import grpc as grpc_adapter
from rummy_ledger.handlers import Ledger
from rummy_platform.config import Settings, load_settings_or_exit
from rummy_platform.envelope import type_name
from rummy_platform.outbox import RelayHook
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, fault_hook, require_settings, topic_prefix
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs

SERVICE = "ledger"
#: ``RUMMY_FAULT_POINT`` values the ledger knows (test-only; see the module docstring).
SETTLEMENT_BEFORE_PUBLISH = "settlement-before-publish"
SETTLEMENT_AFTER_PUBLISH = "settlement-after-publish"


def build(settings: Settings) -> ServiceHost:
    """The host with the servicer, the table-events reactor, the outbox relay and the
    ledger's metrics attached. Exits with status 2 when a required variable is missing."""
    require_settings(
        SERVICE,
        DATABASE_URL=settings.database_url,
        KAFKA_BOOTSTRAP_SERVERS=settings.kafka_bootstrap_servers,
    )
    prefix = topic_prefix()
    host = ServiceHost(SERVICE, settings)

    db.apply_migrations(settings.database_url)
    pool = db.open_pool(settings.database_url)
    host.on_shutdown(pool.close)

    ledger = Ledger(topic=prefix + LEDGER_EVENTS, counters=metrics.counters())
    metrics.register_gauges(pool)

    log = events.kafka_log(settings.kafka_bootstrap_servers)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    reactor = events.table_reactor(
        log, pool, ledger, topic=prefix + TABLE_EVENTS, group_id=prefix + events.CONSUMER_GROUP
    )
    relay = events.outbox_relay(
        log,
        pool,
        before_append=settlement_fault(pool, SETTLEMENT_BEFORE_PUBLISH),
        after_append=settlement_fault(pool, SETTLEMENT_AFTER_PUBLISH),
    )

    loops = BackgroundLoops()
    host.on_shutdown(loops.stop)
    loops.start("ledger-reactor", reactor.run)
    loops.start("ledger-outbox", relay.run)

    host.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.LedgerServicer(ledger, pool),
        grpc_adapter.SERVICE_NAME,
    )
    return host


def settlement_fault(pool: ConnectionPool, point: str) -> RelayHook | None:
    """TEST ONLY: a relay hook that SIGKILLs the process at an outbox row holding
    ``HandSettled`` when ``RUMMY_FAULT_POINT`` is ``point``; None (no hook) otherwise."""
    die = fault_hook(point)
    if die is None:
        return None
    settled = type_name(ledger_events.HandSettled)

    def hook(event_id: str) -> None:
        with pool.connection() as conn:
            if db.outbox_type(conn, event_id) == settled:
                die(event_id)

    return hook


def main() -> None:
    build(load_settings_or_exit(SERVICE)).serve_forever()
