"""Pool 101 / 201 (docs/rules/formats.md#pool, #money):
whole matches driven through the format's commands with hand-worked totals and money."""

from __future__ import annotations

import pytest
from match_play import T0, Match

from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.formats import Pool, make_format, match_view
from rummy_rules.formats.messages import (
    AbortMatch,
    AcceptRejoin,
    BeginDeal,
    DealResult,
    DealRules,
    DeclineRejoin,
    MatchAborted,
    MatchEnded,
    MoneyReserved,
    RecordDeal,
    Rejoined,
    RejoinNotHeld,
    RejoinOffered,
    RejoinRefused,
    RequestSplit,
    SeatEliminated,
    SeatLeft,
)
from rummy_rules.formats.state import MatchPhase, OutReason
from rummy_rules.rules import RuleSetError


def test_a_pool_101_match_with_an_elimination_and_a_rejoin_pays_the_last_seat_left() -> None:
    m = Match(Pool(target=101, entry_hundredths=1_000, commission_bps=1_000, rejoin=True), 3)
    assert [(e.seat, e.amount_hundredths) for e in m.of(MoneyReserved)] == [
        (0, 1_000),
        (1, 1_000),
        (2, 1_000),
    ]
    m.deal({0: 0, 1: 80, 2: 40})  # totals 0, 80, 40
    new = m.deal({0: 20, 1: 25, 2: 0})  # totals 20, 105, 40: seat 1 is out at 105
    assert SeatEliminated(seat=1, total=105) in new
    # Rejoin at the highest remaining total + 1 = 40 + 1 = 41 (<= 79, two others remain).
    assert RejoinOffered(seat=1, total=41, entry_hundredths=1_000) in new
    rejoined = m.do(AcceptRejoin(seat=1, at_ms=T0))
    assert rejoined == (
        Rejoined(seat=1, total=41),
        MoneyReserved(seat=1, amount_hundredths=1_000, purpose="rejoin"),
    )
    assert m.state.total(1) == 41 and 1 in m.state.active
    new = m.deal({0: 80, 1: 0, 2: 61})  # totals 100, 41, 101: seat 2 is out
    assert SeatEliminated(seat=2, total=101) in new
    # No offer: the highest remaining total + 1 = 101 is above 79.
    assert not [e for e in new if isinstance(e, RejoinOffered)]
    with pytest.raises(RuleViolation) as refused:
        m.do(AcceptRejoin(seat=2, at_ms=T0))
    assert refused.value.code is ErrorCode.WRONG_PHASE
    m.deal({0: 2, 1: 0})  # seat 0 reaches 102: seat 1 is the last left
    result = m.ended()
    assert result.winners == (1,) and result.reason == "last_left"
    # Pool 1,000 x 3 entries + 1,000 rejoin = 4,000; 10% = 400; seat 1 held 2,000:
    # 4,000 - 400 - 2,000 = +1,600; seats 0 and 2 forfeit 1,000 each; 1,600 - 2,000 + 400 = 0.
    s = result.settlement
    assert s is not None and s.pool_hundredths == 4_000 and s.commission_hundredths == 400
    assert [ln.amount_hundredths for ln in s.lines] == [-1_000, 1_600, -1_000]


def test_a_rejoin_is_once_only_and_lapses_when_the_next_deal_is_dealt() -> None:
    m = Match(Pool(target=101, entry_hundredths=100, rejoin=True), 4)
    m.deal({0: 0, 1: 80, 2: 10, 3: 10})
    new = m.deal({0: 0, 1: 30, 2: 10, 3: 10})  # seat 1 at 110: offered 20 + 1 = 21
    assert RejoinOffered(seat=1, total=21, entry_hundredths=100) in new
    m.do(BeginDeal(at_ms=T0))
    with pytest.raises(RuleViolation):
        m.do(AcceptRejoin(seat=1, at_ms=T0))
    assert m.state.out_seats[1] is OutReason.ELIMINATED
    new = m.record({0: 0, 2: 80, 3: 5})  # seat 2 at 100: still in
    assert not [e for e in new if isinstance(e, SeatEliminated)]


