"""Game to N with game stakes (docs/rules/formats.md#money, column "game stakes";
docs/rules/formats.md#game-to): played with the toy variant's real hands (tests/support/
toy_variant), fed to the format through the generic ``deal_result``, and with stand-in results."""

from __future__ import annotations

from typing import Any

import pytest
from match_play import T0, Match

from rummy_rules import registry
from rummy_rules.cards import Card, parse_card
from rummy_rules.commands import Deal, RecordSeedCommitment, StartHand, TurnTimeout
from rummy_rules.deck import Shoe
from rummy_rules.events import HandEnded, SeatAccount
from rummy_rules.formats import DealResult, GameTo, deal_result, make_format
from rummy_rules.formats.messages import (
    AbortMatch,
    BeginDeal,
    GameEnded,
    GameStarted,
    MatchAborted,
    MatchEnded,
    MoneyReserved,
    RecordDeal,
    RecordDealAborted,
    SeatForfeitedGame,
)
from rummy_rules.rules import RuleSetError
from rummy_rules.shuffle import SeatHand
from toy_variant import TOY_NAME, Knock, toy_rule_set


def toy_hand(hands: dict[int, str], first: int) -> HandEnded:
    """Play one toy hand with these cards (``"AC 2C 3C 4C 5C"`` a seat): ``first`` (the seat
    after the dealer) knocks at once; the toy's showdown scores it."""
    v: Any = registry.lookup(TOY_NAME, "toy-knock-house/1")
    seats = tuple(sorted(hands))
    dealer = seats[(seats.index(first) - 1) % len(seats)]
    rules = toy_rule_set(len(seats), 0, 0, max_points=50)  # free: the format owns the money
    state = v.initial_state()
    dealt = {s: tuple(parse_card(c) for c in text.split()) for s, text in hands.items()}
    used = {c for cards in dealt.values() for c in cards}
    rest = [c for c in Shoe(1, 0).cards if c not in used]
    commands = [
        StartHand(
            hand_id="h",
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in seats),
            dealer_seat=dealer,
            rule_set=rules,
            at_ms=T0,
        ),
        RecordSeedCommitment(commitment="00" * 32, at_ms=T0),  # the window opens on it
        TurnTimeout(turn_no=0, at_ms=T0),
        Deal(
            hands=tuple(SeatHand(s, dealt[s]) for s in seats),
            wild_cut=None,
            first_open=rest[0],
            stock=tuple(rest[1:]),
            at_ms=T0,
        ),
        Knock(seat=first, turn_no=1, at_ms=T0),
    ]
    for command in commands:
        state = v.fold(v.decide(state, command), state)
    ended = v.result(state)
    assert isinstance(ended, HandEnded)
    return ended


def play(m: Match, hand: HandEnded) -> None:
    m.do(BeginDeal(at_ms=T0))
    m.do(RecordDeal(result=deal_result(hand), at_ms=T0))


LOW = "AC 2C 3C 4C 5C"  # 15
HIGH = "KC KD KH KS QC"  # 50
TENS = "10C 10D 10H 10S 9C"  # 49
MID = "AD 2D 3D 4D 3S"  # 13


def test_a_toy_match_of_two_games_to_30_settles_each_game_at_capped_stakes() -> None:
    fmt = GameTo(
        target=30, games=2, point_value_hundredths=10, max_game_points=40, commission_bps=1_000
    )
    m = Match(fmt, 2)
    # Game 1: seat 0 holds 15, seat 1 50: the toy charges seat 1 50 - 15 = 35 points, which
    # seat 0 scores: 35 >= 30 ends the game.
    play(m, toy_hand({0: LOW, 1: HIGH}, first=1))
    game1 = m.of(GameEnded)[0]
    assert isinstance(game1, GameEnded) and game1.winner == 0 and game1.totals == ((0, 35), (1, 0))
    # 40 x 10 = 400 reserved each; seat 1 pays min(35 - 0, 40) x 10 = 350; 10% = 35;
    # seat 0 receives 315.
    assert [(e.seat, e.amount_hundredths) for e in m.of(MoneyReserved)] == [(0, 400), (1, 400)]
    assert [ln.amount_hundredths for ln in game1.settlement.lines] == [315, -350]
    assert game1.settlement.commission_hundredths == 35
    # Game 2 reserves again. Deal 1: seat 0 holds 15, seat 1 13: seat 1 scores 2 (0, 2).
    # Deal 2: seat 0 holds 13, seat 1 49: seat 0 scores 36 (36, 2) and wins the game.
    play(m, toy_hand({0: LOW, 1: MID}, first=0))
    assert m.state.totals == ((0, 0), (1, 2)) and m.state.game_no == 2
    play(m, toy_hand({0: MID, 1: TENS}, first=1))
    game2 = m.of(GameEnded)[1]
    assert isinstance(game2, GameEnded) and game2.winner == 0
    # Seat 1 pays min(36 - 2, 40) = 34 x 10 = 340; 10% = 34; seat 0 receives 306.
    assert [ln.amount_hundredths for ln in game2.settlement.lines] == [306, -340]
    assert len(m.of(MoneyReserved)) == 4 and len(m.of(GameStarted)) == 2
    result = m.state.result
    assert isinstance(result, MatchEnded) and result.winners == (0,)
    assert result.reason == "games_played" and result.settlement is None


