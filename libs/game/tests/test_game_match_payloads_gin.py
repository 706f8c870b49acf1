"""The gin family's game (a game to N with game-end scoring and walls) and Hollywood ride the match
events the wire already carries (``rummy.match.v1``): every event they decide reads back as
itself, and the state folded from the payloads, Hollywood's columns included, is the state
played (docs/rules/formats.md#game-scoring, docs/rules/formats.md#hollywood)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_game_match_payloads import Played

from rummy_game import match_payloads as mw
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import (
    DealResult,
    GameScoring,
    MatchFormat,
    MatchState,
    make_format,
)
from rummy_rules.formats import messages as fm

T0 = 1_700_000_000_123
GIN = GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25)
FORMATS = [
    make_format(
        "game-to",
        target=100,
        games=2,
        point_value_hundredths=10,
        max_game_points=200,
        commission_bps=500,
        missed_turns_lose_game=True,
        scoring=GIN,
        max_seats=2,
    ),
    make_format(
        "hollywood",
        target=100,
        point_value_hundredths=5,
        max_game_points=150,
        commission_bps=1_000,
        missed_turns_lose_game=True,
        scoring=GIN,
    ),
]


def _play(fmt: MatchFormat, data: st.DataObject) -> list[tuple[Event, MatchState]]:
    played = Played(fmt)
    do = played.do
    do(fm.StartMatch(match_id="m-1", seats=(SeatAccount(0, "a"), SeatAccount(1, "b")), at_ms=T0))
    for step in range(60):
        if played.state.is_over:
            break
        at = T0 + step * 1000
        if not played.state.deal_seats:
            do(fm.BeginDeal(at_ms=at))
            continue
        move = data.draw(st.sampled_from(["hand", "hand", "hand", "wall", "timeout", "void"]))
        if move == "void":
            do(fm.RecordDealAborted(reason="dealer gone", at_ms=at))
            continue
        if move == "wall":
            do(fm.RecordDeal(result=DealResult(((0, 0), (1, 0)), ()), at_ms=at))
            continue
        scorer = data.draw(st.integers(0, 1))
        points = tuple(sorted({scorer: 0, 1 - scorer: data.draw(st.integers(1, 120))}.items()))
        timed_out = frozenset({1 - scorer}) if move == "timeout" else frozenset()
        do(fm.RecordDeal(result=DealResult(points, (scorer,), timed_out=timed_out), at_ms=at))
    return played.events


@settings(max_examples=30, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data())
def test_gin_and_hollywood_matches_read_back_as_played_through_the_wire(
    fmt: MatchFormat, data: st.DataObject
) -> None:
    played = _play(fmt, data)
    events = [e for e, _ in played]
    for event, before in played:
        assert mw.event_from_pb(
            mw.event_to_pb(event, before, "h"), getattr(event, "at_ms", T0)
        ) == (event)
    payloads = mw.events_to_pb(events, fmt.initial_state(), hand_id="h")
    state = fmt.initial_state()
    for payload, event in zip(payloads, events, strict=True):
        state = fmt.apply(state, mw.event_from_pb(payload, getattr(event, "at_ms", 0)))
    assert state == fmt.fold(events)
    assert state.sheets  # the score sheets are rebuilt from the wire's events
