"""Wires the dealer from its environment (the only place adapters are built).

Needs ``RUMMY_JWT_SECRET`` (also to mint its service-role token for fairness) and
``KAFKA_BOOTSTRAP_SERVERS``; optional ``RUMMY_FAIRNESS_ADDRESS`` (default ``127.0.0.1:50054``),
``RUMMY_GRPC_PORT`` / ``RUMMY_METRICS_PORT`` (50052 / 9102), ``RUMMY_TOPIC_PREFIX``,
``RUMMY_DEALER_TRANSACTIONAL_ID`` (default ``dealer``; one per running instance).
"""

from __future__ import annotations

import os

from prometheus_client import Counter

from rummy_dealer.adapters import events
from rummy_dealer.adapters import grpc as grpc_adapter
from rummy_dealer.adapters.fairness_client import FairnessClient
from rummy_dealer.application import Counters, Dealer
from rummy_platform.auth import Role, TokenAuthority
from rummy_platform.config import Settings, load_settings_or_exit
from rummy_platform.dependencies import kafka_probe, watch_dependencies
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, require_settings, topic_prefix
from rummy_platform.topics import DEALER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "dealer"
DEFAULT_FAIRNESS_ADDRESS = "127.0.0.1:50054"
TOKEN_TTL_SECONDS = 300


def build(settings: Settings) -> ServiceHost:
    """The host with the servicer and the table-events reactor attached."""
    load_variant_plugins(settings, registry.names)
    (kafka_servers,) = require_settings(
        SERVICE, KAFKA_BOOTSTRAP_SERVERS=settings.kafka_bootstrap_servers
    )
    prefix = topic_prefix()
    host = ServiceHost(SERVICE, settings)

    authority = TokenAuthority.from_settings(settings)
    fairness = FairnessClient(
        os.environ.get("RUMMY_FAIRNESS_ADDRESS", DEFAULT_FAIRNESS_ADDRESS),
        lambda: authority.issue(SERVICE, Role.SERVICE, TOKEN_TTL_SECONDS),
    )
    host.on_shutdown(fairness.close)

    log = events.kafka_log(kafka_servers)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    writer = log.transactional_writer(
        prefix + os.environ.get("RUMMY_DEALER_TRANSACTIONAL_ID", SERVICE)
    )
    host.on_shutdown(writer.close)
    versions = events.LogStreamVersions(log, prefix + DEALER_EVENTS)
    deals = Counter("rummy_dealer_deals", "Hands dealt")
    reshuffles = Counter("rummy_dealer_reshuffles", "Stocks reshuffled from the discard pile")
    dealer = Dealer(
        fairness,
        versions,
        topic=prefix + DEALER_EVENTS,
        counters=Counters(dealt=deals.inc, reshuffled=reshuffles.inc),
    )
    reactor = events.table_reactor(
        log,
        writer,
        dealer,
        versions,
        topic=prefix + TABLE_EVENTS,
        group_id=prefix + events.CONSUMER_GROUP,
    )
    loops = BackgroundLoops()
    host.on_shutdown(loops.stop)
    # While Kafka does not answer or the writer cannot write (its producer is being recreated
    # after a broker stall): health NOT_SERVING, rummy_dependency_up says which.
    watch_dependencies(
        loops,
        {
            "kafka": kafka_probe(kafka_servers, client_id="dealer-probe"),
            "kafka-writer": writer.ready,
        },
        on_change=host.set_serving,
    )
    loops.start("dealer-reactor", reactor.run)

    host.add_servicer(
        grpc_adapter.add_to_server, grpc_adapter.DealerServicer(), grpc_adapter.SERVICE_NAME
    )
    return host


def main() -> None:
    build(load_settings_or_exit(SERVICE)).serve_forever()
