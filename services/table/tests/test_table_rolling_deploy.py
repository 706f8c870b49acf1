"""A rolling deploy as the table service meets it, on the real Kafka broker: the running process
(this build, the *old* version) reads events that a *newer* build wrote, namely payload types
this build has never heard of, and a table of a variant it does not host. It skips them
(counted in ``rummy_events_skipped_total``, one log line per type or variant), keeps handling
the events after them and serves its other tables.

The newer writers are played here: they append records whose envelope names a payload type no
registry of this build holds (``rummy.ledger.v1.StakesToppedUp``, ``rummy.table.v1.TableRenamed``),
exactly as a newer build's writer would put them on the wire (envelope bytes plus the
``event-type`` header), and a ``TableOpened`` whose rule set names the variant ``gin-rummy``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import grpc
import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition

from rummy.common.v1 import cards_pb2, envelope_pb2
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.envelope import Envelope, event_payloads
from rummy_platform.eventlog import EVENT_TYPE_HEADER, KafkaEventLog, partition_for
from rummy_platform.topics import (
    DEFAULT_PARTITIONS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_table.application.app import INPUT_GROUP
from rummy_testing.service_process import ServiceProcess, start_service
from rummy_testing.token_keys import issuer_authority, token_environment
from rummy_testing.waiting import wait_until

pytestmark = pytest.mark.slow  # starts service processes (docs/testing.md)

TIMEOUT_S = 60.0
NEW_LEDGER_TYPE = "rummy.ledger.v1.StakesToppedUp"
NEW_TABLE_TYPE = "rummy.table.v1.TableRenamed"


def skipped_series(reason: str, type_name: str, variant: str = "") -> str:
    return f'rummy_events_skipped_total{{reason="{reason}",type="{type_name}",variant="{variant}"}}'


def stub(table: ServiceProcess, account: str, role: Role) -> api_grpc.TableServiceStub:
    token = issuer_authority().issue(account, role)
    return api_grpc.TableServiceStub(authorized_channel(table.channel_as(role), token))


def append_new_type(
    bootstrap: str, topic: str, stream_id: str, type_name: str, hand_id: str = ""
) -> int:
    """Append, as a newer build's writer would, an event of ``type_name`` (unknown to this
    build) on ``stream_id``'s partition of ``topic``; returns its offset."""
    assert type_name not in event_payloads()
    occurred_at = envelope_pb2.EventEnvelope().occurred_at
    occurred_at.FromDatetime(datetime.now(UTC))
    envelope = envelope_pb2.EventEnvelope(
        event_id=str(uuid.uuid4()),
        stream_id=stream_id,
        stream_version=1,
        occurred_at=occurred_at,
        correlation_id=hand_id,
        type=type_name,
        payload=b"\x0a\x03new",  # field 1 = "new": some payload of the newer build's schema
    )
    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all")
    try:
        sent = producer.send(
            topic,
            key=stream_id.encode(),
            value=envelope.SerializeToString(),
            headers=[(EVENT_TYPE_HEADER, type_name.encode())],
            partition=partition_for(stream_id, DEFAULT_PARTITIONS),
        ).get(timeout=30)
    finally:
        producer.close()
    return int(sent.offset)


def skip_lines(process: ServiceProcess, name: str) -> list[dict[str, object]]:
    """The process's log lines about skipping events of type or variant ``name``."""
    out = []
    for line in list(process.lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if str(entry.get("event", "")).startswith("event skipped") and name in (
            entry.get("type"),
            entry.get("variant"),
        ):
            out.append(entry)
    return out


@pytest.fixture
def prefix() -> str:
    return f"roll{uuid.uuid4().hex[:8]}-"


@pytest.fixture
def table_service(kafka_bootstrap: str, prefix: str) -> Iterator[ServiceProcess]:
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        "RUMMY_TOPIC_PREFIX": prefix,
        "RUMMY_CLOCK_SPEED": "10",
    }
    with KafkaEventLog(kafka_bootstrap) as log:
        log.ensure_topics(event_topic_specs(prefix=prefix))
        # A newer instance opened a table of a variant this build does not host, and wrote
        # an event of a type this build does not know into that table's stream.
        opened = pb.TableOpened(
            table_id="gin-1",
            name="gin-1",
            seat_count=2,
            rule_set=cards_pb2.RuleSet(variant="gin-rummy"),
            operator_account_id="op-new",
        )
        log.append(
            prefix + TABLE_EVENTS,
            Envelope.new(
                opened, stream_id="gin-1", stream_version=1, occurred_at=datetime.now(UTC)
            ),
        )
    append_new_type(kafka_bootstrap, prefix + TABLE_EVENTS, "gin-1", NEW_TABLE_TYPE)
    process = start_service("rummy_table", env, timeout_s=TIMEOUT_S)
    try:
        yield process
    finally:
        process.stop()


