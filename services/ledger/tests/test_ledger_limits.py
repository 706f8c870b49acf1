"""Responsible play through the ledger's reactions (docs/rules/responsible-play.md): a player's own
limits, set through ``Ledger.change_limits`` on the ledger's (test) clock, refuse reservations
at the deal (``StakeRejected``) and at a match's holds (``MatchMoneyRejected``), with the
period's net losses kept as settlements post; each test on the in-memory unit of work and on
PostgreSQL (``[memory]``, ``[postgresql]``)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from ledger_support import TestClock, Where, Wired, balance_of, funded_player, new_id, storage
from psycopg_pool import ConnectionPool

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.application.accounts import reserve_stakes
from rummy_ledger.application.limits import read_limits
from rummy_ledger.domain.accounts import ReserveStakes, SeatStake
from rummy_ledger.domain.limits import (
    DAY,
    AskToReturn,
    LimitRefused,
    SelfExclude,
    SetLossLimit,
    SetStakeLimit,
    StartBreak,
)
from rummy_platform.topics import LEDGER_EVENTS

NOON = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def started(hand_id: str, accounts: list[str], reservation: int) -> table_events.HandStarted:
    return table_events.HandStarted(
        hand_id=hand_id,
        hand_no=1,
        seats=[cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)],
        point_value_hundredths=10,
        reservation_hundredths=reservation,
    )


def ended(hand_id: str, accounts: list[str], loss: int) -> table_events.HandEnded:
    """Seat 0 wins ``loss`` from seat 1 (no commission)."""
    return table_events.HandEnded(
        hand_id=hand_id,
        winner_seat=0,
        settlement=[
            table_events.SettlementLine(seat=0, account_id=accounts[0], amount_hundredths=loss),
            table_events.SettlementLine(
                seat=1, account_id=accounts[1], points=loss // 10, amount_hundredths=-loss
            ),
        ],
        point_value_hundredths=10,
        commission_bps=0,
    )


def deal(wired: Wired, table_id: str, accounts: list[str], reservation: int = 1300) -> list[object]:
    """One HandStarted; the ledger's answers to it."""
    hand_id = new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, accounts, reservation))
    return [e.payload for e in wired.run() if e.correlation_id == hand_id]


def rejected_reasons(answers: list[object]) -> list[tuple[int, int]]:
    """(seat, reason) of each StakeRejected the table hears."""
    return [(a.seat, a.reason) for a in answers if isinstance(a, ledger_events.StakeRejected)]


def told(wired: Wired, account: str) -> list[int]:
    """The limit of each ReservationRefusedByLimit on the player's own key."""
    return [
        r.envelope.payload.reason
        for r in wired.log.read_stream(wired.prefix + LEDGER_EVENTS, account)
        if isinstance(r.envelope.payload, ledger_events.ReservationRefusedByLimit)
    ]


NOT_DEALT_IN = ledger_events.STAKE_REJECTION_REASON_NOT_DEALT_IN


def test_a_loss_limit_reached_mid_session_keeps_the_seat_out_of_the_next_hand(
    where: Where,
) -> None:
    wired = Wired(where, TestClock(NOON))
    a, b = funded_player(where, 50_000), funded_player(where, 50_000)
    wired.ledger.change_limits(storage(where), b, SetLossLimit(DAY, 2_000))
    table_id, hand_id = new_id("table"), new_id("hand")
    wired.table(table_id, hand_id, started(hand_id, [a, b], 1300))
    wired.table(table_id, hand_id, ended(hand_id, [a, b], 1000))
    wired.run()
    report = read_limits(storage(where), b, wired.clock())
    assert [(p.period, p.net_loss_hundredths) for p in report.losses] == [
        ("day", 1000),
        ("week", 1000),
        ("month", 1000),
    ]
    assert read_limits(storage(where), a, wired.clock()).losses[0].net_loss_hundredths == -1000

    answers = deal(wired, table_id, [a, b])  # 1000 lost + 1300 held would pass 2000
    assert rejected_reasons(answers) == [(1, NOT_DEALT_IN)]  # "not dealt in", nothing else
    [rejected] = [a for a in answers if isinstance(a, ledger_events.StakeRejected)]
    assert rejected.available_hundredths == 0
    assert told(wired, b) == [ledger_events.LIMIT_REASON_LOSS_LIMIT]  # to the player's key
    assert balance_of(where, b) == (49_000, 0, 49_000)
    assert wired.counted.count("limit loss_limit") == 1

    wired.clock.advance(timedelta(hours=12))  # the next calendar day (UTC): a new period
    assert rejected_reasons(deal(wired, new_id("table"), [a, b])) == []


