"""Wires the ledger service from its settings (the only place adapters are built).

:func:`main` reads :class:`rummy_ledger.config.LedgerSettings` from the environment once (the
variables are in docs/configuration.md's table: ``DATABASE_URL`` and
``KAFKA_BOOTSTRAP_SERVERS`` required, the ledger's tables in the schema ``ledger``, migrations
applied at start, as ``RUMMY_DATABASE_OWNER_URL``'s role when set; the grant limits) and
:func:`build` wires everything from it. ``RUMMY_FAULT_POINT`` (TEST ONLY, never set in
production): ``settlement-before-publish`` SIGKILLs the process when the outbox relay is about to
publish a committed ``HandSettled`` (after the settlement's database commit, before the
publish); ``settlement-after-publish`` right after that publish, before the row is marked
published (so it is published again after a restart, under the same event id).
"""

from __future__ import annotations

from datetime import UTC, datetime

from psycopg_pool import ConnectionPool

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy_ledger.adapters import db, metrics
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.config import LedgerSettings
from rummy_ledger.entrypoints import events
from rummy_ledger.entrypoints import grpc as grpc_adapter
from rummy_platform.dependencies import kafka_probe, postgres_probe, watch_dependencies
from rummy_platform.envelope import type_name
from rummy_platform.eventlog import KafkaEventLog, use_kafka_security
from rummy_platform.outbox import OutboxRelay, RelayHook
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, fault_hook
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "ledger"
#: ``RUMMY_FAULT_POINT`` values the ledger knows (test-only; see the module docstring).
SETTLEMENT_BEFORE_PUBLISH = "settlement-before-publish"
SETTLEMENT_AFTER_PUBLISH = "settlement-after-publish"


def utc_now() -> datetime:
    """The system clock in UTC: the ledger's one clock, given to everything that needs time."""
    return datetime.now(UTC)


def build(settings: LedgerSettings) -> ServiceHost:
    """The host with the servicer, the table-events reactor, the outbox relay, the ledger's
    metrics and the watch of its dependencies (health NOT_SERVING while PostgreSQL or Kafka
    does not answer) attached."""
    use_kafka_security(settings.kafka_security)
    load_variant_plugins(settings, registry.names)
    prefix = settings.topic_prefix
    host = ServiceHost(SERVICE, settings)

    db.apply_migrations(settings.database_url, owner_url=settings.database_owner_url)
    pool = db.open_pool(settings.database_url)
    host.on_shutdown(pool.close)

    clock = utc_now  # the one clock of the ledger's events and gauges
    ledger = Ledger(
        topic=prefix + LEDGER_EVENTS,
        clock=clock,
        counters=metrics.counters(),
        grant_limits=settings.grant_limits,
    )
    # While PostgreSQL or Kafka does not answer, gRPC health is NOT_SERVING and
    # rummy_dependency_up{dependency} says which.
    loops = BackgroundLoops()
    host.on_shutdown(loops.stop)
    watch = watch_dependencies(
        loops,
        {
            "postgresql": postgres_probe(pool),
            "kafka": kafka_probe(settings.kafka_bootstrap_servers, client_id="ledger-probe"),
        },
        on_change=host.set_serving,
    )
    # A scrape tries no query while the watch knows PostgreSQL is down (it would only hang).
    metrics.register_gauges(pool, clock=clock, reachable=lambda: "postgresql" not in watch.failing)

    log = KafkaEventLog(settings.kafka_bootstrap_servers, client_id=SERVICE)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    reactor = events.table_reactor(
        log, pool, ledger, topic=prefix + TABLE_EVENTS, group_id=prefix + events.CONSUMER_GROUP
    )
    relay = OutboxRelay(
        pool,
        log,
        before_append=settlement_fault(pool, SETTLEMENT_BEFORE_PUBLISH, settings.fault_point),
        after_append=settlement_fault(pool, SETTLEMENT_AFTER_PUBLISH, settings.fault_point),
    )

    loops.start("ledger-reactor", reactor.run)
    loops.start("ledger-outbox", relay.run)

    host.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.LedgerServicer(ledger, PostgresUnitOfWork(pool)),
        grpc_adapter.SERVICE_NAME,
    )
    return host


def settlement_fault(pool: ConnectionPool, point: str, armed: str | None) -> RelayHook | None:
    """TEST ONLY: a relay hook that SIGKILLs the process at an outbox row holding
    ``HandSettled`` when ``armed`` (``RUMMY_FAULT_POINT``) is ``point``; None (no hook)
    otherwise."""
    die = fault_hook(point, armed)
    if die is None:
        return None
    settled = type_name(ledger_events.HandSettled)

    def hook(event_id: str) -> None:
        with pool.connection() as conn:
            if db.outbox_type(conn, event_id) == settled:
                die(event_id)

    return hook


def main() -> None:
    build(LedgerSettings.load_or_exit()).serve_forever()