def test_a_rejoin_whose_entry_cannot_be_held_is_undone_and_the_match_goes_on() -> None:
    m = Match(Pool(target=101, entry_hundredths=1_000, commission_bps=1_000, rejoin=True), 3)
    m.deal({0: 0, 1: 80, 2: 40})
    m.deal({0: 20, 1: 25, 2: 0})  # seat 1 out at 105, offered 41
    m.do(AcceptRejoin(seat=1, at_ms=T0))
    undone = m.do(RejoinNotHeld(seat=1, at_ms=T0))
    assert undone == (RejoinRefused(seat=1, total=105, entry_hundredths=1_000),)
    assert m.state.out_seats[1] is OutReason.ELIMINATED and m.state.total(1) == 105
    assert dict(m.state.held) == {0: 1_000, 1: 1_000, 2: 1_000}
    with pytest.raises(RuleViolation):  # nothing is waiting any more
        m.do(RejoinNotHeld(seat=1, at_ms=T0))
    m.deal({0: 0, 2: 80})  # seat 2 at 120: seat 0 is the last left
    result = m.ended()
    assert result.winners == (0,)
    # Pool 3 x 1,000 (seat 1's one entry) = 3,000; 10% = 300; seat 0: 3,000 - 300 - 1,000.
    s = result.settlement
    assert s is not None and (s.pool_hundredths, s.commission_hundredths) == (3_000, 300)
    assert [(ln.held_hundredths, ln.amount_hundredths) for ln in s.lines] == [
        (1_000, 1_700),
        (1_000, -1_000),
        (1_000, -1_000),
    ]


def test_a_declined_rejoin_closes_the_offer() -> None:
    m = Match(Pool(target=101, rejoin=True), 3)
    new = m.deal({0: 0, 1: 80, 2: 30}) + m.deal({0: 0, 1: 30, 2: 10})
    assert RejoinOffered(seat=1, total=41, entry_hundredths=0) in new
    m.do(DeclineRejoin(seat=1, at_ms=T0))
    with pytest.raises(RuleViolation):
        m.do(AcceptRejoin(seat=1, at_ms=T0))


def test_each_seat_out_in_a_deal_is_offered_a_rejoin_and_none_when_the_option_is_off() -> None:
    # Seats 1 and 2 out in the same deal at 110; seats 0 and 3 remain (two others for each):
    # both are offered 20 + 1 = 21. A rejoin is priced when it is taken: once seat 1 is back at
    # 21, the highest remaining total is 21, so seat 2 comes back at 22.
    m = Match(Pool(target=101, rejoin=True), 4)
    m.deal({0: 0, 1: 80, 2: 80, 3: 10})
    new = m.deal({0: 0, 1: 30, 2: 30, 3: 10})
    assert {(e.seat, e.total) for e in new if isinstance(e, RejoinOffered)} == {(1, 21), (2, 21)}
    assert m.do(AcceptRejoin(seat=1, at_ms=T0)) == (Rejoined(seat=1, total=21),)
    assert m.do(AcceptRejoin(seat=2, at_ms=T0)) == (Rejoined(seat=2, total=22),)
    off = Match(Pool(target=101), 3)
    off.deal({0: 0, 1: 80, 2: 30})
    assert not [e for e in off.deal({0: 0, 1: 30, 2: 10}) if isinstance(e, RejoinOffered)]
    with pytest.raises(RuleViolation) as refused:
        off.do(AcceptRejoin(seat=1, at_ms=T0))
    assert refused.value.code is ErrorCode.INVALID_COMMAND


def test_a_pool_201_match_ends_in_a_split_with_the_remainder_from_the_lowest_total() -> None:
    fmt = Pool(target=201, entry_hundredths=555, commission_bps=750, split=True)
    assert fmt.deal_rules == DealRules(kind="pool", target=201)
    m = Match(fmt, 3)
    m.deal({0: 0, 1: 50, 2: 25})  # middle drop 50, first drop 25: totals 0, 50, 25
    m.deal({0: 80, 1: 0, 2: 80})  # totals 80, 50, 105
    m.do(RequestSplit(seat=0, at_ms=T0))
    with pytest.raises(RuleViolation) as twice:
        m.do(RequestSplit(seat=0, at_ms=T0))
    assert twice.value.code is ErrorCode.DUPLICATE
    m.do(RequestSplit(seat=2, at_ms=T0))
    assert m.state.phase is MatchPhase.BETWEEN_DEALS
    m.do(RequestSplit(seat=1, at_ms=T0))
    result = m.ended()
    assert result.reason == "split" and result.winners == (0, 1, 2)
    # Pool 3 x 555 = 1,665; 7.5% = 124.875 -> 124; 1,541 / 3 = 513 remainder 2, one each from
    # the lowest total: seat 1 (50), then seat 0 (80); seat 2 (105) none. Lines 514 - 555 = -41,
    # -41, 513 - 555 = -42; -124 + 124 = 0.
    s = result.settlement
    assert s is not None and s.commission_hundredths == 124
    assert [ln.amount_hundredths for ln in s.lines] == [-41, -41, -42]


def test_split_requests_lapse_when_the_next_deal_is_dealt_and_need_the_option() -> None:
    m = Match(Pool(target=201, split=True), 2)
    m.do(RequestSplit(seat=0, at_ms=T0))
    m.deal({0: 0, 1: 30})
    assert m.state.split_requests == frozenset()
    m.do(RequestSplit(seat=1, at_ms=T0))
    assert m.state.phase is MatchPhase.BETWEEN_DEALS
    off = Match(Pool(target=201), 2)
    with pytest.raises(RuleViolation):
        off.do(RequestSplit(seat=0, at_ms=T0))


