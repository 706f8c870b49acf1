"""The gin family's games through the five services, every hand's outcome planned and every
number worked by hand (issue 27, "How we know it is done").

The services run with the fairness service's test-only seed key (``RUMMY_FAIRNESS_SEED_KEY``),
so the test knows each hand's server seed (HMAC-SHA256(key, hand id)); it contributes both
players' client seeds, chooses them so that the deal allows the outcome it wants, and plays both
seats through the public gRPC API (``gin_planner``: OpenTable, TakeSeat, ContributeSeed,
DrawCard / DiscardCard, Play with PassUpcard / Knock / Gin / BigGin). Each hand's final cards are
chosen by the planner's own evaluator (not the rules under test) to the deadwood written below,
so every score, score sheet and token below is worked from ``docs/rules/gin.md`` and
``docs/rules/formats.md`` (``#game-to``, ``#game-scoring``, ``#hollywood``, ``#money``) in the
comments, and the services' results must equal them. The hands are different every run (hand
ids are fresh), their outcomes and numbers never are.

Money is in hundredths of a House Token; the commission is floor(paid x bps / 10000).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from gin_planner import (
    Outcome,
    Plan,
    big_gin,
    face,
    gin,
    knock,
    over_limit_discards,
    plan_hand,
    play_plan,
    refused,
    seed_and_deal,
    wall,
    wire,
)

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gpb
from rummy.gin.v1 import rules_pb2 as gin_rules_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.topics import TABLE_EVENTS
from rummy_testing.demo_runs import replay_once_settled
from rummy_testing.match_options import GIN_SCORING, gin_game_to
from rummy_testing.players import Operator, Player, Table, next_hand, operator_for
from rummy_testing.stacks import RunningStack, running_stack

KEY = b"gin-e2e-planned-deals"
HOUSE = "house:commission"
#: Table seconds (the e2e clock runs 10x): a 60 s turn and seed window, so a loaded machine
#: never times a planned turn out; 1 s between hands.
TURN_SECONDS, SEED_WINDOW_SECONDS, START_DELAY_SECONDS = 600, 600, 10
A, B = 0, 1


@pytest.fixture(scope="module")
def keyed_stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    """The five services with the fairness seed key set (for this module only)."""
    with running_stack(
        kafka_bootstrap,
        database_url,
        "ginmatch",
        extra_env={"RUMMY_FAIRNESS_SEED_KEY": KEY.decode()},
    ) as running:
        yield running


@pytest.fixture
def ops(keyed_stack: RunningStack) -> Iterator[Operator]:
    op = operator_for(keyed_stack)
    yield op
    op.close()


def gin_rules(*, oklahoma: bool = False) -> cards_pb2.RuleSet:
    rules = cards_pb2.RuleSet(
        variant="gin",
        turn_seconds=TURN_SECONDS,
        seed_window_seconds=SEED_WINDOW_SECONDS,
        start_delay_seconds=START_DELAY_SECONDS,
    )
    rules.other_variant.Pack(gin_rules_pb.GinOptions(oklahoma=oklahoma, big_gin=True))
    return rules


def seated(table: Table, grant: int) -> dict[int, Player]:
    a, b = table.player("gina", grant=grant), table.player("ginb", grant=grant)
    assert a.take_seat(A) == A and b.take_seat(B) == B
    return {A: a, B: b}


def journal(settled: ledger_pb.MatchSettled) -> dict[str, int]:
    net: dict[str, int] = {}
    for line in settled.lines:
        net[line.account_id] = net.get(line.account_id, 0) + line.amount_hundredths
    return net


def ended(hand_id: str) -> Callable[[api.PlayerView], bool]:
    return lambda v: v.hand_id == hand_id and v.phase == api.HAND_PHASE_ENDED


def play_hands(
    players: dict[int, Player], outcomes: list[Outcome], **plan_options: Any
) -> list[tuple[api.PlayerView, Plan, gpb.GinAnswer | None]]:
    """Play one planned hand per outcome, in order; each hand's first view (seeding: its id and
    dealer), its plan and the answer of its knock (None at the wall)."""
    done: set[str] = set()
    out = []
    for outcome in outcomes:
        view = next_hand(players[A], done, timeout=90)
        assert view.phase == api.HAND_PHASE_SEEDING, "the seed window closed before the plan"
        hand_id = view.hand_id
        done.add(hand_id)
        plan = plan_hand(KEY, hand_id, view.dealer_seat, outcome, **plan_options)
        seed_and_deal(players, plan, hand_id)
        reply = play_plan(players, plan, hand_id)
        answer = None
        if reply is not None:
            answer = gpb.GinAnswer()
            assert reply.answer.Unpack(answer)
        players[A].wait(ended(hand_id), 60, f"hand {hand_id} ended")
        out.append((view, plan, answer))
    return out


def scored(stack: RunningStack, table_id: str) -> dict[str, gpb.GinHandScored]:
    found: dict[str, gpb.GinHandScored] = {}
    for p in stack.payloads(TABLE_EVENTS, table_id):
        if isinstance(p, gpb.GinHandScored):
            assert p.hand_id not in found
            found[p.hand_id] = p
    return found


def assert_hand(
    score: gpb.GinHandScored, outcome: str, winner: int, points: int, k: int, d: int
) -> None:
    got = (score.outcome, score.winner_seat, score.points, score.knocker_deadwood)
    assert got == (outcome, winner, points, k), score
    assert score.defender_deadwood == d and list(score.layoffs) == [], score


def sheet(view: api.PlayerView, number: int) -> dict[int, tuple[int, int, int, int]]:
    """Score sheet ``number``: seat -> (points from hands, boxes, bonus, total)."""
    (found,) = [s for s in view.match.sheets if s.number == number]
    assert not found.running
    return {s.seat: (s.points, s.boxes, s.bonus, s.total) for s in found.seats}


def assert_replay_clean(stack: RunningStack, table_id: str) -> None:
    """``rummy replay`` of the table (hands, match, money against the ledger's journal) is
    clean; the last hand's reveal and settlement come just after it, so notes are waited out."""
    code, doc, hands = replay_once_settled(stack, table_id, wait_s=60, until_clean=True)
    assert code == 0 and doc["ok"], doc.get("first_mismatch")
    assert doc["unverifiable"] == [] and doc["skipped_unknown_types"] == {}
    assert all(h["ok"] and h["findings"] == [] for h in hands), hands


def test_a_gin_match_of_two_games_to_100_with_every_ending_its_boxes_and_a_shutout(
    ops: Operator, keyed_stack: RunningStack
) -> None:
    # Two games to 100, 10 hundredths a game point, cap 200 game points (2,000 held from each
    # seat at each game's start), commission 10%; gin's game-end scoring 100 / 200 / 25.
    options = gin_game_to(target=100, games=2, point_value_hundredths=10, max_game_points=200)
    grant = 5000
    table = Table(ops, keyed_stack.endpoints.table, 2, 0, 1000, gin_rules(), options)
    house_before = ops.balance(HOUSE).balance_hundredths
    try:
        players = seated(table, grant)
        hands = play_hands(
            players,
            [
                # Game 1.
                # 1. The wall: nobody knocks, a discard leaves 2 stock cards: a draw, no score.
                wall(),
                # 2. A knocks with 6 deadwood, B holds 31 with nothing to lay off: A 31 - 6 = 25.
                knock(A, 6, 31),
                # 3. A knocks with 8, B holds 8 too: the undercut (a tie is one), B 0 + 25 = 25.
                knock(A, 8, 8),
                # 4. B goes gin, A holds 22 (no lay-offs on gin): B 22 + 25 = 47 (B 72).
                gin(B, 22),
                # 5. A's big gin, B holds 50: A 50 + 31 = 81 (A 25 + 81 = 106: A reaches 100).
                big_gin(A, 50),
                # Game 2: A's big gin against 69: A 69 + 31 = 100 at once, B scored nothing.
                big_gin(A, 69),
            ],
        )
        (w, _, none), (h2, _, a2), (h3, _, a3), (h4, _, a4), (h5, _, a5), (h6, _, a6) = hands
        assert none is None
        # The wall is a drawn deal: the same dealer deals again; then the button moves.
        assert h2.dealer_seat == w.dealer_seat and h3.dealer_seat != h2.dealer_seat
        answers = [(a.outcome, a.winner_seat, a.points) for a in (a2, a3, a4, a5, a6) if a]
        assert answers == [
            ("knock", A, 25),
            ("undercut", B, 25),
            ("gin", B, 47),
            ("big_gin", A, 81),
            ("big_gin", A, 100),
        ]
        scores = scored(keyed_stack, table.table_id)
        assert w.hand_id not in scores
        assert_hand(scores[h2.hand_id], "knock", A, 25, 6, 31)
        assert_hand(scores[h3.hand_id], "undercut", B, 25, 8, 8)
        assert_hand(scores[h4.hand_id], "gin", B, 47, 0, 22)
        assert_hand(scores[h5.hand_id], "big_gin", A, 81, 0, 50)
        assert_hand(scores[h6.hand_id], "big_gin", A, 100, 0, 69)
        a, b = players[A], players[B]
        view = a.wait(lambda v: v.match.HasField("ended"), 60, "the match ended")
        # Game 1's sheet: A 25 + 81 = 106 from hands, 2 boxes (hands 2, 5), bonus 100 + 2 x 25
        # = 150, total 256; B 25 + 47 = 72, 2 boxes (hands 3, 4), bonus 50, total 122.
        assert sheet(view, 1) == {A: (106, 2, 150, 256), B: (72, 2, 50, 122)}
        # Game 2's: A 100, 1 box, the shutout bonus 200 + 25 = 225, total 325; B nothing.
        assert sheet(view, 2) == {A: (100, 1, 225, 325), B: (0, 0, 0, 0)}
        # Game 1: B pays min(256 - 122, 200) = 134 points x 10 = 1,340; commission 134; A
        # receives 1,206. Game 2: min(325 - 0, 200) = 200 (the cap) x 10 = 2,000; commission
        # 200; A receives 1,800.
        games = [p for p in keyed_stack.payloads(TABLE_EVENTS, table.table_id)]
        ended = [p for p in games if isinstance(p, mpb.GameEnded)]
        assert [(g.game_no, g.winner) for g in ended] == [(1, A), (2, A)]
        assert [{t.seat: t.points for t in g.totals} for g in ended] == [
            {A: 256, B: 122},
            {A: 325, B: 0},
        ]
        lines = [{x.seat: x.amount_hundredths for x in g.settlement.lines} for g in ended]
        assert lines == [{A: 1206, B: -1340}, {A: 1800, B: -2000}]
        assert [g.settlement.commission_hundredths for g in ended] == [134, 200]
        settled = keyed_stack.match_settlements(table.table_id, 2)
        assert [journal(s) for s in settled] == [
            {a.account_id: 1206, b.account_id: -1340, HOUSE: 134},
            {a.account_id: 1800, b.account_id: -2000, HOUSE: 200},
        ]
        # A: 5,000 + 1,206 + 1,800 = 8,006; B: 5,000 - 1,340 - 2,000 = 1,660; house +334.
        balances = ops.settled_balances([a.account_id, b.account_id])
        assert balances == {a.account_id: 8006, b.account_id: 1660}
        assert ops.balance(HOUSE).balance_hundredths - house_before == 334
        assert view.match.ended.winners == [A]
        assert_replay_clean(keyed_stack, table.table_id)
        log = (keyed_stack.stack.config.log_dir / "fairness.log").read_text()
        assert "RUMMY_FAIRNESS_SEED_KEY is set" in log
    finally:
        table.close()


def test_an_oklahoma_hand_with_a_spade_upcard_has_its_knock_limit_and_doubles(
    ops: Operator, keyed_stack: RunningStack
) -> None:
    # Oklahoma Gin, one game to 100, 10 hundredths a point, cap 400, commission 10%. The deal
    # is chosen with the 7 of spades as the upcard: the knock limit is 7 and the hand doubles.
    options = gin_game_to(target=100, games=1, point_value_hundredths=10, max_game_points=400)
    seven_of_spades = 3 * 13 + 6
    table = Table(ops, keyed_stack.endpoints.table, 2, 0, 1000, gin_rules(oklahoma=True), options)
    house_before = ops.balance(HOUSE).balance_hundredths
    try:
        players = seated(table, 5000)
        a, b = players[A], players[B]
        view = next_hand(a, set(), timeout=90)
        assert view.phase == api.HAND_PHASE_SEEDING
        hand_id = view.hand_id
        # A knocks at the limit, 7, against B's 57: (57 - 7) x 2 = 100.
        plan = plan_hand(
            KEY,
            hand_id,
            view.dealer_seat,
            knock(A, 7, 57),
            deal_ok=lambda d: d.upcard == seven_of_spades,
            plan_ok=lambda p: bool(over_limit_discards(p, 7)),
            attempts=4000,
        )
        seed_and_deal(players, plan, hand_id)
        *before, last = plan.moves
        play_plan(players, Plan(plan.seeds, plan.deal, plan.outcome, plan.finals, before), hand_id)
        # On the knock turn A holds 11 cards; laying down a card that leaves 8..10 deadwood
        # (a knock at Gin Rummy's limit 10) is refused here, and nothing changes.
        assert last.kind == "knock" and last.card is not None
        over = over_limit_discards(plan, 7)
        error = refused(lambda: a.play(gpb.Knock(face_down=wire(over[0])), hand_id, last.turn_no))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error
        assert "limit 7" in (error.details() or ""), (face(over[0]), error.details())
        reply = a.play(gpb.Knock(face_down=wire(last.card)), hand_id, last.turn_no)
        answer = gpb.GinAnswer()
        assert reply.answer.Unpack(answer)
        assert (answer.outcome, answer.winner_seat, answer.points) == ("knock", A, 100)
        assert_hand(scored(keyed_stack, table.table_id)[hand_id], "knock", A, 100, 7, 57)
        view = a.wait(lambda v: v.match.HasField("ended"), 60, "the match ended")
        # A reached 100 in one hand, B scored nothing: A 100 + 200 (shutout) + 25 = 325.
        # B pays min(325, 400) x 10 = 3,250; commission 325; A receives 2,925.
        assert sheet(view, 1) == {A: (100, 1, 225, 325), B: (0, 0, 0, 0)}
        (settled,) = keyed_stack.match_settlements(table.table_id, 1)
        assert journal(settled) == {a.account_id: 2925, b.account_id: -3250, HOUSE: 325}
        balances = ops.settled_balances([a.account_id, b.account_id])
        assert balances == {a.account_id: 7925, b.account_id: 1750}
        # ListMyHands lists the match once, at its end, with what the ledger settled (its
        # hands, deals of the match, are not listed on their own).
        listed = {
            p.account_id: [
                (e.kind, e.match_id, e.table_id, e.variant, e.format, e.result, e.net_hundredths)
                for e in ops.hands(p.account_id)
            ]
            for p in (a, b)
        }
        match_id = view.match.match_id
        match = ("match", match_id, table.table_id, "gin", "game-to-100")
        assert listed == {
            a.account_id: [(*match, "won", 2925)],
            b.account_id: [(*match, "lost", -3250)],
        }
        assert ops.balance(HOUSE).balance_hundredths - house_before == 325
        assert_replay_clean(keyed_stack, table.table_id)
    finally:
        table.close()


def test_a_hollywood_match_fills_three_columns_and_settles_their_capped_nets(
    ops: Operator, keyed_stack: RunningStack
) -> None:
    # Hollywood to 100, 10 hundredths a point, cap 300 a column (3 x 300 x 10 = 9,000 held
    # from each seat), commission 10%. A player's n-th win goes to the first min(n, 3) columns
    # still running.
    options = mpb.MatchOptions(
        hollywood=mpb.HollywoodOptions(
            target=100,
            point_value_hundredths=10,
            max_game_points=300,
            missed_turns_lose_game=True,
            scoring=GIN_SCORING,
        )
    )
    table = Table(ops, keyed_stack.endpoints.table, 2, 0, 1000, gin_rules(), options)
    house_before = ops.balance(HOUSE).balance_hundredths
    try:
        players = seated(table, 10_000)
        a, b = players[A], players[B]
        hands = play_hands(
            players,
            [
                # 1. A's big gin against 69: 100, A's 1st win -> column 1: A 100, column 1 ends.
                big_gin(A, 69),
                # 2. A knocks with 9, B holds 4: B's undercut 9 - 4 + 25 = 30, B's 1st win ->
                #    the first running column, 2: B 30.
                knock(A, 9, 4),
                # 3. A's gin against 35: 60, A's 2nd win -> columns 2 and 3: A 60, A 60.
                gin(A, 35),
                # 4. A's big gin against 50: 81, A's 3rd win -> columns 2 and 3 (1 has ended):
                #    A 141 in both, columns 2 and 3 end.
                big_gin(A, 50),
            ],
        )
        answers = [(x.outcome, x.winner_seat, x.points) for _, _, x in hands if x]
        assert answers == [
            ("big_gin", A, 100),
            ("undercut", B, 30),
            ("gin", A, 60),
            ("big_gin", A, 81),
        ]
        view = a.wait(lambda v: v.match.HasField("ended"), 60, "the match ended")
        # Column 1: A 100, 1 box, shutout 200 + 25 = 225, total 325; B 0.
        assert sheet(view, 1) == {A: (100, 1, 225, 325), B: (0, 0, 0, 0)}
        # Column 2: A 60 + 81 = 141, 2 boxes, 100 + 50 = 150, total 291; B 30, 1 box, 25, 55.
        assert sheet(view, 2) == {A: (141, 2, 150, 291), B: (30, 1, 25, 55)}
        # Column 3: A 141, 2 boxes, shutout 200 + 50 = 250, total 391; B 0.
        assert sheet(view, 3) == {A: (141, 2, 250, 391), B: (0, 0, 0, 0)}
        # Nets: min(325, 300) = 300, 291 - 55 = 236, min(391, 300) = 300: A +836. B pays
        # 8,360; commission 836; A receives 7,524. One GameEnded (game 1) settles the match.
        ended = [
            p
            for p in keyed_stack.payloads(TABLE_EVENTS, table.table_id)
            if isinstance(p, mpb.GameEnded)
        ]
        assert [(g.game_no, g.winner) for g in ended] == [(1, A)]
        (settled,) = keyed_stack.match_settlements(table.table_id, 1)
        assert journal(settled) == {a.account_id: 7524, b.account_id: -8360, HOUSE: 836}
        balances = ops.settled_balances([a.account_id, b.account_id])
        assert balances == {a.account_id: 17_524, b.account_id: 1_640}
        assert ops.balance(HOUSE).balance_hundredths - house_before == 836
        assert view.match.ended.winners == [A]
        assert_replay_clean(keyed_stack, table.table_id)
    finally:
        table.close()