def test_a_loser_pays_at_most_the_cap() -> None:
    m = Match(GameTo(target=10, point_value_hundredths=5, max_game_points=20), 2)
    play(m, toy_hand({0: LOW, 1: HIGH}, first=0))  # seat 0 scores 35; seat 1 pays min(35, 20)
    (game,) = m.of(GameEnded)
    assert isinstance(game, GameEnded)
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [100, -100]


def test_a_tie_at_the_top_plays_on_among_the_tied_seats() -> None:
    m = Match(GameTo(target=30, point_value_hundredths=1, max_game_points=100), 3)
    m.deal({0: 0, 1: 0, 2: 60})  # two winners share seat 2's 60: 30, 30, 0
    assert m.state.next_seats == (0, 1) and not m.of(GameEnded)
    assert m.do(BeginDeal(at_ms=T0))[0].seats == (0, 1)  # type: ignore[attr-defined]
    m.record({0: 5, 1: 0})  # 30, 35, 0
    (game,) = m.of(GameEnded)
    assert isinstance(game, GameEnded) and game.winner == 1
    # Seat 0 pays min(35 - 30, 100) = 5; seat 2 min(35 - 0, 100) = 35; seat 1 receives 40.
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [-5, 40, -35]


def test_leaving_mid_game_loses_that_game_at_the_cap_and_the_match_goes_on() -> None:
    m = Match(GameTo(target=100, games=2, point_value_hundredths=10, max_game_points=50), 3)
    m.deal({0: 0, 1: 20, 2: 10})  # 30, 0, 0
    m.leave(2)
    m.deal({0: 30, 1: 0})  # 30, 30
    m.deal({0: 0, 1: 80})  # 110, 30: seat 0 wins game 1
    (game,) = m.of(GameEnded)
    assert isinstance(game, GameEnded)
    # Seat 1 pays min(110 - 30, 50) = 50 x 10 = 500; seat 2 (left) pays the cap 500.
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [1_000, -500, -500]
    started = m.do(BeginDeal(at_ms=T0))
    assert started[0] == GameStarted(game_no=2, seats=(0, 1))


def test_missed_turns_lose_the_game_at_the_cap_when_the_option_says_so() -> None:
    m = Match(
        GameTo(
            target=100, point_value_hundredths=1, max_game_points=30, missed_turns_lose_game=True
        ),
        2,
    )
    new = m.deal({0: 0, 1: 40}, timed_out=frozenset({1}))
    assert SeatForfeitedGame(seat=1) in new
    (game,) = m.of(GameEnded)
    assert isinstance(game, GameEnded) and game.winner == 0
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [30, -30]
    # Without the option (Rummy 500) the seat's turns are played for and it plays on.
    plays_on = Match(GameTo(target=100, point_value_hundredths=1, max_game_points=30), 2)
    plays_on.deal({0: 0, 1: 40}, timed_out=frozenset({1}))
    assert not plays_on.of(GameEnded)


def test_a_voided_hand_is_redealt_and_an_aborted_match_releases_the_game_stakes() -> None:
    m = Match(GameTo(target=100, point_value_hundredths=10, max_game_points=50), 2)
    m.deal({0: 0, 1: 20})
    m.do(BeginDeal(at_ms=T0))
    m.do(RecordDealAborted(reason="dealer gone", at_ms=T0))
    assert dict(m.state.held) == {0: 500, 1: 500}
    assert m.do(BeginDeal(at_ms=T0))[0].seats == (0, 1)  # type: ignore[attr-defined]
    aborted = m.do(AbortMatch(reason="closed", at_ms=T0))
    assert aborted == (MatchAborted(reason="closed", released=((0, 500), (1, 500)), at_ms=T0),)


def test_game_to_options_are_validated() -> None:
    for options in [
        {"target": 0},
        {"games": 11},
        {"max_game_points": 0},
        {"point_value_hundredths": -1},
        {"commission_bps": -1},
        {"point_value_hundredths": 2**62},
    ]:
        with pytest.raises(RuleSetError):
            make_format("game-to", **options)


def test_the_toy_hand_helper_scores_as_the_toy_does() -> None:
    hand = toy_hand({0: LOW, 1: HIGH}, first=1)
    assert hand.winner_seat == 0 and [r.points for r in hand.results] == [0, 35]
    assert isinstance(parse_card("AC"), Card)


def test_every_seat_leaving_mid_deal_aborts_the_match_and_releases_the_game_stakes() -> None:
    # Found by the match-wire property test: both seats left a deal that then came back drawn
    # (the wall); nobody was left to win the game and deciding it raised IndexError. As when
    # every seat left a voided deal, the match is aborted and each 50 x 10 = 500 hold released.
    for drawn in (True, False):
        m = Match(GameTo(target=100, point_value_hundredths=10, max_game_points=50), 2)
        m.do(BeginDeal(at_ms=T0))
        m.leave(0)
        m.leave(1)
        winners, left = ((), frozenset()) if drawn else ((0,), frozenset({1}))
        result = DealResult(points=((0, 0), (1, 0 if drawn else 20)), winners=winners, left=left)
        new = m.do(RecordDeal(result=result, at_ms=T0))
        assert new[-1] == MatchAborted(
            reason="every seat left the game", released=((0, 500), (1, 500)), at_ms=T0
        )
        assert m.state.is_over and not m.of(GameEnded)
