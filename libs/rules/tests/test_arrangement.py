"""Rulings of the best arrangement: tiers, validity, 14-card discards, any hand size."""

from __future__ import annotations

import pytest

from rummy_rules.cards import Rank, parse_cards
from rummy_rules.indian.arrangement import Arrangement, best_arrangement, valid_discards
from rummy_rules.melds import MeldKind, MeldOptions, classify_group
from rummy_rules.wild import card_points, hand_points


def best(cards: str, wild: Rank | None) -> Arrangement:
    return best_arrangement(parse_cards(cards), wild)


def test_two_pure_runs_and_two_sets_are_a_valid_show_worth_zero() -> None:
    a = best("AH 2H 3H 4S 5S 6S 7S 9C 9D 9H QS QD QC", Rank.EIGHT)
    assert a.valid and a.points == 0 and a.deadwood == ()


def test_without_a_pure_sequence_every_card_counts() -> None:
    cards = parse_cards("4H JK 6H 9S 10S KD QC QD QH 2S 2D 2C 7C")
    a = best_arrangement(cards, Rank.KING)
    assert not a.valid and a.points == hand_points(cards, Rank.KING) and a.melds == ()


def test_a_pure_sequence_alone_takes_only_that_run_off_and_sets_do_not_help() -> None:
    cards = parse_cards("3S 4S 5S 8H 8D 8C JS JD JC 2H 2D 2C KH")
    a = best_arrangement(cards, Rank.SIX)
    run = [c for c in cards if c.face in ("3S", "4S", "5S")]
    assert not a.valid
    assert a.points == hand_points(cards, Rank.SIX) - hand_points(run, Rank.SIX)


def test_with_two_sequences_only_the_loose_cards_count() -> None:
    a = best("3C 4C 5C 8H JK 10H KS KD 7D 2S 9S AC 6H", Rank.FOUR)
    assert not a.valid
    assert a.points == sum(card_points(c, Rank.FOUR) for c in a.deadwood)
    assert sum(m.kind.is_sequence for m in a.melds) >= 2
    assert any(m.kind is MeldKind.PURE_SEQUENCE for m in a.melds)


def test_a_long_pure_run_splits_into_two_pure_sequences_when_that_helps() -> None:
    a = best("3S 4S 5S 6S 7S 8S KH KD KC 2D 2H 2C 2S", Rank.TEN)
    assert a.valid
    assert sum(m.kind is MeldKind.PURE_SEQUENCE for m in a.melds) >= 2


def test_the_same_ace_from_two_decks_may_run_low_and_high_in_different_groups() -> None:
    assert best("AS 2S 3S QS KS AS 6D 6H 6C 8C 8D 8H 8S", Rank.NINE).valid


def test_the_uncounted_maximum_is_ten_points_a_card() -> None:
    a = best("AS AS AH AH KD KD KC KC QS QH JD JC 10S", Rank.FIVE)
    assert a.points == 130 and not a.valid


def test_one_wild_copy_may_be_natural_while_another_stands_in_elsewhere() -> None:
    assert best("6H 7H 8H 10S 7H JS 4C 4D 4S 4H KC KD KS", Rank.SEVEN).valid


def test_a_printed_joker_cut_keeps_printed_jokers_wild() -> None:
    assert best("4C 5C 6C 8D 9D JK 2H 2S 2D KS KH KD KC", None).valid


def test_a_spare_joker_joins_a_sequence_in_a_valid_show() -> None:
    a = best("4C 5C 6C 8D 9D 10D 2H 2S 2D KH KS KD JK", Rank.SEVEN)
    assert a.valid and a.points == 0
    assert sum(len(m.cards) for m in a.melds) == 13


def test_three_printed_jokers_can_be_the_second_sequence() -> None:
    cards = parse_cards("4C 5C 6C JK JK JK")
    assert best_arrangement(cards, Rank.EIGHT).valid
    off = best_arrangement(cards, Rank.EIGHT, MeldOptions(jokers_only_group_is_sequence=False))
    assert not off.valid


