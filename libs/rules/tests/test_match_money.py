"""Money by format (docs/rules/formats.md#money): hand-worked cases and
properties of the pure money functions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rummy_rules.formats.money import (
    MatchSettlement,
    add_nets,
    entry_reservations,
    game_nets,
    game_stake_hundredths,
    release_all,
    settle_game,
    settle_nets,
    settle_split,
    settle_winner,
)


def balanced(s: MatchSettlement) -> bool:
    return sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0


def test_the_winner_gets_the_pool_less_a_commission_rounded_down() -> None:
    # 3 seats x 1,001 cents entry = pool 3,003; 10% = 300.3 -> commission 300 (rounded down, the
    # 0.3 of a hundredth stays with the winner). Winner: 3,003 - 300 - its own 1,001 = +1,702.
    s = settle_winner({0: 1_001, 1: 1_001, 2: 1_001}, winner=1, commission_bps=1_000)
    assert s.pool_hundredths == 3_003 and s.commission_hundredths == 300
    assert [(ln.seat, ln.amount_hundredths) for ln in s.lines] == [
        (0, -1_001),
        (1, 1_702),
        (2, -1_001),
    ]
    assert balanced(s)


def test_a_rejoin_entry_is_in_the_pool_and_a_rejoiner_forfeits_both_entries() -> None:
    # Seat 2 rejoined (2 x 500 held); pool = 500 + 500 + 1,000 = 2,000; 5% = 100;
    # winner seat 0: 2,000 - 100 - 500 = +1,400; seat 2 pays its 1,000.
    s = settle_winner({0: 500, 1: 500, 2: 1_000}, winner=0, commission_bps=500)
    assert [ln.amount_hundredths for ln in s.lines] == [1_400, -500, -1_000]
    assert s.commission_hundredths == 100 and balanced(s)


def test_a_split_shares_the_pool_and_gives_the_remainder_one_each_from_the_lowest_total() -> None:
    # Pool 4 x 1,000 = 4,000; 12.5% = 500; 3,500 among the 3 left: 1,166 each, remainder 2, one
    # each from the lowest total: seats 2 and 3 both at 40 (seat 2, the earlier, first), then
    # seat 3; seat 1 (90) gets none. Lines: seat 1 1,166 - 1,000 = 166; seats 2 and 3
    # 1,167 - 1,000 = 167; seat 0 (eliminated) -1,000. 166 + 167 + 167 - 1,000 + 500 = 0.
    s = settle_split(
        {0: 1_000, 1: 1_000, 2: 1_000, 3: 1_000}, {1: 90, 2: 40, 3: 40}, commission_bps=1_250
    )
    assert s.commission_hundredths == 500
    assert [ln.amount_hundredths for ln in s.lines] == [-1_000, 166, 167, 167]
    assert s.winners == (1, 2, 3) and balanced(s)
    # One hundredth over: it goes to the lowest total, seat 3 at 10, not the earliest seat.
    # Pool 1,000 among 3: 333 each, remainder 1.
    one = settle_split({0: 333, 1: 333, 2: 334}, {0: 60, 1: 70, 2: 10}, commission_bps=0)
    assert [ln.amount_hundredths + ln.held_hundredths for ln in one.lines] == [333, 333, 334]


def test_an_aborted_match_releases_every_hold_and_moves_nothing() -> None:
    s = release_all({0: 700, 1: 1_400})
    assert [(ln.held_hundredths, ln.amount_hundredths) for ln in s.lines] == [(700, 0), (1_400, 0)]
    assert s.commission_hundredths == 0


def test_a_free_table_moves_nothing() -> None:
    assert entry_reservations([2, 0, 1], 0) == ((0, 0), (1, 0), (2, 0))
    s = settle_winner({0: 0, 1: 0}, winner=0, commission_bps=1_000)
    assert all(ln.amount_hundredths == 0 for ln in s.lines) and s.commission_hundredths == 0
    g = settle_game(
        {0: 120, 1: 30}, 0, max_game_points=100, point_value_hundredths=0, commission_bps=1_000
    )
    assert all(ln.amount_hundredths == 0 for ln in g.lines) and g.commission_hundredths == 0


def test_game_stakes_each_loser_pays_the_difference_capped() -> None:
    # Cap 100 x 25 cents = 2,500 held each. Winner 0 at 160; seat 1 at 90 pays min(70, 100) = 70
    # x 25 = 1,750; seat 2 at 20 pays min(140, 100) = 100 x 25 = 2,500; seat 3 forfeited (left)
    # pays the cap 2,500 although it was at 150. Paid 6,750; 3% = 202.5 -> 202; winner +6,548.
    assert game_stake_hundredths(100, 25) == 2_500
    s = settle_game(
        {0: 160, 1: 90, 2: 20, 3: 150},
        0,
        max_game_points=100,
        point_value_hundredths=25,
        commission_bps=300,
        forfeited={3},
    )
    assert [ln.amount_hundredths for ln in s.lines] == [6_548, -1_750, -2_500, -2_500]
    assert s.commission_hundredths == 202 and balanced(s)
    assert all(ln.held_hundredths == 2_500 for ln in s.lines)


def test_a_loser_level_with_or_above_the_winner_pays_nothing() -> None:
    # Rummy 500: totals can be negative; a seat at the winner's total pays 0 (never receives).
    s = settle_game(
        {0: 510, 1: 510, 2: -40},
        0,
        max_game_points=200,
        point_value_hundredths=1,
        commission_bps=0,
    )
    assert [ln.amount_hundredths for ln in s.lines] == [200, 0, -200]


def test_game_nets_cap_each_loser_and_the_winner_takes_their_sum() -> None:
    # Winner 300; seat 1 at 120 loses min(180, 100) = 100; seat 2 at 250 loses 50; seat 3
    # forfeited loses the cap 100: the winner +250.
    nets = game_nets({0: 300, 1: 120, 2: 250, 3: 299}, 0, max_game_points=100, forfeited={3})
    assert nets == {0: 250, 1: -100, 2: -50, 3: -100}


def test_hollywood_money_is_the_sum_of_the_columns_capped_nets_less_the_commission() -> None:
    # Columns: A +265, A +270, B +105 -> A +430, B -430. At 10 hundredths a point, B pays 4,300;
    # 7.5% = 322.5 -> 322 (rounded down); A receives 3,978. Each holds 3 x 300 x 10 = 9,000.
    nets = add_nets({0: 265, 1: -265}, {0: 270, 1: -270}, {0: -105, 1: 105})
    assert nets == {0: 430, 1: -430}
    s = settle_nets(nets, 0, held_hundredths=9_000, point_value_hundredths=10, commission_bps=750)
    assert (s.pool_hundredths, s.commission_hundredths, s.winners) == (4_300, 322, (0,))
    assert [(ln.seat, ln.held_hundredths, ln.amount_hundredths) for ln in s.lines] == [
        (0, 9_000, 3_978),
        (1, 9_000, -4_300),
    ]
    assert balanced(s)


@pytest.mark.parametrize(
    "call",
    [
        lambda: settle_nets(
            {0: 5, 1: -4}, 0, held_hundredths=10, point_value_hundredths=1, commission_bps=0
        ),
        lambda: settle_nets(
            {0: -5, 1: 5}, 0, held_hundredths=10, point_value_hundredths=1, commission_bps=0
        ),
        lambda: settle_nets(
            {0: 50, 1: -50}, 0, held_hundredths=10, point_value_hundredths=1, commission_bps=0
        ),
        lambda: settle_nets(
            {0: 0}, 1, held_hundredths=10, point_value_hundredths=1, commission_bps=0
        ),
        lambda: settle_winner({0: 10}, winner=1, commission_bps=0),
        lambda: settle_winner({0: -1, 1: 10}, winner=1, commission_bps=0),
        lambda: settle_winner({0: 10, 1: 10}, winner=1, commission_bps=10_001),
        lambda: settle_split({0: 10, 1: 10}, {0: 5}, commission_bps=0),
        lambda: settle_split({0: 10, 1: 10}, {0: 5, 2: 5}, commission_bps=0),
        lambda: settle_game(
            {0: 1, 1: 2},
            0,
            max_game_points=5,
            point_value_hundredths=1,
            commission_bps=0,
            forfeited={0},
        ),
        lambda: game_stake_hundredths(0, 5),
        lambda: entry_reservations([0], -1),
    ],
)
def test_money_refuses_impossible_inputs(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


holds = st.dictionaries(st.integers(0, 7), st.integers(0, 10**9), min_size=2, max_size=6)
bps = st.integers(0, 10_000)


@given(holds, bps, st.data())
def test_an_entry_settlement_sums_to_zero_and_no_loser_pays_beyond_its_entry(
    held: dict[int, int], commission_bps: int, data: st.DataObject
) -> None:
    winner = data.draw(st.sampled_from(sorted(held)))
    s = settle_winner(held, winner, commission_bps)
    assert balanced(s)
    assert all(-ln.amount_hundredths <= ln.held_hundredths for ln in s.lines)
    gross = [ln.amount_hundredths + ln.held_hundredths for ln in s.lines if ln.seat == winner]
    assert gross == [s.pool_hundredths - s.commission_hundredths]
    assert s.commission_hundredths * 10_000 <= s.pool_hundredths * commission_bps
    assert s == settle_winner(dict(reversed(list(held.items()))), winner, commission_bps)


@given(holds, bps, st.data())
def test_a_split_sums_to_zero_and_shares_differ_by_the_remainder_only(
    held: dict[int, int], commission_bps: int, data: st.DataObject
) -> None:
    left = data.draw(st.lists(st.sampled_from(sorted(held)), min_size=2, unique=True))
    totals = {seat: data.draw(st.integers(0, 200)) for seat in left}
    s = settle_split(held, totals, commission_bps)
    assert balanced(s)
    assert all(-ln.amount_hundredths <= ln.held_hundredths for ln in s.lines)
    takings = sorted(
        ln.amount_hundredths + ln.held_hundredths for ln in s.lines if ln.seat in totals
    )
    assert takings[-1] - takings[0] <= 1
    assert s == settle_split(held, totals, commission_bps)


@given(
    st.dictionaries(st.integers(0, 7), st.integers(-500, 2_000), min_size=2, max_size=8),
    st.integers(1, 1_000),
    st.integers(0, 10_000),
    bps,
    st.data(),
)
def test_a_game_settlement_sums_to_zero_and_no_loser_pays_beyond_the_cap(
    totals: dict[int, int], cap: int, value: int, commission_bps: int, data: st.DataObject
) -> None:
    winner = data.draw(st.sampled_from(sorted(totals)))
    others = sorted(set(totals) - {winner})
    forfeited = data.draw(st.sets(st.sampled_from(others)))
    s = settle_game(
        totals,
        winner,
        max_game_points=cap,
        point_value_hundredths=value,
        commission_bps=commission_bps,
        forfeited=forfeited,
    )
    assert balanced(s)
    assert all(0 <= -ln.amount_hundredths <= cap * value for ln in s.lines if ln.seat != winner)
    assert all(ln.held_hundredths == cap * value for ln in s.lines)
