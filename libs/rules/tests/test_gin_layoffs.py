"""The defender's best lay-offs and the knocker's arrangement (docs/rules/gin.md#layoffs,
docs/rules/gin.md#knocker-melds)."""

from __future__ import annotations

import pytest

from rummy_rules.cards import parse_cards
from rummy_rules.gin.arrangement import GinCardError, GinMeld, best_arrangements, make_meld
from rummy_rules.gin.layoffs import Layoff, best_layoffs, knocker_arrangement


def melds(*groups: str) -> tuple[GinMeld, ...]:
    return tuple(make_meld(parse_cards(g)) for g in groups)


def laid(layoffs: tuple[Layoff, ...]) -> list[tuple[str, int]]:
    return [(lay.card.face, lay.meld) for lay in layoffs]


def test_a_run_takes_a_chain_of_cards_at_one_end() -> None:
    # t_games refused the second lay-off at the same end (8H after 7H).
    result = best_layoffs(parse_cards("7H 8H 9C KS QD JC 2C 4S 9D 3C"), melds("4H 5H 6H"))
    assert laid(result.layoffs) == [("7H", 0), ("8H", 0)]
    assert result.deadwood == 9 + 10 + 10 + 10 + 2 + 4 + 9 + 3


def test_lay_offs_that_save_nothing_are_not_made() -> None:
    # 7-9H is a run of the defender's own: laying it off saves nothing, so the fewest cards go.
    result = best_layoffs(parse_cards("7H 8H 9H KS QD JC 2C 4S 9D 3C"), melds("4H 5H 6H"))
    assert result.layoffs == () and result.deadwood == result.deadwood_before


def test_a_chain_pays_when_the_cards_are_loose() -> None:
    result = best_layoffs(parse_cards("7H 8H 3H KS QD JC 2C 4S 9D 3C"), melds("4H 5H 6H"))
    assert laid(result.layoffs) == [("3H", 0), ("7H", 0), ("8H", 0)]
    assert result.points_laid_off == 3 + 7 + 8


def test_a_set_of_three_takes_its_fourth_card_and_a_set_of_four_nothing() -> None:
    hand = parse_cards("7H KD KS QD JC 2C 4S 9D 3C 5H")
    assert laid(best_layoffs(hand, melds("7C 7D 7S")).layoffs) == [("7H", 0)]
    assert (
        best_layoffs(parse_cards("KD KS QD JC 2C 4S 9D 3C 5H 6H"), melds("7C 7D 7S 7H")).layoffs
        == ()
    )


def test_the_defender_breaks_its_own_set_to_lay_off_when_that_lowers_its_deadwood() -> None:
    # The rules case GS08: the sevens are broken so 7H 8H and 7D 6D go onto the knocker's runs.
    result = best_layoffs(
        parse_cards("3S 3C 3D 3H 7H 7D 7C 8H 6D AC"), melds("4H 5H 6H", "8D 9D 10D", "QS QC QH")
    )
    assert result.deadwood == 8 and result.deadwood_before == 15
    assert laid(result.layoffs) == [("6D", 1), ("7D", 1), ("7H", 0), ("8H", 0)]


def test_the_defender_keeps_its_run_when_laying_off_would_break_it_for_nothing() -> None:
    result = best_layoffs(parse_cards("5H 6H 7H KS QD JC 2C 4S 9D 3C"), melds("8H 9H 10H"))
    assert result.layoffs == () or result.deadwood == result.deadwood_before
    assert result.deadwood == 10 + 10 + 10 + 2 + 4 + 9 + 3


def test_cards_between_two_runs_of_one_suit_go_to_either() -> None:
    result = best_layoffs(
        parse_cards("5H 6H 7H KS QD JC 2C 4S 9D 3C"), melds("2H 3H 4H", "8H 9H 10H")
    )
    assert [face for face, _ in laid(result.layoffs)] == []  # 5-7H is a run: nothing to gain
    result = best_layoffs(
        parse_cards("5H 6H KS QD JC 2C 4S 9D 3C 7S"), melds("2H 3H 4H", "7H 8H 9H")
    )
    assert sorted(face for face, _ in laid(result.layoffs)) == ["5H", "6H"]
    assert result.deadwood == 10 + 10 + 10 + 2 + 4 + 9 + 3 + 7


def test_a_defender_card_in_the_knockers_melds_is_refused() -> None:
    with pytest.raises(GinCardError):
        best_layoffs(parse_cards("4H KS"), melds("4H 5H 6H"))


def test_the_knocker_is_arranged_to_leave_the_defender_the_fewest_points_to_lay_off() -> None:
    # 5-7 of three suits: runs let the defender lay off 4D and 8H (12); sets only 5C (5).
    knocker = parse_cards("5D 6D 7D 5H 6H 7H 5S 6S 7S KC")
    defender = parse_cards("4D 8H 5C KH QS JC 9C 2S 3H 10S")
    assert len(best_arrangements(knocker)) == 2
    choice = knocker_arrangement(knocker, defender)
    assert [m.shape.value for m in choice.knocker.melds] == ["set", "set", "set"]
    assert choice.defender.deadwood == 71 - 5
    assert [lay.card.face for lay in choice.defender.layoffs] == ["5C"]


def test_the_knockers_arrangement_ties_go_to_the_first_in_canonical_order() -> None:
    knocker = parse_cards("5D 6D 7D 5H 6H 7H 5S 6S 7S KC")
    defender = parse_cards("KH QS JC 9C 2S 3H 10S AD 2D 9H")  # nothing to lay off either way
    choice = knocker_arrangement(knocker, defender)
    assert choice.knocker == best_arrangements(knocker)[0]
    assert [m.shape.value for m in choice.knocker.melds] == ["run", "run", "run"]
