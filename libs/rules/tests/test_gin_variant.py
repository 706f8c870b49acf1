"""The gin family as a variant (``rummy_rules.gin.variant.GIN``): random whole hands through the
interface every host uses, from HandStarted to HandEnded (docs/rules/gin.md, hand-flow.md).

Each hand is dealt from the seeded shuffle (no cut: ten each from the non-dealer, the upcard, the
stock) and played by a random choice among ``legal_commands`` (and some timeouts). Every listed
command is accepted; 52 cards are always in the hands, the pile and the stock; ``fold(events)``
equals the live state; no seat's view or redacted events show the other hand before the end.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_rules import json_form
from rummy_rules.bot import Situation
from rummy_rules.cards import Card, parse_card
from rummy_rules.commands import (
    ContributeClientSeed,
    Deal,
    DrawFromDiscardPile,
    DrawFromStock,
    LeaveHand,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
    TurnTimeout,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    CardDrawn,
    DrawSource,
    Event,
    HandDealt,
    HandEnded,
    SeatAccount,
    TurnStarted,
)
from rummy_rules.formats.messages import deal_result
from rummy_rules.gin.hand import GinHandScored, GinKnocked, GinPassUpcard, GinWallReached
from rummy_rules.gin.rules import GIN_SHOE, GinOptions, gin_rule_set
from rummy_rules.gin.variant import GIN, GinPhase, GinState
from rummy_rules.rules import RuleSet, RuleSetError
from rummy_rules.shuffle import ShuffleInputs, deal
from rummy_testing.variant_play import VariantPlay, shuffled_deal

T0 = 1_700_000_000_000


class Hand(VariantPlay[GinState]):
    def __init__(self, rule_set: RuleSet, dealer: int = 1, seats: tuple[int, int] = (0, 1)):
        self.rule_set, self.dealer, self.seat_nos = rule_set, dealer, seats
        super().__init__(GIN)
        self.now = T0

    def deal(self, server_seed: bytes) -> None:
        a, b = self.seat_nos
        self.run(
            StartHand(
                hand_id="gin-1",
                seats=(SeatAccount(a, "acct-a"), SeatAccount(b, "acct-b")),
                dealer_seat=self.dealer,
                rule_set=self.rule_set,
                at_ms=self.now,
            )
        )
        self.run(RecordStakeReserved(seat=a, amount_hundredths=0, at_ms=self.now))
        self.run(RecordStakeReserved(seat=b, amount_hundredths=0, at_ms=self.now))
        commitment = hashlib.sha256(server_seed).hexdigest()
        self.run(RecordSeedCommitment(commitment=commitment, at_ms=self.now))
        assert GIN.deadline(self.state) is not None
        self.run(ContributeClientSeed(seat=a, seed_hex="ab", at_ms=self.now))
        self.run(TurnTimeout(turn_no=0, at_ms=self.now + 3000))
        assert self.state.phase is GinPhase.AWAITING_DEAL
        seeds = {s.seat: bytes.fromhex(s.seed_hex) for s in self.state.seeds}
        inputs = ShuffleInputs.of(server_seed, "gin-1", seeds)
        self.run(shuffled_deal(GIN, self.rule_set, inputs, self.seat_nos, self.dealer, self.now))


def _cards_in_play(state: GinState) -> list[Card]:
    play = state.play
    return [*play.hands[0], *play.hands[1], *play.pile, *play.stock]


def _check_privacy(hand: Hand) -> None:
    state = hand.state
    for seat in hand.seat_nos:
        other = next(s for s in hand.seat_nos if s != seat)
        view = GIN.view(state, seat)
        assert view.cards == state.play.hand_of(seat)
        if state.phase is GinPhase.PLAYING:
            hidden = set(state.play.hand_of(other)) - set(state.play.pile)
            shown = {c for e in hand.events for c in _cards_of(GIN.redact(e, seat), seat)}
            assert not (hidden & shown - _public_cards(hand.events, other))


def _cards_of(event: Event, seat: int) -> list[Card]:
    if isinstance(event, HandDealt):
        return [c for h in event.hands for c in h.cards] + list(event.stock)
    if isinstance(event, CardDrawn) and event.card is not None:
        return [event.card]
    if isinstance(event, GinKnocked) and event.face_down is not None:
        return [event.face_down]
    return []


def _public_cards(events: list[Event], seat: int) -> set[Card]:
    """Cards of ``seat``'s hand everyone saw: those it took from the pile, its knock's melds."""
    out: set[Card] = set()
    for e in events:
        pile = isinstance(e, CardDrawn) and e.source is DrawSource.DISCARD_PILE
        if isinstance(e, CardDrawn) and pile and e.seat == seat and e.card is not None:
            out.add(e.card)
        if isinstance(e, GinKnocked) and e.seat == seat:
            out |= {c for m in e.melds for c in m.cards} | set(e.deadwood_cards)
    return out


def play_random(hand: Hand, rng: random.Random, timeout_rate: float = 0.05) -> HandEnded:
    for _ in range(400):
        state = hand.state
        if GIN.is_over(state):
            break
        seat = state.play.turn_seat
        assert seat is not None
        legal = GIN.legal_commands(state, seat)
        assert legal, "the seat on turn always has a move"
        other = next(s for s in hand.seat_nos if s != seat)
        assert GIN.legal_commands(state, other) == ()
        hand.now += 500
        if rng.random() < timeout_rate:
            deadline = GIN.deadline(state)
            assert deadline is not None and deadline.turn_no == state.play.turn_no
            hand.run(TurnTimeout(turn_no=deadline.turn_no, at_ms=deadline.due_ms))
        else:
            command = replace(rng.choice(legal), at_ms=hand.now)  # type: ignore[type-var]
            assert hand.run(command), command
        assert len(_cards_in_play(hand.state)) == 52
        assert set(_cards_in_play(hand.state)) == set(GIN_SHOE.cards)
        _check_privacy(hand)
    result = GIN.result(hand.state)
    assert isinstance(result, HandEnded)
    return result


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.binary(min_size=32, max_size=32),
    choice=st.integers(0, 2**32 - 1),
    oklahoma=st.booleans(),
    dealer=st.sampled_from((0, 1)),
)
def test_random_hands_end_conserve_cards_and_fold(
    seed: bytes, choice: int, oklahoma: bool, dealer: int
) -> None:
    hand = Hand(gin_rule_set(oklahoma=oklahoma), dealer=dealer)
    hand.deal(seed)
    assert hand.state.play.turn_seat != dealer  # the non-dealer is offered the upcard first
    result = play_random(hand, random.Random(choice))
    assert GIN.fold(hand.events) == hand.state
    assert json_form.from_dict(json_form.to_dict(hand.state)) == hand.state
    outcome = deal_result(result)
    ending = hand.state.play.ending
    if isinstance(ending, GinWallReached):
        assert outcome.drawn and outcome.points == ((0, 0), (1, 0))
    elif isinstance(ending, GinHandScored):
        assert outcome.winners == (ending.winner_seat,)
        loser = 1 - ending.winner_seat
        assert dict(outcome.points) == {ending.winner_seat: 0, loser: ending.points}
    else:
        assert outcome.timed_out


@settings(max_examples=25, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32))
def test_bots_play_hands_to_their_end(seed: bytes) -> None:
    hand = Hand(gin_rule_set())
    hand.deal(seed)
    bot = GIN.bot
    assert bot is not None
    turns = {0: 0, 1: 0}
    for _ in range(200):
        state = hand.state
        if GIN.is_over(state):
            break
        seat = state.play.turn_seat
        assert seat is not None
        view = GIN.view(state, seat)
        turns[seat] += 0 if view.has_drawn else 1
        situation = Situation(
            seat=seat,
            cards=view.cards,
            discard_top=view.discard_pile[-1] if view.discard_pile else None,
            has_drawn=view.has_drawn,
            taken_from_pile=state.play.pile_taken,
            turns=turns[seat],
        )
        legal = GIN.legal_commands(state, seat)
        move = bot.choose(situation, legal)
        assert move in legal
        hand.now += 100
        hand.run(replace(move, at_ms=hand.now))  # type: ignore[type-var]
    result = GIN.result(hand.state)
    assert isinstance(result, HandEnded)
    assert result.results[0].outcome != "timed_out"


def test_the_other_hand_and_stock_are_redacted_from_the_deal() -> None:
    hand = Hand(gin_rule_set())
    hand.deal(b"\x01" * 32)
    dealt = next(e for e in hand.events if isinstance(e, HandDealt))
    mine = GIN.redact(dealt, 0)
    assert isinstance(mine, HandDealt)
    assert [len(h.cards) for h in mine.hands] == [10, 0] and mine.stock == ()
    assert mine.stock_count == 31 and mine.wild_cut is None
    view = GIN.view(hand.state, 0)
    assert len(view.cards) == 10 and view.stock_count == 31
    assert [s.card_count for s in view.seats] == [10, 10]


def test_leaving_mid_hand_ends_it_left_and_before_the_deal_aborts() -> None:
    hand = Hand(gin_rule_set())
    hand.deal(b"\x02" * 32)
    (ended,) = hand.run(LeaveHand(seat=1, at_ms=hand.now))
    assert isinstance(ended, HandEnded)
    assert deal_result(ended).left == frozenset({1}) and ended.winner_seat == 0
    early = Hand(gin_rule_set())
    early.run(
        StartHand(
            hand_id="h",
            seats=(SeatAccount(0, "a"), SeatAccount(1, "b")),
            dealer_seat=0,
            rule_set=gin_rule_set(),
            at_ms=T0,
        )
    )
    assert type(early.run(LeaveHand(seat=0, at_ms=T0))[0]).__name__ == "HandAborted"


def test_missed_turns_forfeit_the_hand_timed_out() -> None:
    hand = Hand(gin_rule_set(max_missed_turns=2))
    hand.deal(b"\x03" * 32)
    while not GIN.is_over(hand.state):
        deadline = GIN.deadline(hand.state)
        assert deadline is not None
        hand.run(TurnTimeout(turn_no=deadline.turn_no, at_ms=deadline.due_ms))
    result = GIN.result(hand.state)
    assert isinstance(result, HandEnded)
    assert deal_result(result).timed_out


def test_rule_sets_are_validated() -> None:
    assert gin_rule_set().max_loss_points == 129
    assert gin_rule_set(oklahoma=True).max_loss_points == 258
    assert gin_rule_set(big_gin=False).max_loss_points == 123
    with pytest.raises(RuleSetError):
        GIN.house_rule_set(3, 0, 0)
    wrong = replace(gin_rule_set(), options=GinOptions(oklahoma=True))
    with pytest.raises(RuleSetError):
        GIN.check_rule_set(wrong)
    hand = Hand(wrong)
    with pytest.raises(RuleViolation):
        hand.deal(b"\x04" * 32)
    assert GIN.deal_layout(gin_rule_set()).shape.wild_cut is False


def _dealt_with_upcard(rule_set: RuleSet, upcard: str) -> Hand:
    """A hand dealt from a fixed shuffle with ``upcard`` swapped in as the first open card."""
    hand = Hand(rule_set, dealer=1)
    start = GIN.initial_state()
    hand.state, hand.events = start, []
    server_seed = b"\x05" * 32
    dealt = deal(
        ShuffleInputs.of(server_seed, "gin-1", {0: b"", 1: b""}),
        GIN_SHOE,
        (0, 1),
        1,
        10,
        GinOptions.deal_shape,
    )
    card = parse_card(upcard)
    assert dealt.first_open is not None
    hands = tuple(
        replace(h, cards=tuple(dealt.first_open if c == card else c for c in h.cards))
        for h in dealt.hands
    )
    stock = tuple(dealt.first_open if c == card else c for c in dealt.stock)
    for command in (
        StartHand(
            hand_id="gin-1",
            seats=(SeatAccount(0, "a"), SeatAccount(1, "b")),
            dealer_seat=1,
            rule_set=rule_set,
            at_ms=T0,
        ),
        RecordStakeReserved(seat=0, amount_hundredths=0, at_ms=T0),
        RecordStakeReserved(seat=1, amount_hundredths=0, at_ms=T0),
        RecordSeedCommitment(commitment=hashlib.sha256(server_seed).hexdigest(), at_ms=T0),
        ContributeClientSeed(seat=0, seed_hex="", at_ms=T0),
        ContributeClientSeed(seat=1, seed_hex="", at_ms=T0),
        Deal(hands=hands, wild_cut=None, first_open=card, stock=stock, at_ms=T0),
    ):
        hand.run(command)
    return hand


def test_an_oklahoma_spade_upcard_sets_the_limit_and_doubles() -> None:
    hand = _dealt_with_upcard(gin_rule_set(oklahoma=True), "4S")
    assert (hand.state.play.rules.knock_limit, hand.state.play.rules.doubled) == (4, True)
    plain = _dealt_with_upcard(gin_rule_set(), "4S")
    assert (plain.state.play.rules.knock_limit, plain.state.play.rules.doubled) == (10, False)
    ace = _dealt_with_upcard(gin_rule_set(oklahoma=True), "AH")
    assert (ace.state.play.rules.knock_limit, ace.state.play.rules.doubled) == (1, False)


def test_the_first_turn_offer_is_timed_and_both_passing_leaves_the_non_dealer_the_stock() -> None:
    hand = _dealt_with_upcard(gin_rule_set(), "7H")
    first = hand.events[-1]
    assert isinstance(first, TurnStarted) and (first.seat, first.turn_no) == (0, 1)
    assert first.deadline_ms == T0 + 30_000
    passed = hand.run(GinPassUpcard(seat=0, turn_no=1, at_ms=T0 + 1000))
    assert passed[-1] == TurnStarted(seat=1, turn_no=2, deadline_ms=T0 + 31_000)
    hand.run(GinPassUpcard(seat=1, turn_no=2, at_ms=T0 + 2000))
    legal = GIN.legal_commands(hand.state, 0)
    assert legal == (DrawFromStock(seat=0, turn_no=3, at_ms=0),)
    with pytest.raises(RuleViolation):
        hand.run(DrawFromDiscardPile(seat=0, turn_no=3, at_ms=T0 + 3000))
