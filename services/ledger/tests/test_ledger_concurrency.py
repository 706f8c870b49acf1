"""Two writers on the same account at once, on two connections in two threads, never overdraw."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from ledger_support import balance_of, funded_player, house_rule_set, new_id, storage
from psycopg_pool import ConnectionPool

from rummy_ledger import contract as ledger_contract
from rummy_ledger.application.accounts import reserve_stakes, settle_hand
from rummy_ledger.domain.accounts import ReserveStakes, SeatStake, SettleHand
from rummy_rules.settlement import settle

pytestmark = pytest.mark.integration


def _at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together; return their results (or exceptions)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except Exception as exc:  # noqa: BLE001 - reported to the test
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return results


def test_two_tables_reserving_the_same_balance_at_once_hold_it_only_once(
    pool: ConnectionPool,
) -> None:
    for _ in range(5):
        player = funded_player(pool, 5000)
        commands = [
            ReserveStakes(
                new_id("hand"),
                new_id("table"),
                (SeatStake(0, player, 3250), SeatStake(1, new_id("player"), 0)),
            )
            for _ in range(2)
        ]
        results = _at_once(*(lambda c=c: reserve_stakes(storage(pool), c) for c in commands))

        outcomes = sorted(r.seats[0].reserved for r in results)
        assert outcomes == [False, True]
        assert balance_of(pool, player) == (5000, 3250, 1750)


def test_a_settlement_and_a_reservation_on_the_same_account_at_once_never_overdraw(
    pool: ConnectionPool,
) -> None:
    for _ in range(5):
        winner, loser = funded_player(pool, 3000), funded_player(pool, 3000)
        hand, table = new_id("hand"), new_id("table")
        reserve_stakes(
            storage(pool),
            ReserveStakes(hand, table, (SeatStake(0, winner, 2000), SeatStake(1, loser, 2000))),
        )
        settlement = settle(house_rule_set(4, 20, 1000), winner_seat=0, points_by_seat={1: 100})
        other_hand = ReserveStakes(
            new_id("hand"), new_id("table"), (SeatStake(0, loser, 1000), SeatStake(1, winner, 0))
        )
        settle_command = SettleHand.from_settlement(hand, table, settlement)
        settled, reserved = _at_once(
            partial(settle_hand, storage(pool), settle_command),
            partial(reserve_stakes, storage(pool), other_hand),
        )

        assert not isinstance(settled, Exception) and not isinstance(reserved, Exception)
        balance, held, available = balance_of(pool, loser)
        assert balance == 1000 and available >= 0
        # Before the settlement 1000 is available; after it, 1000 (3000 - 2000 cost): either way
        # the second table's 1000 fits, and exactly once.
        assert reserved.seats[0].reserved and (held, available) == (1000, 0)
        with pool.connection() as conn:
            assert ledger_contract.invariant_violations(conn) == []


def test_the_same_settlement_from_two_consumers_at_once_posts_once(pool: ConnectionPool) -> None:
    winner, loser = funded_player(pool, 3000), funded_player(pool, 3000)
    hand, table = new_id("hand"), new_id("table")
    reserve_stakes(
        storage(pool),
        ReserveStakes(hand, table, (SeatStake(0, winner, 1300), SeatStake(1, loser, 1300))),
    )
    command = SettleHand.from_settlement(
        hand, table, settle(house_rule_set(4, 10, 1000), winner_seat=0, points_by_seat={1: 130})
    )
    first, second = _at_once(
        lambda: settle_hand(storage(pool), command), lambda: settle_hand(storage(pool), command)
    )

    assert first == second and sorted([first.replayed, second.replayed]) == [False, True]
    assert balance_of(pool, loser) == (1700, 0, 1700)
    assert balance_of(pool, winner) == (4170, 0, 4170)  # +1300 less 130 commission
