"""A secured Kafka broker (issue 32: ``RUMMY_KAFKA_SECURE=1 deploy/local/kafka.sh start``) refuses
what the ACL table (rummy_platform.eventlog.kafka_acls) does not grant, and lets each principal do
what it does.

One secured broker of the session's own (the ``secure_kafka`` fixture: SASL_SSL with SCRAM-SHA-512,
StandardAuthorizer, one SCRAM user per service and ``ops``); each test makes the ACLs of a topic
prefix of its own and the table's principal creates the topics under it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kafka.errors import KafkaError

from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_ops.own_brokers import OwnBrokers
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import (
    EventLogError,
    KafkaEventLog,
    KafkaSecurity,
    PartitionReader,
    cluster_probe,
)
from rummy_platform.topics import DEALER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_testing.events import FIXED_TIME, table_event

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TIMEOUT_S = 10.0


@pytest.fixture()
def prefix(secure_kafka: OwnBrokers) -> Iterator[str]:
    """A topic prefix of the test's own, its ACLs made and its five event topics created by the
    table's principal."""
    prefix = f"sec-{uuid.uuid4().hex[:8]}-"
    secure_kafka.grant_kafka(prefix)
    with _log(secure_kafka, "table") as log:
        log.ensure_topics(event_topic_specs(partitions=1, prefix=prefix))
    yield prefix


def _log(brokers: OwnBrokers, user: str, security: KafkaSecurity | None = None) -> KafkaEventLog:
    return KafkaEventLog(
        brokers.kafka.address,
        client_id=f"test-{user}",
        timeout_s=TIMEOUT_S,
        security=security or brokers.kafka_security(user),
    )


def _hand_started(table_id: str) -> Envelope:
    return table_event(
        table_id, 1, table_events.HandStarted(hand_id=f"{table_id}-h1"), occurred_at=FIXED_TIME
    )


def _read_as(brokers: OwnBrokers, user: str, topic: str, stream_id: str) -> list[Envelope]:
    """The envelopes of stream ``stream_id`` in ``topic``, read as ``User:<user>``."""
    with _log(brokers, user) as log:
        return [r.envelope for r in log.read_stream(topic, stream_id)]


def _dealt(table_id: str) -> Envelope:
    return Envelope.new(
        dealer_events.HandDealt(hand_id=f"{table_id}-h1"),
        stream_id=table_id,
        stream_version=1,
        correlation_id=f"{table_id}-h1",
        occurred_at=FIXED_TIME,
    )


def test_a_client_without_credentials_is_refused(secure_kafka: OwnBrokers) -> None:
    # A plaintext client on the SASL_SSL port gets no answer it understands: no broker.
    probe = cluster_probe(
        secure_kafka.kafka.address, client_id="no-credentials", security=KafkaSecurity()
    )
    with pytest.raises(KafkaError):
        probe()


def test_a_wrong_password_is_refused(secure_kafka: OwnBrokers) -> None:
    wrong = secure_kafka.kafka_security("table", password="not-the-password")
    probe = cluster_probe(secure_kafka.kafka.address, client_id="wrong-password", security=wrong)
    broker_log = secure_kafka.state_dir / "kafka" / "broker.log"
    seen = broker_log.stat().st_size
    # kafka-python retries the bootstrap until its timeout and raises that (whether it read the
    # broker's refusal before the broker closed the connection varies); the broker says why.
    with pytest.raises(KafkaError):
        probe()
    with broker_log.open("rb") as log:
        log.seek(seen)
        written = log.read().decode()
    assert "Failed authentication" in written
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in written


def test_the_dealer_may_not_write_the_table_stream(secure_kafka: OwnBrokers, prefix: str) -> None:
    with (
        _log(secure_kafka, "dealer") as log,
        pytest.raises(EventLogError, match="TopicAuthorizationFailed"),
    ):
        log.append(prefix + TABLE_EVENTS, _hand_started("t-forged"))


def test_the_dealer_may_not_take_the_tables_transactional_id(
    secure_kafka: OwnBrokers, prefix: str
) -> None:
    with (
        _log(secure_kafka, "dealer") as log,
        pytest.raises(EventLogError, match="TransactionalIdAuthorizationFailed"),
    ):
        log.transactional_writer(prefix + "table-writer-127.0.0.1:1")


def test_the_table_writes_its_stream_and_ops_reads_it(
    secure_kafka: OwnBrokers, prefix: str
) -> None:
    event = _hand_started("t-1")
    with _log(secure_kafka, "table") as log:
        log.append(prefix + TABLE_EVENTS, event)
        writer = log.transactional_writer(prefix + "table-writer-127.0.0.1:1")
        writer.append(prefix + TABLE_EVENTS, _hand_started("t-2"))
        writer.close()
    assert _read_as(secure_kafka, "ops", prefix + TABLE_EVENTS, "t-1") == [event]


def test_the_dealer_writes_its_stream_and_only_the_table_and_ops_read_it(
    secure_kafka: OwnBrokers, prefix: str
) -> None:
    dealt = _dealt("t-3")
    with _log(secure_kafka, "dealer") as log:
        log.append(prefix + DEALER_EVENTS, dealt)
    for user in ("table", "ops"):
        assert _read_as(secure_kafka, user, prefix + DEALER_EVENTS, "t-3") == [dealt]
    for stranger in ("ledger", "fairness", "clock"):
        with (
            PartitionReader(
                secure_kafka.kafka.address,
                client_id=f"test-{stranger}",
                security=secure_kafka.kafka_security(stranger),
            ) as reader,
            pytest.raises(EventLogError, match="TopicAuthorizationFailed"),
        ):
            reader.assign(prefix + DEALER_EVENTS, {0: 0})
            reader.poll(TIMEOUT_S)
