"""The match to 500 (docs/rules/formats.md#race-to): every seat scores every deal, signed,
totals may go negative, first to the target wins, several over it the highest, a tie at the top
plays one more deal among the tied; settled by game stakes. Money worked by hand."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from match_play import T0, Match
from rummy500_rounds import Round, cards

from rummy_rules.commands import Discard, DrawFromStock
from rummy_rules.errors import RuleViolation
from rummy_rules.events import HandEnded
from rummy_rules.formats import RaceTo, make_format
from rummy_rules.formats.messages import (
    BeginDeal,
    DealResult,
    DealStarted,
    GameEnded,
    MoneyReserved,
    RecordDeal,
    TieBreakDue,
    deal_result,
)
from rummy_rules.rummy500.play import Rummy500Meld


def round_of(m: Match, scores: Mapping[int, int], *, left: frozenset[int] = frozenset()) -> None:
    """Deal a round and record its signed ``scores`` (the winner: the top score)."""
    m.do(BeginDeal(at_ms=T0))
    seats = tuple(sorted(scores))
    top = max(seats, key=lambda s: scores[s])
    result = DealResult(
        points=tuple((s, 0) for s in seats),
        winners=(top,),
        left=left,
        scores=tuple(sorted(scores.items())),
    )
    m.do(RecordDeal(result=result, at_ms=T0))


def fmt(**options: int) -> RaceTo:
    made = make_format("race-to", point_value_hundredths=10, max_game_points=200, **options)
    assert isinstance(made, RaceTo)
    return made


def test_each_seat_adds_its_own_signed_score_and_totals_may_go_negative() -> None:
    m = Match(fmt(), 3)
    round_of(m, {0: 120, 1: -30, 2: 60})
    assert m.state.totals == ((0, 120), (1, -30), (2, 60))
    round_of(m, {0: -150, 1: 10, 2: 0})
    assert m.state.totals == ((0, -30), (1, -20), (2, 60))
    assert not m.of(GameEnded)


def test_each_seat_reserves_the_cap_times_the_point_value_at_the_game_start() -> None:
    m = Match(fmt(), 3)
    m.do(BeginDeal(at_ms=T0))
    assert [(e.seat, e.amount_hundredths) for e in m.of(MoneyReserved)] == [
        (0, 2000),
        (1, 2000),
        (2, 2000),
    ]


def test_several_over_five_hundred_the_highest_wins_and_each_loser_pays_its_capped_gap() -> None:
    m = Match(fmt(commission_bps=500), 3)
    round_of(m, {0: 300, 1: 290, 2: 100})
    round_of(m, {0: 230, 1: 270, 2: -50})  # 530, 560, 50: both over, seat 1 the highest
    (ended,) = m.of(GameEnded)
    assert ended.winner == 1
    # seat 0 pays min(560 - 530, 200) = 30 points, seat 2 min(510, 200) = 200: 300 + 2000 = 2300
    # hundredths; the commission floor(2300 x 5%) = 115; seat 1 receives 2185.
    lines = {line.seat: line.amount_hundredths for line in ended.settlement.lines}
    assert lines == {0: -300, 1: 2185, 2: -2000}
    assert ended.settlement.commission_hundredths == 115
    assert sum(lines.values()) + ended.settlement.commission_hundredths == 0


def test_a_tie_at_the_top_plays_one_more_round_among_the_tied_and_its_highest_wins() -> None:
    m = Match(fmt(commission_bps=500), 3)
    round_of(m, {0: 120, 1: -30, 2: 60})
    round_of(m, {0: 200, 1: 250, 2: -40})
    round_of(m, {0: 190, 1: 290, 2: 10})  # 510, 510, 30
    assert m.of(TieBreakDue)[-1].seats == (0, 1)
    m.do(BeginDeal(at_ms=T0))
    assert m.of(DealStarted)[-1].seats == (0, 1) and m.of(DealStarted)[-1].tie_break
    result = DealResult(points=((0, 0), (1, 0)), winners=(1,), scores=((0, -15), (1, 40)))
    m.do(RecordDeal(result=result, at_ms=T0))  # 495, 550
    (ended,) = m.of(GameEnded)
    assert ended.winner == 1
    # seat 0 pays 55 x 10 = 550, seat 2 min(520, 200) x 10 = 2000; commission floor(127.5) = 127
    lines = {line.seat: line.amount_hundredths for line in ended.settlement.lines}
    assert lines == {0: -550, 1: 2423, 2: -2000}
    assert ended.settlement.commission_hundredths == 127


def test_a_tie_broken_below_the_target_still_decides_among_the_tied() -> None:
    m = Match(fmt(), 2)
    round_of(m, {0: 500, 1: 500})
    round_of(m, {0: -30, 1: -20})  # the tie-break: 470, 480
    (ended,) = m.of(GameEnded)
    assert ended.winner == 1


def test_a_tie_again_plays_yet_another_round_among_those_still_tied() -> None:
    m = Match(fmt(), 3)
    round_of(m, {0: 500, 1: 500, 2: 500})
    round_of(m, {0: 10, 1: 10, 2: 0})
    assert m.of(TieBreakDue)[-1].seats == (0, 1) and not m.of(GameEnded)


def test_a_seat_that_leaves_mid_round_loses_the_game_at_the_cap() -> None:
    m = Match(fmt(), 3)
    round_of(m, {0: 100, 1: 50, 2: 40})
    m.do(BeginDeal(at_ms=T0))
    m.leave(0)  # mid-round: its melds count for it in this round
    result = DealResult(
        points=((0, 0), (1, 0), (2, 0)),
        winners=(1,),
        left=frozenset({0}),
        scores=((0, 30), (1, 460), (2, 10)),
    )
    m.do(RecordDeal(result=result, at_ms=T0))  # 130, 510, 50
    (ended,) = m.of(GameEnded)
    assert ended.winner == 1
    lines = {line.seat: line.amount_hundredths for line in ended.settlement.lines}
    assert lines == {0: -2000, 1: 4000, 2: -2000}


def test_a_deal_that_does_not_score_every_seat_dealt_in_is_refused() -> None:
    m = Match(fmt(), 3)
    m.do(BeginDeal(at_ms=T0))
    bad = DealResult(points=((0, 0), (1, 0), (2, 0)), winners=(0,), scores=((0, 5), (1, 4)))
    with pytest.raises(RuleViolation):
        m.do(RecordDeal(result=bad, at_ms=T0))


def test_the_format_is_named_by_its_target() -> None:
    assert fmt().name == "race-to-500" and fmt(target=300).name == "race-to-300"


def test_a_real_round_feeds_the_format_through_the_generic_deal_result() -> None:
    r = Round(seats=3, dealer=2)
    hands = ["7C 8C 9C 10C JC QC 2D", "3H 4H 5H KD 10S JS 9D", "AS 2S 3S 5D 6D 8H JH"]
    r.deal_script(hands, "KS", "KC")
    r.run(DrawFromStock(seat=0, turn_no=1, at_ms=r.now))
    r.run(Rummy500Meld(seat=0, turn_no=1, groups=(cards("7C 8C 9C 10C JC QC KC"),), at_ms=r.now))
    r.run(Discard(seat=0, turn_no=1, card=cards("2D")[0], at_ms=r.now))  # out with a discard
    ended = r.state.result
    assert isinstance(ended, HandEnded)
    m = Match(fmt(), 3)
    m.do(BeginDeal(at_ms=T0))
    m.do(RecordDeal(result=deal_result(ended), at_ms=T0))
    # seat 0: 7+8+9+10+10+10+10 = 64; seat 1: -(3+4+5+10+10+10+9) = -51; seat 2: -49
    assert m.state.totals == ((0, 64), (1, -51), (2, -49))
