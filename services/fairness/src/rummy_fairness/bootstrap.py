"""Wires the fairness service from its settings (the only place adapters are built).

:func:`main` reads :class:`rummy_fairness.config.FairnessSettings` from the environment once
(the variables are in docs/configuration.md's table) and :func:`build` wires everything from it.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from rummy_fairness.adapters import db
from rummy_fairness.adapters.postgres import PostgresUnitOfWork
from rummy_fairness.application.seeds import Counters, Fairness, SeedSource, keyed_seed, os_seed
from rummy_fairness.config import FairnessSettings
from rummy_fairness.entrypoints import events
from rummy_fairness.entrypoints import grpc as grpc_adapter
from rummy_platform.db import migrate_service, open_pool
from rummy_platform.dependencies import kafka_probe, postgres_probe, watch_dependencies
from rummy_platform.eventlog import KafkaEventLog, use_kafka_security
from rummy_platform.logging import get_logger
from rummy_platform.outbox import OutboxRelay
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, fault_hook
from rummy_platform.topics import FAIRNESS_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "fairness"
_log = get_logger(__name__)


def seed_source(settings: FairnessSettings) -> SeedSource:
    """The server seeds' source: the OS CSPRNG (``os_seed``), or, with ``RUMMY_FAIRNESS_SEED_KEY``
    set, HMAC-SHA256(key, hand id) (``keyed_seed``; tests and a simulator only), announced by a
    warning in the log (never the key)."""
    if settings.seed_key is None:
        return os_seed
    _log.warning(
        "RUMMY_FAIRNESS_SEED_KEY is set: server seeds are HMAC-SHA256(key, hand id), known in "
        "advance to whoever holds the key; deals are NOT secret (tests and simulation only, never "
        "real money)"
    )
    return keyed_seed(settings.seed_key.encode())


def build(settings: FairnessSettings) -> ServiceHost:
    """The host with the servicer, the table-events reactor and the outbox relay attached."""
    use_kafka_security(settings.kafka_security)
    load_variant_plugins(settings, registry.names)
    prefix = settings.topic_prefix
    host = ServiceHost(SERVICE, settings)

    migrate_service(
        settings.database_url,
        db.MIGRATIONS_DIR,
        schema=db.SCHEMA,
        owner_url=settings.database_owner_url,
    )
    pool = open_pool(settings.database_url, schema=db.SCHEMA, name=SERVICE)
    host.on_shutdown(pool.close)

    committed = Counter("rummy_fairness_seeds_committed", "Server seeds drawn and committed")
    revealed = Counter("rummy_fairness_seeds_revealed", "Server seeds revealed after a hand")
    fairness = Fairness(
        seed_source=seed_source(settings),
        topic=prefix + FAIRNESS_EVENTS,
        counters=Counters(seed_committed=committed.inc, seed_revealed=revealed.inc),
    )

    log = KafkaEventLog(settings.kafka_bootstrap_servers, client_id=SERVICE)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    reactor = events.table_reactor(
        log, pool, fairness, topic=prefix + TABLE_EVENTS, group_id=prefix + events.CONSUMER_GROUP
    )
    relay = OutboxRelay(
        pool,
        log,
        before_append=fault_hook("outbox-before-append", settings.fault_point),
        after_append=fault_hook("outbox-after-append", settings.fault_point),
    )
    Gauge(
        "rummy_fairness_outbox_age_seconds", "Age of the oldest unpublished outbox row"
    ).set_function(relay.oldest_unpublished_age_s)

    loops = BackgroundLoops()
    host.on_shutdown(loops.stop)
    # While PostgreSQL or Kafka does not answer: health NOT_SERVING, rummy_dependency_up says which.
    watch_dependencies(
        loops,
        {
            "postgresql": postgres_probe(pool),
            "kafka": kafka_probe(settings.kafka_bootstrap_servers, client_id="fairness-probe"),
        },
        on_change=host.set_serving,
    )
    loops.start("fairness-reactor", reactor.run)
    loops.start("fairness-outbox", relay.run)

    host.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.FairnessServicer(fairness, PostgresUnitOfWork(pool)),
        grpc_adapter.SERVICE_NAME,
    )
    return host


def main() -> None:
    build(FairnessSettings.load_or_exit()).serve_forever()