def test_the_solver_takes_any_hand_size() -> None:
    assert best("", Rank.TWO).points == 0
    assert not best("4C 5C 6C", Rank.TWO).valid
    assert best("4C 5C 6C 7D 8D 9D", Rank.TWO).valid
    big = best("AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AD 2D 3D 9S", None)
    assert big.points == 9


def test_valid_discards_are_those_that_leave_a_valid_show() -> None:
    cards = parse_cards("4S 5S 6S 7S 8S 9H 9D 9C JK QD KD 2C 2H 2S")
    found = valid_discards(cards, Rank.TEN)
    assert found
    for c in cards:
        rest = [d for d in cards if d is not c]
        assert (c in found) == best_arrangement(rest, Rank.TEN).valid


def test_no_discard_works_when_no_pure_sequence_is_possible() -> None:
    assert (
        valid_discards(parse_cards("AS AS AH AH KD KD KC KC QS QH JD JC 10S 9S"), Rank.FIVE) == ()
    )


def test_a_wild_card_in_its_place_and_other_wild_cards_standing_in_make_one_sequence() -> None:
    # With jokers-only groups off, 7C 7D 7H 7S JK is only a meld as 7C plus four stand-ins.
    options = MeldOptions(jokers_only_group_is_sequence=False)
    a = best_arrangement(parse_cards("9S 10S JS 7C 7D 7H 7S JK QD"), Rank.SEVEN, options)
    assert a.valid


def test_melds_are_reported_with_their_best_kind() -> None:
    a = best("8S 7S 9S JK 7S 3S 5S AD 6S AC 4S 4S 5S", Rank.ACE)
    aces = [m for m in a.melds if any(c.face == "AC" for c in m.cards)]
    assert a.valid and aces and aces[0].kind is MeldKind.IMPURE_SEQUENCE


def test_two_copies_of_a_wild_face_never_stand_in_together_under_the_strict_rule() -> None:
    # QD needs two stand-ins; the only ones are both 5H, which the strict rule keeps apart.
    cards = parse_cards("2S 3S 4S 6D 7D 8D 9C 5H 5H KC KH KS QD")
    strict = best_arrangement(cards, Rank.FIVE)
    lenient = best_arrangement(cards, Rank.FIVE, MeldOptions(strict_duplicate_faces=False))
    assert lenient.points == card_points(parse_cards("9C")[0], Rank.FIVE)
    assert strict.points == lenient.points + card_points(parse_cards("QD")[0], Rank.FIVE)
    for meld in strict.melds:
        faces = [c.face for c in meld.cards if not c.is_printed_joker]
        assert len(faces) == len(set(faces))


def test_copies_of_a_wild_face_are_shared_out_between_groups_for_a_valid_show() -> None:
    cards = parse_cards("2S 3S 4S 6D 7D 8D 5H 5H 5H KC KH QD JD")
    a = best_arrangement(cards, Rank.FIVE)
    assert a.valid
    for meld in a.melds:
        assert sum(c.face == "5H" for c in meld.cards) <= 1


def test_a_spare_wild_card_never_makes_the_only_pure_sequence_impure() -> None:
    # 7 wild: 2H 3H 4H is the pure run, 6H 7H 7D the second sequence; the other 7H cannot stand
    # in beside 7H (strict rule) nor in the pure run (it would be the hand's only pure sequence).
    a = best("7H 7H 3H 2H 4H 6H 7D", Rank.SEVEN)
    assert (a.points, a.valid) == (0, False)
    assert [str(c) for c in a.deadwood] == ["7H"]
    assert any(m.kind is MeldKind.PURE_SEQUENCE for m in a.melds)
    b = best("JS KS 2C 2S 2C 9S QS", Rank.TWO)
    assert (b.points, b.valid) == (0, False)
    assert not valid_discards(parse_cards("JS KS 2C 2S 2C 9S QS 9D"), Rank.TWO)


