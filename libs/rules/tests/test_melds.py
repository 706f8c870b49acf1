"""Each meld rule of docs/rules/melds.md, one test each (cards in docs/rules/cards.md#notation)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_rules.cards import Rank, parse_cards
from rummy_rules.melds import (
    JOKER_FACE,
    MeldKind,
    MeldOptions,
    classify_group,
    cluster_runs,
    enumerate_melds,
    run_clusters,
)
from rummy_rules.wild import card_points
from rummy_testing.profiles import examples

PURE, IMPURE, SET = MeldKind.PURE_SEQUENCE, MeldKind.IMPURE_SEQUENCE, MeldKind.SET


def kind(cards: str, wild: Rank | None = Rank.FIVE, **options: bool) -> MeldKind | None:
    return classify_group(parse_cards(cards), wild, MeldOptions(**options))


def test_three_consecutive_cards_of_one_suit_are_a_pure_sequence() -> None:
    assert kind("4C 5C 6C", wild=Rank.NINE) is PURE


def test_cards_out_of_order_still_form_the_sequence() -> None:
    assert kind("6C 4C 5C", wild=Rank.NINE) is PURE


def test_wild_card_in_its_natural_place_keeps_the_sequence_pure() -> None:
    assert kind("6H 7H 8H", wild=Rank.SEVEN) is PURE


def test_wild_card_standing_in_makes_the_sequence_impure() -> None:
    assert kind("6H 7S 8H", wild=Rank.SEVEN) is IMPURE


def test_printed_joker_filling_a_gap_makes_an_impure_sequence() -> None:
    assert kind("4C 5C JK 7C", wild=Rank.NINE) is IMPURE


def test_ace_runs_low() -> None:
    assert kind("AS 2S 3S", wild=Rank.NINE) is PURE


def test_ace_runs_high() -> None:
    assert kind("QS KS AS", wild=Rank.NINE) is PURE


def test_king_ace_two_is_not_a_sequence() -> None:
    assert kind("KS AS 2S", wild=Rank.NINE) is None


def test_a_joker_cannot_carry_a_run_round_the_corner() -> None:
    assert kind("QS KS JK 2S", wild=Rank.NINE) is None
    assert kind("10S JS QS KS AS 2S", wild=Rank.NINE) is None


def test_ace_low_only_option_refuses_queen_king_ace() -> None:
    assert kind("QS KS AS", wild=Rank.NINE, ace_high=False) is None
    assert kind("AS 2S 3S", wild=Rank.NINE, ace_high=False) is PURE


def test_two_cards_are_never_a_meld() -> None:
    assert kind("4C 5C", wild=Rank.NINE) is None
    assert kind("JK JK") is None


def test_mixed_suits_are_not_a_sequence() -> None:
    assert kind("4C 5D 6C", wild=Rank.NINE) is None


def test_three_or_four_cards_of_one_rank_in_distinct_suits_are_a_set() -> None:
    assert kind("9H 9S 9D", wild=Rank.FIVE) is SET
    assert kind("9H 9S 9D 9C", wild=Rank.FIVE) is SET


def test_a_set_never_has_five_cards() -> None:
    assert kind("9H 9S 9D 9C JK", wild=Rank.FIVE) is None


def test_a_joker_may_complete_a_set() -> None:
    assert kind("9H 9S JK", wild=Rank.FIVE) is SET
    assert kind("9H 9S 9D 5C", wild=Rank.FIVE) is SET


def test_same_face_twice_never_sits_in_one_set() -> None:
    assert kind("9H 9H 9S", wild=Rank.FIVE) is None
    assert kind("9H 9H JK", wild=Rank.FIVE) is None


def test_three_identical_cards_from_three_decks_are_no_meld() -> None:
    assert kind("7H 7H 7H", wild=Rank.QUEEN) is None


def test_a_wild_copy_standing_in_may_not_repeat_a_face_of_its_group() -> None:
    assert kind("3S 4S 4S", wild=Rank.FOUR) is None


def test_the_lenient_duplicate_option_lets_a_wild_copy_stand_in() -> None:
    assert kind("3S 4S 4S", wild=Rank.FOUR, strict_duplicate_faces=False) is IMPURE


def test_the_lenient_option_still_refuses_two_natural_copies_of_a_face() -> None:
    assert kind("9H 9H 9S", wild=Rank.FIVE, strict_duplicate_faces=False) is None


def test_a_group_of_only_jokers_is_an_impure_sequence() -> None:
    assert kind("JK JK JK") is IMPURE


def test_the_jokers_only_option_off_makes_such_a_group_no_meld() -> None:
    assert kind("JK JK JK", jokers_only_group_is_sequence=False) is None


def test_wild_cards_of_one_rank_read_as_an_impure_sequence_not_a_set() -> None:
    # One seven in its own place, the other two standing in: impure beats set.
    assert kind("7H 7S 7D", wild=Rank.SEVEN) is IMPURE


def test_with_a_printed_joker_cut_only_printed_jokers_are_wild() -> None:
    assert kind("AH 2H 3H", wild=None) is PURE
    assert kind("4H 6H 7C", wild=None) is None
    assert kind("4H JK 6H", wild=None) is IMPURE


def test_a_run_is_at_most_thirteen_cards() -> None:
    assert kind("AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC", wild=Rank.FIVE) is PURE
    assert kind("AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC JK", wild=Rank.FIVE) is None


def test_jokers_and_the_wild_rank_are_worth_nothing_wherever_they_sit() -> None:
    jk, seven, ace = parse_cards("JK 7C AS")
    assert card_points(jk, Rank.SEVEN) == 0
    assert card_points(seven, Rank.SEVEN) == 0
    assert card_points(ace, Rank.SEVEN) == 10


def test_court_cards_ten_and_ace_are_worth_ten_and_the_rest_their_face() -> None:
    for text, points in (("AH", 10), ("KH", 10), ("QH", 10), ("JH", 10), ("10H", 10), ("9H", 9)):
        assert card_points(parse_cards(text)[0], None) == points
    assert card_points(parse_cards("2H")[0], None) == 2


@settings(max_examples=examples(ci=400, dev=80))
@given(
    st.sets(st.integers(1, 13), min_size=1, max_size=13),
    st.integers(0, 5),
    st.booleans(),
)
def test_the_runs_of_a_suit_cluster_by_cluster_are_the_runs_enumerate_melds_finds(
    ranks: set[int], tokens: int, ace_high: bool
) -> None:
    """``run_clusters`` + ``cluster_runs`` list each run of one suit once, as the slow listing does.

    The slow listing (``enumerate_melds`` without padding) names every stand-in; with printed
    jokers only, its sequences are (naturals, number of stand-ins, kind) as the fast one's.
    """
    options = MeldOptions(ace_high=ace_high)
    highest = 14 if ace_high else 13
    places = sum(1 << r for r in ranks) | (1 << 14 if 1 in ranks and ace_high else 0)
    fast = [
        (tuple(sorted(record[2])), record[1], record[0])
        for cluster in run_clusters(places, tokens)
        for record in cluster_runs(cluster, tokens, highest)
    ]
    counts = {r - 1: 1 for r in ranks} | ({JOKER_FACE: tokens} if tokens else {})
    slow = {
        (tuple(sorted(shape.naturals)), len(shape.standins), shape.kind)
        for shape in enumerate_melds(counts, None, options, pad=False).values()
        if shape.positions
    }
    assert len(fast) == len(set(fast))  # each run once
    assert set(fast) == slow


def test_runs_never_cross_a_gap_wider_than_the_stand_ins_can_fill() -> None:
    def clusters(places: list[int], tokens: int) -> list[list[int]]:
        found = run_clusters(sum(1 << p for p in places), tokens)
        return [[p for p in range(15) if c >> p & 1] for c in found]

    assert clusters([1, 2, 5, 6, 12, 14], 1) == [[1, 2], [5, 6], [12, 14]]
    assert clusters([1, 2, 5, 6, 12], 2) == [[1, 2, 5, 6], [12]]
    assert clusters([3, 9], 5) == [[3, 9]]
