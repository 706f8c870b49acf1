"""The gin hand's play: the offer, draws, discards, knock, gin, big gin, the wall, timeouts and
views (docs/rules/gin.md#first-turn, #pile-card, #knock, #gin, #wall, #timeouts, #views)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_rules import json_form
from rummy_rules.cards import RANKS, SUITS, Card, parse_card, parse_cards
from rummy_rules.commands import Command, Discard, DrawFromDiscardPile, DrawFromStock, TurnTimeout
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import CardDiscarded, CardDrawn, DrawSource, Event, TurnTimedOut
from rummy_rules.gin.hand import (
    DeclareBigGin,
    DeclareGin,
    GinHand,
    GinHandScored,
    GinHandStarted,
    GinKnock,
    GinKnocked,
    GinPassUpcard,
    GinSeatForfeited,
    GinUpcardPassed,
    GinWallReached,
    Phase,
    StartGinHand,
    apply,
    decide,
    fold,
    legal_commands,
    redact,
    timeout_discard,
    view,
)
from rummy_rules.gin.scoring import HandRules
from rummy_testing.profiles import examples

DECK = tuple(Card(r, s) for s in SUITS for r in RANKS)
DEALER, NON_DEALER = 0, 1
DEFAULT_RULES = HandRules()


def start(
    non_dealer: str,
    dealer: str,
    upcard: str,
    *,
    stock_first: str = "",
    rules: HandRules = DEFAULT_RULES,
    max_missed_turns: int = 0,
) -> tuple[GinHand, list[Event]]:
    """A dealt hand: seat 1 (non-dealer) and seat 0 (dealer) hold the given cards; the stock
    starts with ``stock_first`` and goes on in canonical order."""
    hands = (parse_cards(dealer), parse_cards(non_dealer))
    up = parse_card(upcard)
    first = parse_cards(stock_first)
    used = {*hands[0], *hands[1], up, *first}
    stock = first + tuple(c for c in DECK if c not in used)
    command = StartGinHand(
        hand_id="h1",
        seats=(DEALER, NON_DEALER),
        dealer_seat=DEALER,
        hands=hands,
        upcard=up,
        stock=stock,
        rules=rules,
        max_missed_turns=max_missed_turns,
        at_ms=0,
    )
    events = list(decide(GinHand(), command))
    return fold(events), events


def play(state: GinHand, log: list[Event], command: Command) -> GinHand:
    events = decide(state, command)
    log += events
    for event in events:
        state = apply(state, event)
    assert fold(log) == state
    return state


def refused(state: GinHand, command: Command) -> ErrorCode:
    with pytest.raises(RuleViolation) as info:
        decide(state, command)
    return info.value.code


KNOCKER = "4H 5H 6H 8D 9D 10D QS QC QH 10C"  # the rules case GS08's knocker, 10C loose
DEFENDER = "3S 3C 3D 3H 7H 7D 7C 8H 6D AC"


def test_a_deal_that_is_not_one_whole_deck_is_refused() -> None:
    command = StartGinHand(
        hand_id="h",
        seats=(0, 1),
        dealer_seat=0,
        hands=(DECK[:10], DECK[10:20]),
        upcard=DECK[20],
        stock=DECK[21:51],
        rules=HandRules(),
        at_ms=0,
    )
    with pytest.raises(RuleViolation):
        decide(GinHand(), command)


def test_the_non_dealer_is_offered_the_upcard_first_and_may_not_discard_it_at_once() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD")
    assert (state.phase, state.turn_seat, state.turn_no) == (Phase.OFFER, NON_DEALER, 1)
    assert refused(state, DrawFromDiscardPile(seat=DEALER, turn_no=1, at_ms=1)) is (
        ErrorCode.NOT_YOUR_TURN
    )
    assert refused(state, DrawFromStock(seat=NON_DEALER, turn_no=1, at_ms=1)) is (
        ErrorCode.WRONG_PHASE
    )
    state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
    assert state.phase is Phase.DISCARD and len(state.hand_of(NON_DEALER)) == 11
    kd = parse_card("KD")
    assert refused(state, Discard(seat=NON_DEALER, turn_no=1, card=kd, at_ms=2)) is (
        ErrorCode.INVALID_CARD
    )
    assert refused(state, GinKnock(seat=NON_DEALER, turn_no=1, face_down=kd, at_ms=2)) is (
        ErrorCode.INVALID_CARD
    )
    state = play(state, log, Discard(seat=NON_DEALER, turn_no=1, card=parse_card("10C"), at_ms=2))
    assert (state.phase, state.turn_seat, state.turn_no) == (Phase.DRAW, DEALER, 2)
    assert state.pile[-1] == parse_card("10C")


def test_both_pass_then_the_non_dealer_draws_from_the_stock() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD")
    state = play(state, log, GinPassUpcard(seat=NON_DEALER, turn_no=1, at_ms=1))
    assert (state.phase, state.turn_seat, state.turn_no) == (Phase.OFFER, DEALER, 2)
    state = play(state, log, GinPassUpcard(seat=DEALER, turn_no=2, at_ms=2))
    assert (state.phase, state.turn_seat, state.turn_no) == (Phase.DRAW, NON_DEALER, 3)
    assert refused(state, DrawFromDiscardPile(seat=NON_DEALER, turn_no=3, at_ms=3)) is (
        ErrorCode.INVALID_COMMAND
    )
    assert refused(state, GinPassUpcard(seat=NON_DEALER, turn_no=3, at_ms=3)) is ErrorCode.NOT_DRAWN
    top = state.stock[0]
    state = play(state, log, DrawFromStock(seat=NON_DEALER, turn_no=3, at_ms=3))
    assert top in state.hand_of(NON_DEALER) and len(state.stock) == 30


def test_the_dealer_may_take_the_upcard_the_non_dealer_passed() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD")
    state = play(state, log, GinPassUpcard(seat=NON_DEALER, turn_no=1, at_ms=1))
    state = play(state, log, DrawFromDiscardPile(seat=DEALER, turn_no=2, at_ms=2))
    assert parse_card("KD") in state.hand_of(DEALER) and state.pile == ()


def test_a_knock_is_scored_with_the_defenders_lay_offs_and_both_hands_become_public() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD")
    state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
    ten_c = parse_card("10C")
    state = play(state, log, GinKnock(seat=NON_DEALER, turn_no=1, face_down=ten_c, at_ms=2))
    knocked, scored = log[-2], log[-1]
    assert isinstance(knocked, GinKnocked) and isinstance(scored, GinHandScored)
    assert knocked.deadwood == 10 and knocked.outcome == "knock"
    # 8 after laying off 6D 7D 7H 8H against the knocker's 10 (KD): undercut, 2 + 25.
    assert (scored.outcome, scored.winner_seat, scored.points) == ("undercut", DEALER, 27)
    assert state.phase is Phase.ENDED and state.ending == scored
    assert view(state, DEALER).ending == scored
    assert redact(knocked, DEALER) == GinKnocked(**{**knocked.__dict__, "face_down": None})


def test_a_knock_says_whether_the_knocker_named_its_melds() -> None:
    # house plan "Gin family": the knocker may name its melds, else the server arranges them
    ten_c = parse_card("10C")
    melds = (parse_cards("4H 5H 6H"), parse_cards("8D 9D 10D"), parse_cards("QS QC QH"))
    for named, want in ((None, False), (melds, True)):
        state, log = start(KNOCKER, DEFENDER, "KD")
        state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
        command = GinKnock(seat=NON_DEALER, turn_no=1, face_down=ten_c, melds=named, at_ms=2)
        state = play(state, log, command)
        knocked = log[-2]
        assert isinstance(knocked, GinKnocked) and knocked.melds_named is want
        assert {frozenset(m.cards) for m in knocked.melds} == {frozenset(m) for m in melds}
        assert json_form.from_dict(json_form.to_dict(knocked)) == knocked
    # a record written before the flag reads as the server's arrangement
    old = json_form.to_dict(knocked)
    del old["melds_named"]
    assert json_form.from_dict(old) == GinKnocked(**{**knocked.__dict__, "melds_named": False})


def test_a_knock_over_the_limit_and_a_false_gin_are_refused() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD", rules=HandRules(knock_limit=9))
    state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
    ten_c = parse_card("10C")
    assert refused(state, GinKnock(seat=NON_DEALER, turn_no=1, face_down=ten_c, at_ms=2)) is (
        ErrorCode.INVALID_COMMAND
    )
    assert refused(state, DeclareGin(seat=NON_DEALER, turn_no=1, face_down=ten_c, at_ms=2)) is (
        ErrorCode.INVALID_COMMAND
    )
    assert refused(state, DeclareBigGin(seat=NON_DEALER, turn_no=1, at_ms=2)) is (
        ErrorCode.INVALID_COMMAND
    )


def test_gin_and_big_gin_end_the_hand_with_no_lay_off() -> None:
    gin_hand = "4H 5H 6H 8D 9D 10D QS QC QH KC"
    state, log = start(gin_hand, DEFENDER, "JD")
    state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
    state = play(
        state, log, DeclareGin(seat=NON_DEALER, turn_no=1, face_down=parse_card("KC"), at_ms=2)
    )
    scored = log[-1]
    assert isinstance(scored, GinHandScored)
    assert (scored.outcome, scored.points, scored.layoffs) == ("gin", 15 + 25, ())

    state, log = start("4H 5H 6H 8D 9D 10D QS QC QH 7H", DEFENDER.replace("7H", "JD"), "QD")
    state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
    assert any(isinstance(c, DeclareBigGin) for c in legal_commands(state, NON_DEALER))
    state = play(state, log, DeclareBigGin(seat=NON_DEALER, turn_no=1, at_ms=2))
    scored = log[-1]
    assert isinstance(scored, GinHandScored) and scored.outcome == "big_gin"
    assert scored.points == scored.defender_deadwood + 31


def test_the_wall_two_stock_cards_left_and_no_knock_is_a_draw() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD")
    state = play(state, log, GinPassUpcard(seat=NON_DEALER, turn_no=1, at_ms=1))
    state = play(state, log, GinPassUpcard(seat=DEALER, turn_no=2, at_ms=2))
    while state.phase is not Phase.ENDED:
        seat, n = state.turn_seat, state.turn_no
        assert seat is not None
        assert len(state.stock) > 2
        state = play(state, log, DrawFromStock(seat=seat, turn_no=n, at_ms=n))
        drawn = state.hand_of(seat)[-1]
        state = play(state, log, Discard(seat=seat, turn_no=n, card=drawn, at_ms=n))
    assert isinstance(log[-1], GinWallReached) and len(state.stock) == 2
    assert log[-1].hands == state.hands


def test_a_timeout_at_the_offer_is_a_pass_and_later_draws_and_throws_the_highest_deadwood() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD", stock_first="2S")
    state = play(state, log, TurnTimeout(turn_no=1, at_ms=1))
    assert isinstance(log[-1], GinUpcardPassed) and state.turn_seat == DEALER
    assert decide(state, TurnTimeout(turn_no=1, at_ms=2)) == ()  # stale
    state = play(state, log, GinPassUpcard(seat=DEALER, turn_no=2, at_ms=2))
    state = play(state, log, TurnTimeout(turn_no=3, at_ms=3))
    timed, drawn, thrown = log[-3:]
    assert isinstance(timed, TurnTimedOut) and timed.misses_in_a_row == 2
    assert isinstance(drawn, CardDrawn) and drawn.card == parse_card("2S")
    assert isinstance(thrown, CardDiscarded) and thrown.card == parse_card("10C")


def test_a_timed_out_turn_never_throws_the_card_it_took_from_the_pile() -> None:
    hand = parse_cards("4H 5H 6H 8D 9D 10D QS QC QH 2C KS")  # KS taken from the pile
    assert timeout_discard(hand, parse_card("KS")) == parse_card("2C")
    assert timeout_discard(hand, None) == parse_card("KS")
    tie = parse_cards("4H 5H 6H 8D 9D 10D QS QC QH KC KS")
    assert timeout_discard(tie, None) == parse_card("KS")  # ties: the greater rank, then suit


def test_missed_turns_in_a_row_forfeit_and_a_seats_own_play_resets_its_count() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD", max_missed_turns=2)
    state = play(state, log, TurnTimeout(turn_no=1, at_ms=1))  # non-dealer: 1
    state = play(state, log, GinPassUpcard(seat=DEALER, turn_no=2, at_ms=2))
    state = play(state, log, DrawFromStock(seat=NON_DEALER, turn_no=3, at_ms=3))  # own play
    drawn = state.hand_of(NON_DEALER)[-1]
    state = play(state, log, Discard(seat=NON_DEALER, turn_no=3, card=drawn, at_ms=3))
    assert state.misses == (0, 0)
    state = play(state, log, TurnTimeout(turn_no=4, at_ms=4))  # dealer: 1
    state = play(state, log, TurnTimeout(turn_no=5, at_ms=5))  # non-dealer: 1
    assert state.phase is not Phase.ENDED
    state = play(state, log, TurnTimeout(turn_no=6, at_ms=6))  # dealer: 2, forfeits
    assert isinstance(log[-1], GinSeatForfeited) and log[-1].seat == DEALER
    assert state.phase is Phase.ENDED


def test_redaction_hides_the_other_hand_the_stock_and_stock_draws() -> None:
    _, log = start(KNOCKER, DEFENDER, "KD")
    started = log[0]
    assert isinstance(started, GinHandStarted)
    mine = redact(started, NON_DEALER)
    assert isinstance(mine, GinHandStarted)
    assert mine.hands == ((), parse_cards(KNOCKER)) and mine.stock == ()
    assert mine.stock_count == 31
    drawn = CardDrawn(seat=DEALER, turn_no=2, source=DrawSource.STOCK, card=DECK[0])
    assert redact(drawn, NON_DEALER) == CardDrawn(
        seat=DEALER, turn_no=2, source=DrawSource.STOCK, card=None
    )
    assert redact(drawn, DEALER) == drawn


def test_gin_messages_round_trip_through_the_codec() -> None:
    state, log = start(KNOCKER, DEFENDER, "KD")
    state = play(state, log, DrawFromDiscardPile(seat=NON_DEALER, turn_no=1, at_ms=1))
    play(state, log, GinKnock(seat=NON_DEALER, turn_no=1, face_down=parse_card("10C"), at_ms=2))
    for event in log:
        assert json_form.from_dict(json_form.to_dict(event)) == event
    named = GinKnock(
        seat=NON_DEALER,
        turn_no=1,
        face_down=parse_card("10C"),
        melds=(parse_cards("4H 5H 6H"), parse_cards("QS QC QH")),
        at_ms=2,
    )
    for command in (named, GinPassUpcard(seat=1, turn_no=1, at_ms=1)):
        assert json_form.from_dict(json_form.to_dict(command)) == command


@settings(max_examples=examples(ci=200, dev=30))
@given(st.permutations(DECK), st.data())
def test_random_legal_play_keeps_every_card_and_never_shows_the_other_hand(
    deck: list[Card], data: st.DataObject
) -> None:
    command = StartGinHand(
        hand_id="p",
        seats=(3, 5),
        dealer_seat=data.draw(st.sampled_from([3, 5])),
        hands=(tuple(deck[:10]), tuple(deck[10:20])),
        upcard=deck[20],
        stock=tuple(deck[21:]),
        rules=HandRules(knock_limit=data.draw(st.integers(0, 10))),
        max_missed_turns=data.draw(st.sampled_from([0, 3])),
        at_ms=0,
    )
    log = list(decide(GinHand(), command))
    state = fold(log)
    for _ in range(200):
        if state.phase is Phase.ENDED:
            break
        seat = state.turn_seat
        assert seat is not None
        options: list[Command] = [
            *legal_commands(state, seat),
            TurnTimeout(turn_no=state.turn_no, at_ms=1),
        ]
        assert not legal_commands(state, state.other(seat))
        choice = data.draw(st.sampled_from(options))
        events = decide(state, choice)
        for event in events:
            state = apply(state, event)
            log.append(event)
        if state.phase is not Phase.ENDED:
            held = Counter([*state.hands[0], *state.hands[1], *state.stock, *state.pile])
            assert held == Counter(DECK)
        for watcher in (3, 5):
            other = state.other(watcher)
            seen = view(state, watcher)
            if state.phase is not Phase.ENDED:
                assert not set(seen.cards) & set(state.hand_of(other))
                assert seen.other_card_count == len(state.hand_of(other))
            for event in events:
                shown = redact(event, watcher)
                if isinstance(shown, GinHandStarted):
                    assert shown.hands[shown.seats.index(other)] == () and shown.stock == ()
    assert state.phase is Phase.ENDED
    assert fold(log) == state
