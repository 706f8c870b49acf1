"""Start-up from snapshots on the real broker: a partition's latest snapshot and its tail give
the tables a full replay gives; a snapshot of another shape, or bytes that do not decode, are
ignored, counted, and the partition replayed in full."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator

import pytest
import table_calls
from kafka import KafkaProducer
from world import metrics_of

from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.eventlog import GroupCommitWriter, KafkaEventLog, partition_for
from rummy_platform.topics import TABLE_EVENTS, event_topic_specs
from rummy_table.adapters import snapshot
from rummy_table.adapters import table_log as events
from rummy_table.adapters.metrics import TableMetrics
from rummy_table.application.app import TableApp
from rummy_table.application.projection import Projection
from rummy_table.entrypoints.views import player_view

PARTITIONS = 8


@pytest.fixture
def prefix(kafka_bootstrap: str) -> Iterator[str]:
    name = f"snap{uuid.uuid4().hex[:8]}-"
    log = KafkaEventLog(kafka_bootstrap)
    log.ensure_topics([*event_topic_specs(prefix=name), snapshot.snapshot_topic_spec(name)])
    log.close()
    yield name


def new_app(kafka_bootstrap: str, prefix: str, writer: str = "w") -> tuple[TableApp, KafkaEventLog]:
    log = KafkaEventLog(kafka_bootstrap)
    app = TableApp(
        GroupCommitWriter(log.transactional_writer(prefix + writer)),
        topic=prefix + TABLE_EVENTS,
        metrics=TableMetrics.unregistered(),
        render_view=player_view,
    )
    return app, log


def open_and_seat(app: TableApp, name: str, players: int) -> str:
    table_id = table_calls.open_table(
        app, "op", api.OpenTableRequest(client_request_id=f"open-{name}", seat_count=6, name=name)
    )
    for i in range(players):
        table_calls.take_seat(
            app,
            f"{name}-p{i}",
            api.TakeSeatRequest(table_id=table_id, client_request_id=f"sit-{i}"),
        )
    return table_id


def encoded(projection: Projection) -> dict[str, dict[str, object]]:
    return {t: snapshot.encode_table(table) for t, table in projection.tables.items()}


def test_a_start_loads_each_partitions_snapshot_and_its_tail_as_a_full_replay_would(
    kafka_bootstrap: str, prefix: str
) -> None:
    app, log = new_app(kafka_bootstrap, prefix)
    snapshots_topic = prefix + snapshot.SNAPSHOT_TOPIC
    loop = events.SnapshotLoop(kafka_bootstrap, app, snapshots_topic, PARTITIONS)
    before = [open_and_seat(app, f"t{i}", 2) for i in range(6)]
    for p in range(PARTITIONS):
        assert loop.write(p)
    # the tail: tables opened and seats taken after the snapshots
    after = [open_and_seat(app, f"u{i}", 3) for i in range(4)]
    table_calls.leave_table(
        app, "t0-p0", api.LeaveTableRequest(table_id=before[0], client_request_id="bye")
    )
    stored = events.read_snapshots(kafka_bootstrap, snapshots_topic)
    assert set(stored) == set(range(PARTITIONS))

    full = Projection()
    replayed = TableApp(
        app.writer,
        projection=full,
        topic=app.topic,
        metrics=TableMetrics.unregistered(),
        render_view=player_view,
    )
    replayed.replay(events.read_partitions(kafka_bootstrap, app.topic, None)[0])

    restarted, other = new_app(kafka_bootstrap, prefix, "w2")
    events.rebuild(kafka_bootstrap, restarted, snapshots_topic)
    tail = sum(restarted.projection.since_snapshot.values())  # the records folded
    assert encoded(restarted.projection) == encoded(full) == encoded(app.projection)
    assert restarted.projection.requests == app.projection.requests
    assert set(restarted.projection.tables) == {*before, *after}
    # only the tail was read: the tables opened after the snapshot and the one seat left
    assert tail == 4 * 4 + 1
    assert (
        sum(
            metrics_of(restarted).snapshots_ignored.labels(r)._value.get()
            for r in ("shape", "undecodable")
        )
        == 0
    )
    for closing in (log, other):
        closing.close()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (lambda data: json.dumps({**json.loads(data), "shape": 0}).encode(), "shape"),
        (lambda data: data[: len(data) // 2], "undecodable"),
    ],
)
def test_a_snapshot_of_another_shape_or_undecodable_is_ignored_and_the_partition_replayed(
    kafka_bootstrap: str, prefix: str, bad: Callable[[bytes], bytes], reason: str
) -> None:
    app, log = new_app(kafka_bootstrap, prefix)
    snapshots_topic = prefix + snapshot.SNAPSHOT_TOPIC
    table_id = open_and_seat(app, "t", 2)
    p = partition_for(table_id, PARTITIONS)
    taken = snapshot.take(app.projection, app.topic, p, lambda t: partition_for(t, PARTITIONS))
    assert taken is not None
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap.split(","))
    producer.send(snapshots_topic, key=str(p).encode(), value=bad(taken.data)).get(timeout=30)
    producer.close()
    table_calls.take_seat(
        app, "late", api.TakeSeatRequest(table_id=table_id, client_request_id="late")
    )

    restarted, other = new_app(kafka_bootstrap, prefix, "w2")
    events.rebuild(kafka_bootstrap, restarted, snapshots_topic)
    # the whole partition was folded: opened, two seats, the late seat
    assert restarted.projection.since_snapshot[p] == 4
    assert encoded(restarted.projection) == encoded(app.projection)
    assert metrics_of(restarted).snapshots_ignored.labels(reason)._value.get() == 1
    for closing in (log, other):
        closing.close()


def test_the_snapshot_loop_writes_a_partition_once_enough_events_were_folded_and_at_stop(
    kafka_bootstrap: str, prefix: str
) -> None:
    app, log = new_app(kafka_bootstrap, prefix)
    snapshots_topic = prefix + snapshot.SNAPSHOT_TOPIC
    loop = events.SnapshotLoop(
        kafka_bootstrap,
        app,
        snapshots_topic,
        PARTITIONS,
        every_events=3,
        every_s=3600,
        check_s=0.05,
    )
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,))
    thread.start()
    try:
        busy = open_and_seat(app, "busy", 2)  # three events: due
        p = partition_for(busy, PARTITIONS)
        for _ in range(200):
            if metrics_of(app).snapshots_written._value.get() >= 1:
                break
            threading.Event().wait(0.05)
        assert metrics_of(app).snapshots_written._value.get() == 1
        assert app.projection.since_snapshot[p] == 0
        quiet = open_and_seat(app, "quiet", 0)  # one event: not due until the stop
        threading.Event().wait(0.3)
        assert metrics_of(app).snapshots_written._value.get() == 1
    finally:
        stop.set()
        thread.join(10)
    stored = events.read_snapshots(kafka_bootstrap, snapshots_topic)
    q = partition_for(quiet, PARTITIONS)
    last = snapshot.decode(stored[q], app.topic, q)
    assert quiet in {t.table_id for t, _ in last.tables}
    log.close()