def test_an_old_table_service_skips_what_a_newer_build_wrote_and_handles_the_events_after_it(
    kafka_bootstrap: str, prefix: str, table_service: ServiceProcess
) -> None:
    operator = stub(table_service, "op-1", Role.OPERATOR)
    table_id = operator.OpenTable(
        api.OpenTableRequest(
            client_request_id="open-1",
            seat_count=4,
            point_value_hundredths=10,
            rule_set=cards_pb2.RuleSet(start_delay_seconds=0),
        )
    ).table_id
    for account in ("alice", "bob"):
        stub(table_service, account, Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id=f"sit-{account}")
        )
    log = KafkaEventLog(kafka_bootstrap)
    try:

        def stream() -> list[Envelope]:
            return [r.envelope for r in log.read_stream(prefix + TABLE_EVENTS, table_id)]

        wait_until(
            "a hand started",
            lambda: any(isinstance(e.payload, pb.HandStarted) for e in stream()),
            TIMEOUT_S,
            0.2,
        )
        started = next(e.payload for e in stream() if isinstance(e.payload, pb.HandStarted))
        assert isinstance(started, pb.HandStarted)
        hand_id = started.hand_id

        # The newer ledger writes an event of a type this build does not know, then the
        # events this build handles; fairness commits the seed.
        unknown_at = append_new_type(
            kafka_bootstrap, prefix + LEDGER_EVENTS, table_id, NEW_LEDGER_TYPE, hand_id
        )
        reserved = ledger_pb.StakesReserved(
            hand_id=hand_id,
            reservations=[
                ledger_pb.Reservation(seat=s.seat, account_id=s.account_id, amount_hundredths=1_300)
                for s in started.seats
            ],
        )
        committed = fairness_pb.SeedCommitted(hand_id=hand_id, commitment_sha256=b"\x01" * 32)
        for topic, payload in ((LEDGER_EVENTS, reserved), (FAIRNESS_EVENTS, committed)):
            log.append(
                prefix + topic,
                Envelope.new(
                    payload,
                    stream_id=table_id,
                    stream_version=1,
                    occurred_at=datetime.now(UTC),
                    correlation_id=hand_id,
                ),
            )

        # The events after the unknown one are handled: the seed window opens.
        wait_until(
            "the seed window open after the stakes and the commitment",
            lambda: any(isinstance(e.payload, pb.SeedWindowOpened) for e in stream()),
            TIMEOUT_S,
            0.2,
        )
    finally:
        log.close()

    # Counted once, logged once, with the table and hand it belonged to.
    assert table_service.metric(skipped_series("unknown_type", NEW_LEDGER_TYPE)) == 1
    (line,) = skip_lines(table_service, NEW_LEDGER_TYPE)
    assert line["reason"] == "unknown_type" and line["level"] == "warning"
    assert line["table_id"] == table_id and line["hand_id"] == hand_id

    # Consumed, not re-read forever: the group's committed offset lies past it.
    tp = KafkaTopicPartition(prefix + LEDGER_EVENTS, partition_for(table_id, DEFAULT_PARTITIONS))
    reader = KafkaConsumer(
        bootstrap_servers=kafka_bootstrap.split(","),
        group_id=prefix + INPUT_GROUP,
        enable_auto_commit=False,
    )
    try:
        assert (reader.committed(tp) or 0) > unknown_at
    finally:
        reader.close(autocommit=False)

    # The newer instance's table: its unknown event skipped at the rebuild, the table itself
    # not served here, and its commands refused naming the variant, never INTERNAL.
    assert table_service.metric(skipped_series("unknown_type", NEW_TABLE_TYPE)) == 1
    assert len(skip_lines(table_service, NEW_TABLE_TYPE)) == 1
    series = skipped_series("unknown_variant", "rummy.table.v1.TableOpened", "gin-rummy")
    assert table_service.metric(series) == 1
    (variant_line,) = skip_lines(table_service, "gin-rummy")
    assert variant_line["table_id"] == "gin-1"
    with pytest.raises(grpc.RpcError) as refused:
        stub(table_service, "carol", Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id="gin-1", client_request_id="sit-carol")
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "gin-rummy" in (refused.value.details() or "")

    # ... while its own tables play on.
    alice = stub(table_service, "alice", Role.PLAYER)
    view = next(iter(alice.WatchTable(api.WatchTableRequest(table_id=table_id)))).view
    assert view.hand_id == hand_id and view.phase == api.HAND_PHASE_SEEDING
    assert table_service.process.poll() is None
