"""A match table's stream on the real broker: a pool 101 match played through the table's
handlers, its envelopes appended to Kafka as written, and a table service started from that
topic (a restart) shows the same match to every seat."""

from __future__ import annotations

import uuid

from match_world import hold_money, next_step, open_match_table, play_deal, seat_all
from world import World, replay_all

from rummy.match.v1 import match_pb2 as mpb
from rummy_platform.eventlog import GroupCommitWriter, KafkaEventLog
from rummy_platform.topics import TABLE_EVENTS, event_topic_specs
from rummy_table.adapters import snapshot
from rummy_table.adapters.metrics import TableMetrics
from rummy_table.application.app import TableApp
from rummy_table.entrypoints.views import player_view


def test_a_match_table_restarted_from_its_kafka_topic_shows_the_same_match(
    kafka_bootstrap: str,
) -> None:
    world = World()
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=101, entry_fee_hundredths=500, rejoin=True)
    )
    table_id = open_match_table(world, options, seats=3)
    seat_all(world, table_id, ("ann", "bob", "cat"))
    next_step(world, table_id)
    hold_money(world, table_id)
    next_step(world, table_id)
    for _ in range(3):  # bob out at 120, offered a rejoin at 61
        play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})
        next_step(world, table_id)
    play_deal(world, table_id, {0: "win", 2: "first"})  # the offer lapsed: bob is not dealt in

    prefix = f"mt{uuid.uuid4().hex[:8]}-"
    log = KafkaEventLog(kafka_bootstrap)
    try:
        log.ensure_topics(event_topic_specs(prefix=prefix))
        writer = log.transactional_writer(prefix + "copy")
        stream = [e for e in replay_all(world.log) if e.stream_id == table_id]
        writer.append_batch([(prefix + TABLE_EVENTS, e) for e in stream])
        writer.close()
        records = log.read_stream(prefix + TABLE_EVENTS, table_id)
        assert len(records) == len(stream)
        restarted = TableApp(
            GroupCommitWriter(log.transactional_writer(prefix + "w")),
            topic=prefix + TABLE_EVENTS,
            metrics=TableMetrics.unregistered(),
            render_view=player_view,
        )
        restarted.replay(records)
        live = world.app.projection.tables[table_id]
        again = restarted.projection.tables[table_id]
        assert snapshot.encode_table(again) == snapshot.encode_table(live)
        for who in ("ann", "bob", "cat", None):
            assert restarted.view(who, table_id).match == world.view(table_id, who).match
        view = restarted.view(None, table_id).match
        assert (view.phase, view.deals_scored) == ("between_deals", 4)
        assert [(s.status, s.total) for s in view.seats] == [
            ("in", 0),
            ("eliminated", 120),
            ("in", 80),
        ]
    finally:
        log.close()
