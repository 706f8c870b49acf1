"""The single format (a points table: one hand per match), the codec of a match's messages, and
properties of any format over random histories: replay gives the same state, refused commands
change nothing, and the money at the end sums to zero within what each seat held
(docs/rules/formats.md)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from match_play import T0, Match

from rummy_rules import json_form
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import SeatAccount
from rummy_rules.formats import BestOf, Deals, GameTo, MatchFormat, Pool, Single
from rummy_rules.formats.messages import (
    AbortMatch,
    AcceptRejoin,
    BeginDeal,
    DealResult,
    DeclineRejoin,
    GameEnded,
    LeaveMatch,
    MatchAborted,
    MatchEnded,
    RecordDeal,
    RecordDealAborted,
    RequestSplit,
    StartMatch,
)
from rummy_rules.formats.state import MatchPhase, fold


def test_a_single_match_is_one_hand_and_moves_no_money_of_its_own() -> None:
    m = Match(Single(), 4)
    assert m.events[1:] == []  # no reservation: the variant reserves at the deal
    m.deal({0: 40, 1: 0, 2: 130, 3: 20}, left=frozenset({0}))
    result = m.state.result
    assert isinstance(result, MatchEnded)
    assert result.winners == (1,) and result.reason == "hand_ended" and result.settlement is None
    with pytest.raises(RuleViolation):
        m.do(BeginDeal(at_ms=T0))


def test_a_single_matchs_aborted_hand_aborts_the_match() -> None:
    m = Match(Single(), 2)
    m.do(BeginDeal(at_ms=T0))
    new = m.do(RecordDealAborted(reason="dealer gone", at_ms=T0))
    assert new == (MatchAborted(reason="dealer gone", released=(), at_ms=T0),)


def test_a_match_cannot_start_twice_or_be_played_before_it_starts() -> None:
    m = Match(Pool(), 2)
    with pytest.raises(RuleViolation) as twice:
        m.do(StartMatch(match_id="m-2", seats=m.state.seats, at_ms=T0))
    assert twice.value.code is ErrorCode.DUPLICATE
    for seats in [
        (SeatAccount(0, "a"), SeatAccount(0, "b")),
        (SeatAccount(0, "a"), SeatAccount(1, "a")),
    ]:
        with pytest.raises(RuleViolation):
            Pool().decide(Pool().initial_state(), StartMatch(match_id="m", seats=seats, at_ms=T0))
    fresh = Pool()
    with pytest.raises(RuleViolation):
        fresh.decide(fresh.initial_state(), BeginDeal(at_ms=T0))


def _random_match(fmt: MatchFormat, seed: int) -> Match:
    """Play ``fmt`` with random but valid commands (and some refused ones) until it is over."""
    rng = random.Random(seed)
    m = Match(fmt, rng.randint(fmt.min_seats, min(fmt.max_seats, 6)))
    for _ in range(200):
        if m.state.is_over:
            break
        state = m.state
        if state.phase is MatchPhase.BETWEEN_DEALS:
            roll = rng.random()
            if roll < 0.05 and len(state.active) > 1:
                m.do(LeaveMatch(seat=rng.choice(state.active), at_ms=T0))
            elif roll < 0.15 and state.rejoin_offers:
                seat = rng.choice(state.rejoin_offers)[0]
                command = AcceptRejoin if rng.random() < 0.7 else DeclineRejoin
                m.do(command(seat=seat, at_ms=T0))
            elif roll < 0.2 and isinstance(fmt, Pool) and fmt.split:
                waiting = [s for s in state.active if s not in state.split_requests]
                m.do(RequestSplit(seat=rng.choice(waiting), at_ms=T0))
            elif roll < 0.21:
                m.do(AbortMatch(reason="closed", at_ms=T0))
            else:
                m.do(BeginDeal(at_ms=T0))
            continue
        if rng.random() < 0.05:
            m.do(RecordDealAborted(reason="gone", at_ms=T0))
            continue
        before = m.state
        with pytest.raises(RuleViolation):  # a refused command changes nothing
            m.do(BeginDeal(at_ms=T0))
        assert m.state == before
        seats = state.deal_seats
        winner = rng.choice(seats)
        losers = [s for s in seats if s != winner]
        points = {s: rng.choice([20, 25, 40, 50, 80, rng.randint(0, 80)]) for s in losers}
        left = frozenset(s for s in losers if rng.random() < 0.05)
        timed_out = frozenset(s for s in losers if s not in left and rng.random() < 0.05)
        cap = 80  # what an Indian deal of these formats charges at most
        result = DealResult(
            points=tuple(
                sorted({winner: 0, **{s: min(p, cap) for s, p in points.items()}}.items())
            ),
            winners=(winner,),
            left=left,
            timed_out=timed_out,
        )
        m.do(RecordDeal(result=result, at_ms=T0))
    return m


FORMATS = [
    Pool(target=101, entry_hundredths=1_001, commission_bps=1_000, rejoin=True, split=True),
    Pool(target=201, entry_hundredths=333, commission_bps=250, rejoin=True),
    Deals(deals=2, entry_hundredths=700, commission_bps=1_500),
    Deals(deals=6, entry_hundredths=0, commission_bps=1_000),
    BestOf(deals=3, entry_hundredths=999, commission_bps=999),
    GameTo(target=150, games=2, point_value_hundredths=7, max_game_points=60, commission_bps=500),
    Single(),
]


@settings(max_examples=60)
@given(st.sampled_from(FORMATS), st.integers(0, 2**32))
def test_any_match_replays_to_the_same_state_and_its_money_balances(
    fmt: MatchFormat, seed: int
) -> None:
    m = _random_match(fmt, seed)
    assert m.state.is_over
    assert fold(m.events) == m.state
    # Every event survives the codec exactly (a host stores them as JSON).
    assert [json_form.from_dict(json_form.to_dict(e)) for e in m.events] == m.events
    settlements = [e.settlement for e in m.events if isinstance(e, GameEnded)]
    if isinstance(m.state.result, MatchEnded) and m.state.result.settlement is not None:
        settlements.append(m.state.result.settlement)
    for s in settlements:
        assert sum(ln.amount_hundredths for ln in s.lines) + s.commission_hundredths == 0
        assert all(-ln.amount_hundredths <= ln.held_hundredths for ln in s.lines)
    if isinstance(m.state.result, MatchEnded) and m.state.result.settlement is not None:
        held = dict(m.state.held)
        assert {ln.seat: ln.held_hundredths for ln in m.state.result.settlement.lines} == held
        assert m.state.result.winners and set(m.state.result.winners) <= set(m.state.active)
    # Deterministic: the same commands again give the same events.
    assert _random_match(fmt, seed).events == m.events
