"""Wires the clock from its environment (the only place adapters are built).

Needs ``RUMMY_JWT_SECRET`` and ``KAFKA_BOOTSTRAP_SERVERS``; optional ``RUMMY_GRPC_PORT`` /
``RUMMY_METRICS_PORT`` (50055 / 9105), ``RUMMY_TOPIC_PREFIX``, ``RUMMY_CLOCK_SPEED`` (deadlines
pass this many times faster, default 1), ``RUMMY_CLOCK_TRANSACTIONAL_ID`` (default ``clock``;
stable across restarts, one per running instance).
"""

from __future__ import annotations

import os
import sys

from prometheus_client import Counter, Gauge, Histogram

from rummy_clock.adapters import events
from rummy_clock.adapters import grpc as grpc_adapter
from rummy_clock.application import ClockApplication, ClockMetrics
from rummy_clock.clock import SystemClock, speed_from_env
from rummy_platform.config import Settings, load_settings_or_exit
from rummy_platform.dependencies import kafka_probe, watch_dependencies
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, require_settings, topic_prefix
from rummy_platform.topics import CLOCK_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

SERVICE = "clock"
#: Seconds between a deadline's due time and its publication.
LAG_BUCKETS_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def metrics() -> ClockMetrics:
    """The clock's Prometheus series in the default registry."""
    scheduled = Counter(
        "rummy_clock_deadlines_scheduled", "Deadlines scheduled, by kind.", ["kind"]
    )
    fired = Counter("rummy_clock_deadlines_fired", "Deadlines published, by kind.", ["kind"])
    pending = Gauge("rummy_clock_deadlines_pending", "Deadlines scheduled and not yet fired.")
    lag = Histogram(
        "rummy_clock_firing_lag_seconds",
        "Seconds from a deadline's due time to its publication.",
        buckets=LAG_BUCKETS_SECONDS,
    )
    return ClockMetrics(
        scheduled=lambda kind: scheduled.labels(kind=kind).inc(),
        fired=lambda kind: fired.labels(kind=kind).inc(),
        pending=pending.set,
        lag_seconds=lag.observe,
    )


def build(settings: Settings) -> ServiceHost:
    """The host with the ClockService servicer and the event loop attached."""
    load_variant_plugins(settings, registry.names)
    (kafka_servers,) = require_settings(
        SERVICE, KAFKA_BOOTSTRAP_SERVERS=settings.kafka_bootstrap_servers
    )
    try:
        speed = speed_from_env()
    except ValueError as error:
        print(f"rummy clock: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    prefix = topic_prefix()
    host = ServiceHost(SERVICE, settings)

    log = events.kafka_log(kafka_servers)
    host.on_shutdown(log.close)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    # Created before the consumer: fences a previous clock and aborts what it left open, so
    # the catch-up read sees every firing that was committed and none that was not.
    writer = log.transactional_writer(
        prefix + os.environ.get("RUMMY_CLOCK_TRANSACTIONAL_ID", SERVICE)
    )
    host.on_shutdown(writer.close)
    app = ClockApplication(speed=speed, metrics=metrics())
    loop = events.ClockLoop(
        kafka_servers,
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
            "kafka": kafka_probe(kafka_servers, client_id="clock-probe"),
            "kafka-writer": writer.ready,
        },
        on_change=host.set_serving,
    )
    loops.start("clock-loop", loop.run)

    host.add_servicer(
        grpc_adapter.add_to_server, grpc_adapter.ClockServicer(app), grpc_adapter.SERVICE_NAME
    )
    return host


def main() -> None:
    build(load_settings_or_exit(SERVICE)).serve_forever()
