"""Wires the table service from its settings (the only place adapters are built).

:func:`main` reads :class:`rummy_table.config.TableSettings` from the environment once (the
variables are in docs/configuration.md's table) and :func:`build` wires everything from it.
"""

from __future__ import annotations

import gc

from rummy_platform.auth import Role, TokenAuthority
from rummy_platform.dependencies import kafka_probe, watch_dependencies
from rummy_platform.eventlog import (
    EventLog,
    GroupCommitMetrics,
    GroupCommitWriter,
    Record,
    use_kafka_security,
)
from rummy_platform.logging import get_logger
from rummy_platform.plugins import load_variant_plugins
from rummy_platform.server import ServiceHost
from rummy_platform.service_main import BackgroundLoops
from rummy_platform.topics import TABLE_EVENTS, TABLE_INPUT_TOPICS, event_topic_specs
from rummy_rules import registry
from rummy_table.adapters import directory, snapshot, table_log
from rummy_table.adapters.ledger_limits import LedgerSeatLimits
from rummy_table.adapters.metrics import TableMetrics
from rummy_table.adapters.peers import PeerTables
from rummy_table.application.app import INPUT_GROUP, TableApp
from rummy_table.application.ownership import Ownership
from rummy_table.config import TableSettings
from rummy_table.entrypoints import grpc as grpc_entrypoint
from rummy_table.entrypoints import inputs, views

SERVICE = "table"
#: How long a new owner waits for a partition's open transaction to end by itself before it
#: aborts the previous owner's (seconds), and how long it waits after that.
SETTLE_WAIT_S, ABORT_WAIT_S = 1.0, 30.0
#: How long the start waits for the first partitions to be granted and rebuilt (seconds).
FIRST_ASSIGNMENT_WAIT_S = 120.0
#: The longest the input loop may go between two polls (seconds): a grant (the takeover waits
#: above and the rebuild) runs inside a poll while the member keeps heartbeating, and a member
#: polling later than this leaves the group. A full replay of a partition without a snapshot
#: took up to 418 s here (20,000 hands, docs/benchmarks.md), so kafka-python's 300 s is too
#: short; a rebalance waits this long at most for a member still rebuilding to rejoin.
MAX_POLL_INTERVAL_S = 1800.0
_log = get_logger(__name__)


def rebuild_partitions(
    app: TableApp, bootstrap: str, snapshot_topic: str, partitions: frozenset[int]
) -> dict[int, int]:
    """Rebuild the tables of ``partitions`` of table-events (``app.topic``) into ``app`` (the
    one place a set of partitions is rebuilt: each partition's latest snapshot on
    ``snapshot_topic`` and the tail after it, see :func:`table_log.rebuild`); returns the offset
    each was read up to."""
    return table_log.rebuild(bootstrap, app, snapshot_topic, partitions)


class Handover:
    """What the input loop does when the group grants or takes partitions: on a grant, abort
    what a previous owner left open on them, rebuild their tables, own them under the granting
    generation and announce it; on a revocation, stop taking their commands and let those in
    flight commit. A revoked partition's tables are kept until the next grant: when it grants the
    partition again in the very next generation (kafka-python revokes every partition in every
    rebalance, and nobody else can have owned it in between), they are served on without a
    rebuild; otherwise they are forgotten then."""

    def __init__(
        self,
        app: TableApp,
        ownership: Ownership,
        log: EventLog,
        bootstrap: str,
        topic: str,
        announce: directory.Directory,
        snapshot_topic: str,
    ) -> None:
        self._app, self._ownership, self._log = app, ownership, log
        self._bootstrap, self._topic, self._directory = bootstrap, topic, announce
        self._snapshot_topic = snapshot_topic
        self._generations: dict[int, int] = {}  # partition -> the generation that granted it
        self._parked: dict[int, int] = {}  # revoked, tables kept: partition -> its generation

    def granted(self, partitions: frozenset[int], metadata: object) -> None:
        generation = int(getattr(metadata, "generation_id", -1))
        kept = frozenset(p for p in partitions if self._parked.get(p) == generation - 1 >= 0)
        gone = frozenset(self._parked) - kept
        self._parked.clear()
        if gone:
            dropped = self._app.drop_partitions(gone)
            _log.info("partitions handed over", partitions=sorted(gone), tables=dropped)
        for p in partitions:
            self._generations[p] = generation
        if kept:
            self._ownership.grant(kept, metadata, {})
        partitions = partitions - kept - self._ownership.owned()
        if not partitions:
            if kept:
                self._directory.announce(kept, generation)
            return
        unstable = table_log.unstable_partitions(
            self._bootstrap, self._topic, partitions, SETTLE_WAIT_S
        )
        writers = {
            entry.writer_id
            for p in unstable
            if (entry := self._ownership.owner_of(p)) is not None
            and entry.writer_id != self._ownership.writer_id
        }
        for writer_id in sorted(writers):
            _log.warning("aborting the open transaction of a previous owner", writer_id=writer_id)
            table_log.abort_transactions_of(self._log, writer_id)
        if unstable:
            left = table_log.unstable_partitions(
                self._bootstrap, self._topic, unstable, ABORT_WAIT_S
            )
            if left:
                _log.error("rebuilding past an open transaction", partitions=sorted(left))
        ends = rebuild_partitions(self._app, self._bootstrap, self._snapshot_topic, partitions)
        self._ownership.grant(partitions, metadata, ends)
        self._directory.announce(partitions | kept, generation)

    def revoked(self, partitions: frozenset[int]) -> None:
        self._ownership.revoke(partitions)
        for p in partitions:
            self._parked[p] = self._generations.pop(p, -1)


