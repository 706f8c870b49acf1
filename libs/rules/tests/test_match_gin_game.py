"""The gin family's game (house plan "Gin family", "Money by format"; rulebook "Gin Rummy", "Game
Scoring"): a game to N with the variant's game-end scoring (game bonus, shutout, boxes), walls
that score nothing and keep the dealer, and game stakes, with hand-worked numbers. Deal results
are stand-ins of what a gin hand reports: the scorer is the deal's winner, the other player is
charged the hand's score."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from match_play import T0, Match

from rummy_rules.cards import parse_card
from rummy_rules.errors import RuleViolation
from rummy_rules.events import HandEnded, SeatResult
from rummy_rules.formats import (
    DealResult,
    GameScoring,
    GameTo,
    make_format,
    match_view,
)
from rummy_rules.formats.messages import (
    BeginDeal,
    GameEnded,
    GameStarted,
    MatchEnded,
    MoneyReserved,
    RecordDeal,
    SeatForfeitedGame,
    deal_result,
)
from rummy_rules.formats.scoring import game_end_totals, is_shutout
from rummy_rules.formats.single import Single
from rummy_rules.rules import RuleSetError
from rummy_rules.settlement import Settlement, SettlementLine

#: Gin's game-end scoring, as the gin bundle declares it.
GIN = GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25)


def gin_game(**options: object) -> GameTo:
    kwargs: dict[str, object] = {
        "target": 100,
        "scoring": GIN,
        "missed_turns_lose_game": True,
        "min_seats": 2,
        "max_seats": 2,
    }
    kwargs.update(options)
    fmt = make_format("game-to", **kwargs)
    assert isinstance(fmt, GameTo)
    return fmt


def hand(m: Match, scorer: int, score: int, *, timed_out: frozenset[int] = frozenset()) -> None:
    """One gin hand: ``scorer`` scores ``score`` (the other seat is charged it)."""
    m.do(BeginDeal(at_ms=T0))
    other = 1 - scorer
    points = tuple(sorted({scorer: 0, other: score}.items()))
    m.do(
        RecordDeal(
            result=DealResult(points=points, winners=(scorer,), timed_out=timed_out), at_ms=T0
        )
    )


def wall(m: Match) -> None:
    m.do(BeginDeal(at_ms=T0))
    m.do(RecordDeal(result=DealResult(points=((0, 0), (1, 0)), winners=()), at_ms=T0))


def only_game(m: Match) -> GameEnded:
    (game,) = m.of(GameEnded)
    return game


def test_a_gin_game_to_100_adds_the_game_bonus_and_boxes_and_settles_the_capped_difference() -> (
    None
):
    m = Match(gin_game(point_value_hundredths=10, max_game_points=400, commission_bps=500), 2)
    # The game's stake is reserved at its first deal: 400 x 10 = 4,000 hundredths a seat.
    assert [(e.seat, e.amount_hundredths) for e in m.of(MoneyReserved)] == []
    hand(m, 0, 12)  # seat 0 knocks and scores 12: 12 - 0
    assert [(e.seat, e.amount_hundredths) for e in m.of(MoneyReserved)] == [(0, 4_000), (1, 4_000)]
    hand(m, 1, 28)  # seat 1 undercuts: difference 3 + 25 = 28: 12 - 28
    wall(m)  # no score: 12 - 28
    hand(m, 0, 56)  # seat 0 gins: 31 deadwood + 25 = 56: 68 - 28
    assert m.state.totals == ((0, 68), (1, 28)) and not m.of(GameEnded)
    hand(m, 0, 40)  # seat 0 big gin: 9 + 31 = 40: 108 - 28, 108 >= 100 ends the game
    game = only_game(m)
    # Boxes: seat 0 won deals 1, 4, 5 (3 x 25 = 75), seat 1 deal 2 (25); seat 1 scored, so no
    # shutout: seat 0 108 + 100 + 75 = 283, seat 1 28 + 25 = 53.
    assert game.winner == 0 and game.totals == ((0, 283), (1, 53))
    # Seat 1 pays min(283 - 53, 400) = 230 x 10 = 2,300; 5% = 115; seat 0 receives 2,185.
    s = game.settlement
    assert s.pool_hundredths == 2_300 and s.commission_hundredths == 115
    assert [(ln.seat, ln.held_hundredths, ln.amount_hundredths) for ln in s.lines] == [
        (0, 4_000, 2_185),
        (1, 4_000, -2_300),
    ]
    result = m.ended()
    assert result.winners == (0,) and result.reason == "games_played"


def test_a_shutout_doubles_the_game_bonus_and_the_loser_pays_at_most_the_cap() -> None:
    m = Match(gin_game(point_value_hundredths=4, max_game_points=250), 2)
    hand(m, 0, 60)
    wall(m)
    hand(m, 0, 45)  # 105 - 0
    # Seat 1 scored no points: 105 + 200 + 2 x 25 = 355; seat 1 0.
    game = only_game(m)
    assert game.totals == ((0, 355), (1, 0))
    # Seat 1 pays min(355 - 0, 250) = 250 x 4 = 1,000 (its whole reservation).
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [1_000, -1_000]


def test_a_wall_scores_nothing_and_the_same_dealer_deals_again() -> None:
    fmt = gin_game()
    m = Match(fmt, 2)
    assert not fmt.keeps_dealer(m.state)
    hand(m, 1, 20)
    assert not fmt.keeps_dealer(m.state)  # a scored hand: the dealer alternates
    wall(m)
    assert fmt.keeps_dealer(m.state) and m.state.totals == ((0, 0), (1, 20))
    assert dict(m.state.hands_won) == {0: 0, 1: 1}
    hand(m, 0, 5)
    assert not fmt.keeps_dealer(m.state)


def test_a_drawn_deal_charges_nobody_and_only_a_game_format_takes_one() -> None:
    m = Match(gin_game(), 2)
    m.do(BeginDeal(at_ms=T0))
    bad = DealResult(points=((0, 0), (1, 5)), winners=())
    with pytest.raises(RuleViolation, match="drawn deal charges nobody"):
        m.do(RecordDeal(result=bad, at_ms=T0))
    single = Match(Single(), 2)
    single.do(BeginDeal(at_ms=T0))
    with pytest.raises(RuleViolation, match="winners must be distinct"):
        single.do(RecordDeal(result=DealResult(((0, 0), (1, 0)), ()), at_ms=T0))


def test_deal_result_reads_a_hand_whose_every_seat_is_drawn_as_a_drawn_deal() -> None:
    def ended(outcome: str) -> HandEnded:
        results = tuple(
            SeatResult(
                seat=s,
                account_id=f"acct-{s}",
                outcome=outcome,
                points=0,
                cards=(parse_card("AC"),),
                melds=(),
                deadwood=(),
            )
            for s in (0, 1)
        )
        lines = (SettlementLine(0, 0, 0), SettlementLine(1, 0, 0))
        settlement = Settlement(0, 0, 0, lines, 0)
        return HandEnded(winner_seat=0, results=results, settlement=settlement, at_ms=T0)

    assert deal_result(ended("drawn")) == DealResult(points=((0, 0), (1, 0)), winners=())
    assert deal_result(ended("won")).winners == (0,)


def test_missed_turns_lose_the_gin_game_at_the_cap() -> None:
    m = Match(gin_game(point_value_hundredths=10, max_game_points=150), 2)
    hand(m, 1, 30)  # 0 - 30
    hand(m, 0, 10, timed_out=frozenset({1}))  # seat 1 dropped on missed turns: 10 - 30
    assert SeatForfeitedGame(seat=1) in m.events
    game = only_game(m)
    # The sheet still adds the bonuses (10 + 100 + 25 = 135; 30 + 25 = 55), but a seat that
    # lost at the cap pays the cap: 150 x 10 = 1,500.
    assert game.winner == 0 and game.totals == ((0, 135), (1, 55))
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [1_500, -1_500]


def test_leaving_between_deals_loses_the_gin_game_at_the_cap() -> None:
    m = Match(gin_game(point_value_hundredths=10, max_game_points=150), 2)
    hand(m, 1, 90)  # seat 1 leads 90 - 0
    m.leave(1)
    game = only_game(m)
    assert game.winner == 0
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [1_500, -1_500]
    assert m.ended().winners == (0,)


def test_leaving_mid_deal_loses_the_gin_game_at_the_cap() -> None:
    m = Match(gin_game(point_value_hundredths=1, max_game_points=100), 2)
    m.do(BeginDeal(at_ms=T0))
    m.leave(0)
    assert not m.of(GameEnded)  # the hand is scored first
    m.do(
        RecordDeal(
            result=DealResult(((0, 7), (1, 0)), (1,), left=frozenset({0})),
            at_ms=T0,
        )
    )
    game = only_game(m)
    assert game.winner == 1 and [ln.amount_hundredths for ln in game.settlement.lines] == [
        -100,
        100,
    ]


def test_a_second_game_starts_with_fresh_totals_boxes_and_stakes() -> None:
    m = Match(gin_game(games=2, point_value_hundredths=1, max_game_points=500), 2)
    hand(m, 0, 100)  # game 1: shutout, 100 + 200 + 25 = 325
    assert only_game(m).totals == ((0, 325), (1, 0))
    hand(m, 1, 30)  # game 2
    assert m.of(GameStarted)[1] == GameStarted(game_no=2, seats=(0, 1))
    assert len(m.of(MoneyReserved)) == 4
    assert dict(m.state.hands_won) == {0: 0, 1: 1} and m.state.totals == ((0, 0), (1, 30))


def test_the_view_shows_each_game_s_points_boxes_bonus_and_totals() -> None:
    fmt = gin_game(games=2)
    m = Match(fmt, 2)
    hand(m, 0, 70)
    hand(m, 1, 20)
    hand(m, 0, 35)  # game 1: 105 - 20, boxes 2 - 1
    hand(m, 1, 10)  # game 2 running: 0 - 10
    view = match_view(fmt, m.state)
    first, second = view.sheets
    assert (first.number, first.running, first.winner) == (1, False, 0)
    # Seat 0: 105 + 100 + 2 x 25 = 255 (bonus 150); seat 1: 20 + 25 = 45 (bonus 25).
    assert [(s.points, s.boxes, s.bonus, s.total) for s in first.seats] == [
        (105, 2, 150, 255),
        (20, 1, 25, 45),
    ]
    assert (second.number, second.running, second.winner) == (2, True, None)
    assert [(s.points, s.boxes, s.bonus, s.total) for s in second.seats] == [
        (0, 0, 0, 0),
        (10, 1, 0, 10),
    ]


def test_game_end_scoring_options_are_validated() -> None:
    with pytest.raises(RuleSetError):
        GameScoring(game_bonus=-1)
    with pytest.raises(RuleSetError):
        make_format("game-to", scoring={"game_bonus": 100})


def test_game_end_totals_by_hand() -> None:
    # The rulebook's example: A 3 wins x 25 = 75 + 100 + hand totals; B scored 0 -> 200.
    assert game_end_totals(GIN, {0: 104, 1: 0}, {0: 3, 1: 0}, 0) == {0: 379, 1: 0}
    assert game_end_totals(GIN, {0: 104, 1: 9}, {0: 3, 1: 1}, 0) == {0: 279, 1: 34}
    assert is_shutout({0: 104, 1: 0}, 0) and not is_shutout({0: 104, 1: 9}, 0)
    # No scoring: the totals as they are (every other game to N).
    assert game_end_totals(GameScoring(), {0: 30, 1: 10}, {0: 1, 1: 1}, 0) == {0: 30, 1: 10}


@st.composite
def gin_deals(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    """A list of ("hand", scorer, score), ("wall", 0, 0), ("timeout", loser, score) or
    ("leave", seat, 0) steps."""
    steps = draw(
        st.lists(
            st.one_of(
                st.tuples(st.just("hand"), st.integers(0, 1), st.integers(1, 140)),
                st.tuples(st.just("wall"), st.just(0), st.just(0)),
                st.tuples(st.just("timeout"), st.integers(0, 1), st.integers(1, 60)),
                st.tuples(st.just("leave"), st.integers(0, 1), st.just(0)),
            ),
            min_size=1,
            max_size=40,
        )
    )
    return steps


@given(
    gin_deals(),
    st.sampled_from([100, 150, 250]),
    st.integers(1, 400),
    st.integers(0, 1_000),
    st.integers(0, 10_000),
)
def test_a_gin_game_settles_to_zero_with_commission_and_no_loser_pays_beyond_its_hold(
    steps: list[tuple[str, int, int]], target: int, cap: int, value: int, bps: int
) -> None:
    fmt = gin_game(
        target=target, max_game_points=cap, point_value_hundredths=value, commission_bps=bps
    )
    m = Match(fmt, 2)
    for kind, seat, score in steps:
        if m.state.is_over:
            break
        if kind == "hand":
            hand(m, seat, score)
        elif kind == "wall":
            wall(m)
        elif kind == "timeout":
            hand(m, 1 - seat, score, timed_out=frozenset({seat}))
        else:
            m.leave(seat)
    for game in m.of(GameEnded):
        s = game.settlement
        assert sum(ln.amount_hundredths for ln in s.lines) + s.commission_hundredths == 0
        assert all(-ln.amount_hundredths <= ln.held_hundredths == cap * value for ln in s.lines)
        assert s.winners == (game.winner,)
        assert s.commission_hundredths == s.pool_hundredths * bps // 10_000
    assert fmt.fold(m.events) == m.state  # replay gives the same state, sheets included
    if m.state.is_over:
        assert isinstance(m.state.result, MatchEnded)
        assert len(m.of(GameEnded)) == (1 if m.of(GameStarted) else 0)
