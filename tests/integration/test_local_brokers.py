"""The brokers the test fixtures hand out answer real round trips (no fakes, no mocks).

These prove the plumbing every integration suite relies on: a record acknowledged by all in-sync
replicas can be read back, and a row committed on one PostgreSQL connection is seen by another.
"""

from __future__ import annotations

import uuid

import psycopg
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic


def test_kafka_returns_an_acknowledged_record_to_a_consumer(kafka_bootstrap: str) -> None:
    topic = f"test.brokers.{uuid.uuid4().hex}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id="test-brokers")
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    try:
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
        try:
            sent = producer.send(topic, key=b"table-1", value=b"hello").get(timeout=30)
        finally:
            producer.close()

        partition = TopicPartition(topic, 0)
        consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
        try:
            consumer.assign([partition])
            consumer.seek(partition, sent.offset)
            batches = consumer.poll(timeout_ms=10_000, max_records=1)
        finally:
            consumer.close()
    finally:
        admin.delete_topics([topic])
        admin.close()

    records = batches.get(partition, [])
    assert [(r.offset, r.key, r.value) for r in records] == [(sent.offset, b"table-1", b"hello")]


def test_postgres_row_committed_on_one_connection_is_read_on_another(database_url: str) -> None:
    table = f"test_brokers_{uuid.uuid4().hex}"
    with psycopg.connect(database_url, autocommit=True) as writer:
        writer.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, note text NOT NULL)")
        try:
            with writer.transaction():
                writer.execute(f"INSERT INTO {table} VALUES (1, 'committed')")
            with psycopg.connect(database_url) as reader:
                rows = reader.execute(f"SELECT id, note FROM {table}").fetchall()
        finally:
            writer.execute(f"DROP TABLE {table}")

    assert rows == [(1, "committed")]
