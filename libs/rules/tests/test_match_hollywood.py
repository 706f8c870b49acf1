"""Hollywood (house plan "Gin family", "Money by format"; rulebook "Hollywood Gin"): three
columns scored at once, each ended with its own game bonus, boxes and shutout, and the match
settled on the sum of the columns' capped nets. Hand-worked numbers; a property that no score is
ever entered in an ended column and that the settlement balances."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from match_play import T0, Match

from rummy_rules.errors import RuleViolation
from rummy_rules.formats import DealResult, GameScoring, Hollywood, make_format, match_view
from rummy_rules.formats.hollywood import columns_for
from rummy_rules.formats.messages import (
    AbortMatch,
    BeginDeal,
    DealScored,
    GameEnded,
    GameStarted,
    MatchAborted,
    MatchEnded,
    MoneyReserved,
    RecordDeal,
    RecordDealAborted,
)
from rummy_rules.formats.state import GameSheet, new_sheet
from rummy_rules.rules import RuleSetError

GIN = GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25)


def hollywood(**options: object) -> Hollywood:
    fmt = make_format("hollywood", scoring=GIN, **options)
    assert isinstance(fmt, Hollywood)
    return fmt


def hand(m: Match, scorer: int, score: int, *, timed_out: frozenset[int] = frozenset()) -> None:
    m.do(BeginDeal(at_ms=T0))
    points = tuple(sorted({scorer: 0, 1 - scorer: score}.items()))
    m.do(
        RecordDeal(
            result=DealResult(points=points, winners=(scorer,), timed_out=timed_out), at_ms=T0
        )
    )


def wall(m: Match) -> None:
    m.do(BeginDeal(at_ms=T0))
    m.do(RecordDeal(result=DealResult(points=((0, 0), (1, 0)), winners=()), at_ms=T0))


def column_points(m: Match) -> list[dict[int, int]]:
    return [dict(sheet.points) for sheet in m.state.sheets]


def test_a_hollywood_match_across_three_columns_by_hand() -> None:
    m = Match(hollywood(point_value_hundredths=10, max_game_points=300, commission_bps=1_000), 2)
    hand(m, 0, 20)  # A's 1st win: column 1
    # 3 x 300 x 10 = 9,000 hundredths reserved from each player when the match's game opens.
    assert m.of(GameStarted) == [GameStarted(game_no=1, seats=(0, 1))]
    assert [(e.seat, e.amount_hundredths, e.purpose) for e in m.of(MoneyReserved)] == [
        (0, 9_000, "game"),
        (1, 9_000, "game"),
    ]
    hand(m, 1, 15)  # B's 1st win: column 1
    hand(m, 0, 30)  # A's 2nd: columns 1 and 2
    wall(m)  # nobody's win
    hand(m, 0, 25)  # A's 3rd: all three
    assert column_points(m) == [{0: 75, 1: 15}, {0: 55, 1: 0}, {0: 25, 1: 0}]
    hand(m, 0, 30)  # A's 4th: 105 in column 1 ends it; 85, 55
    col1 = m.state.sheets[0]
    # Column 1: A 105 + 100 + 4 boxes x 25 = 305; B 15 + 1 x 25 = 40 (B scored: no shutout).
    assert (col1.winner, dict(col1.totals), dict(col1.boxes)) == (0, {0: 305, 1: 40}, {0: 4, 1: 1})
    hand(m, 1, 10)  # B's 2nd: the first 2 columns still running, 2 and 3
    hand(m, 0, 20)  # A's 5th: column 2 reaches 105 and ends; column 3 75
    col2 = m.state.sheets[1]
    # Column 2: A's wins 2..5 (30 + 25 + 30 + 20 = 105, 4 boxes): 105 + 100 + 100 = 305;
    # B 10 + 25 = 35.
    assert (col2.winner, dict(col2.totals)) == (0, {0: 305, 1: 35})
    assert col1 == m.state.sheets[0]  # an ended column takes no more scores
    assert not m.of(GameEnded)
    hand(m, 1, 95)  # B's 3rd: only column 3 runs: B 10 + 95 = 105 ends it and the match
    col3 = m.state.sheets[2]
    # Column 3: A 75 (wins 3..5, 3 boxes): 75 + 75 = 150; B 105 (2 boxes): 105 + 100 + 50 = 255.
    assert (col3.winner, dict(col3.totals)) == (1, {0: 150, 1: 255})
    (game,) = m.of(GameEnded)
    # Nets (cap 300 each): column 1 A +265, column 2 A +270, column 3 B +105: A +430, B -430.
    assert game.winner == 0 and game.totals == ((0, 430), (1, -430))
    # B pays 430 x 10 = 4,300; 10% = 430; A receives 3,870.
    s = game.settlement
    assert (s.pool_hundredths, s.commission_hundredths) == (4_300, 430)
    assert [(ln.seat, ln.held_hundredths, ln.amount_hundredths) for ln in s.lines] == [
        (0, 9_000, 3_870),
        (1, 9_000, -4_300),
    ]
    assert m.ended() == MatchEnded(winners=(0,), reason="games_played", settlement=None, at_ms=T0)


def test_a_first_win_after_column_1_ended_goes_to_column_2() -> None:
    m = Match(hollywood(point_value_hundredths=1, max_game_points=300), 2)
    hand(m, 0, 110)  # A's 1st: column 1 ends at once, a shutout: 110 + 200 + 25 = 335
    assert dict(m.state.sheets[0].totals) == {0: 335, 1: 0}
    hand(m, 1, 20)  # B's 1st: the first running column is column 2
    assert column_points(m)[1:] == [{0: 0, 1: 20}, {0: 0, 1: 0}]
    hand(m, 0, 40)  # A's 2nd: the first two running columns, 2 and 3
    assert column_points(m)[1:] == [{0: 40, 1: 20}, {0: 40, 1: 0}]


def test_columns_for_takes_the_first_min_n_3_running_columns() -> None:
    running = new_sheet(1, (0, 1))
    ended = GameSheet(number=1, points=running.points, boxes=running.boxes, winner=0)
    assert columns_for((running, running, running), 1) == (0,)
    assert columns_for((running, running, running), 2) == (0, 1)
    assert columns_for((running, running, running), 7) == (0, 1, 2)
    assert columns_for((ended, running, running), 1) == (1,)
    assert columns_for((ended, running, running), 5) == (1, 2)
    assert columns_for((ended, ended, ended), 3) == ()
    with pytest.raises(ValueError):
        columns_for((running,), 0)


def test_leaving_loses_every_running_column_at_the_cap_and_ended_columns_stand() -> None:
    m = Match(hollywood(point_value_hundredths=2, max_game_points=100), 2)
    hand(m, 1, 120)  # B's 1st ends column 1: shutout, 120 + 200 + 25 = 345: B +100 (the cap)
    hand(m, 0, 30)  # A's 1st: column 2
    m.leave(0)  # columns 2 and 3 go to B at the cap, 100 each
    (game,) = m.of(GameEnded)
    assert [sheet.winner for sheet in m.state.sheets] == [1, 1, 1]
    assert m.state.sheets[1].forfeited == frozenset({0})
    # B +300: A pays 300 x 2 = 600 of its 3 x 100 x 2 = 600.
    assert game.winner == 1 and game.totals == ((0, -300), (1, 300))
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [-600, 600]


def test_a_player_who_forfeits_may_still_be_ahead_on_the_columns_that_ended() -> None:
    m = Match(
        hollywood(point_value_hundredths=1, max_game_points=50, missed_turns_lose_game=True), 2
    )
    hand(m, 0, 5)  # A's 1st: column 1 (5)
    hand(m, 0, 95)  # A's 2nd: columns 1 (100: ends, A +50 at the cap) and 2 (95)
    hand(m, 0, 5)  # A's 3rd: the running columns 2 (100: ends, A +50) and 3 (5)
    assert [sheet.winner for sheet in m.state.sheets] == [0, 0, None]
    hand(m, 1, 10, timed_out=frozenset({0}))  # A dropped on missed turns: column 3 to B at 50
    (game,) = m.of(GameEnded)
    assert m.state.sheets[2].winner == 1 and m.state.sheets[2].forfeited == frozenset({0})
    # A +50 +50 -50 = +50: the columns that ended stand, so A still receives 50.
    assert game.winner == 0 and game.totals == ((0, 50), (1, -50))
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [50, -50]


def test_missed_turns_lose_the_running_columns_at_the_cap() -> None:
    m = Match(
        hollywood(point_value_hundredths=1, max_game_points=40, missed_turns_lose_game=True), 2
    )
    hand(m, 1, 100)  # B's 1st ends column 1: B +40 (capped)
    hand(m, 1, 100)  # B's 2nd: columns 2 and 3 both end: B +40, +40
    assert m.of(GameEnded)[0].totals == ((0, -120), (1, 120))
    m2 = Match(
        hollywood(point_value_hundredths=1, max_game_points=40, missed_turns_lose_game=True), 2
    )
    hand(m2, 1, 100)  # B +40 in column 1
    hand(m2, 1, 10, timed_out=frozenset({0}))  # A dropped: columns 2 (B 10) and 3 at the cap
    (game,) = m2.of(GameEnded)
    assert game.totals == ((0, -120), (1, 120))
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [-120, 120]


def test_level_nets_name_the_player_who_won_more_columns() -> None:
    m = Match(Hollywood(point_value_hundredths=1, max_game_points=1_000), 2)  # no bonuses
    hand(m, 0, 100)  # A's 1st: column 1 ends, A +100
    hand(m, 1, 10)  # B's 1st: column 2 (B 10)
    hand(m, 0, 40)  # A's 2nd: columns 2 (A 40) and 3 (A 40)
    hand(m, 1, 90)  # B's 2nd: columns 2 (B 100: ends, B +60) and 3 (B 90)
    hand(m, 0, 20)  # A's 3rd: column 3 (A 60)
    hand(m, 1, 10)  # B's 3rd: column 3 (B 100: ends, B +40)
    (game,) = m.of(GameEnded)
    # A +100 - 60 - 40 = 0: level; B won two columns, so B is named; nothing moves.
    assert game.totals == ((0, 0), (1, 0)) and game.winner == 1
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [0, 0]
    assert game.settlement.winners == (1,) and m.ended().winners == (1,)


def test_a_voided_deal_keeps_the_holds_and_an_aborted_match_releases_them() -> None:
    m = Match(hollywood(point_value_hundredths=10, max_game_points=100), 2)
    hand(m, 0, 20)
    m.do(BeginDeal(at_ms=T0))
    m.do(RecordDealAborted(reason="dealer gone", at_ms=T0))
    assert dict(m.state.held) == {0: 3_000, 1: 3_000}
    assert column_points(m)[0] == {0: 20, 1: 0}
    aborted = m.do(AbortMatch(reason="closed", at_ms=T0))
    assert aborted == (MatchAborted(reason="closed", released=((0, 3_000), (1, 3_000)), at_ms=T0),)


def test_a_hollywood_deal_has_one_winner_and_two_seats() -> None:
    m = Match(hollywood(), 2)
    m.do(BeginDeal(at_ms=T0))
    with pytest.raises(RuleViolation):
        m.do(RecordDeal(result=DealResult(((0, 0), (1, 0)), (0, 1)), at_ms=T0))
    with pytest.raises(RuleViolation):
        Match(hollywood(), 3)
    for options in [{"target": 0}, {"max_game_points": 0}, {"point_value_hundredths": 2**61}]:
        with pytest.raises(RuleSetError):
            make_format("hollywood", **options)


def test_the_view_shows_the_three_columns() -> None:
    fmt = hollywood(target=250)
    m = Match(fmt, 2)
    hand(m, 0, 20)
    hand(m, 0, 30)
    view = match_view(fmt, m.state)
    assert view.match_format == "hollywood-250"
    assert [s.number for s in view.sheets] == [1, 2, 3]
    assert [[(x.points, x.boxes) for x in s.seats] for s in view.sheets] == [
        [(50, 2), (0, 0)],
        [(30, 1), (0, 0)],
        [(0, 0), (0, 0)],
    ]


@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("hand"), st.integers(0, 1), st.integers(1, 130)),
            st.tuples(st.just("wall"), st.just(0), st.just(0)),
            st.tuples(st.just("void"), st.just(0), st.just(0)),
            st.tuples(st.just("timeout"), st.integers(0, 1), st.integers(1, 60)),
            st.tuples(st.just("leave"), st.integers(0, 1), st.just(0)),
        ),
        max_size=60,
    ),
    st.sampled_from([100, 150, 250]),
    st.integers(1, 300),
    st.integers(0, 1_000),
    st.integers(0, 10_000),
    st.booleans(),
)
def test_hollywood_never_scores_into_an_ended_column_and_settles_to_zero(
    steps: list[tuple[str, int, int]],
    target: int,
    cap: int,
    value: int,
    bps: int,
    missed: bool,
) -> None:
    fmt = hollywood(
        target=target,
        max_game_points=cap,
        point_value_hundredths=value,
        commission_bps=bps,
        missed_turns_lose_game=missed,
    )
    m = Match(fmt, 2)
    wins = {0: 0, 1: 0}
    for kind, seat, score in steps:
        if m.state.is_over:
            break
        before = m.state.sheets
        if kind == "hand":
            hand(m, seat, score)
        elif kind == "wall":
            wall(m)
        elif kind == "void":
            m.do(BeginDeal(at_ms=T0))
            m.do(RecordDealAborted(reason="gone", at_ms=T0))
        elif kind == "timeout":
            hand(m, 1 - seat, score, timed_out=frozenset({seat}))
        else:
            m.leave(seat)
        after = m.state.sheets
        if not after:  # left before the first deal: no column was ever opened
            continue
        if not before:
            before = tuple(new_sheet(n, (0, 1)) for n in (1, 2, 3))
        for old, new in zip(before, after, strict=True):
            if not old.running:
                assert new == old  # an ended column takes no more scores
        if kind in ("hand", "timeout"):
            scorer = seat if kind == "hand" else 1 - seat
            wins[scorer] += 1
            entered = [
                i for i, (old, new) in enumerate(zip(before, after, strict=True)) if old != new
            ]
            expected = columns_for(before, wins[scorer])
            # The columns entered are the first min(n, 3) running (a forfeit may end more).
            assert set(expected) <= set(entered) or not any(s.running for s in before)
            for i, (old, new) in enumerate(zip(before, after, strict=True)):
                added = new.points_of(scorer) - old.points_of(scorer)
                assert added == (score if i in expected else 0)
                assert new.points_of(1 - scorer) == old.points_of(1 - scorer)
    games = m.of(GameEnded)
    if m.state.is_over and m.of(GameStarted):
        (game,) = games
        assert all(not sheet.running for sheet in m.state.sheets)
        s = game.settlement
        assert sum(ln.amount_hundredths for ln in s.lines) + s.commission_hundredths == 0
        assert all(ln.held_hundredths == 3 * cap * value for ln in s.lines)
        assert all(-ln.amount_hundredths <= ln.held_hundredths for ln in s.lines)
        assert s.commission_hundredths == s.pool_hundredths * bps // 10_000
        assert sum(n for _, n in game.totals) == 0
        assert all(abs(n) <= 3 * cap for _, n in game.totals)
    deals = m.of(DealScored)
    assert len(deals) == m.state.deals_scored
    # The columns are a projection of the events: folding them again gives the same state.
    assert fmt.fold(m.events) == m.state


def test_both_players_leaving_mid_deal_abort_the_match_and_release_the_holds() -> None:
    # Nobody is left to win a column: as after a voided deal every seat left, the match is
    # aborted and each 3 x 100 x 10 = 3,000 hold released (before, no event ended the match).
    m = Match(hollywood(point_value_hundredths=10, max_game_points=100), 2)
    hand(m, 0, 20)
    m.do(BeginDeal(at_ms=T0))
    m.leave(0)
    m.leave(1)
    wall = DealResult(points=((0, 0), (1, 0)), winners=())
    new = m.do(RecordDeal(result=wall, at_ms=T0))
    assert new[-1] == MatchAborted(
        reason="every seat left the match", released=((0, 3_000), (1, 3_000)), at_ms=T0
    )
    assert m.state.is_over and not m.of(MatchEnded)
