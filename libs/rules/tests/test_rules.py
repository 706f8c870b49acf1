"""The rule set as data: Bombay Baazi numbers, validation, and the most a hand can cost."""

import dataclasses
import re
from typing import Any

import pytest

from rummy_rules.gin.rules import gin_rule_set
from rummy_rules.indian.rules import PENALTY_OPTIONS, IndianPointsRules, bombay_baazi
from rummy_rules.melds import MeldOptions
from rummy_rules.rules import INT64_MAX, RuleSet, RuleSetError, validate_table_options


def test_bombay_baazi_carries_the_table_rules() -> None:
    rs = bombay_baazi(6, point_value_hundredths=250, commission_bps=1000)
    assert (rs.name, rs.version, rs.seats, rs.hand_size, rs.min_players) == (
        "bombay-baazi",
        1,
        6,
        13,
        2,
    )
    assert (rs.point_value_hundredths, rs.commission_bps, rs.max_missed_turns) == (250, 1000, 3)
    ind = rs.options
    assert isinstance(ind, IndianPointsRules)
    assert (ind.first_drop_points, ind.middle_drop_points, ind.wrong_declare_points) == (20, 40, 80)
    assert ind.leave_points == 40
    assert ind.points_cap is None
    assert ind.no_discard_of_card_taken_from_pile is True
    assert ind.meld_options == MeldOptions(
        jokers_only_group_is_sequence=True, strict_duplicate_faces=True
    )


def test_an_uncapped_loser_can_be_charged_every_card_at_ten_points() -> None:
    assert bombay_baazi(4, 100, 0).max_loss_points == 130


def test_the_80_cap_option_caps_the_counted_cards_and_the_maximum() -> None:
    rs = bombay_baazi(4, 100, 0, points_cap=80)
    assert isinstance(rs.options, IndianPointsRules)
    assert rs.options.capped(113) == 80
    assert rs.options.capped(57) == 57
    assert rs.max_loss_points == 80


def test_the_maximum_follows_the_hand_size_not_a_constant() -> None:
    rs = bombay_baazi(8, 100, 0)
    ten_cards = dataclasses.replace(rs, hand_size=10)
    assert ten_cards.max_loss_points == 100
    # a wrong declare (80) above what 7 cards can count (70) would exceed the reservation
    with pytest.raises(RuleSetError, match=r"wrong_declare_points must be 0\.\.70"):
        dataclasses.replace(rs, hand_size=7)


def test_rule_sets_are_immutable_values() -> None:
    rs = bombay_baazi(6, 100, 500)
    assert rs == bombay_baazi(6, 100, 500) and hash(rs) == hash(bombay_baazi(6, 100, 500))
    with pytest.raises(dataclasses.FrozenInstanceError):
        rs.point_value_hundredths = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seats": 5}, "seats must be one of 4/6/8, got 5"),
        ({"seats": 2}, "seats must be one of 4/6/8"),
        (
            {"point_value_hundredths": -1},
            f"point_value_hundredths must be 0..{INT64_MAX // (5 * 130)} ",
        ),
        (
            {"point_value_hundredths": 2**62},
            f"point_value_hundredths must be 0..{INT64_MAX // (5 * 130)} ",
        ),
        ({"commission_bps": -1}, "commission_bps must be 0..10000"),
        ({"commission_bps": 10001}, "commission_bps must be 0..10000"),
        ({"points_cap": 0}, "points_cap must be None or >= 1"),
        ({"points_cap": 131}, "points_cap must be 1..130"),
        ({"turn_seconds": 0}, "turn_seconds must be 1..3600"),
        ({"turn_seconds": 3601}, "turn_seconds must be 1..3600"),
        ({"seed_window_seconds": 0}, "seed_window_seconds must be 1..600"),
        ({"seed_window_seconds": 601}, "seed_window_seconds must be 1..600"),
        ({"max_missed_turns": 0}, "max_missed_turns must be 1..10"),
        ({"max_missed_turns": 11}, "max_missed_turns must be 1..10"),
    ],
)
def test_out_of_range_rule_sets_are_refused_with_a_clear_message(
    kwargs: dict[str, Any], message: str
) -> None:
    args = {"seats": 6, "point_value_hundredths": 100, "commission_bps": 500} | kwargs
    with pytest.raises(RuleSetError, match=re.escape(message)):
        bombay_baazi(**args)


