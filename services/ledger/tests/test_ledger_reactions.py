"""The ledger's reactions to table-events, through the real reactor and relay, on a real
PostgreSQL with the in-memory event log: what is published, with which key, ids and versions.
(The same on real Kafka, the ledger a process: tests/integration/test_ledger_service.py.)
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.protobuf.message import Message
from ledger_support import balance_of, funded_player, new_id
from psycopg_pool import ConnectionPool

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.adapters import db, events
from rummy_ledger.domain import InvalidCommand
from rummy_ledger.handlers import Counters, Ledger, settle_command
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import InMemoryEventLog
from rummy_platform.outbox import OutboxRelay
from rummy_platform.reactor import PostgresReactor
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs

pytestmark = pytest.mark.integration

RULES, SHUFFLE = "indian13-points/1", "bb-shuffle-v1"


class Wired:
    """The ledger's reactor and relay over an in-memory log; the test plays the table."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.prefix = new_id("t") + "-"
        self.log = InMemoryEventLog()
        self.log.ensure_topics(event_topic_specs(partitions=1, prefix=self.prefix))
        self.counted: list[str] = []
        counters = Counters(
            reservation=self.counted.append,
            settlement=lambda c: self.counted.append(f"settled {c}"),
            refused=lambda t: self.counted.append(f"refused {t}"),
        )
        self.ledger = Ledger(topic=self.prefix + LEDGER_EVENTS, counters=counters)
        self.reactor: PostgresReactor = events.table_reactor(
            self.log,
            pool,
            self.ledger,
            topic=self.prefix + TABLE_EVENTS,
            group_id=self.prefix + "ledger",
        )
        self.relay: OutboxRelay = events.outbox_relay(self.log, pool)
        self.versions: dict[str, int] = {}

    def table(self, table_id: str, hand_id: str, payload: Message) -> Envelope:
        self.versions[table_id] = self.versions.get(table_id, 0) + 1
        envelope = Envelope.new(
            payload,
            stream_id=table_id,
            stream_version=self.versions[table_id],
            occurred_at=datetime.now(UTC),
            correlation_id=hand_id,
            rules_version=RULES,
            shuffle_version=SHUFFLE,
        )
        self.log.append(self.prefix + TABLE_EVENTS, envelope)
        return envelope

    def run(self) -> list[Envelope]:
        """Consume everything appended, publish the outbox; the ledger-events published."""
        while self.reactor.run_once(0.05):
            pass
        while self.relay.publish_pending():
            pass
        return [
            r.envelope
            for table in self.versions
            for r in self.log.read_stream(self.prefix + LEDGER_EVENTS, table)
        ]


def started(hand_id: str, accounts: list[str], reservation: int) -> table_events.HandStarted:
    return table_events.HandStarted(
        hand_id=hand_id,
        hand_no=1,
        seats=[cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)],
        point_value_hundredths=reservation // 130,
        reservation_hundredths=reservation,
    )


def ended(
    hand_id: str,
    accounts: list[str],
    points: list[int],
    pv: int,
    bps: int,
    lines: list[int] | None = None,
    commission: int = 0,
) -> table_events.HandEnded:
    """Won by seat 0; ``lines`` (amounts by seat) and ``commission`` as the table would carry
    them (none: a HandEnded with points only)."""
    return table_events.HandEnded(
        hand_id=hand_id,
        winner_seat=0,
        settlement=[
            table_events.SettlementLine(seat=s, account_id=a, points=p, amount_hundredths=m)
            for s, (a, p, m) in enumerate(zip(accounts, points, lines or [], strict=False))
        ],
        results=[
            table_events.SeatResult(seat=s, account_id=a, points=p)
            for s, (a, p) in enumerate(zip(accounts, points, strict=True))
        ],
        point_value_hundredths=pv,
        commission_bps=bps,
        commission_hundredths=commission,
    )


