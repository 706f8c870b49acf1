"""Outbox rows the platform relay can publish, and the gauges the ledger exports."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ledger_support import funded_player, house_rule_set, new_id, storage
from psycopg_pool import ConnectionPool

from rummy.ledger.v1 import events_pb2
from rummy_ledger.adapters import db
from rummy_ledger.application.accounts import (
    OutgoingEvent,
    SettleResult,
    reserve_stakes,
    settle_hand,
)
from rummy_ledger.domain.accounts import ReserveStakes, SeatStake, SettleHand
from rummy_platform.envelope import Envelope, decode, event_payloads, has_payload
from rummy_rules.settlement import settle

pytestmark = pytest.mark.integration


def test_a_settlement_writes_an_envelope_the_relay_can_decode_with_its_id_and_key(
    pool: ConnectionPool,
) -> None:
    winner, loser = funded_player(pool, 4000), funded_player(pool, 4000)
    hand, table = new_id("hand"), new_id("table")
    reserve_stakes(
        storage(pool),
        ReserveStakes(hand, table, (SeatStake(0, winner, 1300), SeatStake(1, loser, 1300))),
    )

    def hand_settled(result: SettleResult) -> list[OutgoingEvent]:
        payload = events_pb2.HandSettled(
            hand_id=result.hand_id,
            journal_transaction_id=result.transaction_id,
            commission_hundredths=result.commission_hundredths,
        )
        envelope = Envelope.new(
            payload,
            stream_id=table,
            stream_version=1,
            occurred_at=datetime(2026, 11, 30, tzinfo=UTC),
            correlation_id=hand,
        )
        return [OutgoingEvent.from_envelope("ledger-events", envelope)]

    command = SettleHand.from_settlement(
        hand, table, settle(house_rule_set(4, 10, 1000), 0, {1: 50})
    )
    settle_hand(storage(pool), command, outbox=hand_settled)

    with pool.connection() as conn:
        (row,) = [r for r in db.unpublished_outbox(conn) if r.key == table]
    envelope = decode(row.payload, event_payloads())
    assert (envelope.event_id, envelope.stream_id, row.type) == (
        row.event_id,
        table,
        "rummy.ledger.v1.HandSettled",
    )
    assert has_payload(envelope, events_pb2.HandSettled)
    assert envelope.payload.journal_transaction_id == f"settlement:{hand}"
    assert envelope.payload.commission_hundredths == 50


def test_the_gauges_show_tokens_issued_reserved_and_commission_collected(
    pool: ConnectionPool,
) -> None:
    with pool.connection() as conn:
        before = db.gauges(conn)
    winner, loser = funded_player(pool, 3000), funded_player(pool, 2000)
    hand, table = new_id("hand"), new_id("table")
    reserve_stakes(
        storage(pool),
        ReserveStakes(hand, table, (SeatStake(0, winner, 1300), SeatStake(1, loser, 1300))),
    )
    with pool.connection() as conn:
        during = db.gauges(conn)
    settle_hand(
        storage(pool),
        SettleHand.from_settlement(hand, table, settle(house_rule_set(4, 10, 1250), 0, {1: 77})),
    )
    with pool.connection() as conn:
        after = db.gauges(conn)

    assert during.issued_hundredths - before.issued_hundredths == 5000
    assert during.reserved_hundredths - before.reserved_hundredths == 2600
    assert during.held_reservations - before.held_reservations == 2
    assert after.reserved_hundredths == before.reserved_hundredths
    # 770 x 12.5% = 96.25, rounded down
    assert after.commission_hundredths - before.commission_hundredths == 96
