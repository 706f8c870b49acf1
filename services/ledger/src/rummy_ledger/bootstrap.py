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
``RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS``    the most one Grant may credit, in hundredths;
                           default 10000000000 (100 million House Tokens)
``RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS``  the most a balance may reach through grants, in
                           hundredths; default 1000000000000 (10 billion House Tokens)
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

import os
import re
import sys
from collections.abc import Mapping
from typing import NoReturn

from psycopg_pool import ConnectionPool

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy_ledger import metrics
from rummy_ledger.adapters import db, events
from rummy_ledger.adapters import grpc as grpc_adapter
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.domain import GrantLimits
from rummy_ledger.handlers import Ledger, utc_now
from rummy_platform.config import Settings, load_settings_or_exit
from rummy_platform.dependencies import kafka_probe, postgres_probe, watch_dependencies
from rummy_platform.envelope import type_name
from rummy_platform.outbox import RelayHook
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, fault_hook, require_settings, topic_prefix
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "ledger"
#: ``RUMMY_FAULT_POINT`` values the ledger knows (test-only; see the module docstring).
SETTLEMENT_BEFORE_PUBLISH = "settlement-before-publish"
SETTLEMENT_AFTER_PUBLISH = "settlement-after-publish"
MAX_GRANT_VARIABLE = "RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS"
MAX_BALANCE_VARIABLE = "RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS"


def build(settings: Settings) -> ServiceHost:
    """The host with the servicer, the table-events reactor, the outbox relay, the ledger's
    metrics and the watch of its dependencies (health NOT_SERVING while PostgreSQL or Kafka
    does not answer) attached. Exits with status 2 when a required variable is missing."""
    load_variant_plugins(settings, registry.names)
    require_settings(
        SERVICE,
        DATABASE_URL=settings.database_url,
        KAFKA_BOOTSTRAP_SERVERS=settings.kafka_bootstrap_servers,
    )
    prefix = topic_prefix()
    limits = grant_limits_from_env()
    host = ServiceHost(SERVICE, settings)

    db.apply_migrations(settings.database_url)
    pool = db.open_pool(settings.database_url)
    host.on_shutdown(pool.close)

    clock = utc_now  # the one clock of the ledger's events and gauges
    ledger = Ledger(
        topic=prefix + LEDGER_EVENTS, clock=clock, counters=metrics.counters(), grant_limits=limits
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

    loops.start("ledger-reactor", reactor.run)
    loops.start("ledger-outbox", relay.run)

    host.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.LedgerServicer(ledger, PostgresUnitOfWork(pool)),
        grpc_adapter.SERVICE_NAME,
    )
    return host


def grant_limits_from_env(environ: Mapping[str, str] | None = None) -> GrantLimits:
    """The grant limits of ``RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS`` and
    ``RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS`` (each defaulting to :class:`GrantLimits`'s). Exits
    with status 2 naming the variable when one is not a whole number or they are inconsistent."""
    env = os.environ if environ is None else environ
    defaults = GrantLimits()
    values = {}
    for name, default in (
        (MAX_GRANT_VARIABLE, defaults.max_grant_hundredths),
        (MAX_BALANCE_VARIABLE, defaults.max_balance_hundredths),
    ):
        raw = env.get(name, "").strip()
        if raw and re.fullmatch(r"[0-9]{1,19}", raw) is None:
            _config_error(f"{name}={raw!r} is not a whole number of hundredths")
        values[name] = int(raw) if raw else default
    try:
        return GrantLimits(values[MAX_GRANT_VARIABLE], values[MAX_BALANCE_VARIABLE])
    except ValueError as error:
        _config_error(f"{MAX_GRANT_VARIABLE} / {MAX_BALANCE_VARIABLE}: {error}")


def _config_error(message: str) -> NoReturn:
    print(f"rummy {SERVICE}: configuration error: {message}", file=sys.stderr)
    raise SystemExit(2)


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
