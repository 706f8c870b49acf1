"""A toy variant unlike Indian points in every way a host might assume (2-3 seats, 5 cards from one
52-card deck, no wild cut, no jokers, its own command, a pot that two winners can share, its own
maximum loss), driven only through the generic interface: ``rummy_rules.registry`` finds it by
name, and ``decide``/``apply``/``fold``, ``view``, ``redact``, ``deadline``, ``deal_layout``,
``max_loss_points`` and the settlement in its ``HandEnded`` are all a host uses."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_rules import json_form, registry
from rummy_rules.cards import Card, Suit, parse_card
from rummy_rules.commands import (
    Command,
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromStock,
    RecordSeedCommitment,
    StartHand,
    TurnTimeout,
)
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import Event, HandDealt, HandEnded, HandStarted, SeatAccount
from rummy_rules.rules import RuleSet, RuleSetError
from rummy_rules.settlement import settle_shared
from rummy_rules.shuffle import SeatHand, ShuffleInputs, deal
from rummy_rules.variant import DeadlineKind, Variant
from rummy_testing.profiles import examples
from toy_variant import TOY_NAME, Knock, toy_rule_set

T0 = 1_700_000_000_000
#: The fairness service's commitment (the toy's seed window opens once it is recorded).
COMMITMENT = "00" * 32


def variant() -> Variant[Any]:
    """The toy, found as a host finds a variant: by the name its rule set pins."""
    return registry.lookup(TOY_NAME, "toy-knock-house/1")


def run(v: Variant[Any], state: Any, command: Command) -> tuple[Any, tuple[Event, ...]]:
    events = v.decide(state, command)
    return v.fold(events, state), events


def start(
    rule_set: RuleSet, seats: tuple[int, ...], dealer: int, seeds: dict[int, bytes], server: bytes
) -> tuple[Any, list[Event], list[Command]]:
    """Start a hand and deal it with the shuffle the variant's deal layout asks for."""
    v = variant()
    commands: list[Command] = [
        StartHand(
            hand_id="toy-hand",
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in seats),
            dealer_seat=dealer,
            rule_set=rule_set,
            at_ms=T0,
        )
    ]
    commands += [
        ContributeClientSeed(seat=s, seed_hex=seed.hex(), at_ms=T0 + 1) for s, seed in seeds.items()
    ]
    commands.append(RecordSeedCommitment(commitment=COMMITMENT, at_ms=T0 + 1))
    commands.append(TurnTimeout(turn_no=0, at_ms=T0 + 2))
    state, events = v.initial_state(), list[Event]()
    for command in commands:
        state, new = run(v, state, command)
        events += new
    layout = v.deal_layout(rule_set)
    inputs = ShuffleInputs(server, "toy-hand", tuple((s, seeds.get(s, b"")) for s in seats))
    dealt = deal(inputs, layout.shoe, seats, dealer, layout.hand_size, layout.shape)
    assert dealt.wild_cut is None and dealt.first_open is not None
    command = Deal(
        hands=dealt.hands,
        wild_cut=None,
        first_open=dealt.first_open,
        stock=dealt.stock,
        at_ms=T0 + 3,
    )
    commands.append(command)
    state, new = run(v, state, command)
    return state, events + list(new), commands


def test_the_toy_deal_layout_is_five_cards_from_one_deck_with_no_cut_and_its_own_max_loss() -> None:
    v = variant()
    rules = toy_rule_set(3, 10, 500, max_points=30)
    layout = v.deal_layout(rules)
    assert (layout.shape.wild_cut, layout.shape.upcard) == (False, True)
    assert layout.hand_size == 5 and layout.shoe.size == 52 and layout.shoe.printed_jokers == 0
    assert v.max_loss_points(rules) == 30
    assert rules.max_loss_points == 30


def test_the_registry_refuses_a_name_or_rules_label_nobody_plays() -> None:
    with pytest.raises(registry.UnknownVariant):
        registry.lookup("no-such-game")
    with pytest.raises(registry.UnknownVariant):
        registry.lookup(TOY_NAME, "bombay-baazi/1")
    with pytest.raises(registry.UnknownVariant):  # a record naming none is upcast first
        registry.lookup("")
    assert TOY_NAME in registry.names()


