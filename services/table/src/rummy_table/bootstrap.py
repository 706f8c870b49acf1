"""Wires the table service from its environment (the only place adapters are built).

Needs ``RUMMY_JWT_SECRET`` and ``KAFKA_BOOTSTRAP_SERVERS``; optional ``RUMMY_GRPC_PORT`` /
``RUMMY_METRICS_PORT`` (50051 / 9101), ``RUMMY_TOPIC_PREFIX``, ``RUMMY_TABLE_WRITER_ID``
(the stable transactional id of the table-events writer, default ``table-writer``: a second
instance with the same id fences the first), ``RUMMY_CLOCK_SPEED`` (start delays pass this many
times faster; shared with the clock service), ``RUMMY_GRPC_MAX_WORKERS`` (default 128 here:
each WatchTable stream holds a worker; at most ``workers - 16`` streams at once),
``RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS`` (the most a table opened here may reserve per seat and
hand, max loss x point value, in hundredths of a House Token; default 100,000,000 = 1,000,000
House Tokens: OpenTable refuses a point value above it), ``RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT``
(WatchTable streams one account may hold at once, default 8, 1..10000).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from rummy_platform.config import Settings, load_settings_or_exit
from rummy_platform.dependencies import kafka_probe, watch_dependencies
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import GroupCommitWriter
from rummy_platform.logging import get_logger
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops, require_settings, topic_prefix
from rummy_platform.topics import (
    CLOCK_EVENTS,
    DEALER_EVENTS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_rules.rules import DEFAULT_MAX_RESERVATION_CENTS, INT64_MAX
from rummy_table.adapters import events
from rummy_table.adapters import grpc as grpc_adapter
from rummy_table.application import INPUT_GROUP, TableApp
from rummy_table.metrics import TableMetrics

SERVICE = "table"
WRITER_ID_VARIABLE = "RUMMY_TABLE_WRITER_ID"
DEFAULT_WRITER_ID = "table-writer"
SPEED_VARIABLE = "RUMMY_CLOCK_SPEED"
DEFAULT_MAX_WORKERS = "128"
MAX_RESERVATION_VARIABLE = "RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS"
MAX_WATCHES_VARIABLE = "RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT"
_log = get_logger(__name__)


def clock_speed(environ: Mapping[str, str] | None = None) -> float:
    """``RUMMY_CLOCK_SPEED`` (default 1.0). Raises SystemExit(2) if not a positive number."""
    env = os.environ if environ is None else environ
    raw = env.get(SPEED_VARIABLE, "").strip() or "1"
    try:
        speed = float(raw)
    except ValueError:
        speed = -1.0
    if not 0 < speed < float("inf"):
        print(f"rummy table: {SPEED_VARIABLE}={raw!r} must be a positive number", file=sys.stderr)
        raise SystemExit(2)
    return speed


def _whole_number(
    variable: str, default: int, high: int, unit: str, environ: Mapping[str, str] | None
) -> int:
    """``variable`` as a whole number from 1 to ``high`` (``default`` when unset). Raises
    SystemExit(2) for anything else."""
    env = os.environ if environ is None else environ
    raw = env.get(variable, "").strip()
    if not raw:
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= len(str(high)) else 0
    if not 1 <= value <= high:
        print(
            f"rummy table: {variable}={raw[:40]!r} must be a whole number{unit} from 1 to {high}",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return value


def max_reservation_hundredths(environ: Mapping[str, str] | None = None) -> int:
    """``RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS`` (default 100,000,000). Raises SystemExit(2)
    unless a whole number from 1 to 2^63 - 1."""
    return _whole_number(
        MAX_RESERVATION_VARIABLE,
        DEFAULT_MAX_RESERVATION_CENTS,
        INT64_MAX,
        " of hundredths",
        environ,
    )


def max_watches_per_account(environ: Mapping[str, str] | None = None) -> int:
    """``RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT`` (default 8). Raises SystemExit(2) unless a whole
    number from 1 to 10000."""
    return _whole_number(
        MAX_WATCHES_VARIABLE, grpc_adapter.DEFAULT_MAX_WATCHES_PER_ACCOUNT, 10_000, "", environ
    )


def build(settings: Settings) -> ServiceHost:
    """The host with the servicer, the input loop and the hand starter attached, after the
    writer fenced any older instance and every table was rebuilt from table-events."""
    (bootstrap,) = require_settings(
        SERVICE, KAFKA_BOOTSTRAP_SERVERS=settings.kafka_bootstrap_servers
    )
    prefix = topic_prefix()
    log = events.kafka_log(bootstrap)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    # One producer per instance: every table's commands share its transactions.
    writer = GroupCommitWriter(
        log.transactional_writer(prefix + os.environ.get(WRITER_ID_VARIABLE, DEFAULT_WRITER_ID))
    )
    table_topic = prefix + TABLE_EVENTS

    def reread(table_id: str) -> list[Envelope]:
        # The writer first: once it is ready a commit of unknown outcome is completed or aborted.
        writer.ready()
        return [r.envelope for r in log.read_stream(table_topic, table_id)]

    app = TableApp(
        writer,
        reread=reread,
        speed=clock_speed(),
        max_reservation_hundredths=max_reservation_hundredths(),
        topic=table_topic,
        input_group=prefix + INPUT_GROUP,
        metrics=TableMetrics.create(),
        read_stream=lambda table_id: [
            r.envelope for r in log.read_stream(prefix + TABLE_EVENTS, table_id)
        ],
    )
    replayed = app.replay(events.read_topic(bootstrap, prefix + TABLE_EVENTS))
    _log.info("tables rebuilt", events=replayed, tables=len(app.projection.tables))

    host = ServiceHost(SERVICE, settings)
    host.on_stopping(app.stop_watches)
    host.on_shutdown(log.close)
    host.on_shutdown(writer.close)
    loops = BackgroundLoops()
    host.on_shutdown(loops.stop)
    host.on_shutdown(app.close)
    # While Kafka does not answer or the writer cannot write (its producer is being recreated
    # after a broker stall): health NOT_SERVING, rummy_dependency_up says which.
    watch_dependencies(
        loops,
        {"kafka": kafka_probe(bootstrap, client_id="table-probe"), "kafka-writer": writer.ready},
        on_change=host.set_serving,
    )
    inputs = [prefix + t for t in (LEDGER_EVENTS, FAIRNESS_EVENTS, DEALER_EVENTS, CLOCK_EVENTS)]
    loops.start("table-inputs", events.InputLoop(log, app, inputs).run)
    loops.start("table-hand-starter", events.hand_starter(app))
    max_watches = max(1, settings.grpc_max_workers - 16)
    host.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.TableServicer(app, max_watches, max_watches_per_account()),
        grpc_adapter.SERVICE_NAME,
    )
    return host


def main() -> None:
    os.environ.setdefault("RUMMY_GRPC_MAX_WORKERS", DEFAULT_MAX_WORKERS)
    build(load_settings_or_exit(SERVICE)).serve_forever()
