"""The Indian variant's wire: its events round-trip through the table stream's codec, and hands
recorded before its events had their own package (types ``rummy.table.v1.Declared`` ...) still
decode to the same rules events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.protobuf.message import Message

from rummy.common.v1 import envelope_pb2
from rummy.table.v1 import events_pb2 as old_pb
from rummy_game import stream_payloads
from rummy_platform.envelope import Envelope, event_payloads, from_proto, to_proto
from rummy_rules import events as ev
from rummy_rules.indian import DeclarationRejected, Declared, DropKind, PlayerDropped
from rummy_rules.indian.rules import bombay_baazi

RULES = bombay_baazi(4, 10, 1000)
STARTED = ev.HandStarted(
    hand_id="h1",
    seats=(ev.SeatAccount(0, "a"), ev.SeatAccount(1, "b")),
    dealer_seat=0,
    rule_set=RULES,
    at_ms=1_000,
)
CTX = stream_payloads.hand_context(stream_payloads.hand_started_to_pb(STARTED, 1))
CARDS = RULES.shoe.cards


def _events() -> list[ev.Event]:
    return [
        PlayerDropped(seat=1, turn_no=3, kind=DropKind.MIDDLE, points=40),
        Declared(seat=0, turn_no=4, face_down=CARDS[5], shown=CARDS[10:23]),
        DeclarationRejected(seat=1, turn_no=5, face_down=CARDS[7], shown=CARDS[30:43], points=80),
    ]


@pytest.mark.parametrize("event", _events(), ids=lambda e: type(e).__name__)
def test_an_indian_event_is_written_in_its_own_package_and_read_back_unchanged(
    event: ev.Event,
) -> None:
    payload = stream_payloads.to_payload(event, CTX)
    assert payload.DESCRIPTOR.full_name.startswith("rummy.indian.v1.")
    assert stream_payloads.is_hand_payload(payload)
    assert stream_payloads.from_payload(payload, CTX, 2_000) == (event,)


def _old_record(payload: Message) -> envelope_pb2.EventEnvelope:
    """The envelope a table service of the version before wrote: the same bytes under the
    ``rummy.table.v1`` type name."""
    old_type = getattr(old_pb, type(payload).DESCRIPTOR.name)
    old = old_type()
    old.ParseFromString(payload.SerializeToString())
    record = to_proto(
        Envelope.new(old, stream_id="t1", stream_version=7, occurred_at=datetime.now(UTC))
    )
    assert record.type == f"rummy.table.v1.{type(payload).DESCRIPTOR.name}"
    return record


@pytest.mark.parametrize("event", _events(), ids=lambda e: type(e).__name__)
def test_a_hand_recorded_with_the_old_table_v1_types_decodes_to_the_same_rules_events(
    event: ev.Event,
) -> None:
    record = _old_record(stream_payloads.to_payload(event, CTX))
    envelope = from_proto(record, event_payloads())
    assert type(envelope.payload).DESCRIPTOR.full_name.startswith("rummy.indian.v1.")
    assert stream_payloads.from_payload(envelope.payload, CTX, 2_000) == (event,)


def test_the_indian_rule_set_round_trips_through_its_arm_of_the_oneof() -> None:
    options = stream_payloads.rule_set_to_pb(RULES, 5)
    assert options.WhichOneof("variant_options") == "indian_points"
    assert stream_payloads.rule_set_from_pb(options, 4, 10, 1000) == RULES
