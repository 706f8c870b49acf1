"""``rummy demo --game``: a table of each match format (valid options the rules accept, the
right toggles), the default every game (the points tables and one table of each format), each
match's result in one line, and a format table's play ending at its match's end."""

from __future__ import annotations

from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_game import match_payloads
from rummy_ops.demo.plans import DEFAULT_TABLES, TablePlan, default_games, games, tables_of
from rummy_ops.demo.report import DemoReport, HandRecord, MatchRecord, match_line, summary
from rummy_ops.demo.verify import _count_match_money
from rummy_ops.demo.watch import TableRun
from rummy_ops.replay.checks.match import MatchReplay
from rummy_rules.events import SeatAccount
from rummy_rules.formats import Pool, match_view
from rummy_rules.formats.messages import (
    AcceptRejoin,
    BeginDeal,
    DealResult,
    GameEnded,
    RecordDeal,
    StartMatch,
)
from rummy_rules.formats.money import MatchSettlement, MoneyLine

T0 = 1_780_000_000_000


def test_every_format_table_opens_with_options_the_rules_accept() -> None:
    kinds = {}
    for game, plans in games().items():
        for plan in plans:
            if not plan.plays_match:
                continue
            fmt = match_payloads.format_from_pb(plan.match, plan.commission_bps)
            assert plan.point_value_hundredths == 0  # the format owns the money
            assert fmt.min_seats <= plan.seats <= fmt.max_seats and plan.bots == plan.seats
            kinds[game] = fmt.name
    assert kinds == {
        "pool101": "pool-101",
        "pool201": "pool-201",
        "deals": "deals-2",
        "best-of": "best-of-3",
        "gin": "game-to-100",
        "oklahoma": "game-to-100",
        "hollywood": "hollywood-100",
        "500": "race-to-500",
    }


def test_the_101_pool_has_rejoin_and_the_201_pool_has_split_with_bots_that_ask() -> None:
    (pool101,) = games()["pool101"]
    (pool201,) = games()["pool201"]
    assert pool101.match is not None and pool101.match.pool.rejoin and pool101.seats >= 3
    assert pool201.match is not None and pool201.match.pool.split
    assert pool201.bots_match.split_at_seats >= 2


def test_the_default_demo_plays_the_points_tables_and_the_tables_of_every_format() -> None:
    assert default_games() == (
        "points",
        "gin",
        "oklahoma",
        "hollywood",
        "pool101",
        "pool201",
        "deals",
        "best-of",
        "500",
    )
    plans = tables_of(default_games())
    assert plans[:3] == DEFAULT_TABLES and not any(plan.plays_match for plan in DEFAULT_TABLES)
    assert [p.name for p in plans[3:]] == [
        "gin-2",
        "oklahoma-2",
        "hollywood-2",
        "pool101-3",
        "pool201-3",
        "deals2-3",
        "bestof3-2",
        "r500-4",
        "r500-6",
    ]
    assert all(plan.plays_match for plan in plans[3:])
    assert [p.name for p in tables_of(["pool101", "deals"])] == ["pool101-3", "deals2-3"]


def _pool_match() -> mpb.MatchView:
    """A 101 pool of 3 seats, entry 10.00, 10% commission, rejoin: seat 1 is eliminated,
    rejoins at 41 and is the last seat left (docs/rules/formats.md#pool)."""
    fmt = Pool(target=101, entry_hundredths=1_000, commission_bps=1_000, rejoin=True)
    state = fmt.initial_state()

    def do(command: object) -> None:
        nonlocal state
        state = fmt.fold(fmt.decide(state, command), state)  # type: ignore[arg-type]

    def deal(points: dict[int, int]) -> None:
        do(BeginDeal(at_ms=T0))
        winners = tuple(s for s, p in sorted(points.items()) if p == 0)
        do(RecordDeal(result=DealResult(tuple(sorted(points.items())), winners), at_ms=T0))

    do(StartMatch(match_id="m1", seats=tuple(SeatAccount(s, f"a{s}") for s in range(3)), at_ms=T0))
    deal({0: 0, 1: 80, 2: 40})
    deal({0: 20, 1: 25, 2: 0})  # seat 1 out at 105, offered a rejoin at 41
    do(AcceptRejoin(seat=1, at_ms=T0))
    deal({0: 80, 1: 0, 2: 61})  # seat 2 out at 101
    deal({0: 2, 1: 0})  # seat 0 out at 102: seat 1 is the last left
    return match_payloads.view_to_pb(match_view(fmt, state))


