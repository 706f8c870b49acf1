"""``Variant.legal_commands(state, seat)`` is exactly what ``decide`` accepts among the moves of
play: every command it lists is accepted, and every other move drawn from the whole command space
(every seat, the current, past and next turn, every card of the shoe, every kind of move of
either variant) is refused with a RuleViolation, for Indian points and the toy, in random hands
driven by the listed moves alone (docs/rules/hand-flow.md#turns,
docs/rules/declaration.md#declaring, docs/rules/scoring.md#drops)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from hand_play import Table
from hypothesis import given, settings
from hypothesis import strategies as st
from test_toy_variant import start as start_toy

from rummy_rules.cards import Card
from rummy_rules.commands import (
    Command,
    Discard,
    DrawFromDiscardPile,
    DrawFromStock,
    TurnTimeout,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.indian import INDIAN_POINTS, Declare, Drop
from rummy_rules.variant import Variant
from rummy_testing.profiles import examples
from toy_variant import TOY, Knock, toy_rule_set


def _moves(seat: int, turn: int, cards: tuple[Card, ...]) -> list[Command]:
    """Every move of either variant for ``seat`` at turn ``turn`` with each of ``cards``."""
    out: list[Command] = [
        DrawFromStock(seat=seat, turn_no=turn, at_ms=0),
        DrawFromDiscardPile(seat=seat, turn_no=turn, at_ms=0),
        Drop(seat=seat, turn_no=turn, at_ms=0),
        Knock(seat=seat, turn_no=turn, at_ms=0),
    ]
    for card in cards:
        out.append(Discard(seat=seat, turn_no=turn, card=card, at_ms=0))
        out.append(Declare(seat=seat, turn_no=turn, face_down=card, at_ms=0))
    return out


def check_legality(
    variant: Variant[Any], state: Any, seats: range, shoe: tuple[Card, ...], rng: random.Random
) -> tuple[Command, ...]:
    """Assert the property at ``state``; the legal moves of the seat on turn (all seats'
    moves are checked)."""
    turn = variant.view(state, -1).turn_no
    on_turn: tuple[Command, ...] = ()
    for seat in seats:
        legal = variant.legal_commands(state, seat)
        assert len(set(legal)) == len(legal), "a legal move is listed twice"
        for command in legal:
            assert variant.decide(state, replace(command, at_ms=1)), f"{command} caused nothing"  # type: ignore[type-var]
        if legal:
            assert not on_turn, "two seats have moves at once"
            on_turn = legal
        cards = tuple(rng.sample(shoe, 6)) + tuple(variant.view(state, seat).cards)
        space = [
            m for t in (turn - 1, turn, turn + 1) for m in _moves(seat, t, cards) if m not in legal
        ]
        for command in rng.sample(space, min(25, len(space))):
            try:
                variant.decide(state, command)
            except RuleViolation:
                continue
            raise AssertionError(f"{command} is not listed as legal but decide accepted it")
    return on_turn


def _next(
    variant: Variant[Any], state: Any, legal: tuple[Command, ...], rng: random.Random
) -> Command:
    """A listed move (draws and discards most often), or now and then the turn's timeout."""
    deadline = variant.deadline(state)
    if deadline is not None and rng.random() < 0.05:
        return TurnTimeout(turn_no=deadline.turn_no, at_ms=deadline.due_ms)
    weights = [0.02 if isinstance(c, Declare | Drop | Knock) else 1.0 for c in legal]
    return replace(rng.choices(legal, weights)[0], at_ms=1)  # type: ignore[type-var]


@settings(max_examples=examples(ci=20, dev=6), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), table_and_seats=st.sampled_from([(4, 2), (4, 3), (6, 6)]))
def test_indian_legal_commands_are_exactly_the_moves_decide_accepts(
    seed: int, table_and_seats: tuple[int, int]
) -> None:
    rng = random.Random(seed)
    size, count = table_and_seats
    rules = INDIAN_POINTS.house_rule_set(size, 100, 1000)
    t = Table(rules, hand_id=f"hand-{seed}", server_seed=rng.randbytes(32))
    seats = sorted(rng.sample(range(size), count))
    t.start(seats, rng.choice(seats), {})
    shoe = tuple(rules.shoe.cards)
    for _ in range(60):
        if INDIAN_POINTS.is_over(t.state):
            break
        legal = check_legality(INDIAN_POINTS, t.state, range(size + 1), shoe, rng)
        assert legal, "a hand in play has a seat with a move"
        t.reshuffle_if_needed(t.run(_next(INDIAN_POINTS, t.state, legal, rng)))
    for seat in range(size):  # over, or left running: nothing listed is refused
        for command in INDIAN_POINTS.legal_commands(t.state, seat):
            INDIAN_POINTS.decide(t.state, command)


@settings(max_examples=examples(ci=20, dev=6), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), seats=st.sampled_from([(0, 1), (0, 1, 2), (0, 2)]))
def test_toy_legal_commands_are_exactly_the_moves_decide_accepts(
    seed: int, seats: tuple[int, ...]
) -> None:
    rng = random.Random(seed)
    rules = toy_rule_set(3, 100, 1000, max_turns=12)
    state, _, _ = start_toy(rules, seats, seats[0], {}, rng.randbytes(32))
    shoe = tuple(rules.shoe.cards)
    while not TOY.is_over(state):
        legal = check_legality(TOY, state, range(4), shoe, rng)
        assert legal
        state = TOY.fold(TOY.decide(state, _next(TOY, state, legal, rng)), state)
    assert all(TOY.legal_commands(state, s) == () for s in range(4))