def test_each_variant_refuses_the_other_variants_rule_set() -> None:
    indian = registry.lookup("indian-points")
    toy_rules = toy_rule_set(2, 10, 0)
    with pytest.raises(RuleSetError):
        indian.check_rule_set(toy_rules)
    with pytest.raises(RuleSetError):
        variant().check_rule_set(indian.house_rule_set(4, 10, 0))
    command = StartHand(
        hand_id="h",
        seats=(SeatAccount(0, "a"), SeatAccount(1, "b")),
        dealer_seat=0,
        rule_set=toy_rules,
        at_ms=T0,
    )
    with pytest.raises(RuleViolation):
        indian.decide(indian.initial_state(), command)


@pytest.mark.parametrize(
    ("build", "option"),
    [
        (lambda: toy_rule_set(4, 10, 0), "seats"),
        (lambda: toy_rule_set(3, 10, 0, max_points=51), "max_points"),
        (lambda: toy_rule_set(3, 10, 0, max_points=0), "max_points"),
        (lambda: toy_rule_set(3, 10, 0, max_turns=37), "max_turns"),
        (lambda: toy_rule_set(3, 2**62, 0), "point_value_hundredths"),
    ],
)
def test_a_toy_rule_set_out_of_bounds_names_the_option(build: Any, option: str) -> None:
    with pytest.raises(RuleSetError) as caught:
        build()
    assert caught.value.option == option


def test_a_toy_rule_set_survives_the_codec_with_its_options_tagged() -> None:
    rules = toy_rule_set(3, 25, 1250, max_points=40, max_turns=9)
    started = HandStarted(
        hand_id="h", seats=(SeatAccount(0, "a"),), dealer_seat=0, rule_set=rules, at_ms=T0
    )
    data = json_form.to_dict(started)
    assert data["rule_set"]["options"]["type"] == "toy.Options"
    assert json_form.from_dict(data) == started


def _cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_card(face) for face in text.split())


def test_two_seats_with_the_lowest_total_share_the_pot_less_the_commission() -> None:
    v = variant()
    rules = toy_rule_set(3, 10, 1000, max_points=25)
    hands = (
        SeatHand(0, _cards("AC 2C 3C 4C 5C")),  # 15
        SeatHand(1, _cards("AD 2D 3D 4D 5D")),  # 15
        SeatHand(2, _cards("KS QS JS 10S 9S")),  # 49: charged 34, capped at 25
    )
    used = {c for h in hands for c in h.cards}
    rest = tuple(c for c in rules.shoe.cards if c not in used)
    state = _started_state(rules)  # seats 0, 1, 2, dealer 2: seat 0 plays first
    state, events = run(
        v, state, Deal(hands=hands, wild_cut=None, first_open=rest[0], stock=rest[1:], at_ms=T0)
    )
    turn = v.view(state, 0)
    assert turn.turn_seat == 0 and turn.turn_no == 1 and turn.wild_rank is None
    state, events = run(v, state, Knock(seat=0, turn_no=1, at_ms=T0 + 5))
    ended = v.result(state)
    assert isinstance(ended, HandEnded)
    s = ended.settlement
    assert s.winner_seats == (0, 1)
    assert s.amount_for(2) == -250 and s.commission_hundredths == 25
    assert (s.amount_for(0), s.amount_for(1)) == (113, 112)
    assert sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0
    assert [v.view(state, 2).seats[k].status for k in range(3)] == ["won", "won", "playing"]
    assert v.deadline(state) is None and v.is_over(state)


def _started_state(rules: RuleSet) -> Any:
    v = variant()
    state = v.initial_state()
    for command in (
        StartHand(
            hand_id="toy-hand",
            seats=(SeatAccount(0, "a"), SeatAccount(1, "b"), SeatAccount(2, "c")),
            dealer_seat=2,
            rule_set=rules,
            at_ms=T0,
        ),
        RecordSeedCommitment(commitment=COMMITMENT, at_ms=T0),
        TurnTimeout(turn_no=0, at_ms=T0 + 1),
    ):
        state, _ = run(v, state, command)
    return state


