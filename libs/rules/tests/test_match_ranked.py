"""Deals (chips) and best of N (running totals), with tie-break deals until the tie is broken
(docs/rules/formats.md#deals, #best-of)."""

from __future__ import annotations

import pytest
from match_play import T0, Match

from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.formats import BestOf, Deals, make_format, match_view
from rummy_rules.formats.messages import (
    BeginDeal,
    DealResult,
    DealRules,
    DealStarted,
    DealVoided,
    MatchEnded,
    RecordDeal,
    RecordDealAborted,
    TieBreakDue,
)
from rummy_rules.rules import RuleSetError


def test_a_two_deal_match_with_a_tie_break_deal_pays_the_most_chips() -> None:
    fmt = Deals(deals=2, entry_hundredths=1_000, commission_bps=1_000)
    m = Match(fmt, 3)
    assert fmt.chips(m.state) == {0: 160, 1: 160, 2: 160}  # 80 x 2 deals each
    assert fmt.deals_left(m.state) == 2
    m.deal({0: 0, 1: 40, 2: 20})  # chips 160 + 60 = 220, 120, 140
    assert fmt.chips(m.state) == {0: 220, 1: 120, 2: 140}
    new = m.deal({0: 20, 1: 40, 2: 0})  # chips 200, 80, 200: seats 0 and 2 tie at the top
    assert fmt.chips(m.state) == {0: 200, 1: 80, 2: 200}
    assert new[-1] == TieBreakDue(seats=(0, 2))
    assert m.do(BeginDeal(at_ms=T0)) == (
        DealStarted(deal_no=3, seats=(0, 2), tie_break=True, at_ms=T0),
    )
    with pytest.raises(RuleViolation) as refused:  # seat 1 sits the tie-break out
        m.do(RecordDeal(result=DealResult(points=((0, 0), (1, 5), (2, 5)), winners=(0,)), at_ms=T0))
    assert refused.value.code is ErrorCode.INVALID_DEAL
    m.record({0: 30, 2: 0})  # chips 170, 80, 230
    result = m.ended()
    assert result.winners == (2,) and result.reason == "most_chips"
    # Pool 3,000; 10% = 300; seat 2: 3,000 - 300 - 1,000 = +1,700.
    assert result.settlement is not None
    assert [ln.amount_hundredths for ln in result.settlement.lines] == [-1_000, -1_000, 1_700]


def test_a_tie_that_persists_plays_another_tie_break_deal() -> None:
    m = Match(Deals(deals=2), 2)
    m.deal({0: 0, 1: 30})
    assert m.deal({0: 30, 1: 0})[-1] == TieBreakDue(seats=(0, 1))
    # A tie-break deal where nobody pays (the loser's count is 0) leaves the tie: again.
    m.do(BeginDeal(at_ms=T0))
    result = DealResult(points=((0, 0), (1, 0)), winners=(0,))
    assert m.do(RecordDeal(result=result, at_ms=T0))[-1] == TieBreakDue(seats=(0, 1))
    m.deal({0: 0, 1: 1})
    assert m.ended().winners == (0,)


def test_a_best_of_three_with_a_tie_break_pays_the_lowest_total() -> None:
    fmt = BestOf(deals=3, entry_hundredths=250, commission_bps=200)
    m = Match(fmt, 2)
    m.deal({0: 0, 1: 30})
    m.deal({0: 10, 1: 0})
    assert fmt.deals_left(m.state) == 1
    assert m.deal({0: 20, 1: 0})[-1] == TieBreakDue(seats=(0, 1))  # 30 and 30
    m.deal({0: 0, 1: 5})  # 30 and 35
    result = m.ended()
    assert result.winners == (0,) and result.reason == "lowest_total"
    # Pool 500; 2% = 10; seat 0: 500 - 10 - 250 = +240; seat 1 -250.
    assert result.settlement is not None
    assert [ln.amount_hundredths for ln in result.settlement.lines] == [240, -250]


def test_best_of_three_without_a_tie_ends_after_the_third_deal() -> None:
    m = Match(BestOf(deals=3), 3)
    m.deal({0: 0, 1: 30, 2: 5})
    m.deal({0: 10, 1: 0, 2: 5})
    assert m.state.phase.value == "between_deals"
    m.deal({0: 20, 1: 40, 2: 0})  # 30, 70, 10
    assert m.ended().winners == (2,)


