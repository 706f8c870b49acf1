"""A recorded HandEnded whose arrangement differs from the one today's solver picks: accepted when
it is an equally good, legitimate arrangement of the same cards, caught otherwise."""

from __future__ import annotations

from rummy_rules import events as ev
from rummy_rules.cards import parse_cards
from rummy_rules.indian.arrangement import best_arrangement
from rummy_rules.indian.equivalence import equivalent_seats
from rummy_rules.indian.rules import IndianPointsRules, bombay_baazi
from rummy_rules.settlement import settle
from rummy_rules.wild import hand_points

RULES = bombay_baazi(4, point_value_hundredths=50, commission_bps=1000)
_INDIAN_OPTIONS = RULES.options
assert isinstance(_INDIAN_OPTIONS, IndianPointsRules)
OPTIONS = _INDIAN_OPTIONS.meld_options
WILD = None  # the cut card was a printed joker: only printed jokers are wild
HAND = parse_cards("2H 3H 4H 9C 10C JC 6S 8S JK 7D 7C KS QD")


def group(kind: str, faces: str) -> ev.ScoredGroup:
    return ev.ScoredGroup(kind, parse_cards(faces))


def ended(melds: tuple[ev.ScoredGroup, ...], deadwood: str) -> ev.HandEnded:
    best = best_arrangement(HAND, WILD, OPTIONS)
    results = (
        ev.SeatResult(0, "acct-ana", "won", 0, (), (), ()),
        ev.SeatResult(1, "acct-bo", "counted", best.points, HAND, melds, parse_cards(deadwood)),
    )
    settlement = settle(RULES, 0, {0: 0, 1: best.points})
    return ev.HandEnded(winner_seat=0, results=results, settlement=settlement, at_ms=1)


def solver_choice() -> ev.HandEnded:
    best = best_arrangement(HAND, WILD, OPTIONS)
    melds = tuple(ev.ScoredGroup(m.kind.name.lower(), m.cards) for m in best.melds)
    return ended(melds, " ".join(c.face for c in best.deadwood))


PURES = (group("pure_sequence", "2H 3H 4H"), group("pure_sequence", "9C 10C JC"))


def test_the_joker_in_a_sequence_not_a_set_of_equal_points_is_an_equivalent_arrangement() -> None:
    derived = solver_choice()
    alternative = ended((*PURES, group("impure_sequence", "6S JK 8S")), "7D 7C KS QD")
    assert hand_points(parse_cards("7D 7C KS QD"), WILD) == derived.results[1].points
    assert alternative != derived
    assert equivalent_seats(alternative, derived, WILD, OPTIONS) == ([1], "")


def test_a_group_that_is_no_meld_is_caught() -> None:
    derived = solver_choice()
    broken = ended((*PURES, group("impure_sequence", "6S 7D 8S")), "JK 7C KS QD")
    seats, why = equivalent_seats(broken, derived, WILD, OPTIONS)
    assert seats == [] and "no valid group" in why


def test_a_card_moved_into_another_meld_making_it_invalid_is_caught() -> None:
    derived = solver_choice()
    moved = ended(
        (
            group("pure_sequence", "2H 3H 4H"),
            group("pure_sequence", "9C JC"),
            group("set", "7C 7D JK 10C"),
        ),
        "6S 8S KS QD",
    )
    seats, why = equivalent_seats(moved, derived, WILD, OPTIONS)
    assert seats == [] and "no valid group" in why


def test_a_mislabelled_meld_kind_is_caught() -> None:
    derived = solver_choice()
    labelled = ended((*PURES, group("impure_sequence", "7C 7D JK")), "6S 8S KS QD")
    seats, why = equivalent_seats(labelled, derived, WILD, OPTIONS)
    assert seats == [] and "labelled 'impure_sequence'" in why


def test_an_arrangement_of_other_cards_is_caught() -> None:
    derived = solver_choice()
    swapped = ended((*PURES, group("set", "7C 7D JK")), "6S 8S KS KD")
    seats, why = equivalent_seats(swapped, derived, WILD, OPTIONS)
    assert seats == [] and "not its cards" in why


def test_a_grouping_worth_more_points_than_the_best_is_caught() -> None:
    derived = solver_choice()
    worse = ended(PURES[:1], "9C 10C JC 6S 8S JK 7D 7C KS QD")
    seats, why = equivalent_seats(worse, derived, WILD, OPTIONS)
    assert seats == [] and "no scoring tier" not in why and "points" in why


def test_a_changed_point_count_is_left_to_the_field_by_field_comparison() -> None:
    derived = solver_choice()
    results = (derived.results[0], ev.SeatResult(1, "acct-bo", "counted", 30, HAND, (), ()))
    changed = ev.HandEnded(winner_seat=0, results=results, settlement=derived.settlement, at_ms=1)
    assert equivalent_seats(changed, derived, WILD, OPTIONS) == ([], "")
