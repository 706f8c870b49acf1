"""The event log's readers and writers of whole partitions on a real broker: PartitionReader,
RecordProducer and unstable_partitions (what the table's rebuild, snapshots and directory, and
ops' replay and audit, read and write through)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from rummy_platform.eventlog import (
    KafkaEventLog,
    PartitionReader,
    RecordProducer,
    partition_for,
    unstable_partitions,
)
from rummy_platform.topics import TopicSpec

PARTITIONS = 3


@pytest.fixture
def topic(kafka_bootstrap: str) -> Iterator[str]:
    name = f"reader-{uuid.uuid4().hex[:10]}"
    with KafkaEventLog(kafka_bootstrap, client_id="reader-test") as log:
        log.ensure_topics([TopicSpec(name, PARTITIONS)])
    yield name
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id="reader-test")
    try:
        admin.delete_topics([name])
    finally:
        admin.close()


def keys_on_distinct_partitions() -> list[str]:
    """One key per partition of the test topic, in partition order."""
    by_partition: dict[int, str] = {}
    n = 0
    while len(by_partition) < PARTITIONS:
        by_partition.setdefault(partition_for(f"key-{n}", PARTITIONS), f"key-{n}")
        n += 1
    return [by_partition[p] for p in range(PARTITIONS)]


def test_a_read_gets_each_partition_in_order_from_its_start_offset_and_stores_the_ends(
    kafka_bootstrap: str, topic: str
) -> None:
    keys = keys_on_distinct_partitions()
    producer = RecordProducer(kafka_bootstrap, client_id="reader-test")
    try:
        for n in range(4):
            for key in keys:
                producer.send(topic, key.encode(), f"{key}/{n}".encode())
        producer.flush(timeout_s=20)
        landed = producer.write(topic, keys[0].encode(), b"last", timeout_s=20)
    finally:
        producer.close()
    assert (landed.partition, landed.offset) == (0, 4)

    ends: dict[int, int] = {}
    with PartitionReader(kafka_bootstrap, client_id="reader-test") as reader:
        assert reader.partitions(topic) == [0, 1, 2]
        read = list(reader.read(topic, {0: 2, 2: 0}, idle_timeout_s=20, ends=ends))

    assert ends == {0: 5, 2: 4}
    assert [(r.partition, r.offset, r.key, r.value) for r in read] == [
        (0, 2, keys[0].encode(), f"{keys[0]}/2".encode()),
        (0, 3, keys[0].encode(), f"{keys[0]}/3".encode()),
        (0, 4, keys[0].encode(), b"last"),
        *[(2, n, keys[2].encode(), f"{keys[2]}/{n}".encode()) for n in range(4)],
    ]


def test_a_topic_that_does_not_exist_has_no_partitions(kafka_bootstrap: str) -> None:
    with PartitionReader(kafka_bootstrap, client_id="reader-test") as reader:
        assert reader.partitions(f"missing-{uuid.uuid4().hex}") == []


def test_an_open_transaction_is_unstable_and_unread_until_it_is_aborted(
    kafka_bootstrap: str, topic: str
) -> None:
    key = keys_on_distinct_partitions()[1]
    with RecordProducer(kafka_bootstrap, client_id="reader-test") as producer:
        producer.write(topic, key.encode(), b"committed", timeout_s=20)
    zombie = KafkaProducer(
        bootstrap_servers=kafka_bootstrap, transactional_id=f"zombie-{uuid.uuid4()}"
    )
    try:
        zombie.init_transactions()
        zombie.begin_transaction()
        zombie.send(topic, key=key.encode(), value=b"never committed").get(timeout=20)

        assert unstable_partitions(kafka_bootstrap, topic, frozenset({0, 1, 2}), 0.5) == {1}
        with PartitionReader(kafka_bootstrap, client_id="reader-test") as committed:
            seen = [r.value for r in committed.read(topic, {1: 0}, idle_timeout_s=20)]
        with PartitionReader(
            kafka_bootstrap, client_id="reader-test", committed_only=False
        ) as everything:
            seen_all = [r.value for r in everything.read(topic, {1: 0}, idle_timeout_s=20)]
        assert seen == [b"committed"]
        assert seen_all == [b"committed", b"never committed"]

        zombie.abort_transaction()
        assert unstable_partitions(kafka_bootstrap, topic, frozenset({0, 1, 2}), 10.0) == set()
        with PartitionReader(kafka_bootstrap, client_id="reader-test") as committed:
            after = [r.value for r in committed.read(topic, {1: 0}, idle_timeout_s=20)]
        assert after == [b"committed"]
    finally:
        zombie.close(timeout=5)
