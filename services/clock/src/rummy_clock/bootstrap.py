"""Wires the clock from its settings (the only place adapters are built).

:func:`main` reads :class:`rummy_clock.config.ClockSettings` from the environment once (the
variables are in docs/configuration.md's table) and :func:`build` wires everything from it.
"""

from __future__ import annotations

from rummy_clock.adapters.clock import SystemClock
from rummy_clock.adapters.metrics import metrics
from rummy_clock.application.deadlines import ClockApplication
from rummy_clock.config import ClockSettings
from rummy_clock.entrypoints import events
from rummy_clock.entrypoints import grpc as grpc_entrypoint
from rummy_platform.dependencies import kafka_probe, watch_dependencies
from rummy_platform.eventlog import KafkaEventLog, use_kafka_security
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops
from rummy_platform.topics import CLOCK_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "clock"


def build(settings: ClockSettings) -> ServiceHost:
    """The host with the ClockService servicer and the event loop attached."""
    use_kafka_security(settings.kafka_security)
    load_variant_plugins(settings, registry.names)
    prefix = settings.topic_prefix
    host = ServiceHost(SERVICE, settings)

    # The platform's event log (topics, writer, stream reads, the group consumer; it waits up
    # to 30 s to see the topics' partitions before joining).
    log = KafkaEventLog(settings.kafka_bootstrap_servers, client_id=SERVICE)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    # Created before the consumer: fences a previous clock and aborts what it left open, so
    # the catch-up read sees every firing that was committed and none that was not.
    writer = log.transactional_writer(prefix + settings.transactional_id)
    host.on_shutdown(writer.close)
    app = ClockApplication(speed=settings.clock_speed, metrics=metrics())
    loop = events.ClockLoop(
        log,
        app,
        writer,
        SystemClock(),
        table_topic=prefix + TABLE_EVENTS,
        clock_topic=prefix + CLOCK_EVENTS,
        group_id=prefix + events.CONSUMER_GROUP,
    )
    loops = BackgroundLoops()
    host.on_shutdown(loops.stop)
    # While Kafka does not answer or the writer cannot write (its producer is being recreated
    # after a broker stall): health NOT_SERVING, rummy_dependency_up says which.
    watch_dependencies(
        loops,
        {
            "kafka": kafka_probe(settings.kafka_bootstrap_servers, client_id="clock-probe"),
            "kafka-writer": writer.ready,
        },
        on_change=host.set_serving,
    )
    loops.start("clock-loop", loop.run)

    host.add_servicer(
        grpc_entrypoint.add_to_server,
        grpc_entrypoint.ClockServicer(app),
        grpc_entrypoint.SERVICE_NAME,
    )
    return host


def main() -> None:
    build(ClockSettings.load_or_exit()).serve_forever()