def test_a_match_line_names_the_winner_the_totals_and_the_money() -> None:
    line = match_line(MatchRecord("pool101-3", "t1", _pool_match()))
    assert "match pool-101" in line and "won by s1 (last_left) after 4 deals" in line
    assert "totals [s0:102x s1:41 s2:101x]" in line
    # 4 entries of 10.00 = 40.00; 10% = 4.00; seat 1 held 20.00 and gets 36.00: +16.00
    assert "pool 40.00 commission 4.00 prize 36.00" in line
    assert "net [s0:-10.00 s1:+16.00 s2:-10.00]" in line


def test_the_books_count_the_matches_commission() -> None:
    record = MatchRecord("pool101-3", "t1", _pool_match())
    report = DemoReport(run_id="x", balances={"a0": 990_00, "a1": 1_016_00, "a2": 990_00})
    report.granted_hundredths = 3_000_00
    report.matches.append(record)
    report.commission_hundredths += record.commission_hundredths
    assert record.commission_hundredths == 4_00 and report.conserved
    assert any("matches over: 1" in line for line in summary(report, (True, "ok")))


class _Bot:
    def __init__(self) -> None:
        self.left = False

    def stop(self, leave: bool = True) -> None:
        self.left = leave


def test_a_format_tables_watch_ends_its_play_at_the_matchs_end_not_a_hand_count() -> None:
    (plan,) = games()["pool101"]
    seen: list[MatchRecord] = []
    run = TableRun(plan, "t1", 0, None, (), lambda _r: None, seen.append)  # type: ignore[arg-type]
    bot = _Bot()
    run.bots.append(bot)  # type: ignore[arg-type]
    playing = api.PlayerView(table_id="t1", hand_id="h1", phase=api.HAND_PHASE_PLAYING)
    playing.match.CopyFrom(mpb.MatchView(match_id="m1", match_format="pool-101", phase="in_deal"))
    run._on_view(playing)
    assert not run.done.is_set()  # 0 hands of a target of 0: a match table plays on
    over = api.PlayerView(table_id="t1", hand_id="h1", phase=api.HAND_PHASE_WAITING)
    over.match.CopyFrom(_pool_match())
    run._on_view(over)
    run._on_view(over)
    assert run.done.is_set() and bot.left and [r.table_id for r in seen] == ["t1"]


def test_a_points_tables_watch_still_ends_at_its_share_of_hands() -> None:
    plan = TablePlan("free-4", 4, 0, 0, players=2)
    assert not plan.plays_match
    run = TableRun(plan, "t1", 1, None, (), lambda _r: None)  # type: ignore[arg-type]
    ended = api.PlayerView(table_id="t1", hand_id="h1", phase=api.HAND_PHASE_ENDED, hand_no=1)
    ended.result.winner_seat = 0
    run._on_view(ended)
    assert run.done.is_set()


def test_a_format_table_dealt_points_hands_stops_with_the_reason() -> None:
    (plan,) = games()["deals"]
    run = TableRun(plan, "t1", 0, None, (), lambda _r: None)  # type: ignore[arg-type]
    bot = _Bot()
    run.bots.append(bot)  # type: ignore[arg-type]
    run._on_view(api.PlayerView(table_id="t1", hand_id="h1", phase=api.HAND_PHASE_PLAYING))
    assert bot.left and "does not host match formats" in run.refused
    assert not run.done.is_set()  # the hand dealt is still in play
    run._on_view(api.PlayerView(table_id="t1", hand_id="h1", phase=api.HAND_PHASE_ABORTED))
    assert run.done.is_set()


