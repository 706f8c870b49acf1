"""The ledger's reactions to table-events and what they publish, with which key, ids and versions,
each test twice: ``[memory]`` calls the reactions on the in-memory unit of work (each record in
one transaction, the outbox read back and published to the in-memory event log; a redelivered
event reaches the ledger again and its idempotency keys drop it), ``[postgresql]`` runs the
real reactor and relay on a real PostgreSQL (offsets and event ids in the effects' transaction).
(The same on real Kafka, the ledger a process: tests/integration/test_ledger_service.py.)
"""

from __future__ import annotations

import pytest
from ledger_support import RULES, SHUFFLE, Where, Wired, balance_of, funded_player, new_id, storage

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import has_payload
from rummy_platform.topics import TABLE_EVENTS


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
    where: Where,
) -> None:
    wired = Wired(where)
    a, b = funded_player(where, 5000), funded_player(where, 5000)
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
    assert has_payload(settled, ledger_events.HandSettled)
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
    assert balance_of(where, a) == (5333, 0, 5333)
    assert balance_of(where, b) == (4630, 0, 4630)
    assert wired.counted == ["reserved", "reserved", "settled 37"]


def test_the_ledger_posts_the_settlement_the_table_computed_without_recomputing_it(
    where: Where,
) -> None:
    # Repro 1 of issue 12 as the ledger saw it: a table reserved and settled a 150-point first
    # drop; the ledger recomputed the hand under its own fixed rule set (130 at most), refused,
    # and both reservations stayed held. It now checks the invariants and posts the lines given.
    wired = Wired(where)
    a, b = funded_player(where, 5000), funded_player(where, 5000)
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1500))  # 150 points at 10
    wired.run()
    wired.table(table_id, hand_id, ended(hand_id, [a, b], [0, 150], 10, 0, [1500, -1500]))
    published = wired.run()

    assert [type(e.payload).__name__ for e in published] == ["StakesReserved", "HandSettled"]
    assert balance_of(where, a) == (6500, 0, 6500)
    assert balance_of(where, b) == (3500, 0, 3500)


@pytest.mark.parametrize(
    ("points", "lines", "commission", "bps", "reason"),
    [
        ([0, 140], [1400, -1400], 0, 0, "seat 1 would pay 1400 hundredths, more than the 1300"),
        ([0, 37], [380, -370], 0, 0, "does not sum to zero"),
        ([0, 37], [330, -370], 40, 1000, "outside the table's rate of 1000 bps on 370 (0..37)"),
        ([0, 37], [], 0, 0, "HandEnded carries no settlement lines"),
    ],
)
def test_a_settlement_failing_an_invariant_is_recorded_as_refused_and_its_holds_released(
    where: Where,
    points: list[int],
    lines: list[int],
    commission: int,
    bps: int,
    reason: str,
) -> None:
    wired = Wired(where)
    a, b = funded_player(where, 5000), funded_player(where, 5000)
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    wired.run()
    end = wired.table(table_id, hand_id, ended(hand_id, [a, b], points, 10, bps, lines, commission))
    wired.log.append(wired.prefix + TABLE_EVENTS, end)  # redelivered: recorded once
    published = wired.run()

    assert [type(e.payload).__name__ for e in published] == ["StakesReserved", "SettlementRefused"]
    refused = published[1]
    assert has_payload(refused, ledger_events.SettlementRefused)
    assert (refused.correlation_id, refused.causation_id) == (hand_id, end.event_id)
    assert reason in refused.payload.reason
    assert [(r.seat, r.account_id, r.amount_hundredths) for r in refused.payload.released] == [
        (0, a, 1300),
        (1, b, 1300),
    ]
    # its holds released, nothing else moved
    assert balance_of(where, a) == balance_of(where, b) == (5000, 0, 5000)
    assert wired.counted[-1] == "settlement refused"
    assert wired.counted.count("settlement refused") == 1
    if wired.pool is not None:  # the reactor stored the offset after the three records
        assert wired.next_offsets() == {(wired.prefix + TABLE_EVENTS, 0): 3}
    assert storage(where).invariant_violations() == []

    # the same hand ended again under another event id: the first refusal stands, no new event
    wired.table(table_id, hand_id, ended(hand_id, [a, b], [0, 37], 10, 0, [370, -370]))
    assert [type(e.payload).__name__ for e in wired.run()] == [
        "StakesReserved",
        "SettlementRefused",
    ]
    assert balance_of(where, b) == (5000, 0, 5000)


def test_an_aborted_hand_releases_its_reservations_and_says_so(where: Where) -> None:
    wired = Wired(where)
    a, b = funded_player(where, 2000), funded_player(where, 500)
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    first = wired.run()
    assert [type(e.payload).__name__ for e in first] == ["StakeRejected", "StakesReserved"]
    rejected = first[0].payload
    assert isinstance(rejected, ledger_events.StakeRejected)
    assert (rejected.seat, rejected.available_hundredths, rejected.required_hundredths) == (
        1,
        500,
        1300,
    )
    assert rejected.reason == ledger_events.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE
    assert balance_of(where, a) == (2000, 1300, 700)

    wired.table(table_id, hand_id, table_events.HandAborted(hand_id=hand_id, reason="one seat"))
    published = wired.run()
    assert type(published[-1].payload).__name__ == "ReservationsReleased"
    assert published[-1].stream_version == 3
    assert balance_of(where, a) == (2000, 0, 2000)


