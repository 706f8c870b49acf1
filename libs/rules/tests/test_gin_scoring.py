"""A gin hand's score (docs/rules/gin.md#hand-score, docs/rules/gin.md#oklahoma)."""

from __future__ import annotations

import pytest

from rummy_rules.cards import parse_card, parse_cards
from rummy_rules.gin.arrangement import GinCardError
from rummy_rules.gin.scoring import (
    HandRules,
    IllegalKnock,
    Outcome,
    Side,
    hand_points,
    oklahoma_rules,
    score_big_gin,
    score_knock,
)

LOOSE_DEFENDER = parse_cards("KH QS JC 9C 2S 3H 10S AD 2D 9H")  # no meld: 10+10+10+9+2+3+10+1+2+9


def test_the_lower_knocker_scores_the_difference() -> None:
    result = hand_points(Outcome.KNOCK, 4, 20, HandRules())
    assert (result.outcome, result.winner, result.points) == (Outcome.KNOCK, Side.KNOCKER, 16)


@pytest.mark.parametrize(("knocker", "defender", "points"), [(8, 3, 30), (7, 7, 25)])
def test_a_defender_equal_or_lower_undercuts_for_the_difference_and_25(
    knocker: int, defender: int, points: int
) -> None:
    # OpenSpiel scored the tie 0; the rulebook's undercut is "equals or is less than".
    result = hand_points(Outcome.KNOCK, knocker, defender, HandRules())
    assert (result.outcome, result.winner, result.points) == (
        Outcome.UNDERCUT,
        Side.DEFENDER,
        points,
    )


def test_gin_scores_the_defenders_deadwood_and_25_big_gin_31() -> None:
    assert hand_points(Outcome.GIN, 0, 27, HandRules()).points == 52
    assert hand_points(Outcome.BIG_GIN, 0, 27, HandRules()).points == 58
    with pytest.raises(IllegalKnock):
        hand_points(Outcome.BIG_GIN, 0, 27, HandRules(big_gin=False))


def test_a_knock_over_the_limit_is_refused() -> None:
    with pytest.raises(IllegalKnock):
        hand_points(Outcome.KNOCK, 11, 30, HandRules())


@pytest.mark.parametrize(
    ("upcard", "limit", "doubled"),
    [("AS", 1, True), ("4H", 4, False), ("10D", 10, False), ("KS", 10, True), ("JC", 10, False)],
)
def test_oklahoma_limit_is_the_upcard_value_and_a_spade_doubles(
    upcard: str, limit: int, doubled: bool
) -> None:
    rules = oklahoma_rules(parse_card(upcard))
    assert (rules.knock_limit, rules.doubled) == (limit, doubled)


def test_oklahoma_spade_doubles_the_bonuses_too() -> None:
    rules = oklahoma_rules(parse_card("6S"))
    assert hand_points(Outcome.KNOCK, 4, 22, rules).points == 36
    assert hand_points(Outcome.KNOCK, 5, 3, rules).points == 2 * (2 + 25)
    assert hand_points(Outcome.GIN, 0, 10, rules).points == 2 * (10 + 25)
    assert hand_points(Outcome.BIG_GIN, 0, 10, rules).points == 2 * (10 + 31)
    with pytest.raises(IllegalKnock):
        hand_points(Outcome.KNOCK, 7, 30, rules)


def test_a_knock_is_scored_after_the_defenders_lay_offs() -> None:
    # The rules case GS08: the defender lays off 6D 7D 7H 8H and undercuts, 8 against 10.
    score = score_knock(
        parse_cards("4H 5H 6H 8D 9D 10D QS QC QH 10C"),
        parse_cards("3S 3C 3D 3H 7H 7D 7C 8H 6D AC"),
    )
    assert (score.outcome, score.winner, score.points) == (Outcome.UNDERCUT, Side.DEFENDER, 27)
    assert (score.knocker_deadwood, score.defender_deadwood) == (10, 8)
    assert [c.face for c in score.defender.loose] == ["AC", "7C"]


def test_the_knocker_never_lays_off_onto_the_defenders_melds() -> None:
    # The knocker's loose 2S would fit the defender's 3-5S; it still counts.
    score = score_knock(
        parse_cards("2C 3C 4C 7H 7D 7S 9S 10S JS 2S"),
        parse_cards("3S 4S 5S KH QD JC 9C 4H 10H AD"),
    )
    assert score.knocker_deadwood == 2 and score.layoffs == ()
    assert score.points == (10 + 10 + 10 + 9 + 4 + 10 + 1) - 2


def test_a_knock_with_no_deadwood_is_gin_and_allows_no_lay_off() -> None:
    # The rules case GS04: 6C, QS and KS would lay off after a knock; after gin they count.
    score = score_knock(
        parse_cards("2C 3C 4C 5C 9S 10S JS KH KD KC"),
        parse_cards("6C QS 7H 8H 9H 3D 4D 5D AD KS"),
    )
    assert (score.outcome, score.points, score.layoffs) == (Outcome.GIN, 52, ())


def test_named_melds_are_the_knockers_even_when_the_server_would_arrange_better() -> None:
    knocker = parse_cards("AH 2H 3H 4H 4D 4S 9S 10S JS AC")
    defender = parse_cards("8H 3C KC QD JC 9C 2S 3D 10D 2D")
    assert score_knock(knocker, defender).knocker_deadwood == 1  # A-3H, the fours, 9-JS; AC
    named = score_knock(
        knocker, defender, named_melds=[parse_cards("AH 2H 3H 4H"), parse_cards("9S 10S JS")]
    )
    assert named.knocker_deadwood == 4 + 4 + 1
    assert [[c.face for c in m.cards] for m in named.knocker.melds] == [
        ["AH", "2H", "3H", "4H"],
        ["9S", "10S", "JS"],
    ]
    with pytest.raises(IllegalKnock):  # 38 left: over the limit
        score_knock(knocker, defender, named_melds=[parse_cards("AH 2H 3H 4H")])
    with pytest.raises(GinCardError):  # not a meld
        score_knock(knocker, defender, named_melds=[parse_cards("JS QS KS")])


def test_big_gin_needs_all_eleven_melded() -> None:
    score = score_big_gin(parse_cards("3D 4D 5D 6D 7D 5C 5H 5S 8C 8H 8S"), LOOSE_DEFENDER)
    assert (score.outcome, score.points) == (Outcome.BIG_GIN, 66 + 31)
    with pytest.raises(IllegalKnock):
        score_big_gin(parse_cards("3D 4D 5D 6D 7D 5C 5H 5S 8C 8H 4S"), LOOSE_DEFENDER)
    with pytest.raises(IllegalKnock):
        score_big_gin(
            parse_cards("3D 4D 5D 6D 7D 5C 5H 5S 8C 8H 8S"),
            LOOSE_DEFENDER,
            HandRules(big_gin=False),
        )


def test_hands_of_the_wrong_size_or_sharing_a_card_are_refused() -> None:
    with pytest.raises(GinCardError):
        score_knock(parse_cards("2C 3C 4C"), LOOSE_DEFENDER)
    with pytest.raises(GinCardError):
        score_knock(parse_cards("KH 3C 4C 5C 9S 10S JS KS KD KC"), LOOSE_DEFENDER)