def test_a_hand_dealt_before_the_bots_left_is_recorded_when_their_leaves_end_it() -> None:
    plan = TablePlan("free-4", 4, 0, 0, players=2)
    recorded: list[HandRecord] = []
    run = TableRun(plan, "t1", 1, None, (), recorded.append)  # type: ignore[arg-type]
    bots = [_Bot(), _Bot()]
    run.bots.extend(bots)  # type: ignore[arg-type]

    def view(hand: str, no: int, phase: int, seated: tuple[bool, ...]) -> api.PlayerView:
        """As the table renders it: every seat of the hand with its player's account, seated
        only while that player still sits at the table."""
        v = api.PlayerView(table_id="t1", hand_id=hand, hand_no=no, phase=phase)  # type: ignore[arg-type]
        v.seats.extend(
            api.SeatView(seat=i, account_id=f"a{i}", dealt_in=True, seated=taken)
            for i, taken in enumerate(seated)
        )
        if phase == api.HAND_PHASE_ENDED:
            v.result.winner_seat = 0
            v.result.commission_hundredths = 375
        return v

    run._on_view(view("h1", 1, api.HAND_PHASE_ENDED, (True, True)))  # its share: the bots leave
    assert all(b.left for b in bots) and not run.done.is_set()
    run._on_view(view("h2", 2, api.HAND_PHASE_PLAYING, (True, True)))  # dealt before the leaves
    run._on_view(view("h2", 2, api.HAND_PHASE_ENDED, (True, False)))  # a leave ended it
    assert not run.done.is_set()  # a seat is still taken
    run._on_view(view("h2", 2, api.HAND_PHASE_ENDED, (False, False)))  # the last hand's players
    assert run.done.is_set()  # are still shown, none seated: the table is empty
    assert [r.hand_id for r in recorded] == ["h1", "h2"]
    assert sum(r.result.commission_hundredths for r in recorded if r.result) == 750


def test_the_oklahoma_table_carries_gins_oklahoma_option_packed_for_the_variant() -> None:
    from rummy.gin.v1 import rules_pb2 as gin_rules_pb

    (plan,) = games()["oklahoma"]
    assert plan.variant == "gin" and plan.variant_options is not None
    sent = gin_rules_pb.GinOptions()
    assert plan.variant_options.Unpack(sent) and sent.oklahoma
    (gin,) = games()["gin"]
    assert gin.variant == "gin" and gin.variant_options is None


def _game(game_no: int, winner: int, paid: int, commission: int) -> GameEnded:
    """A game to N's end: the loser (the other of seats 0 and 1) pays ``paid``."""
    loser = 1 - winner
    lines = tuple(
        sorted(
            (MoneyLine(loser, paid, -paid), MoneyLine(winner, 0, paid - commission)),
            key=lambda line: line.seat,
        )
    )
    money = MatchSettlement(paid, 500, commission, lines, (winner,))
    return GameEnded(game_no=game_no, winner=winner, totals=(), settlement=money)


def test_every_match_of_a_table_has_its_game_commission_counted_once() -> None:
    # A game-to-N table's first match ended; a second one settled a game and was aborted when
    # the bots left. Both games' commission reached the house account (docs/rules/formats.md
    # #money), so the books check counts both, and a second replay step counts nothing again.
    first = MatchReplay("t1", "m1", games=[_game(1, 1, 1500, 75)])
    second = MatchReplay("t1", "m2", outcome="aborted", games=[_game(1, 0, 1500, 75)])
    report = DemoReport("r")
    _count_match_money(report, [first, second])
    _count_match_money(report, [first, second])
    assert report.commission_hundredths == 150
    assert [g.winner for g in report.game_money["m1"]] == [1]
    assert [g.winner for g in report.game_money["m2"]] == [0]


def test_a_match_no_watch_recorded_has_its_end_settlement_counted_once() -> None:
    # The watched pool match's commission came from its view (on_match); the next match began
    # before the bots' leaves reached the table, and their leaves ended it (the last seat left
    # won its pool): its end settlement is in the house account, so the books count it, once.
    watched = MatchRecord("pool101-3", "t1", _pool_match())
    report = DemoReport("r", tables={"pool101-3": "t1"})
    report.matches.append(watched)
    report.commission_hundredths += watched.commission_hundredths
    lines = (MoneyLine(0, 1000, -1000), MoneyLine(1, 1000, -1000), MoneyLine(2, 1000, 1700))
    second = MatchReplay(
        "t1", "m2", outcome="ended", settlement=MatchSettlement(3000, 1000, 300, lines, (2,))
    )
    first = MatchReplay("t1", "m1", outcome="ended", settlement=second.settlement)
    _count_match_money(report, [first, second])
    _count_match_money(report, [first, second])
    assert report.commission_hundredths == watched.commission_hundredths + 300
    assert report.unwatched == {"m2": "t1"} and "m1" not in report.game_money
    text = "\n".join(summary(report, (True, "ok")))
    assert "pool101-3: match m2 begun as the bots left" in text
    assert "match settled: prize pool 30.00, commission 3.00" in text