def test_the_toy_refuses_indian_moves_and_a_deal_with_a_cut_and_changes_nothing() -> None:
    v = variant()
    rules = toy_rule_set(2, 10, 0)
    state, _, _ = start(rules, (0, 1), 0, {}, b"\x02" * 32)
    with pytest.raises(RuleViolation) as caught:
        v.decide(state, Discard(seat=1, turn_no=1, card=v.view(state, 1).cards[0], at_ms=T0))
    assert caught.value.code is ErrorCode.NOT_DRAWN
    with pytest.raises(RuleViolation) as caught:
        v.decide(state, Knock(seat=0, turn_no=1, at_ms=T0))
    assert caught.value.code is ErrorCode.NOT_YOUR_TURN
    fresh = _started_state(toy_rule_set(3, 10, 0))
    cards = toy_rule_set(3, 10, 0).shoe.cards
    with pytest.raises(RuleViolation) as caught:
        v.decide(
            fresh,
            Deal(
                hands=(
                    SeatHand(0, cards[0:5]),
                    SeatHand(1, cards[5:10]),
                    SeatHand(2, cards[10:15]),
                ),
                wild_cut=cards[15],
                first_open=cards[16],
                stock=cards[17:],
                at_ms=T0,
            ),
        )
    assert caught.value.code is ErrorCode.INVALID_DEAL


@st.composite
def hands(draw: st.DrawFn) -> dict[str, Any]:
    table_seats = draw(st.integers(2, 3))
    seated = tuple(sorted(draw(st.sets(st.integers(0, table_seats - 1), min_size=2))))
    return {
        "rules": toy_rule_set(
            table_seats,
            draw(st.integers(0, 10**9)),
            draw(st.integers(0, 10_000)),
            max_points=draw(st.integers(1, 50)),
            max_turns=draw(st.integers(1, 20)),
        ),
        "seated": seated,
        "dealer": draw(st.sampled_from(seated)),
        "seeds": draw(st.dictionaries(st.sampled_from(seated), st.binary(max_size=8))),
        "server": draw(st.binary(min_size=32, max_size=32)),
        "moves": draw(st.lists(st.integers(0, 99), max_size=40)),
    }


def _choose(v: Variant[Any], state: Any, pick: int, at_ms: int) -> Command:
    """A legal move for the seat on turn, from ``pick``: knock (rarely), time out, or draw and
    then discard one of its cards; read from the seat's own view only."""
    view = v.view(state, -1)
    seat, turn = view.turn_seat, view.turn_no
    assert seat is not None
    if view.has_drawn:
        own = v.view(state, seat).cards
        return Discard(seat=seat, turn_no=turn, card=own[pick % len(own)], at_ms=at_ms)
    if pick < 8:
        return Knock(seat=seat, turn_no=turn, at_ms=at_ms)
    if pick < 20:
        deadline = v.deadline(state)
        assert deadline is not None and deadline.kind is DeadlineKind.TURN
        return TurnTimeout(turn_no=deadline.turn_no, at_ms=deadline.due_ms)
    return DrawFromStock(seat=seat, turn_no=turn, at_ms=at_ms)


def _play(case: dict[str, Any]) -> tuple[Any, list[Event]]:
    v = variant()
    state, events, _ = start(
        case["rules"], case["seated"], case["dealer"], case["seeds"], case["server"]
    )
    moves = iter(case["moves"])
    at = T0 + 10
    while not v.is_over(state):
        command = _choose(v, state, next(moves, 50), at)
        state, new = run(v, state, command)
        events += new
        at += 1000
        # a seat not on turn is refused and nothing changes
        view = v.view(state, -1)
        if view.turn_seat is not None:
            other = next(s.seat for s in view.seats if s.seat != view.turn_seat)
            with pytest.raises(RuleViolation):
                v.decide(state, DrawFromStock(seat=other, turn_no=view.turn_no, at_ms=at))
    return state, events