def build(settings: TableSettings) -> ServiceHost:
    """The host with the servicer, the input loop, the directory and the hand starter
    attached, once the group granted this instance its first partitions and their tables were
    rebuilt from table-events (or after FIRST_ASSIGNMENT_WAIT_S: it serves what it gets)."""
    use_kafka_security(settings.kafka_security)
    load_variant_plugins(settings, registry.names)
    bootstrap, prefix = settings.kafka_bootstrap_servers, settings.topic_prefix
    log = table_log.kafka_log(bootstrap)
    table_topic = prefix + TABLE_EVENTS
    owners_spec = directory.directory_spec(prefix)
    snapshot_topic = prefix + snapshot.SNAPSHOT_TOPIC
    log.ensure_topics(
        [*event_topic_specs(prefix=prefix), owners_spec, snapshot.snapshot_topic_spec(prefix)]
    )
    address, writer_id = settings.address, settings.transactional_id
    # One producer per instance: every table's commands share its transactions.
    writer = GroupCommitWriter(
        log.transactional_writer(writer_id), metrics=GroupCommitMetrics.create()
    )
    ownership = Ownership(log.describe_topic(table_topic).partitions, address, writer_id)
    authority = TokenAuthority.from_settings(
        settings, service_key_file=settings.service_token_key_file
    )

    def reread(table_id: str) -> list[Record]:
        # The writer first: once it is ready a commit of unknown outcome is completed or aborted.
        # Records, not envelopes: the rebuilt table knows the offsets its hands started at.
        writer.ready()
        return list(log.read_stream(table_topic, table_id))

    app = TableApp(
        writer,
        reread=reread,
        speed=settings.clock_speed,
        service_deadline_seconds=settings.service_deadline_seconds,
        max_reservation_hundredths=settings.max_reservation_hundredths,
        topic=table_topic,
        input_group=prefix + INPUT_GROUP,
        metrics=TableMetrics.create(),
        render_view=views.player_view,
        read_stream=lambda table_id: [
            r.envelope for r in log.read_stream(prefix + TABLE_EVENTS, table_id)
        ],
        read_stream_from=lambda table_id, offset: [
            r.envelope for r in log.read_stream(prefix + TABLE_EVENTS, table_id, offset)
        ],
        ownership=ownership,
        peer_tables=PeerTables(
            ownership,
            lambda: authority.issue(SERVICE, Role.SERVICE, 600),
            max_page_size=grpc_entrypoint.MAX_PAGE_SIZE,
        ),
    )
    seat_limits: LedgerSeatLimits | None = None
    if settings.ledger_address:  # TakeSeat asks the ledger about the player's own limits
        seat_limits = LedgerSeatLimits(
            settings.ledger_address, lambda: authority.issue(SERVICE, Role.SERVICE, 600)
        )
        app.seat_limits = seat_limits
    owners = directory.Directory(bootstrap, owners_spec.name, ownership)
    handover = Handover(app, ownership, log, bootstrap, table_topic, owners, snapshot_topic)

    host = ServiceHost(SERVICE, settings, aio=True)
    servicer = grpc_entrypoint.TableServicer(app, settings.max_watches_per_account)
    host.on_stopping(servicer.watches.close_all)
    if seat_limits is not None:
        host.on_shutdown(seat_limits.close)
    host.on_shutdown(log.close)
    host.on_shutdown(writer.close)
    host.on_shutdown(owners.close)
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
    # A graceful stop leaves the group first (its partitions go to the others at once, after
    # the commands in flight committed), then drains the calls.
    host.on_stopping(loops.stop)
    input_topics = [prefix + t for t in TABLE_INPUT_TOPICS]
    loops.start("table-directory", owners.run)
    loops.start(
        "table-inputs",
        inputs.InputLoop(
            log,
            app,
            input_topics,
            on_owned=handover.granted,
            on_disowned=handover.revoked,
            session_timeout_s=settings.session_seconds,
            max_poll_interval_s=MAX_POLL_INTERVAL_S,
        ).run,
    )
    if not ownership.ready.wait(FIRST_ASSIGNMENT_WAIT_S):
        _log.warning("no partitions granted yet; serving anyway", waited_s=FIRST_ASSIGNMENT_WAIT_S)
    loops.start("table-hand-starter", inputs.hand_starter(app))
    # Snapshots of the partitions this instance serves (never of one handed over).
    snapshots = table_log.SnapshotLoop(
        bootstrap,
        app,
        snapshot_topic,
        ownership.partitions,
        lambda: sorted(ownership.owned()),
        every_events=settings.snapshot_events,
        every_s=settings.snapshot_seconds,
    )
    loops.start("table-snapshots", snapshots.run)
    host.add_servicer(grpc_entrypoint.add_to_server, servicer, grpc_entrypoint.SERVICE_NAME)
    return host


#: The collector's thresholds in the service's process (allocations net of frees before a
#: young collection; young collections per middle one; middle per full one). Python's default
#: 700 made a full collection (about 0.1 s on the heap 2,000 watch streams hold) every few
#: seconds under the WatchTable fan-out: every view sent allocates gRPC's and asyncio's
#: short-lived objects, and those alive across a collection were promoted, so the full ones
#: came often. At 10,000 the short-lived are freed before a collection counts them: with
#: 2,000 spectators of a table, 31% -> 4% of the table's CPU per change in the collector
#: (``services/table/bench/spectator_views.py``, docs/benchmarks.md).
GC_THRESHOLDS = (10_000, 10, 10)


def main() -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    build(TableSettings.load_or_exit()).serve_forever()