def test_a_raise_takes_effect_only_24_hours_after_it_was_asked(where: Where) -> None:
    wired = Wired(where, TestClock(NOON))
    a, b = funded_player(where, 50_000), funded_player(where, 50_000)
    report = wired.ledger.change_limits(storage(where), b, SetStakeLimit(1_000))
    assert report.limits.stake_limit_hundredths == 1_000
    table_id = new_id("table")
    assert rejected_reasons(deal(wired, table_id, [a, b])) == [(1, NOT_DEALT_IN)]
    assert told(wired, b) == [ledger_events.LIMIT_REASON_STAKE_LIMIT]
    raised = wired.ledger.change_limits(storage(where), b, SetStakeLimit(2_000))
    [fact] = raised.facts
    assert fact.effective_at == NOON + timedelta(hours=24)
    wired.clock.advance(timedelta(hours=23, minutes=59))
    assert rejected_reasons(deal(wired, table_id, [a, b])) != []
    wired.clock.advance(timedelta(minutes=1))
    assert rejected_reasons(deal(wired, table_id, [a, b])) == []
    changes = [
        e.payload.change
        for e in (r.envelope for r in wired.log.read_stream(wired.prefix + LEDGER_EVENTS, b))
        if isinstance(e.payload, ledger_events.LimitChanged)
    ]
    assert changes == ["set", "raise_pending"]  # the limit facts, keyed by the account id


def test_a_break_refuses_a_match_entry_and_an_exclusion_never_ends_early(where: Where) -> None:
    wired = Wired(where, TestClock(NOON))
    accounts = [funded_player(where, 50_000) for _ in range(2)]
    wired.ledger.change_limits(storage(where), accounts[1], StartBreak(86_400))
    table_id, match_id = new_id("table"), new_id("match")
    options = match_pb2.MatchOptions(
        pool=match_pb2.PoolOptions(target=101, entry_fee_hundredths=0, rejoin=True)
    )
    wired.table(table_id, match_id, table_events.TableOpened(table_id=table_id, match=options))
    seats = [cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)]
    wired.table(
        table_id,
        match_id,
        match_pb2.MatchStarted(match_id=match_id, match_format="pool-101", seats=seats),
    )
    for seat in (0, 1):  # a free table's entry (0) is refused too: a break bars every table
        wired.table(
            table_id,
            match_id,
            match_pb2.MoneyReserved(seat=seat, amount_hundredths=0, purpose="entry"),
        )
    answers = [e.payload for e in wired.run()]
    [refused] = [a for a in answers if isinstance(a, ledger_events.MatchMoneyRejected)]
    assert (refused.seat, refused.reason) == (1, NOT_DEALT_IN)
    assert told(wired, accounts[1]) == [ledger_events.LIMIT_REASON_BREAK]

    wired.ledger.change_limits(storage(where), accounts[0], SelfExclude(6))
    with pytest.raises(LimitRefused):
        wired.ledger.change_limits(storage(where), accounts[0], AskToReturn())
    assert rejected_reasons(deal(wired, new_id("table"), accounts)) == [
        (0, NOT_DEALT_IN),
        (1, NOT_DEALT_IN),
    ]
    assert told(wired, accounts[0]) == [ledger_events.LIMIT_REASON_SELF_EXCLUSION]
    assert told(wired, accounts[1]) == [ledger_events.LIMIT_REASON_BREAK] * 2


@pytest.mark.integration
def test_three_tables_reserving_at_once_cannot_pass_a_daily_limit(pool: ConnectionPool) -> None:
    wired = Wired(pool, TestClock(NOON))
    player = funded_player(pool, 50_000)
    wired.ledger.change_limits(PostgresUnitOfWork(pool), player, SetLossLimit(DAY, 3_000))
    barrier = threading.Barrier(3)
    outcomes: list[bool] = []

    def table() -> None:
        hand_id = new_id("hand")
        command = ReserveStakes(hand_id, new_id("table"), (SeatStake(0, player, 1300),))
        barrier.wait()
        result = reserve_stakes(PostgresUnitOfWork(pool), command, at=NOON)
        outcomes.append(result.seats[0].reserved)

    threads = [threading.Thread(target=table) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == [False, True, True]  # 2 x 1300 <= 3000 < 3 x 1300
    assert balance_of(pool, player) == (50_000, 2_600, 47_400)