def test_a_player_leaving_mid_match_forfeits_and_the_tie_break_goes_on_without_it() -> None:
    m = Match(Deals(deals=2, entry_hundredths=400, commission_bps=0), 3)
    m.deal({0: 0, 1: 40, 2: 40})  # 240, 120, 120
    m.leave(1)
    assert m.do(BeginDeal(at_ms=T0))[0].seats == (0, 2)  # type: ignore[attr-defined]
    m.record({0: 50, 2: 0})  # 190, -, 170
    result = m.ended()
    # Pool 1,200, no commission: seat 0 gets 1,200 - 400 = +800; seat 1 (left) forfeits 400.
    assert result.winners == (0,)
    assert result.settlement is not None
    assert [ln.amount_hundredths for ln in result.settlement.lines] == [800, -400, -400]


def test_a_tied_seat_leaving_before_the_tie_break_decides_the_match() -> None:
    m = Match(BestOf(deals=2, entry_hundredths=100), 3)
    m.deal({0: 0, 1: 30, 2: 40})
    assert m.deal({0: 30, 1: 0, 2: 40})[-1] == TieBreakDue(seats=(0, 1))
    new = m.leave(0)
    assert isinstance(new[-1], MatchEnded) and new[-1].winners == (1,)


def test_a_seat_sitting_out_a_tie_break_may_leave_while_it_is_played() -> None:
    from rummy_rules.formats.messages import SeatLeft

    m = Match(Deals(deals=2, entry_hundredths=100), 3)
    m.deal({0: 0, 1: 40, 2: 20})
    m.deal({0: 20, 1: 40, 2: 0})  # seats 0 and 2 tie
    m.do(BeginDeal(at_ms=T0))
    assert m.leave(1) == (SeatLeft(seat=1, mid_deal=False),)
    m.record({0: 0, 2: 10})
    assert m.ended().winners == (0,)


def test_a_voided_tie_break_deal_is_replayed_among_the_same_seats() -> None:
    m = Match(Deals(deals=2, entry_hundredths=100), 3)
    m.deal({0: 0, 1: 40, 2: 20})
    m.deal({0: 20, 1: 40, 2: 0})
    m.do(BeginDeal(at_ms=T0))
    assert m.do(RecordDealAborted(reason="fairness gone", at_ms=T0)) == (
        DealVoided(deal_no=3, reason="fairness gone"),
    )
    assert m.do(BeginDeal(at_ms=T0)) == (
        DealStarted(deal_no=3, seats=(0, 2), tie_break=True, at_ms=T0),
    )


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("deals", {"deals": 4}),
        ("deals", {"deals": 1}),
        ("best-of", {"deals": 1}),
        ("best-of", {"deals": 11}),
        ("deals", {"entry_hundredths": -5}),
    ],
)
def test_deal_counts_and_entries_are_validated(kind: str, options: dict[str, int]) -> None:
    with pytest.raises(RuleSetError):
        make_format(kind, **options)


def test_deals_and_best_of_ask_the_variant_for_deals_by_their_kind() -> None:
    # in the format's terms only; Indian points answers drops 20/40, wrong declare 80, cap 80
    assert Deals(deals=3).deal_rules == DealRules(kind="deals")
    assert BestOf(deals=5).deal_rules == DealRules(kind="best-of")
    assert Deals(deals=6).name == "deals-6" and BestOf(deals=5).name == "best-of-5"


def test_a_player_sees_the_chips_the_deals_left_and_a_tie_break() -> None:
    fmt = Deals(deals=2)
    m = Match(fmt, 3)
    assert [s.chips for s in match_view(fmt, m.state).seats] == [160, 160, 160]
    m.deal({0: 0, 1: 40, 2: 20})
    view = match_view(fmt, m.state)
    assert [s.chips for s in view.seats] == [220, 120, 140] and view.deals_left == 1
    m.deal({0: 20, 1: 40, 2: 0})
    view = match_view(fmt, m.state)
    assert view.deals_left == 0 and view.next_seats == (0, 2)
