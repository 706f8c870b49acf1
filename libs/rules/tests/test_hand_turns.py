"""Turns: who may act, what a refused command says, timeouts played for, penalties and the cap."""

from __future__ import annotations

import dataclasses

import pytest
from hand_play import Table, fixed_deal

from rummy_rules.cards import Card, parse_card, parse_cards
from rummy_rules.commands import Discard, DrawFromDiscardPile, DrawFromStock, TurnTimeout
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import CardDiscarded, CardDrawn, DrawSource, HandEnded, TurnStarted
from rummy_rules.indian import INDIAN_POINTS, Declare, Drop, auto_discard
from rummy_rules.indian.rules import IndianPointsRules, bombay_baazi

C = parse_card
HIGH_CARDS = parse_cards("KS KH QD 2C 3C 4D 6S 7S 8H 9H 10D JC AC")  # no sequence at all


def two_seats(
    rules: object = None,
    stock_top: tuple[str, ...] = (),
    open_card: Card | None = None,
    hands: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None,
) -> Table:
    """Seats 0 and 1 (dealer 1, so seat 0 plays first); seat 0 holds HIGH_CARDS, cut 5D,
    open card 9S (or the given hands and open card)."""
    t = Table(rules or bombay_baazi(4, 100, 1000))  # type: ignore[arg-type]
    zero, one = hands or (HIGH_CARDS, parse_cards("2H 3H 4H 6H 7H 2S 3S 4S 8S 10S JS QS AS"))
    t.start(
        [0, 1],
        1,
        {},
        rig=lambda d: fixed_deal(
            d,
            {0: list(zero), 1: list(one)},
            C("5D"),
            open_card or C("9S"),
            [C(c) for c in stock_top],
        ),
    )
    return t


def refused(t: Table, command: object) -> RuleViolation:
    n = len(t.events)
    state = t.state
    with pytest.raises(RuleViolation) as info:
        t.run(command)
    assert t.state is state and len(t.events) == n  # a refused command changes nothing
    return info.value


def test_a_command_for_a_turn_that_has_moved_on_is_stale() -> None:
    t = two_seats()
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    t.run(Discard(seat=0, turn_no=1, card=C("KS"), at_ms=t.tick()))
    error = refused(t, DrawFromStock(seat=1, turn_no=1, at_ms=t.tick()))
    assert error.code is ErrorCode.STALE_TURN and error.code.status == "FAILED_PRECONDITION"


def test_only_the_seat_on_turn_may_draw() -> None:
    t = two_seats()
    error = refused(t, DrawFromStock(seat=1, turn_no=1, at_ms=t.tick()))
    assert error.code is ErrorCode.NOT_YOUR_TURN


def test_a_seat_not_dealt_in_is_denied() -> None:
    t = two_seats()
    error = refused(t, DrawFromStock(seat=3, turn_no=1, at_ms=t.tick()))
    assert error.code is ErrorCode.NOT_IN_HAND and error.code.status == "PERMISSION_DENIED"


def test_one_draw_then_one_discard_per_turn() -> None:
    t = two_seats()
    assert refused(t, Discard(seat=0, turn_no=1, card=C("KS"), at_ms=0)).code is ErrorCode.NOT_DRAWN
    assert refused(t, Declare(seat=0, turn_no=1, face_down=C("KS"), at_ms=0)).code is (
        ErrorCode.NOT_DRAWN
    )
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    assert refused(t, DrawFromDiscardPile(seat=0, turn_no=1, at_ms=0)).code is (
        ErrorCode.ALREADY_DRAWN
    )
    assert refused(t, Drop(seat=0, turn_no=1, at_ms=0)).code is ErrorCode.ALREADY_DRAWN
    error = refused(t, Discard(seat=0, turn_no=1, card=C("2H"), at_ms=0))
    assert error.code is ErrorCode.INVALID_CARD and error.code.status == "INVALID_ARGUMENT"


def test_the_card_taken_from_the_discard_pile_cannot_be_discarded_in_the_same_turn() -> None:
    t = two_seats()
    t.run(DrawFromDiscardPile(seat=0, turn_no=1, at_ms=t.tick()))
    assert refused(t, Discard(seat=0, turn_no=1, card=C("9S"), at_ms=0)).code is (
        ErrorCode.INVALID_CARD
    )
    t.run(Discard(seat=0, turn_no=1, card=C("KS"), at_ms=t.tick()))
    assert t.state.discard_pile == (C("KS"),)


def test_with_the_option_off_the_card_taken_from_the_pile_may_go_straight_back() -> None:
    rules = bombay_baazi(4, 100, 1000)
    rules = dataclasses.replace(
        rules, options=IndianPointsRules(no_discard_of_card_taken_from_pile=False)
    )
    t = two_seats(rules)
    t.run(DrawFromDiscardPile(seat=0, turn_no=1, at_ms=t.tick()))
    t.run(Discard(seat=0, turn_no=1, card=C("9S"), at_ms=t.tick()))
    assert t.state.discard_pile == (C("9S"),)


def test_a_timed_out_seat_that_drew_from_the_stock_discards_the_card_it_drew() -> None:
    t = two_seats(stock_top=("KD",))
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    events = t.run(TurnTimeout(turn_no=1, at_ms=t.tick()))
    assert events[1] == CardDiscarded(seat=0, turn_no=1, card=C("KD"))


