"""Exact gin deadwood of ten cards and of eleven (docs/rules/gin.md#deadwood, #eleven-cards)."""

from __future__ import annotations

import pytest

from rummy_rules.cards import Card, Rank, Suit, parse_cards, printed_joker
from rummy_rules.gin.arrangement import (
    GinCardError,
    MeldShape,
    arrangement_of,
    best_arrangement,
    best_arrangements,
    can_knock,
    card_at,
    card_index,
    card_value,
    classify_meld,
    deadwood_of,
    evaluate_eleven,
)


def faces(cards: tuple[Card, ...]) -> list[str]:
    return [c.face for c in cards]


def test_card_values_are_ace_one_faces_ten_others_their_number() -> None:
    values = [card_value(c) for c in parse_cards("AS 2H 9D 10C JC QD KH")]
    assert values == [1, 2, 9, 10, 10, 10, 10]


def test_canonical_index_is_clubs_diamonds_hearts_spades_ace_to_king() -> None:
    assert [card_index(c) for c in parse_cards("AC KC AD KS")] == [0, 12, 13, 51]
    assert all(card_index(card_at(i)) == i for i in range(52))


def test_a_joker_a_second_copy_or_a_repeated_card_is_refused() -> None:
    with pytest.raises(GinCardError):
        card_index(printed_joker())
    with pytest.raises(GinCardError):
        card_index(Card(Rank.ACE, Suit.HEARTS, 1))
    with pytest.raises(GinCardError):
        deadwood_of([Card(Rank.ACE, Suit.HEARTS), Card(Rank.ACE, Suit.HEARTS)])


@pytest.mark.parametrize(
    ("group", "shape"),
    [
        ("AH 2H 3H", MeldShape.RUN),
        ("JS QS KS", MeldShape.RUN),
        ("QH KH AH", None),  # the ace is low only (t_games melded K-A as adjacent)
        ("KH AH 2H", None),  # no wrap
        ("7H 7D 7S", MeldShape.SET),
        ("7H 7D 7S 7C", MeldShape.SET),
        ("7H 8H", None),
        ("7H 8H 10H", None),
        ("7H 8D 9H", None),
    ],
)
def test_a_group_is_a_set_a_run_or_no_meld(group: str, shape: MeldShape | None) -> None:
    assert classify_meld(parse_cards(group)) is shape


def test_king_ace_is_never_adjacent_so_q_k_a_two_three_leaves_the_high_cards_loose() -> None:
    arrangement = best_arrangement(parse_cards("QH KH AH 2H 3H 5C 5D 5S 9C 9D"))
    assert [faces(m.cards) for m in arrangement.melds] == [["5C", "5D", "5S"], ["AH", "2H", "3H"]]
    assert arrangement.deadwood == 10 + 10 + 9 + 9


def test_a_five_card_run_is_one_run_never_two_runs_sharing_a_card() -> None:
    # t_games split 3-7H into 3-5H and 5-7H, counting the 5H twice.
    arrangement = best_arrangement(parse_cards("3H 4H 5H 6H 7H KC KD 9S 2C 4D"))
    assert [faces(m.cards) for m in arrangement.melds] == [["3H", "4H", "5H", "6H", "7H"]]
    shown = [c for m in arrangement.melds for c in m.cards] + list(arrangement.loose)
    assert len(shown) == len(set(shown)) == 10
    assert arrangement.deadwood == 10 + 10 + 9 + 2 + 4


def test_a_card_goes_to_whichever_meld_lowers_the_deadwood() -> None:
    # 5C must go to the fives: A-4C, 5C 5D 5H, 6-8H (the rules case GN12).
    arrangement = best_arrangement(parse_cards("AC 2C 3C 4C 5C 5D 5H 6H 7H 8H"))
    assert arrangement.deadwood == 0
    assert [faces(m.cards) for m in arrangement.melds] == [
        ["AC", "2C", "3C", "4C"],
        ["5C", "5D", "5H"],
        ["6H", "7H", "8H"],
    ]