def test_leaving_between_deals_and_mid_deal_forfeits_the_entry() -> None:
    m = Match(Pool(target=101, entry_hundredths=1_000, commission_bps=1_000), 4)
    m.deal({0: 0, 1: 20, 2: 40, 3: 80})
    assert m.leave(3) == (SeatLeft(seat=3, mid_deal=False),)
    started = m.do(BeginDeal(at_ms=T0))
    assert started[0].seats == (0, 1, 2)  # type: ignore[attr-defined]
    assert m.leave(2) == (SeatLeft(seat=2, mid_deal=True),)  # the variant scores its 40
    with pytest.raises(RuleViolation):  # a seat out cannot leave again
        m.leave(2)
    m.record({0: 30, 1: 0, 2: 40}, left=frozenset({2}))
    assert m.state.active == (0, 1)
    m.deal({0: 80, 1: 0})  # seat 0 at 110
    result = m.ended()
    # Pool 4,000; 10% = 400; seat 1: 4,000 - 400 - 1,000 = +2,600; the three others -1,000.
    assert result.winners == (1,)
    assert result.settlement is not None
    assert [ln.amount_hundredths for ln in result.settlement.lines] == [
        -1_000,
        2_600,
        -1_000,
        -1_000,
    ]


def test_the_last_seat_left_after_a_leave_wins_at_once() -> None:
    m = Match(Pool(target=101, entry_hundredths=300, commission_bps=500), 2)
    new = m.leave(0)
    assert isinstance(new[-1], MatchEnded) and new[-1].winners == (1,)
    # Pool 600, 5% = 30; seat 1: 600 - 30 - 300 = +270.
    assert new[-1].settlement is not None
    assert [ln.amount_hundredths for ln in new[-1].settlement.lines] == [-300, 270]


def test_missed_turns_drop_the_seat_for_the_deal_and_it_stays_in_the_match() -> None:
    m = Match(Pool(target=101), 3)
    m.deal({0: 0, 1: 40, 2: 10}, timed_out=frozenset({1}))  # the middle drop, 40
    assert m.state.active == (0, 1, 2)
    assert m.do(BeginDeal(at_ms=T0))[0].seats == (0, 1, 2)  # type: ignore[attr-defined]


def test_a_voided_deal_is_replayed_with_the_same_seats_and_the_entries_stay_held() -> None:
    from rummy_rules.formats.messages import DealStarted, DealVoided, RecordDealAborted

    m = Match(Pool(target=101, entry_hundredths=500), 3)
    m.deal({0: 0, 1: 10, 2: 10})
    m.do(BeginDeal(at_ms=T0))
    assert m.do(RecordDealAborted(reason="dealer gone", at_ms=T0)) == (
        DealVoided(deal_no=2, reason="dealer gone"),
    )
    assert dict(m.state.held) == {0: 500, 1: 500, 2: 500}
    again = m.do(BeginDeal(at_ms=T0))
    assert again == (DealStarted(deal_no=2, seats=(0, 1, 2), tie_break=False, at_ms=T0),)


def test_a_voided_deal_after_every_other_seat_left_it_ends_the_match_for_the_seat_left() -> None:
    from rummy_rules.formats.messages import DealVoided, RecordDealAborted

    m = Match(Pool(target=201, entry_hundredths=250, commission_bps=500, split=True), 2)
    m.do(BeginDeal(at_ms=T0))
    m.leave(0)  # mid-deal: the deal's result would decide what follows, but it is void
    new = m.do(RecordDealAborted(reason="dealer gone", at_ms=T0))
    assert isinstance(new[0], DealVoided)
    assert isinstance(new[-1], MatchEnded) and new[-1].winners == (1,)
    assert new[-1].reason == "last_left"
    assert m.state.is_over  # no split of one seat, no deal of one seat


def test_a_voided_deal_every_seat_left_aborts_the_match_and_releases_every_entry() -> None:
    from rummy_rules.formats.messages import RecordDealAborted

    m = Match(Pool(target=101, entry_hundredths=300), 2)
    m.do(BeginDeal(at_ms=T0))
    m.leave(0)
    m.leave(1)
    new = m.do(RecordDealAborted(reason="dealer gone", at_ms=T0))
    assert isinstance(new[-1], MatchAborted)
    assert new[-1].released == ((0, 300), (1, 300))