def test_a_valid_show_is_displayed_with_its_pure_sequence() -> None:
    a = best("QS JK 6S KH QD 2C JK QC QH 3C 4C 10H QH", Rank.SIX)
    assert a.valid
    assert any(m.kind is MeldKind.PURE_SEQUENCE for m in a.melds)
    assert sum(1 for m in a.melds if m.kind is not MeldKind.SET) >= 2


def test_the_same_card_object_listed_twice_counts_as_two_cards() -> None:
    five, six, seven = parse_cards("5H 6H 7H")
    a = best_arrangement([five, six, seven, seven], Rank.KING)
    assert a.points == 7 and not a.valid
    assert len([c for m in a.melds for c in m.cards]) + len(a.deadwood) == 4


def test_a_wild_rank_that_is_not_a_rank_is_refused() -> None:
    for bad in (0, 14, "7", True):
        with pytest.raises(ValueError, match="wild rank"):
            best_arrangement(parse_cards("5H 6H 7H"), bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cards", "wild", "strict", "ace_high"),
    [
        ("5D QD QS JK 4D 6D", Rank.QUEEN, True, False),  # QD in place with JK and QS: J-Q-K
        ("QS JS 7S JK KS JK", Rank.SEVEN, False, True),  # 7S in place with two printed jokers
    ],
)
def test_a_wild_card_in_its_place_with_two_jokers_is_a_sequence_when_jokers_alone_are_not(
    cards: str, wild: Rank, strict: bool, ace_high: bool
) -> None:
    """Found by a fuzz against the oracle: made a stand-in, the wild card would leave a group of
    stand-ins only, which is no sequence under this option; in its place it makes one."""
    options = MeldOptions(
        jokers_only_group_is_sequence=False, strict_duplicate_faces=strict, ace_high=ace_high
    )
    arrangement = best_arrangement(parse_cards(cards), wild, options)
    assert arrangement.valid and arrangement.points == 0
    kinds = sorted(m.kind for m in arrangement.melds)
    assert kinds == [MeldKind.PURE_SEQUENCE, MeldKind.IMPURE_SEQUENCE]


@pytest.mark.parametrize(
    ("cards", "wild", "valid"),
    [
        # valid, but never as 5H 6H 7H + 8H JK 8H: the second sequence is 5H 8H JK (8H for 6H)
        ("5H 6H 7H 8H JK 8H", Rank.EIGHT, True),
        # AD 2D 3D is pure; AC JK AC would need the second AC standing in beside the first
        ("AC AD 2D 3D JK AC", Rank.ACE, False),
        ("AD 3D AD JK 4D 5D", Rank.ACE, False),
    ],
)
def test_a_wild_copy_never_stands_in_beside_its_own_face_in_place(
    cards: str, wild: Rank, valid: bool
) -> None:
    """The same face never twice in one group (docs/rules/melds.md#same-face-twice): with fours
    wild ``3S 4S 4S`` is no run, so with eights wild ``8H JK 8H`` is none either (the second ``8H``
    cannot stand in beside a natural ``8H``), and it is no jokers-only group, which needs every
    card standing in and is off here (docs/rules/melds.md#jokers-only-group). Without that group
    the last two hands have no second sequence, so no show
    (docs/rules/declaration.md#valid-declaration); under the lenient rule all three are shows.
    Found by the fuzz against the oracle: the solver compared the stand-ins' faces with the melds'
    in two numberings once it had moved the suits holding a pure run first.
    """
    hand = parse_cards(cards)
    options = MeldOptions(jokers_only_group_is_sequence=False)
    strict = best_arrangement(hand, wild, options)
    assert (strict.points, strict.valid) == (0, valid)
    for meld in strict.melds:
        faces = [c.face for c in meld.cards if not c.is_printed_joker]
        assert len(faces) == len(set(faces))
        assert classify_group(meld.cards, wild, options) is meld.kind
    lenient = MeldOptions(jokers_only_group_is_sequence=False, strict_duplicate_faces=False)
    assert best_arrangement(hand, wild, lenient).valid