@settings(max_examples=examples(ci=150, dev=40))
@given(hands())
def test_every_toy_hand_settles_to_zero_within_each_losers_max_loss_and_replays_exactly(
    case: dict[str, Any],
) -> None:
    v = variant()
    rules: RuleSet = case["rules"]
    state, events = _play(case)
    ended = v.result(state)
    assert isinstance(ended, HandEnded)
    s = ended.settlement
    assert sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0
    most = v.max_loss_points(rules) * rules.point_value_hundredths
    for line in s.lines:
        if line.seat in s.winner_seats:
            assert line.points == 0 and line.amount_hundredths >= 0
        else:
            assert 0 <= line.points <= v.max_loss_points(rules)
            assert -most <= line.amount_hundredths <= 0
    takings = [s.amount_for(seat) for seat in s.winner_seats]
    assert max(takings) - min(takings) <= 1
    # what settle_shared gives for these points is what the hand recorded
    points = {line.seat: line.points for line in s.lines}
    ordered = (s.winner_seat, *s.co_winner_seats)
    assert settle_shared(rules, ordered, points) == s
    # deterministic: the same history folds to the same state; the codec round-trips it
    assert v.fold(events) == state
    assert [json_form.from_dict(json_form.to_dict(e)) for e in events] == events
    replayed, again = _play(case)
    assert again == events and replayed == state


@settings(max_examples=60)
@given(hands())
def test_a_toy_seat_never_sees_another_seats_cards_before_the_end(case: dict[str, Any]) -> None:
    v = variant()
    _, events = _play(case)
    state = v.initial_state()
    for event in events:
        state = v.apply(state, event)
        if v.is_over(state):
            break
        for seat in case["seated"]:
            seen = v.redact(event, seat)
            if isinstance(seen, HandDealt):
                assert all(not h.cards for h in seen.hands if h.seat != seat) and not seen.stock
                assert seen.wild_cut is None
            view = v.view(state, seat)
            others = {c for s in case["seated"] if s != seat for c in v.view(state, s).cards}
            assert not others & set(view.cards)
            assert all(isinstance(c.suit, Suit) for c in view.cards)


def test_a_toy_settlement_with_two_winners_is_a_plain_value_the_codec_keeps() -> None:
    rules = toy_rule_set(3, 7, 333)
    shared = settle_shared(rules, (2, 0), {0: 0, 1: 25, 2: 0})
    assert shared.winner_seat == 2 and shared.co_winner_seats == (0,)
    assert shared.total_hundredths == 175
    assert dataclasses.replace(shared) == shared


def _knocked_with(hands: tuple[SeatHand, ...], rules: RuleSet) -> HandEnded:
    """Deal ``hands`` to seats 0, 1, 2 (dealer 2) and let seat 0 knock at once."""
    v = variant()
    used = {c for h in hands for c in h.cards}
    rest = tuple(c for c in rules.shoe.cards if c not in used)
    state, _ = run(
        v,
        _started_state(rules),
        Deal(hands=hands, wild_cut=None, first_open=rest[0], stock=rest[1:], at_ms=T0),
    )
    state, _ = run(v, state, Knock(seat=0, turn_no=1, at_ms=T0 + 5))
    ended = v.result(state)
    assert isinstance(ended, HandEnded)
    return ended


def test_the_last_two_seats_tying_low_share_the_pot_the_earliest_first() -> None:
    rules = toy_rule_set(3, 10, 0, max_points=25)
    ended = _knocked_with(
        (
            SeatHand(0, _cards("KC QC JC 10C 2C")),  # 42: 27 over the low, capped at 25
            SeatHand(1, _cards("AD 2D 3D 4D 5D")),  # 15
            SeatHand(2, _cards("AH 2H 3H 4H 5H")),  # 15
        ),
        rules,
    )
    assert ended.winner_seat == 1 and ended.winner_seats == (1, 2)
    assert ended.settlement.co_winner_seats == (2,)
    assert [r.outcome for r in ended.results] == ["counted", "won", "won"]
    # 25 x 10 = 250 paid, no commission: 125 each
    assert [line.amount_hundredths for line in ended.settlement.lines] == [-250, 125, 125]


def test_when_every_seat_ties_the_earliest_seat_wins_alone_and_nobody_pays() -> None:
    rules = toy_rule_set(3, 10, 1000)
    ended = _knocked_with(
        (
            SeatHand(0, _cards("AC 2C 3C 4C 5C")),
            SeatHand(1, _cards("AD 2D 3D 4D 5D")),
            SeatHand(2, _cards("AH 2H 3H 4H 5H")),
        ),
        rules,
    )
    assert ended.winner_seats == (0,) and ended.settlement.co_winner_seats == ()
    assert [line.amount_hundredths for line in ended.settlement.lines] == [0, 0, 0]
    assert ended.settlement.commission_hundredths == 0