def test_an_aborted_or_closed_match_releases_every_entry_and_moves_nothing() -> None:
    m = Match(Pool(target=101, entry_hundredths=700, rejoin=True), 3)
    m.deal({0: 0, 1: 80, 2: 10})
    m.deal({0: 0, 1: 30, 2: 10})
    m.do(AcceptRejoin(seat=1, at_ms=T0))
    aborted = m.do(AbortMatch(reason="closed by operator ops", at_ms=T0))
    assert aborted == (
        MatchAborted(
            reason="closed by operator ops", released=((0, 700), (1, 1_400), (2, 700)), at_ms=T0
        ),
    )
    with pytest.raises(RuleViolation):
        m.do(BeginDeal(at_ms=T0))


def test_a_deal_result_that_does_not_fit_the_deal_is_refused_and_changes_nothing() -> None:
    m = Match(Pool(target=101), 3)
    m.do(BeginDeal(at_ms=T0))
    before = m.state
    for points, winners in [
        ({0: 0, 1: 81, 2: 10}, (0,)),  # above the 80 the deal can cost
        ({0: 0, 1: 10}, (0,)),  # seat 2 was dealt in
        ({0: 0, 1: 10, 2: 10, 3: 5}, (0,)),  # seat 3 was not
        ({0: 0, 1: 10, 2: 10}, ()),  # no winner
        ({0: 5, 1: 10, 2: 10}, (0,)),  # a charged winner
        ({0: 0, 1: -1, 2: 10}, (0,)),
    ]:
        result = DealResult(points=tuple(sorted(points.items())), winners=winners)
        with pytest.raises(RuleViolation) as refused:  # the variant's most, as the host says
            m.do(RecordDeal(result=result, at_ms=T0, most_points=80))
        assert refused.value.code is ErrorCode.INVALID_DEAL
    assert m.state == before


def test_pool_options_are_validated() -> None:
    for options in [
        {"target": 150},
        {"entry_hundredths": -1},
        {"commission_bps": 10_001},
        {"entry_hundredths": 2**62},
        {"bogus": 1},
    ]:
        with pytest.raises(RuleSetError):
            make_format("pool", **options)
    with pytest.raises(RuleSetError):
        make_format("bridge")
    assert make_format("pool", target=201).name == "pool-201"


def test_a_pool_seats_what_a_table_seats_and_asks_its_variant_for_fewer() -> None:
    # the format names no variant: 2 to 8 seats (a table's); Indian points' pools seat 2 to 6,
    # its deal rule set's own bound (test_indian_match_deals)
    with pytest.raises(RuleViolation):
        Match(Pool(), 9)
    with pytest.raises(RuleViolation):
        Match(Pool(), 1)
    assert (Pool().min_seats, Pool().max_seats) == (2, 8)
    assert Match(Pool(), 8).state.active == (0, 1, 2, 3, 4, 5, 6, 7)


@pytest.mark.parametrize(
    ("target", "highest", "offered"),
    [(101, 78, 79), (101, 79, None), (201, 173, 174), (201, 174, None)],
)
def test_a_rejoin_comes_back_at_most_at_79_or_174(
    target: int, highest: int, offered: int | None
) -> None:
    # Seat 1 ends at ``highest``, seat 2 is out in the last deal, seat 0 stays low.
    m = Match(Pool(target=target, rejoin=True), 3)
    if target == 101:
        m.deal({0: 0, 1: highest, 2: 80})
        new = m.deal({0: 10, 1: 0, 2: 31})  # 10, highest, 111
    else:
        m.deal({0: 0, 1: 80, 2: 80})
        m.deal({0: 0, 1: 80, 2: 80})
        new = m.deal({0: 0, 1: highest - 160, 2: 51})  # 0, highest, 211
    offers = [(e.seat, e.total) for e in new if isinstance(e, RejoinOffered)]
    assert offers == ([] if offered is None else [(2, offered)])


def test_a_player_sees_the_totals_eliminations_offers_and_split_requests() -> None:
    fmt = Pool(target=101, entry_hundredths=100, rejoin=True, split=True)
    m = Match(fmt, 3)
    m.deal({0: 0, 1: 80, 2: 30})
    m.deal({0: 0, 1: 30, 2: 10})  # seat 1 out at 110, offered 41
    m.do(RequestSplit(seat=0, at_ms=T0))
    view = match_view(fmt, m.state)
    assert (view.match_format, view.phase, view.deals_scored, view.deals_left) == (
        "pool-101",
        "between_deals",
        2,
        None,
    )
    assert [(s.seat, s.status, s.total, s.held_hundredths) for s in view.seats] == [
        (0, "in", 0, 100),
        (1, "eliminated", 110, 100),
        (2, "in", 40, 100),
    ]
    assert [s.rejoin_total for s in view.seats] == [None, 41, None]
    assert [s.asked_split for s in view.seats] == [True, False, False]
    assert all(s.chips is None for s in view.seats)
