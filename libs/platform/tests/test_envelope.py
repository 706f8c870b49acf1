"""Envelopes survive the wire intact, and bad bytes or unknown types fail clearly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from rummy.common.v1 import cards_pb2, envelope_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import (
    Envelope,
    EnvelopeError,
    PayloadRegistry,
    UnknownEventType,
    decode,
    encode,
    event_payloads,
)
from rummy_platform.eventlog import partition_for
from rummy_platform.topics import EVENT_TOPICS, event_topic_specs

IST = timezone(timedelta(hours=5, minutes=30))


def hand_dealt() -> Envelope:
    payload = dealer_events.HandDealt(
        hand_id="hand-7",
        hands=[dealer_events.SeatHand(seat=0, cards=[cards_pb2.Card(index=104, face="JK")])],
        wild_cut=cards_pb2.Card(index=3, face="4C"),
        stock=[cards_pb2.Card(index=i) for i in range(5)],
    )
    return Envelope.new(
        payload,
        stream_id="table-1",
        stream_version=12,
        occurred_at=datetime(2026, 11, 30, 17, 45, 1, 250_000, tzinfo=IST),
        correlation_id="hand-7",
        causation_id="evt-seeds-locked",
        rules_version="indian13-points/1",
        shuffle_version="bb-shuffle-v1",
    )


def test_an_envelope_decodes_to_an_equal_envelope_with_its_typed_payload() -> None:
    sent = hand_dealt()

    received = decode(encode(sent), event_payloads())

    assert received == sent
    assert isinstance(received.payload, dealer_events.HandDealt)
    assert received.type == "rummy.dealer.v1.HandDealt"
    assert received.occurred_at == datetime(2026, 11, 30, 12, 15, 1, 250_000, tzinfo=UTC)


def test_the_wire_form_is_an_event_envelope_naming_the_payload_type() -> None:
    wire = envelope_pb2.EventEnvelope.FromString(encode(hand_dealt()))

    assert wire.type == "rummy.dealer.v1.HandDealt"
    assert wire.stream_id == "table-1" and wire.stream_version == 12
    assert dealer_events.HandDealt.FromString(wire.payload).wild_cut.index == 3


def test_an_unregistered_payload_type_is_refused_by_name() -> None:
    registry = PayloadRegistry([table_events.CardDrawn])

    with pytest.raises(UnknownEventType, match="rummy.dealer.v1.HandDealt"):
        decode(encode(hand_dealt()), registry)


def test_bytes_that_are_not_an_envelope_are_refused() -> None:
    with pytest.raises(EnvelopeError):
        decode(b"\xff\xff\xff", event_payloads())


def test_every_event_payload_of_every_area_is_registered() -> None:
    registry = event_payloads()

    for name in (
        "rummy.table.v1.HandStarted",
        "rummy.ledger.v1.StakesReserved",
        "rummy.fairness.v1.SeedCommitted",
        "rummy.dealer.v1.StockReshuffled",
        "rummy.clock.v1.TurnDeadlinePassed",
    ):
        assert name in registry


def test_an_envelope_needs_an_aware_time_and_a_positive_version() -> None:
    payload = table_events.TurnStarted(hand_id="h", seat=1, turn_no=1)
    with pytest.raises(ValueError, match="timezone-aware"):
        Envelope.new(payload, stream_id="t", stream_version=1, occurred_at=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="1-based"):
        Envelope.new(
            payload, stream_id="t", stream_version=0, occurred_at=datetime(2026, 1, 1, tzinfo=UTC)
        )


def test_all_event_topics_share_one_partition_count_and_never_expire() -> None:
    specs = event_topic_specs(12)

    assert [s.name for s in specs] == list(EVENT_TOPICS)
    assert {s.partitions for s in specs} == {12}
    assert all(s.config["retention.ms"] == "-1" for s in specs)


@pytest.mark.parametrize(
    ("stream_id", "partition"), [("a", 524), ("ab", 434), ("abc", 107), ("123456789", 566)]
)
def test_a_stream_maps_to_the_partition_the_java_client_would_choose(
    stream_id: str, partition: int
) -> None:
    # Reference values of Kafka's Java partitioner (Utils.murmur2) with 1000 partitions.
    assert partition_for(stream_id, 1000) == partition
