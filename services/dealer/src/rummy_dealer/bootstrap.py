"""Wires the dealer from its settings (the only place adapters are built).

:func:`main` reads :class:`rummy_dealer.config.DealerSettings` from the environment once (the
variables are in docs/configuration.md's table; ``RUMMY_SERVICE_TOKEN_KEY_FILE`` signs the
dealer's service-role token for fairness) and :func:`build` wires everything from it.
"""

from __future__ import annotations

from rummy_dealer.adapters import metrics
from rummy_dealer.adapters.fairness_client import FairnessClient
from rummy_dealer.adapters.stream_versions import LogStreamVersions
from rummy_dealer.application.dealing import Dealer
from rummy_dealer.config import DealerSettings
from rummy_dealer.entrypoints import events
from rummy_dealer.entrypoints import grpc as grpc_entrypoint
from rummy_platform.auth import Role, TokenAuthority
from rummy_platform.dependencies import kafka_probe, watch_dependencies
from rummy_platform.eventlog import KafkaEventLog, use_kafka_security
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops
from rummy_platform.topics import DEALER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "dealer"
TOKEN_TTL_SECONDS = 300


def build(settings: DealerSettings) -> ServiceHost:
    """The host with the servicer and the table-events reactor attached."""
    use_kafka_security(settings.kafka_security)
    load_variant_plugins(settings, registry.names)
    prefix = settings.topic_prefix
    host = ServiceHost(SERVICE, settings)

    authority = TokenAuthority.from_settings(
        settings, service_key_file=settings.service_token_key_file
    )
    fairness = FairnessClient(
        settings.fairness_address,
        lambda: authority.issue(SERVICE, Role.SERVICE, TOKEN_TTL_SECONDS),
    )
    host.on_shutdown(fairness.close)

    log = KafkaEventLog(settings.kafka_bootstrap_servers, client_id=SERVICE)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    writer = log.transactional_writer(prefix + settings.transactional_id)
    host.on_shutdown(writer.close)
    versions = LogStreamVersions(log, prefix + DEALER_EVENTS)
    dealer = Dealer(fairness, versions, topic=prefix + DEALER_EVENTS, counters=metrics.counters())
    reactor = events.table_reactor(
        log,
        writer,
        dealer,
        versions.forget,
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
            "kafka": kafka_probe(settings.kafka_bootstrap_servers, client_id="dealer-probe"),
            "kafka-writer": writer.ready,
        },
        on_change=host.set_serving,
    )
    loops.start("dealer-reactor", reactor.run)

    host.add_servicer(
        grpc_entrypoint.add_to_server,
        grpc_entrypoint.DealerServicer(),
        grpc_entrypoint.SERVICE_NAME,
    )
    return host


def main() -> None:
    build(DealerSettings.load_or_exit()).serve_forever()