def test_a_hand_reserved_then_settled_publishes_stakes_reserved_and_hand_settled_keyed_by_table(
    pool: ConnectionPool,
) -> None:
    wired = Wired(pool)
    a, b = funded_player(pool, 5000), funded_player(pool, 5000)
    table_id, hand_id = new_id("table"), new_id("hand")
    start = wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))  # pv 10, 130 points
    [reserved] = wired.run()
    assert isinstance(reserved.payload, ledger_events.StakesReserved)
    assert [(r.seat, r.account_id, r.amount_hundredths) for r in reserved.payload.reservations] == [
        (0, a, 1300),
        (1, b, 1300),
    ]
    assert (reserved.stream_id, reserved.stream_version) == (table_id, 1)
    assert (reserved.correlation_id, reserved.causation_id) == (hand_id, start.event_id)
    assert (reserved.rules_version, reserved.shuffle_version) == (RULES, SHUFFLE)

    # Seat 1 loses 37 points at 10 a point: 370; commission 10% = 37; the winner gets 333.
    end = wired.table(table_id, hand_id, ended(hand_id, [a, b], [0, 37], 10, 1000, [333, -370], 37))
    wired.log.append(wired.prefix + TABLE_EVENTS, end)  # the same event again: redelivered
    published = wired.run()
    assert [type(e.payload).__name__ for e in published] == ["StakesReserved", "HandSettled"]
    settled = published[1]
    assert (settled.stream_id, settled.stream_version, settled.causation_id) == (
        table_id,
        2,
        end.event_id,
    )
    assert settled.payload.commission_hundredths == 37
    assert {(ln.account_id, ln.amount_hundredths) for ln in settled.payload.lines} >= {
        (b, -370),
        (a, 370),
        (a, -37),
    }
    assert balance_of(pool, a) == (5333, 0, 5333)
    assert balance_of(pool, b) == (4630, 0, 4630)
    assert wired.counted == ["reserved", "reserved", "settled 37"]


def test_a_settlement_that_is_not_what_the_rules_give_is_refused_and_moves_nothing(
    pool: ConnectionPool,
) -> None:
    wired = Wired(pool)
    a, b = funded_player(pool, 5000), funded_player(pool, 5000)
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    wired.run()
    # 37 points at 10 is 370, not 400: the lines sum to zero but disagree with the points.
    bad = ended(hand_id, [a, b], [0, 37], 10, 0, [400, -400])
    wired.table(table_id, hand_id, bad)
    published = wired.run()

    assert [type(e.payload).__name__ for e in published] == ["StakesReserved"]
    assert balance_of(pool, b) == (5000, 1300, 3700)  # still reserved, nothing posted
    assert wired.counted[-1] == "refused rummy.table.v1.HandEnded"
    with pool.connection() as conn:  # consumed all the same: it cannot succeed on a retry
        assert db.next_offsets(conn, wired.prefix + "ledger") == {
            (wired.prefix + TABLE_EVENTS, 0): 2
        }


def test_a_hand_ended_with_points_only_is_settled_as_the_rules_compute_it() -> None:
    command = settle_command("t1", ended("h1", ["a", "b", "c"], [0, 40, 80], 25, 1250))
    # Losers pay 1000 and 2000: 3000; commission floor(3000 x 12.5%) = 375; winner 2625.
    assert [(s.seat, s.points, s.amount_hundredths) for s in command.seats] == [
        (0, 0, 2625),
        (1, 40, -1000),
        (2, 80, -2000),
    ]
    assert command.commission_hundredths == 375
    with pytest.raises(InvalidCommand, match="commission"):
        wrong = ended("h1", ["a", "b"], [0, 40], 25, 1250, [875, -1000])  # commission 125 left out
        settle_command("t1", wrong)


def test_an_aborted_hand_releases_its_reservations_and_says_so(pool: ConnectionPool) -> None:
    wired = Wired(pool)
    a, b = funded_player(pool, 2000), funded_player(pool, 500)
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    first = wired.run()
    assert [type(e.payload).__name__ for e in first] == ["StakeRejected", "StakesReserved"]
    rejected = first[0].payload
    assert (rejected.seat, rejected.available_hundredths, rejected.required_hundredths) == (
        1,
        500,
        1300,
    )
    assert rejected.reason == ledger_events.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE
    assert balance_of(pool, a) == (2000, 1300, 700)

    wired.table(table_id, hand_id, table_events.HandAborted(hand_id=hand_id, reason="one seat"))
    published = wired.run()
    assert type(published[-1].payload).__name__ == "ReservationsReleased"
    assert published[-1].stream_version == 3
    assert balance_of(pool, a) == (2000, 0, 2000)


def test_a_settlement_line_naming_another_account_than_the_reserved_seat_is_refused(
    pool: ConnectionPool,
) -> None:
    wired = Wired(pool)
    a, b, stranger = (funded_player(pool, 5000) for _ in range(3))
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    wired.run()
    wired.table(table_id, hand_id, ended(hand_id, [a, stranger], [0, 37], 10, 0, [370, -370]))
    published = wired.run()

    assert [type(e.payload).__name__ for e in published] == ["StakesReserved"]
    assert balance_of(pool, stranger) == (5000, 0, 5000)
    assert balance_of(pool, b) == (5000, 1300, 3700)
    assert wired.counted[-1] == "refused rummy.table.v1.HandEnded"
