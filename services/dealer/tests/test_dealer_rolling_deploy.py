"""A rolling deploy as the dealer meets it, on the real Kafka broker: a newer table service
locks the seeds of a hand of a variant this build's ``rummy_rules.registry`` does not hold
(``gin-rummy``); the dealer (this build: the old version) skips that hand, counted once and
logged once, without asking fairness for its seed, commits its offset past it and deals the
next hand of the same table as before."""

from __future__ import annotations

import hashlib
import time
import uuid
from datetime import UTC, datetime

import pytest
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition
from structlog.testing import capture_logs

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.adapters.stream_versions import LogStreamVersions
from rummy_dealer.application.dealing import Dealer
from rummy_dealer.entrypoints.events import table_reactor
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import KafkaEventLog, TopicPartition
from rummy_platform.skips import SKIPPED, Reason
from rummy_platform.topics import DEALER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules import registry

#: slow: dealer processes of two builds (docs/testing.md#tests).
pytestmark = pytest.mark.slow

SERVER_SEED = bytes(range(32))
#: A variant only a newer build knows (its own name per run: the skip is logged once per
#: process and variant, and this test must see that first line).
NEW_VARIANT = f"gin-rummy-{uuid.uuid4().hex[:6]}"


class Seeds:
    """Fairness as the dealer asks it: one seed for every hand; remembers what was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def server_seed(self, hand_id: str) -> bytes:
        self.asked.append(hand_id)
        return SERVER_SEED

    def locked_client_seeds(self, hand_id: str) -> list[tuple[int, bytes]]:
        return []


def locked(hand_id: str, variant: str | None) -> table_events.SeedsLocked:
    lock = table_events.SeedsLocked(
        hand_id=hand_id,
        server_commitment_sha256=hashlib.sha256(SERVER_SEED).digest(),
        client_seeds=[table_events.ClientSeed(seat=s, client_seed=bytes([s])) for s in (0, 1)],
        dealer_seat=1,
        shoe=cards_pb2.ShoeSpec(decks=2, printed_jokers=2),
        hand_size=13,
    )
    if variant is not None:
        lock.variant = variant
    return lock


def test_an_old_dealer_skips_a_hand_of_a_variant_it_does_not_know_and_deals_the_next(
    kafka_bootstrap: str,
) -> None:
    assert NEW_VARIANT not in registry.names()
    prefix = f"deal{uuid.uuid4().hex[:8]}-"
    table_id = "table-roll"
    series: tuple[Reason, str, str] = ("unknown_variant", "rummy.table.v1.SeedsLocked", NEW_VARIANT)
    assert SKIPPED.count(*series) == 0
    with KafkaEventLog(kafka_bootstrap) as log:
        log.ensure_topics(event_topic_specs(prefix=prefix))
        gin = log.append(
            prefix + TABLE_EVENTS,
            Envelope.new(
                locked("hand-gin", NEW_VARIANT),
                stream_id=table_id,
                stream_version=1,
                occurred_at=datetime.now(UTC),
                correlation_id="hand-gin",
            ),
        )
        indian = log.append(
            prefix + TABLE_EVENTS,
            Envelope.new(
                locked("hand-indian", "indian-points"),
                stream_id=table_id,
                stream_version=2,
                occurred_at=datetime.now(UTC),
                correlation_id="hand-indian",
            ),
        )
        seeds = Seeds()
        versions = LogStreamVersions(log, prefix + DEALER_EVENTS)
        dealer = Dealer(seeds, versions, topic=prefix + DEALER_EVENTS)
        writer = log.transactional_writer(prefix + "dealer-writer")
        reactor = table_reactor(
            log,
            writer,
            dealer,
            versions.forget,
            topic=prefix + TABLE_EVENTS,
            group_id=prefix + "dealer",
        )
        try:
            with capture_logs() as logs:
                deadline = time.monotonic() + 60
                dealt: list[dealer_events.HandDealt] = []
                while not dealt and time.monotonic() < deadline:
                    reactor.run_once(timeout_s=1.0)
                    dealt = [
                        r.envelope.payload  # type: ignore[misc]
                        for r in log.read_stream(prefix + DEALER_EVENTS, table_id)
                    ]
            # The next hand is dealt as before; the unknown one not at all, and fairness was
            # never asked for its seed.
            assert [d.hand_id for d in dealt] == ["hand-indian"]
            assert dealt[0].HasField("wild_cut")
            assert seeds.asked == ["hand-indian"]
            assert SKIPPED.count(*series) == 1
            (line,) = [e for e in logs if str(e["event"]).startswith("event skipped")]
            assert line["variant"] == NEW_VARIANT and line["consumer"] == "dealer"
            assert line["table_id"] == table_id and line["hand_id"] == "hand-gin"
            assert not [e for e in logs if e["log_level"] == "error"]
            # Consumed: the group's offset lies past both locks.
            tp = TopicPartition(prefix + TABLE_EVENTS, gin.partition)
            assert committed(kafka_bootstrap, prefix + "dealer", tp) > indian.offset > gin.offset
        finally:
            reactor.close()
            writer.close()


def committed(bootstrap: str, group_id: str, tp: TopicPartition) -> int:
    """The offset ``group_id`` committed for ``tp`` (0 when none)."""
    reader = KafkaConsumer(
        bootstrap_servers=bootstrap.split(","), group_id=group_id, enable_auto_commit=False
    )
    try:
        return int(reader.committed(KafkaTopicPartition(tp.topic, tp.partition)) or 0)
    finally:
        reader.close(autocommit=False)