def test_a_shoe_too_small_for_the_deal_is_refused() -> None:
    rs = bombay_baazi(8, 100, 0)
    with pytest.raises(ValueError, match="cannot deal 20 cards to 8 seats"):
        dataclasses.replace(rs, hand_size=20)


def test_min_players_is_at_least_two_and_at_most_the_seats() -> None:
    rs = bombay_baazi(4, 100, 0)
    with pytest.raises(RuleSetError, match="min_players must be >= 2"):
        dataclasses.replace(rs, min_players=1)
    with pytest.raises(RuleSetError, match="cannot exceed the seats"):
        dataclasses.replace(rs, min_players=5)


def test_free_tables_are_allowed() -> None:
    assert isinstance(bombay_baazi(4, 0, 0), RuleSet)


def test_negative_penalties_are_refused() -> None:
    with pytest.raises(RuleSetError, match="wrong_declare_points must be >= 0"):
        IndianPointsRules(wrong_declare_points=-80)
    with pytest.raises(ValueError, match="counted points must be >= 0"):
        IndianPointsRules().capped(-1)


@pytest.mark.parametrize("option", PENALTY_OPTIONS)
def test_no_penalty_may_exceed_what_the_reservation_is_made_for(option: str) -> None:
    uncapped = bombay_baazi(8, 100, 0)

    def penalty(points: int) -> dict[str, Any]:
        return {option: points}

    dataclasses.replace(uncapped, options=IndianPointsRules(**penalty(130)))
    with pytest.raises(RuleSetError, match=rf"{option} must be 0\.\.130 .*got 150") as caught:
        dataclasses.replace(uncapped, options=IndianPointsRules(**penalty(150)))
    assert (caught.value.option, caught.value.bounds, caught.value.value) == (option, "0..130", 150)
    all_ten: dict[str, Any] = dict.fromkeys(PENALTY_OPTIONS, 10)
    capped = IndianPointsRules(points_cap=50, **all_ten)
    dataclasses.replace(uncapped, options=dataclasses.replace(capped, **penalty(50)))
    with pytest.raises(RuleSetError, match=rf"{option} must be 0\.\.50 \(.*cap"):
        dataclasses.replace(uncapped, options=dataclasses.replace(capped, **penalty(51)))


@pytest.mark.parametrize("seats", [4, 6, 8])
def test_the_largest_hand_of_the_largest_point_value_fits_a_signed_64_bit_amount(
    seats: int,
) -> None:
    rs = bombay_baazi(seats, 0, 0)
    most = rs.max_point_value_hundredths
    assert (seats - 1) * 130 * most <= INT64_MAX < (seats - 1) * 130 * (most + 1)
    assert dataclasses.replace(rs, point_value_hundredths=most).point_value_hundredths == most
    for too_much in (most + 1, 2**62, INT64_MAX):
        with pytest.raises(RuleSetError, match="point_value_hundredths must be 0.."):
            dataclasses.replace(rs, point_value_hundredths=too_much)


@pytest.mark.parametrize(("seats", "losers"), [(2, "1 loser x"), (4, "3 losers x")])
def test_a_refused_point_value_counts_the_losers_in_words(seats: int, losers: str) -> None:
    rs = gin_rule_set() if seats == 2 else bombay_baazi(seats, 0, 0)
    with pytest.raises(RuleSetError, match=re.escape(losers)):
        dataclasses.replace(rs, point_value_hundredths=rs.max_point_value_hundredths + 1)


def test_a_host_bounds_the_start_delay_and_the_reservation_by_its_maximum() -> None:
    rs = bombay_baazi(6, 1_000, 0)  # 130 x 1,000 = 130,000 hundredths reserved per seat
    validate_table_options(rs, 0, max_reservation_hundredths=130_000)
    validate_table_options(rs, 3600, max_reservation_hundredths=130_000)
    too_big = r"point_value_hundredths must be 0\.\.999 .*maximum of 129999"
    with pytest.raises(RuleSetError, match=too_big):
        validate_table_options(rs, 5, max_reservation_hundredths=129_999)
    for delay in (-1, 3601):
        with pytest.raises(RuleSetError, match=r"start_delay_seconds must be 0\.\.3600"):
            validate_table_options(rs, delay)
    # the default maximum (1,000,000 House Tokens a seat) refuses what 2^62 would reserve
    with pytest.raises(RuleSetError, match="point_value_hundredths"):
        validate_table_options(dataclasses.replace(rs, point_value_hundredths=10**7), 5)
