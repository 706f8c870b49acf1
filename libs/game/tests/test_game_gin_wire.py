"""The gin bundle's wire: whole random gin hands written to the table stream's payloads and read
back give the same rules events (the rule set's gin options in ``other_variant`` too); each
recorded knock's replay command decides the same events again; every move a hand lists is a
message of the wire and back (``rummy_game.gin``)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from rummy.gin.v1 import events_pb2 as gpb
from rummy_game import bundle, stream_payloads
from rummy_game.gin import GIN_BUNDLE, GIN_WIRE
from rummy_rules.commands import (
    Discard,
    DrawFromDiscardPile,
    DrawFromStock,
    TurnTimeout,
)
from rummy_rules.events import Event, HandStarted
from rummy_rules.gin.hand import GinKnock, GinKnocked
from rummy_rules.gin.rules import GIN_SHOE, gin_rule_set
from rummy_rules.gin.variant import GIN, GinState
from rummy_rules.rules import RuleSet
from rummy_testing.random_hands import T0, RandomHand, assert_round_trips


def _hand(rule_set: RuleSet, seed: int) -> tuple[list[Event], list[GinState]]:
    """A whole hand from the seeded deal, random legal moves and a few timeouts: its events and
    the state before each."""
    rng = random.Random(seed)
    hand = RandomHand(GIN, rule_set, seed, client_seeds={0: b"\x0a"})
    now = T0
    while not GIN.is_over(hand.state):
        now += 700
        seat = hand.state.play.turn_seat
        assert seat is not None
        legal = GIN.legal_commands(hand.state, seat)
        if rng.random() < 0.05:
            hand.run(TurnTimeout(turn_no=hand.state.play.turn_no, at_ms=now))
        else:
            hand.run(replace(rng.choice(legal), at_ms=now))  # type: ignore[type-var]
    return hand.events, hand.before


def test_the_gin_bundle_is_installed_by_its_entry_point() -> None:
    assert bundle.bundle_of("gin") is GIN_BUNDLE
    assert GIN_BUNDLE.cli_cases is not None and "gin-score" in GIN_BUNDLE.cli_cases.games


@pytest.mark.parametrize("oklahoma", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_a_whole_gin_hand_round_trips_through_the_table_stream(oklahoma: bool, seed: int) -> None:
    rule_set = gin_rule_set(oklahoma=oklahoma, big_gin=seed % 3 != 0)
    events, _ = _hand(rule_set, seed)
    assert_round_trips(events)


@pytest.mark.parametrize("seed", range(30))
def test_a_recorded_knock_replays_to_the_same_events(seed: int) -> None:
    events, before = _hand(gin_rule_set(oklahoma=seed % 2 == 1), 100 + seed)
    for i, event in enumerate(events):
        if isinstance(event, GinKnocked):
            command = GIN_WIRE.replay_command(event, 5)
            assert command is not None
            redone = GIN.decide(before[i], command)
            assert redone[:2] == tuple(events[i : i + 2])


@pytest.mark.parametrize("seed", range(8))
def test_every_listed_move_is_a_wire_message_and_back(seed: int) -> None:
    events, before = _hand(gin_rule_set(), 200 + seed)
    generic = (DrawFromStock, DrawFromDiscardPile, Discard)
    for state in before:
        seat = state.play.turn_seat
        if seat is None:
            continue
        for move in GIN.legal_commands(state, seat):
            message = GIN_WIRE.command_to_pb(move, GIN_SHOE)
            if isinstance(move, generic):
                assert message is None
                continue
            assert message is not None
            back = GIN_WIRE.command(message, seat, move.turn_no, 0, GIN_SHOE)  # type: ignore[attr-defined]
            assert back == move


def test_a_knock_is_answered_with_the_score() -> None:
    scored = gpb.GinHandScored(outcome="undercut", winner_seat=1, points=27)
    answer = GIN_WIRE.answer(gpb.Knock(), [gpb.GinKnocked(), scored])
    assert answer == gpb.GinAnswer(outcome="undercut", winner_seat=1, points=27)
    assert GIN_WIRE.answer(gpb.PassUpcard(), []) == gpb.GinAnswer(outcome="pass")


def test_an_outcome_word_gin_shares_with_another_variant_is_described_alike() -> None:
    # hosts read outcome words as one namespace (rummy_game.bundle.outcome: the first bundle)
    for other in bundle.bundles():
        theirs = {o.name: o for o in other.outcomes}
        for mine in GIN_BUNDLE.outcomes:
            assert theirs.get(mine.name, mine) == mine, (other.name, mine.name)


def test_the_knockers_named_melds_flag_round_trips_and_an_older_knock_reads_as_arranged() -> None:
    for seed in range(40):
        events, before = _hand(gin_rule_set(), 300 + seed)
        knocks = [(i, e) for i, e in enumerate(events) if isinstance(e, GinKnocked)]
        if knocks and knocks[0][1].face_down is not None:
            break
    else:
        raise AssertionError("no knock in 40 hands")
    i, knocked = knocks[0]
    assert not knocked.melds_named  # the random legal moves name no melds
    started = events[0]
    assert isinstance(started, HandStarted)
    ctx = stream_payloads.hand_context(stream_payloads.hand_started_to_pb(started, 1))
    named = replace(knocked, melds_named=True)
    payload = GIN_WIRE.event_to_pb(named, ctx)
    assert isinstance(payload, gpb.GinKnocked) and payload.melds_named
    assert GIN_WIRE.event_from_pb(payload, ctx) == (named,)
    payload.ClearField("melds_named")  # as a knock recorded before the field reads
    assert GIN_WIRE.event_from_pb(gpb.GinKnocked.FromString(payload.SerializeToString()), ctx) == (
        knocked,
    )
    # replay names the melds only when the knocker did; else the server must arrange them again
    assert knocked.face_down is not None
    assert GIN_WIRE.replay_command(knocked, 5) == GinKnock(
        seat=knocked.seat, turn_no=knocked.turn_no, face_down=knocked.face_down, at_ms=5
    )
    again = GIN_WIRE.replay_command(named, 5)
    assert isinstance(again, GinKnock) and again.melds == tuple(m.cards for m in knocked.melds)
    redone = GIN.decide(before[i], again)
    assert redone[0] == named and redone[1] == events[i + 1]
