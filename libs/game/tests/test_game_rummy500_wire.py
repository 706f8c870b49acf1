"""The Rummy 500 bundle's wire: whole random rounds (2 to 8 seats, one and two decks) written to
the table stream's payloads and read back give the same rules events, each seat's signed score
included; each recorded dig, meld and lay-off replays to the same events; every listed move is a
message of the wire and back; the view goes on the wire; the match to 500's options round-trip
(``rummy_game.rummy500``, ``rummy_game.match_payloads``)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from rummy.rummy500.v1 import view_pb2 as view_pb
from rummy_game import bundle, match_payloads
from rummy_game.rummy500 import RUMMY500_BUNDLE, RUMMY500_WIRE
from rummy_rules.commands import (
    Discard,
    DrawFromStock,
    LeaveHand,
    TurnTimeout,
)
from rummy_rules.events import Event, HandEnded
from rummy_rules.formats import RaceTo, make_format
from rummy_rules.rules import RuleSet
from rummy_rules.rummy500.play import Rummy500LaidOff, Rummy500Melded, Rummy500PileTaken
from rummy_rules.rummy500.rules import rummy500_rule_set
from rummy_rules.rummy500.variant import RUMMY500, Rummy500State
from rummy_testing.random_hands import T0, RandomHand, assert_round_trips


def _round(rule_set: RuleSet, seed: int) -> tuple[list[Event], list[Rummy500State]]:
    """A whole round from the seeded deal, random legal moves, a few timeouts and a leaver:
    its events and the state before each."""
    rng = random.Random(seed)
    hand = RandomHand(RUMMY500, rule_set, seed)
    now = T0
    while not RUMMY500.is_over(hand.state):
        now += 700
        state = hand.state
        seat = state.play.turn_seat
        assert seat is not None
        roll = rng.random()
        if roll < 0.04:
            hand.run(TurnTimeout(turn_no=state.play.turn_no, at_ms=now))
        elif roll < 0.05:
            hand.run(LeaveHand(seat=rng.choice(state.play.playing()), at_ms=now))
        else:
            hand.run(replace(rng.choice(RUMMY500.legal_commands(state, seat)), at_ms=now))  # type: ignore[type-var]
    return hand.events, hand.before


def test_the_rummy500_bundle_is_installed_by_its_entry_point() -> None:
    assert bundle.bundle_of("rummy500") is RUMMY500_BUNDLE
    assert RUMMY500_BUNDLE.cli_cases is not None and "rummy500" in RUMMY500_BUNDLE.cli_cases.games


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("seed", range(4))
def test_a_whole_round_round_trips_through_the_table_stream(seats: int, seed: int) -> None:
    rule_set = rummy500_rule_set(seats, low_ace_one=seed % 2 == 1)
    events, _ = _round(rule_set, seed)
    assert_round_trips(events)
    ended = events[-1]
    assert isinstance(ended, HandEnded) and any(r.score for r in ended.results)


@pytest.mark.parametrize("seed", range(12))
def test_recorded_digs_melds_and_lay_offs_replay_to_the_same_events(seed: int) -> None:
    events, before = _round(rummy500_rule_set(3 + seed % 4), 100 + seed)
    replayed = 0
    for i, event in enumerate(events):
        # the clock reading of the command: the one its HandEnded (going out) was stamped with
        at_ms = next((e.at_ms for e in events[i:] if isinstance(e, HandEnded)), 5)
        command = RUMMY500_WIRE.replay_command(event, at_ms)
        if command is None:
            assert not isinstance(event, Rummy500PileTaken)
            continue
        redone = RUMMY500.decide(before[i], command)
        assert redone == tuple(events[i : i + len(redone)])
        replayed += 1
    assert replayed or not [e for e in events if isinstance(e, Rummy500Melded | Rummy500LaidOff)]


@pytest.mark.parametrize("seed", range(6))
def test_every_listed_move_is_a_wire_message_and_back(seed: int) -> None:
    rule_set = rummy500_rule_set(4 + seed % 3)
    _, before = _round(rule_set, 200 + seed)
    for state in before[::5]:
        seat = state.play.turn_seat
        if seat is None or state.play.phase is None:
            continue
        for move in RUMMY500.legal_commands(state, seat):
            message = RUMMY500_WIRE.command_to_pb(move, rule_set.shoe)
            if isinstance(move, DrawFromStock | Discard):
                assert message is None
                continue
            assert message is not None
            back = RUMMY500_WIRE.command(message, seat, move.turn_no, 0, rule_set.shoe)  # type: ignore[attr-defined]
            assert back == move


def test_the_view_puts_every_meld_with_its_owner_and_lay_offs_on_the_wire() -> None:
    rule_set = rummy500_rule_set(3)
    _, before = _round(rule_set, 7)
    state = next(s for s in reversed(before) if s.play.melds)
    view = RUMMY500.view(state, 0)
    message = RUMMY500_WIRE.view_to_pb(view.variant_view, rule_set.shoe)
    assert isinstance(message, view_pb.Rummy500View)
    assert [(m.meld_id, m.owner, m.kind) for m in message.melds] == [
        (m.meld_id, m.owner, m.kind) for m in state.play.melds
    ]
    assert sum(len(m.layoffs) for m in message.melds) == sum(
        len(m.layoffs) for m in state.play.melds
    )


def test_the_match_to_500_options_round_trip_with_the_commission() -> None:
    fmt = make_format(
        "race-to", target=500, point_value_hundredths=5, max_game_points=400, commission_bps=500
    )
    options = match_payloads.format_to_pb(fmt)
    assert options.WhichOneof("format") == "race_to"
    back = match_payloads.format_from_pb(options, 500)
    assert isinstance(back, RaceTo) and back == fmt
