"""The rule set as data: Bombay Baazi numbers, validation, and the most a hand can cost."""

import dataclasses

import pytest

from rummy_rules.melds import MeldOptions
from rummy_rules.rules import IndianPointsRules, RuleSet, bombay_baazi


def test_bombay_baazi_carries_the_table_rules() -> None:
    rs = bombay_baazi(6, point_value_cents=250, commission_bps=1000)
    assert (rs.name, rs.version, rs.seats, rs.hand_size, rs.min_players) == (
        "bombay-baazi",
        1,
        6,
        13,
        2,
    )
    assert (rs.point_value_cents, rs.commission_bps, rs.max_missed_turns) == (250, 1000, 3)
    ind = rs.indian
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
    assert rs.indian.capped(113) == 80
    assert rs.indian.capped(57) == 57
    assert rs.max_loss_points == 80


def test_the_maximum_follows_the_hand_size_not_a_constant() -> None:
    rs = bombay_baazi(8, 100, 0)
    ten_cards = dataclasses.replace(rs, hand_size=10)
    assert ten_cards.max_loss_points == 100
    # a wrong declare (80) is more than 7 cards can count
    assert dataclasses.replace(rs, hand_size=7).max_loss_points == 80


def test_rule_sets_are_immutable_values() -> None:
    rs = bombay_baazi(6, 100, 500)
    assert rs == bombay_baazi(6, 100, 500) and hash(rs) == hash(bombay_baazi(6, 100, 500))
    with pytest.raises(dataclasses.FrozenInstanceError):
        rs.point_value_cents = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seats": 5}, "seat count must be one of 4/6/8, got 5"),
        ({"seats": 2}, "seat count must be one of 4/6/8"),
        ({"point_value_cents": -1}, "point value must be >= 0"),
        ({"commission_bps": -1}, "commission must be 0..10000 basis points"),
        ({"commission_bps": 10001}, "commission must be 0..10000 basis points"),
        ({"points_cap": 0}, "points_cap must be None or >= 1"),
        ({"turn_seconds": 0}, "turn_seconds must be >= 1"),
        ({"seed_window_seconds": 0}, "seed_window_seconds must be >= 1"),
        ({"max_missed_turns": 0}, "max_missed_turns must be >= 1"),
    ],
)
def test_out_of_range_rule_sets_are_refused_with_a_clear_message(
    kwargs: dict, message: str
) -> None:
    args = {"seats": 6, "point_value_cents": 100, "commission_bps": 500} | kwargs
    with pytest.raises(ValueError, match=message):
        bombay_baazi(**args)


def test_a_shoe_too_small_for_the_deal_is_refused() -> None:
    rs = bombay_baazi(8, 100, 0)
    with pytest.raises(ValueError, match="cannot deal 20 cards to 8 seats"):
        dataclasses.replace(rs, hand_size=20)


def test_min_players_is_at_least_two_and_at_most_the_seats() -> None:
    rs = bombay_baazi(4, 100, 0)
    with pytest.raises(ValueError, match="min_players must be >= 2"):
        dataclasses.replace(rs, min_players=1)
    with pytest.raises(ValueError, match="cannot exceed the seat count"):
        dataclasses.replace(rs, min_players=5)


def test_free_tables_are_allowed() -> None:
    assert isinstance(bombay_baazi(4, 0, 0), RuleSet)


def test_negative_penalties_are_refused() -> None:
    with pytest.raises(ValueError, match="wrong_declare_points must be >= 0"):
        IndianPointsRules(wrong_declare_points=-80)
    with pytest.raises(ValueError, match="counted points must be >= 0"):
        IndianPointsRules().capped(-1)