def test_a_timed_out_seat_that_drew_from_the_pile_discards_its_highest_card_by_fixed_order() -> (
    None
):
    t = two_seats()
    t.run(DrawFromDiscardPile(seat=0, turn_no=1, at_ms=t.tick()))
    # HIGH_CARDS' ten-point cards: KS KH QD 10D JC AC; the highest rank is the king, and of the
    # two kings the spade comes last in the suit order (clubs, diamonds, hearts, spades).
    assert auto_discard(t.state) == C("KS")
    events = t.run(TurnTimeout(turn_no=1, at_ms=t.tick()))
    assert events[1] == CardDiscarded(seat=0, turn_no=1, card=C("KS"))


def test_the_picked_card_is_not_the_auto_discard_even_when_it_ranks_highest() -> None:
    t = two_seats(open_card=C("KS", copy=1))
    t.run(DrawFromDiscardPile(seat=0, turn_no=1, at_ms=t.tick()))
    # KS copy 1 would win the tie with KS copy 0 (copy is the last key), but it was just taken
    # from the pile and may not go back this turn.
    events = t.run(TurnTimeout(turn_no=1, at_ms=t.tick()))
    assert events[1] == CardDiscarded(seat=0, turn_no=1, card=C("KS"))


def test_playing_one_own_turn_resets_the_count_of_missed_turns() -> None:
    t = two_seats()
    t.run(TurnTimeout(turn_no=1, at_ms=t.tick()))  # seat 0 misses turn 1
    t.run(DrawFromStock(seat=1, turn_no=2, at_ms=t.tick()))
    t.run(Discard(seat=1, turn_no=2, card=t.state.drawn_card, at_ms=t.tick()))  # type: ignore[arg-type]
    t.run(TurnTimeout(turn_no=3, at_ms=t.tick()))  # misses turn 3: two in a row
    assert t.state.seat_state(0).misses_in_a_row == 2  # type: ignore[union-attr]
    t.run(DrawFromStock(seat=1, turn_no=4, at_ms=t.tick()))
    t.run(Discard(seat=1, turn_no=4, card=t.state.drawn_card, at_ms=t.tick()))  # type: ignore[arg-type]
    t.run(DrawFromStock(seat=0, turn_no=5, at_ms=t.tick()))  # plays turn 5 itself
    t.run(Discard(seat=0, turn_no=5, card=t.state.drawn_card, at_ms=t.tick()))  # type: ignore[arg-type]
    assert t.state.seat_state(0).misses_in_a_row == 0  # type: ignore[union-attr]


def test_each_turn_gets_its_own_number_and_a_deadline_turn_seconds_after_the_last_act() -> None:
    t = two_seats()
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    at = t.tick()
    events = t.run(Discard(seat=0, turn_no=1, card=C("KS"), at_ms=at))
    assert events[-1] == TurnStarted(seat=1, turn_no=2, deadline_ms=at + 30_000)


def test_a_drawn_stock_card_reaches_only_its_seat_a_pile_card_everyone() -> None:
    t = two_seats(stock_top=("KD",))
    (drawn,) = t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    assert INDIAN_POINTS.redact(drawn, 0) == drawn
    assert INDIAN_POINTS.redact(drawn, 1) == CardDrawn(
        seat=0, turn_no=1, source=DrawSource.STOCK, card=None
    )
    t.run(Discard(seat=0, turn_no=1, card=C("KD"), at_ms=t.tick()))
    (picked,) = t.run(DrawFromDiscardPile(seat=1, turn_no=2, at_ms=t.tick()))
    assert picked == CardDrawn(seat=1, turn_no=2, source=DrawSource.DISCARD_PILE, card=C("KD"))
    assert INDIAN_POINTS.redact(picked, 0) == picked


def test_a_loser_is_charged_the_cap_when_the_rule_set_has_one() -> None:
    rules = bombay_baazi(4, 100, 0, points_cap=80)
    ready = parse_cards("AH 2H 3H 4H 7S 8S 9S 10C JC QC KD KS 9D")  # KH completes KD KS KH
    # No pure sequence (clubs K,2,3 do not wrap; hearts 8,9,Q; diamonds 4,7,10,J,A), no joker:
    # 10+10+10+2+3+4+6+7+8+9+10+10+10 = 99 points, capped at 80.
    junk = parse_cards("KC QH QS 2C 3C 4D 6S 7D 8H 9H 10D JD AD")
    t = two_seats(rules, stock_top=("KH",), open_card=C("JH"), hands=(ready, junk))
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    t.run(Declare(seat=0, turn_no=1, face_down=C("9D"), at_ms=t.tick()))
    result = t.state.result
    assert isinstance(result, HandEnded)
    assert [(r.outcome, r.points) for r in result.results] == [("won", 0), ("counted", 80)]
    assert result.settlement.amount_for(1) == -8000  # 80 x 100, free of commission here


def test_penalties_are_not_capped_below_themselves_and_a_first_drop_stays_20() -> None:
    t = two_seats(bombay_baazi(4, 100, 0, points_cap=80))
    t.run(Drop(seat=0, turn_no=1, at_ms=t.tick()))
    result = t.state.result
    assert isinstance(result, HandEnded)
    assert [(r.outcome, r.points) for r in result.results] == [("first_drop", 20), ("won", 0)]


def test_after_the_hand_ends_every_command_is_refused() -> None:
    t = two_seats()
    t.run(Drop(seat=0, turn_no=1, at_ms=t.tick()))
    assert INDIAN_POINTS.is_over(t.state) and INDIAN_POINTS.deadline(t.state) is None
    assert refused(t, DrawFromStock(seat=1, turn_no=2, at_ms=0)).code is ErrorCode.WRONG_PHASE
    assert t.run(TurnTimeout(turn_no=2, at_ms=t.tick())) == ()
