"""A table-service instance that lost its partitions (a zombie: its group membership ended while
it still holds the tables in memory) can write nothing, on real Kafka: every transaction, a
player's command as much as an input, carries the group metadata of the generation that granted
the partition (KIP-447), and the broker refuses it once another member's generation took over
(``docs/rules/promises.md#scales-out``)."""

from __future__ import annotations

import time
import uuid

import pytest
import table_calls
from kafka.structs import MemberState

from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import Unavailable
from rummy_platform.eventlog import GroupCommitWriter, GroupConsumer, KafkaEventLog, TopicPartition
from rummy_platform.topics import (
    DEFAULT_PARTITIONS,
    TABLE_EVENTS,
    TABLE_INPUT_TOPICS,
    event_topic_specs,
)
from rummy_table.adapters.metrics import TableMetrics
from rummy_table.application.app import TableApp
from rummy_table.application.ownership import Ownership
from rummy_table.entrypoints.views import player_view


def _joined(log: KafkaEventLog, group: str, topics: list[str]) -> GroupConsumer:
    """A member of ``group`` that owns every partition of ``topics`` in a generation that stays:
    its (untyped, kafka-python's) group metadata shows the same generation, stable, before and
    after one more poll. A member just past its first generation often joins again at once (the
    leader re-joins when its metadata changed); kafka-python runs that join in the background
    once a poll's time is up, so a generation read right after the first join may be one the
    group is leaving, and a zombie holding it would be refused for that, not for being a zombie.
    A poll starts any join still due, and a join under way shows as rebalancing."""
    consumer = log.consumer(group, topics, session_timeout_s=6)
    everything = {TopicPartition(t, p) for t in topics for p in range(DEFAULT_PARTITIONS)}
    deadline = time.monotonic() + 60
    seen: int | None = None
    while True:
        assert time.monotonic() < deadline, "no stable generation owning everything within 60 s"
        consumer.poll(0.2)
        metadata = consumer.group_metadata()
        generation = getattr(metadata, "generation_id", -1)
        stable = getattr(metadata, "state", None) == MemberState.STABLE
        if not (stable and generation >= 1 and consumer.assignment() == everything):
            seen = None
        elif seen == generation:
            return consumer
        else:
            seen = generation


def test_a_zombie_instance_whose_generation_was_replaced_appends_nothing(
    kafka_bootstrap: str,
) -> None:
    prefix = f"zombie{uuid.uuid4().hex[:8]}-"
    log = KafkaEventLog(kafka_bootstrap)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    topic, group = prefix + TABLE_EVENTS, prefix + "table"
    inputs = [prefix + t for t in TABLE_INPUT_TOPICS]
    writer = GroupCommitWriter(log.transactional_writer(prefix + "writer-zombie"))
    try:
        member = _joined(log, group, inputs)
        ownership = Ownership(8, "127.0.0.1:1", prefix + "writer-zombie")
        ownership.grant(frozenset(range(8)), member.group_metadata(), {})
        app = TableApp(
            writer,
            topic=topic,
            input_group=group,
            ownership=ownership,
            metrics=TableMetrics.unregistered(),
            render_view=player_view,
        )
        table_id = table_calls.open_table(
            app, "op", api.OpenTableRequest(client_request_id="open-1", seat_count=4)
        )
        assert table_calls.take_seat(
            app, "alice", api.TakeSeatRequest(table_id=table_id, client_request_id="sit-alice")
        ) in range(4)

        # Its membership ends and another member's generation owns the partitions now; the
        # zombie still holds the table and the old generation's metadata.
        member.close()
        successor = _joined(log, group, inputs)
        appended = len(log.read_stream(topic, table_id))

        with pytest.raises(Unavailable):
            table_calls.take_seat(
                app, "bob", api.TakeSeatRequest(table_id=table_id, client_request_id="sit-bob")
            )
        with pytest.raises(Unavailable):
            table_calls.open_table(
                app, "op", api.OpenTableRequest(client_request_id="open-2", seat_count=4)
            )
        assert len(log.read_stream(topic, table_id)) == appended
        successor.close()
    finally:
        writer.close()
        log.close()