def test_a_four_set_lends_one_card_to_a_run() -> None:
    arrangement = best_arrangement(parse_cards("7C 7D 7H 7S 8S 9S KD KH 2C 3D"))
    assert {tuple(faces(m.cards)) for m in arrangement.melds} == {
        ("7C", "7D", "7H"),
        ("7S", "8S", "9S"),
    }
    assert arrangement.deadwood == 25


def test_ties_are_broken_in_canonical_card_order_and_every_best_is_listed() -> None:
    # 5-7 of diamonds, hearts and spades: three runs or three sets, both 0; plus 1 loose ace.
    hand = parse_cards("5D 6D 7D 5H 6H 7H 5S 6S 7S AC")
    every = best_arrangements(hand)
    assert [len(a.melds) for a in every] == [3, 3]
    assert [m.shape for m in every[0].melds] == [MeldShape.RUN] * 3  # 5D 6D 7D sorts first
    assert [m.shape for m in every[1].melds] == [MeldShape.SET] * 3
    assert best_arrangement(hand) == every[0]
    assert best_arrangement(reversed(hand)) == every[0]


def test_no_meld_at_all_is_every_card_loose() -> None:
    arrangement = best_arrangement(parse_cards("KS QH JD 10C 9S 8H 7D 6C 5S 4H"))
    assert arrangement.melds == () and arrangement.deadwood == 79


def test_eleven_cards_take_the_minimum_over_every_discard_not_the_best_group_less_its_top() -> None:
    # OpenSpiel 2.0.2 reports 11 and refuses the knock: of the two best groups of all eleven
    # (15 each) it takes the sets of fives and sixes and subtracts the highest loose card, 4S.
    # Discarding 6H leaves 3-6D, 4-6S and 2H 5H 2S = 9.
    value = evaluate_eleven(parse_cards("2H 5H 6H 2S 4S 6D 4D 5S 3D 6S 5D"))
    assert value.best_after_discard == 9
    assert faces(value.discards) == ["6H"]
    assert value.knock_legal(10) and not value.knock_legal(8)
    assert not value.big_gin and not value.gin


def test_every_discard_reaching_the_minimum_is_reported() -> None:
    value = evaluate_eleven(parse_cards("2C 3C 4C 7H 7D 7S 9S 10S JS KD KH"))
    assert value.best_after_discard == 10
    assert faces(value.discards) == ["KD", "KH"]


def test_a_gin_hand_with_a_king_to_throw_may_knock_at_any_limit() -> None:
    # t_games counted the eleventh card and told this hand its score was too high to knock.
    hand = parse_cards("2C 3C 4C 7H 7D 7S 9S 10S JS QS KD")
    value = evaluate_eleven(hand)
    assert value.gin and value.best_after_discard == 0 and faces(value.discards) == ["KD"]
    assert can_knock(hand, 10) and can_knock(hand, 1) and can_knock(hand, 0)


def test_big_gin_is_all_eleven_melded() -> None:
    value = evaluate_eleven(parse_cards("3D 4D 5D 6D 7D JS JH JC 9C 9H 9S"))
    assert value.big_gin and value.gin and value.best_after_discard == 0
    assert faces(value.discards) == ["3D", "7D"]  # the ends of the five-card run


def test_eleven_is_required_for_the_eleven_card_value() -> None:
    with pytest.raises(GinCardError):
        evaluate_eleven(parse_cards("2C 3C 4C"))
    with pytest.raises(GinCardError):
        can_knock(parse_cards("2C 3C 4C"))


def test_named_melds_are_checked_and_leave_the_rest_as_deadwood() -> None:
    hand = parse_cards("4H 5H 6H 7H 7D 7S 9S 10S JS 2C")
    named = arrangement_of(hand, [parse_cards("4H 5H 6H"), parse_cards("7H 7D 7S")])
    assert named.deadwood == 9 + 10 + 10 + 2
    with pytest.raises(GinCardError):
        arrangement_of(hand, [parse_cards("4H 5H 6H 7H"), parse_cards("7H 7D 7S")])
    with pytest.raises(GinCardError):
        arrangement_of(hand, [parse_cards("9S 10S QS")])
    with pytest.raises(GinCardError):
        arrangement_of(hand, [parse_cards("QH KH AH")])
