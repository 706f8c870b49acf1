"""Money at the end of a hand (docs/rules/money.md#settlement, docs/rules/money.md#commission,
docs/rules/money.md#shared-pot)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rummy_rules.indian.rules import bombay_baazi
from rummy_rules.rules import RuleSet
from rummy_rules.settlement import commission_for, reservation_hundredths, settle, settle_shared


def test_a_loser_pays_points_times_point_value_and_the_winner_takes_the_rest_less_commission() -> (
    None
):
    rs = bombay_baazi(6, point_value_hundredths=200, commission_bps=1000)  # 2 HT a point, 10 %
    s = settle(rs, winner_seat=3, points_by_seat={0: 20, 2: 57, 5: 80})
    assert s.amount_for(0) == -4000  # a 20-point loss at 2 HT is 40 HT
    assert s.amount_for(2) == -11400
    assert s.amount_for(5) == -16000
    assert s.total_hundredths == 31400
    assert s.commission_hundredths == 3140
    assert s.amount_for(3) == 31400 - 3140
    assert [line.seat for line in s.lines] == [0, 2, 3, 5]


def test_commission_is_rounded_down_in_the_players_favour() -> None:
    rs = bombay_baazi(4, point_value_hundredths=1, commission_bps=1500)
    s = settle(rs, 0, {1: 7, 2: 2})  # total 9 cents, 15 % = 1.35 -> 1
    assert s.commission_hundredths == 1
    assert s.amount_for(0) == 8
    assert commission_for(9999, 1) == 0


def test_a_free_table_settles_to_all_zeros() -> None:
    s = settle(bombay_baazi(4, 0, 1000), 1, {0: 130, 2: 40, 3: 20})
    assert all(line.amount_hundredths == 0 for line in s.lines) and s.commission_hundredths == 0
    assert [line.points for line in s.lines] == [130, 0, 40, 20]


def test_the_reservation_is_the_most_a_hand_can_cost() -> None:
    assert reservation_hundredths(bombay_baazi(6, 250, 0)) == 130 * 250
    assert reservation_hundredths(bombay_baazi(6, 250, 0, points_cap=80)) == 80 * 250
    assert reservation_hundredths(bombay_baazi(6, 0, 0)) == 0


def test_points_above_the_maximum_are_refused() -> None:
    rs = bombay_baazi(4, 100, 0, points_cap=80)
    with pytest.raises(ValueError, match="more than the most a hand can cost"):
        settle(rs, 0, {1: 81})


def test_the_winner_cannot_be_charged_and_a_loser_is_needed() -> None:
    rs = bombay_baazi(4, 100, 0)
    with pytest.raises(ValueError, match="winner"):
        settle(rs, 0, {0: 5, 1: 10})
    with pytest.raises(ValueError, match="at least one loser"):
        settle(rs, 0, {})
    with pytest.raises(ValueError, match="negative"):
        settle(rs, 0, {1: -1})


hands = st.builds(
    lambda seats, pv, bps, cap, data: (seats, pv, bps, cap, data),
    st.sampled_from([4, 6, 8]),
    st.integers(0, 100_000),
    st.integers(0, 10_000),
    st.sampled_from([None, 80]),
    st.data(),
)


@given(hands)
def test_settlement_properties(hand: tuple[int, int, int, int | None, st.DataObject]) -> None:
    seats, pv, bps, cap, data = hand
    rs = bombay_baazi(seats, pv, bps, points_cap=cap)
    n = data.draw(st.integers(2, seats))
    winner = data.draw(st.integers(0, n - 1))
    points = {s: data.draw(st.integers(0, rs.max_loss_points)) for s in range(n) if s != winner}
    s = settle(rs, winner, points)
    # every settlement sums to zero (losers, winner and the house line)
    assert sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0
    # no loser pays more than the reservation
    assert all(-s.amount_for(seat) <= reservation_hundredths(rs) for seat in points)
    assert all(s.amount_for(seat) == -p * pv for seat, p in points.items())
    # the commission never exceeds the stated rate, and is short of it by less than one cent
    assert 0 <= s.commission_hundredths * 10_000 <= s.total_hundredths * bps
    assert s.total_hundredths * bps - s.commission_hundredths * 10_000 < 10_000
    # the winner's net is never negative
    assert s.amount_for(winner) >= 0


def test_three_winners_share_the_pot_less_one_commission_the_remainder_going_first_in_order() -> (
    None
):
    rs = bombay_baazi(4, 10, 500)
    # seat 1 pays 33 x 10 = 330; the commission is floor(330 x 5%) = 16; 314 shared by three is
    # 104 each and 2 hundredths over: one each to seats 2 and 0, the first two listed
    s = settle_shared(rs, (2, 0, 3), {1: 33})
    assert [(line.seat, line.points, line.amount_hundredths) for line in s.lines] == [
        (0, 0, 105),
        (1, 33, -330),
        (2, 0, 105),
        (3, 0, 104),
    ]
    assert s.commission_hundredths == 16 and s.total_hundredths == 330
    assert s.winner_seat == 2 and s.co_winner_seats == (0, 3) and s.winner_seats == (0, 2, 3)


def test_the_remainder_follows_the_order_the_variant_lists_its_winners_in() -> None:
    rs = bombay_baazi(4, 10, 1000)
    # 250 paid, 25 commission, 225 for two: 113 to the first listed, 112 to the other
    first = settle_shared(rs, (1, 0), {2: 25})
    assert (first.amount_for(1), first.amount_for(0)) == (113, 112)
    second = settle_shared(rs, (0, 1), {2: 25})
    assert (second.amount_for(0), second.amount_for(1)) == (113, 112)


def test_a_shared_pot_refuses_a_winner_listed_twice_or_charged_and_needs_a_loser() -> None:
    rs = bombay_baazi(4, 10, 0)
    with pytest.raises(ValueError, match="distinct winners"):
        settle_shared(rs, (0, 0), {1: 5})
    with pytest.raises(ValueError, match="distinct winners"):
        settle_shared(rs, (), {1: 5})
    with pytest.raises(ValueError, match="cannot be charged"):
        settle_shared(rs, (0, 1), {1: 5, 2: 5})
    with pytest.raises(ValueError, match="at least one loser"):
        settle_shared(rs, (0, 1), {0: 0, 1: 0})
    with pytest.raises(ValueError, match="reservation would not cover"):
        settle_shared(rs, (0, 1), {2: rs.max_loss_points + 1})


@st.composite
def shared_pots(draw: st.DrawFn) -> tuple[RuleSet, tuple[int, ...], dict[int, int]]:
    seats = draw(st.sampled_from([4, 6, 8]))
    rs = bombay_baazi(
        seats,
        draw(st.integers(0, 100_000)),
        draw(st.integers(0, 10_000)),
        points_cap=draw(st.sampled_from([None, 80])),
    )
    dealt = draw(st.lists(st.integers(0, seats - 1), min_size=2, max_size=seats, unique=True))
    winners = tuple(draw(st.permutations(dealt))[: draw(st.integers(1, len(dealt) - 1))])
    points = {
        s: draw(st.integers(0, rs.max_loss_points)) for s in sorted(dealt) if s not in winners
    }
    return rs, winners, points


@given(shared_pots())
def test_shared_pot_properties(pot: tuple[RuleSet, tuple[int, ...], dict[int, int]]) -> None:
    rs, winners, points = pot
    s = settle_shared(rs, winners, points)
    pv = rs.point_value_hundredths
    # it sums to zero with the commission line
    assert sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0
    # no loser pays beyond its reservation, and each pays exactly its points' cost
    assert all(0 <= -s.amount_for(seat) <= reservation_hundredths(rs) for seat in points)
    assert all(s.amount_for(seat) == -p * pv for seat, p in points.items())
    # one commission on the losers' total, rounded down, whatever the number of winners
    total = sum(p * pv for p in points.values())
    assert s.total_hundredths == total and s.commission_hundredths == commission_for(
        total, rs.commission_bps
    )
    # equal shares; the remainder hundredths go to the first winners in the order listed
    takings = [s.amount_for(seat) for seat in winners]
    share, remainder = divmod(total - s.commission_hundredths, len(winners))
    assert takings == [share + 1] * remainder + [share] * (len(winners) - remainder)
    assert (s.winner_seat, *s.co_winner_seats) == winners
    assert [line.seat for line in s.lines] == sorted([*winners, *points])
    # deterministic: the same hand settles the same, however the points are ordered
    assert settle_shared(rs, winners, dict(reversed(list(points.items())))) == s
    # the one-winner case is the one-winner settlement, unchanged
    if len(winners) == 1:
        assert s == settle(rs, winners[0], points)
        assert s.amount_for(winners[0]) == total - commission_for(total, rs.commission_bps)
        assert s.co_winner_seats == ()
