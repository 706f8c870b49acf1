"""Skipping what a newer build wrote (``rummy_platform.skips``): counted with bounded labels,
logged once per type or variant and process, and a group consumer moves past the skipped
record to the ones after it."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from rummy.common.v1 import envelope_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy_platform.envelope import Envelope, encode
from rummy_platform.eventlog import InMemoryEventLog
from rummy_platform.eventlog.memory import StoredRecord
from rummy_platform.skips import MAX_NAMES, OTHER, SKIPPED, SkippedEvents
from rummy_platform.topics import LEDGER_EVENTS, event_topic_specs


def test_a_skip_is_counted_every_time_and_logged_once_per_type() -> None:
    skips = SkippedEvents(CollectorRegistry())
    with capture_logs() as logs:
        for _ in range(3):
            skips.skipped("unknown_type", type_name="rummy.x.v1.New", table_id="t", hand_id="h")
        skips.skipped("unknown_variant", type_name="rummy.table.v1.SeedsLocked", variant="gin")
    assert skips.count("unknown_type", "rummy.x.v1.New") == 3
    assert skips.count("unknown_variant", "rummy.table.v1.SeedsLocked", "gin") == 1
    assert [(e["reason"], e["table_id"]) for e in logs] == [
        ("unknown_type", "t"),
        ("unknown_variant", None),
    ]
    assert logs[0]["hand_id"] == "h" and logs[0]["log_level"] == "warning"


def test_a_variant_the_lookup_does_not_know_is_counted_and_logged_as_a_skip() -> None:
    skips = SkippedEvents(CollectorRegistry())
    known = {"indian-points": "the Indian variant"}

    def lookup(name: str) -> str:
        return known[name]  # a KeyError is a LookupError, as the registry's UnknownVariant

    with capture_logs() as logs:
        found = skips.lookup_or_skip(lookup, "indian-points", type_name="rummy.table.v1.X")
        missing = [
            skips.lookup_or_skip(
                lookup, "gin", type_name="rummy.table.v1.X", table_id="t", consumer="dealer"
            )
            for _ in range(2)
        ]
        skips.lookup_or_skip(lookup, "gin-2", type_name="rummy.table.v1.X", log=False)
    assert found == "the Indian variant" and missing == [None, None]
    assert skips.count("unknown_variant", "rummy.table.v1.X", "gin") == 2
    assert skips.count("unknown_variant", "rummy.table.v1.X", "gin-2") == 1
    assert skips.count("unknown_variant", "rummy.table.v1.X", "indian-points") == 0
    assert [(e["variant"], e["table_id"], e["consumer"]) for e in logs] == [("gin", "t", "dealer")]


def test_label_values_from_the_wire_are_bounded() -> None:
    skips = SkippedEvents(CollectorRegistry())
    with capture_logs():
        for n in range(MAX_NAMES + 10):
            skips.skipped("unknown_type", type_name=f"rummy.flood.v1.T{n}")
        skips.skipped("unknown_type", type_name="x" * 500)
        skips.skipped("unknown_type", type_name='bad"name{}')
    series = {key for key in skips.totals() if key[0] == "unknown_type"}
    assert len(series) == MAX_NAMES + 1  # MAX_NAMES names, then "other"
    assert skips.count("unknown_type", OTHER) == 12
    assert skips.count("unknown_type", "rummy.flood.v1.T0") == 1


def test_a_group_consumer_skips_an_unknown_type_and_returns_the_records_after_it() -> None:
    log = InMemoryEventLog()
    log.ensure_topics(event_topic_specs(partitions=1))
    newer = envelope_pb2.EventEnvelope(
        event_id="e-new", stream_id="t-1", stream_version=1, type="rummy.ledger.v1.Newer"
    )
    newer.occurred_at.FromDatetime(datetime.now(UTC))
    log.append_stored(
        LEDGER_EVENTS, "t-1", StoredRecord(newer.SerializeToString(), "rummy.ledger.v1.Newer")
    )
    known = Envelope.new(
        ledger_events.ReservationsReleased(hand_id="h-1"),
        stream_id="t-1",
        stream_version=2,
        occurred_at=datetime.now(UTC),
    )
    log.append_stored(LEDGER_EVENTS, "t-1", StoredRecord(encode(known), known.type))
    before = SKIPPED.count("unknown_type", "rummy.ledger.v1.Newer")
    consumer = log.consumer("g", [LEDGER_EVENTS])
    (record,) = consumer.poll()
    assert record.envelope.event_id == known.event_id and record.offset == 1
    assert SKIPPED.count("unknown_type", "rummy.ledger.v1.Newer") == before + 1
    # ... and a stream read too.
    assert [r.offset for r in log.read_stream(LEDGER_EVENTS, "t-1")] == [1]
