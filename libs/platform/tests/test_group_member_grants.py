"""How a Kafka group member is granted partitions and lets them go, on a real broker.

- A grant whose ``on_assigned`` outlasts the member's session (a table instance rebuilding its
  partitions) keeps the membership: ``on_assigned`` runs on the polling thread while kafka-python's
  IO thread heartbeats, so the member is neither dropped nor granted again (issue 34: the 45.9 s
  start, kafka-python 3.0.12 calling the listener on its IO thread, where it blocked heartbeats).
- A member that closes leaves the group (LeaveGroup): the other member is given its partitions
  although the session of the closed member (30 s here) has not run out.

Every test uses topics and groups of its own.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime

import pytest
from kafka import KafkaAdminClient

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import GroupConsumer, KafkaEventLog, Record, TopicPartition
from rummy_platform.topics import TopicSpec

PARTITIONS = 3
#: The members' session (seconds): the broker's minimum.
SESSION_S = 6.0


def drawn(table_id: str, version: int) -> Envelope:
    payload = table_events.CardDrawn(
        hand_id="hand-1",
        seat=0,
        turn_no=version,
        source=table_events.DRAW_SOURCE_STOCK,
        card=cards_pb2.Card(index=version, face="?"),
    )
    return Envelope.new(
        payload,
        stream_id=table_id,
        stream_version=version,
        occurred_at=datetime(2026, 12, 3, 12, 0, version, tzinfo=UTC),
    )


@pytest.fixture
def log(kafka_bootstrap: str) -> Iterator[KafkaEventLog]:
    with KafkaEventLog(kafka_bootstrap, client_id="grant-test", timeout_s=20) as log:
        yield log


@pytest.fixture
def topic(log: KafkaEventLog, kafka_bootstrap: str) -> Iterator[str]:
    name = f"t{uuid.uuid4().hex[:10]}-grants"
    log.ensure_topics([TopicSpec(name, PARTITIONS)])
    yield name
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id="grant-test")
    try:
        admin.delete_topics([name])
    finally:
        admin.close()


def poll_until(consumer: GroupConsumer, count: int, timeout_s: float = 60.0) -> list[Record]:
    records: list[Record] = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count and time.monotonic() < deadline:
        records.extend(consumer.poll(timeout_s=0.5))
    records.extend(consumer.poll(timeout_s=0.5))
    return records


def test_a_grant_that_outlasts_the_session_keeps_the_member_and_is_made_once_on_the_polling_thread(
    log: KafkaEventLog, topic: str
) -> None:
    table = f"table-{uuid.uuid4()}"
    for version in range(1, 5):
        log.append(topic, drawn(table, version))
    used = next(
        tp
        for tp, end in log.end_offsets(
            [TopicPartition(topic, p) for p in range(PARTITIONS)]
        ).items()
        if end > 0
    )
    grants: list[tuple[frozenset[TopicPartition], threading.Thread]] = []
    revocations: list[frozenset[TopicPartition]] = []

    def rebuild(partitions: frozenset[TopicPartition]) -> Mapping[TopicPartition, int]:
        grants.append((partitions, threading.current_thread()))
        time.sleep(SESSION_S * 1.5)  # a rebuild longer than the session
        return {used: 1}  # resume after the first event: the seek is applied

    consumer = log.consumer(
        f"g-{uuid.uuid4().hex[:8]}",
        [topic],
        rebuild,
        on_revoked=revocations.append,
        session_timeout_s=SESSION_S,
    )
    try:
        records = poll_until(consumer, 3)
        # a few more polls: a member dropped during the grant would be granted again here
        for _ in range(6):
            records.extend(consumer.poll(timeout_s=0.5))
        owned = consumer.assignment()
    finally:
        consumer.close()

    everything = frozenset(TopicPartition(topic, p) for p in range(PARTITIONS))
    assert [(partitions, thread) for partitions, thread in grants] == [
        (everything, threading.current_thread())
    ]
    # at close only (kafka-python also reports empty revocations): never dropped
    assert [r for r in revocations if r] == [everything]
    assert owned == everything
    assert [r.envelope.stream_version for r in records] == [2, 3, 4]


def test_a_member_that_closes_leaves_so_the_other_gets_its_partitions_before_its_session_ends(
    log: KafkaEventLog, topic: str
) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    # Longer than the wait for the takeover below: only a LeaveGroup can hand over in time (a
    # member learns of a rebalance at its next heartbeat, every sixth of the session).
    session_s = 30.0
    everything = frozenset(TopicPartition(topic, p) for p in range(PARTITIONS))
    first = log.consumer(group, [topic], session_timeout_s=session_s)
    stop = threading.Event()

    def keep_polling() -> None:  # the first member rejoins when the second one joins
        while not stop.is_set():
            first.poll(timeout_s=0.2)

    try:
        deadline = time.monotonic() + 60
        while first.assignment() != everything and time.monotonic() < deadline:
            first.poll(timeout_s=0.2)
        assert first.assignment() == everything
        poller = threading.Thread(target=keep_polling)
        poller.start()
        second = log.consumer(group, [topic], session_timeout_s=session_s)
        try:
            deadline = time.monotonic() + 60
            while not second.assignment() and time.monotonic() < deadline:
                second.poll(timeout_s=0.2)
            shared = second.assignment()
            stop.set()
            poller.join()
            first.close()
            deadline = time.monotonic() + session_s * 2 / 3
            while second.assignment() != everything and time.monotonic() < deadline:
                second.poll(timeout_s=0.2)
            taken_over = second.assignment()
        finally:
            second.close()
    finally:
        stop.set()
        first.close()

    assert shared and shared != everything
    assert taken_over == everything