def test_a_settlement_line_naming_another_account_than_the_reserved_seat_is_refused(
    where: Where,
) -> None:
    wired = Wired(where)
    a, b, stranger = (funded_player(where, 5000) for _ in range(3))
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    wired.run()
    wired.table(table_id, hand_id, ended(hand_id, [a, stranger], [0, 37], 10, 0, [370, -370]))
    published = wired.run()

    assert [type(e.payload).__name__ for e in published] == ["StakesReserved", "SettlementRefused"]
    refused = published[1].payload
    assert isinstance(refused, ledger_events.SettlementRefused)
    assert "its reservation is held for" in refused.reason
    assert balance_of(where, stranger) == (5000, 0, 5000)
    assert balance_of(where, b) == (5000, 0, 5000)
    assert wired.counted[-1] == "settlement refused"


def shared(
    hand_id: str,
    accounts: list[str],
    co_winners: list[int],
    points: list[int],
    lines: list[int],
    commission: int = 37,
) -> table_events.HandEnded:
    """A HandEnded whose pot seat 0 and ``co_winners`` share, at 10 a point and 10%."""
    end = ended(hand_id, accounts, points, 10, 1000, lines, commission)
    end.co_winner_seats.extend(co_winners)
    return end


def _three_reserved(where: Where) -> tuple[Wired, str, str, list[str]]:
    """A hand of three funded players (5000 each), each reserved 1300: the ledger wired, the
    table and hand ids and the accounts by seat."""
    wired = Wired(where)
    accounts = [funded_player(where, 5000) for _ in range(3)]
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, accounts, 1300))
    wired.run()
    return wired, table_id, hand_id, accounts


def test_a_hand_ended_with_two_winners_pays_each_its_share_once_and_says_so(
    where: Where,
) -> None:
    wired, table_id, hand_id, (a, b, c) = _three_reserved(where)
    # seat 2 pays 37 x 10 = 370; commission 37; 333 shared: 167 to seat 0, 166 to seat 1
    end = wired.table(
        table_id, hand_id, shared(hand_id, [a, b, c], [1], [0, 0, 37], [167, 166, -370])
    )
    wired.log.append(wired.prefix + TABLE_EVENTS, end)  # redelivered
    published = wired.run()
    assert [type(e.payload).__name__ for e in published] == ["StakesReserved", "HandSettled"]
    settled = published[1].payload
    assert isinstance(settled, ledger_events.HandSettled)
    assert settled.commission_hundredths == 37
    assert sorted((ln.account_id, ln.amount_hundredths, ln.memo) for ln in settled.lines) == sorted(
        [
            (a, 167, "win seat 0"),
            (b, 166, "win seat 1"),
            (c, -370, "loss seat 2, 37 points"),
            ("house:commission", 37, "commission"),
        ]
    )
    assert balance_of(where, a) == (5167, 0, 5167)
    assert balance_of(where, b) == (5166, 0, 5166)
    assert balance_of(where, c) == (4630, 0, 4630)
    assert wired.counted[-1] == "settled 37" and wired.counted.count("settled 37") == 1


@pytest.mark.parametrize(
    ("co_winners", "points", "lines", "commission", "reason"),
    [
        ([1], [0, 4, 37], [167, 166, -370], 37, "winner seat 1 is charged 4 points"),
        ([1], [0, 0, 37], [168, 166, -370], 37, "does not sum to zero"),
        ([1], [0, 0, 37], [160, 160, -370], 50, "outside the table's rate"),
        ([3], [0, 0, 37], [167, 166, -370], 37, "a settlement needs the winner"),
        ([1, 2], [0, 0, 0], [0, 0, 0], 0, "a settlement needs the winner"),
    ],
)
def test_a_shared_pot_failing_an_invariant_is_recorded_as_refused_and_its_holds_released(
    where: Where,
    co_winners: list[int],
    points: list[int],
    lines: list[int],
    commission: int,
    reason: str,
) -> None:
    wired, table_id, hand_id, (a, b, c) = _three_reserved(where)
    wired.table(
        table_id, hand_id, shared(hand_id, [a, b, c], co_winners, points, lines, commission)
    )
    published = wired.run()
    assert [type(e.payload).__name__ for e in published] == ["StakesReserved", "SettlementRefused"]
    refused = published[1].payload
    assert isinstance(refused, ledger_events.SettlementRefused)
    assert reason in refused.reason
    assert len(refused.released) == 3
    assert balance_of(where, a) == balance_of(where, b) == balance_of(where, c) == (5000, 0, 5000)
    assert wired.counted[-1] == "settlement refused"
    assert storage(where).invariant_violations() == []
