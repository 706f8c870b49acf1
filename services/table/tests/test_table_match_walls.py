"""A game to N whose variant has drawn deals (gin's wall), through the table's public API: after a
drawn deal the same dealer deals again (``MatchFormat.keeps_dealer``, asked generically: the
toy variant's ``wall`` option stands in for gin), after a counted deal the button moves; the
game-end scoring travels in the table's options and the view shows the score sheet; the money
is the game's stakes; the table rebuilt from its stream is the same."""

from __future__ import annotations

import table_calls
from match_world import hold_money, last, match_payloads, next_step, seat_all
from test_table_service import table_events
from test_table_snapshot import fold, table_records
from world import World

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_table.adapters import snapshot
from rummy_testing.match_options import GIN_SCORING, gin_game_to
from toy_variant import TOY_NAME, toy_pb2
from toy_variant.wire import register_toy

#: Gin's game-end scoring (docs/rules/formats.md#game-end-scoring), as the gin bundle declares it.


def _open(world: World, match: mpb.MatchOptions) -> str:
    """A two-seat toy table (two turns a hand, then the wall) hosting ``match``."""
    register_toy()
    rules = cards_pb2.RuleSet(variant=TOY_NAME, start_delay_seconds=0)
    rules.other_variant.Pack(toy_pb2.ToyOptions(max_points=25, max_turns=2, wall=True))
    request = api.OpenTableRequest(
        client_request_id=world.request_id(),
        seat_count=2,
        commission_bps=1000,
        rule_set=rules,
        match=match,
    )
    return table_calls.open_table(world.app, "op", request)


def _prepare(world: World, table_id: str, hand_id: str, low: int) -> None:
    """Fairness's commitment, the seed window closed and the dealer's deal: seat ``low`` holds
    A-5 of hearts (15 points), the other the five highest spades (50), the seven of clubs is the
    upcard."""
    world.lock_seeds(table_id, hand_id, b"toy server seed")
    hands = {low: "AH 2H 3H 4H 5H", 1 - low: "KS QS JS 10S 9S"}
    world.deal(table_id, hand_id, (hands, "", "7C", ""))


def _play(world: World, table_id: str, ending: str, winner: int = 0) -> pb.HandEnded:
    """Play the deal's hand: ``knock`` (the seat on turn knocks at once: ``winner``, dealt the
    lower hand, wins 35 capped at 25) or ``wall`` (both turns draw and discard: the hand is
    drawn)."""
    hand_id = world.view(table_id, None).hand_id
    _prepare(world, table_id, hand_id, winner)
    for _ in range(2):
        view = world.view(table_id, None)
        account = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
        turn = view.turn_no
        if ending == "knock":
            request = api.PlayRequest(
                table_id=table_id,
                hand_id=hand_id,
                turn_no=turn,
                client_request_id=world.request_id(),
            )
            request.command.Pack(toy_pb2.Knock())
            table_calls.play(world.app, account, request)
            break
        drawn = table_calls.draw(
            world.app,
            account,
            api.DrawCardRequest(
                table_id=table_id,
                hand_id=hand_id,
                turn_no=turn,
                client_request_id=world.request_id(),
                source=pb.DRAW_SOURCE_STOCK,
            ),
        )
        table_calls.discard(
            world.app,
            account,
            api.DiscardCardRequest(
                table_id=table_id,
                hand_id=hand_id,
                turn_no=turn,
                client_request_id=world.request_id(),
                card=drawn.card,
            ),
        )
    ended = last(world, table_id, pb.HandEnded)
    assert ended.hand_id == hand_id, "the deal's hand did not end"
    return ended


def _dealers(world: World, table_id: str) -> list[int]:
    return [p.dealer_seat for p in table_events(world, table_id) if isinstance(p, pb.HandStarted)]


def test_after_a_wall_the_same_dealer_deals_again_and_the_game_scores_its_bonus_and_boxes() -> None:
    world = World()
    options = gin_game_to(target=50, games=1, point_value_hundredths=1, max_game_points=400)
    table_id = _open(world, options)
    (summary,) = table_calls.list_tables(world.app)
    assert summary.match_format == "game-to-50"
    assert world.app.projection.tables[table_id].opened.match == options  # recorded as given
    seat_all(world, table_id, ("ann", "bob"))
    next_step(world, table_id)  # the match, game 1 and its stakes: 400 x 0.01 from each
    stakes = [p for p in match_payloads(world, table_id) if isinstance(p, mpb.MoneyReserved)]
    assert [(p.purpose, p.game_no, p.amount_hundredths) for p in stakes] == [("stake", 1, 400)] * 2
    hold_money(world, table_id, "stake", 1)
    next_step(world, table_id)

    assert _play(world, table_id, "knock").winner_seat == 0  # ann 25
    next_step(world, table_id)
    wall = _play(world, table_id, "wall")
    assert {r.outcome for r in wall.results} == {"drawn"}
    scored = last(world, table_id, mpb.DealScored)
    assert (list(scored.winners), [t.points for t in scored.totals]) == ([], [25, 0])
    next_step(world, table_id)
    _play(world, table_id, "wall")  # a second wall in a row: the same dealer again
    next_step(world, table_id)
    sheet = world.view(table_id, "bob").match.sheets
    assert [(s.seat, s.points, s.boxes, s.bonus, s.total) for s in sheet[0].seats] == [
        (0, 25, 1, 0, 25),
        (1, 0, 0, 0, 0),
    ]
    assert sheet[0].running and not sheet[0].HasField("winner")
    _play(world, table_id, "knock")  # ann 50: the game, and the match

    # The button moved after the counted deal (0 -> 1) and stayed after each wall.
    assert _dealers(world, table_id) == [0, 1, 1, 1]
    game = last(world, table_id, mpb.GameEnded)
    # ann 50 + shutout 200 (bob scored nothing) + 2 boxes x 25 = 300; bob 0.
    assert (game.winner, [(t.seat, t.points) for t in game.totals]) == (0, [(0, 300), (1, 0)])
    # bob pays min(300 - 0, 400) x 0.01 = 3.00; 10% = 0.30: ann receives 2.70.
    money = game.settlement
    assert [(ln.held_hundredths, ln.amount_hundredths) for ln in money.lines] == [
        (400, 270),
        (400, -300),
    ]
    assert (money.pool_hundredths, money.commission_hundredths) == (300, 30)
    view = world.view(table_id, None).match
    assert view.phase == "ended" and view.WhichOneof("result") == "ended"
    (sheet_pb,) = view.sheets
    assert (sheet_pb.number, sheet_pb.running, sheet_pb.winner) == (1, False, 0)
    assert [(s.seat, s.points, s.boxes, s.bonus, s.total) for s in sheet_pb.seats] == [
        (0, 50, 2, 250, 300),
        (1, 0, 0, 0, 0),
    ]
    # Rebuilt from its stream, the table (its dealer, its match) is the same.
    rebuilt = fold(table_records(world)).tables[table_id]
    live = world.app.projection.tables[table_id]
    assert rebuilt.dealer_seat == live.dealer_seat == 1
    assert snapshot.encode_table(rebuilt) == snapshot.encode_table(live)


def test_a_hollywood_table_scores_three_columns_and_settles_once_on_their_nets() -> None:
    world = World()
    options = mpb.MatchOptions(
        hollywood=mpb.HollywoodOptions(
            target=50, point_value_hundredths=2, max_game_points=100, scoring=GIN_SCORING
        )
    )
    table_id = _open(world, options)
    (summary,) = table_calls.list_tables(world.app)
    assert summary.match_format == "hollywood-50"
    seat_all(world, table_id, ("ann", "bob"))
    next_step(world, table_id)  # the match's one hold: 3 x 100 x 0.02 from each, game 1
    stakes = [p for p in match_payloads(world, table_id) if isinstance(p, mpb.MoneyReserved)]
    assert [(p.purpose, p.game_no, p.amount_hundredths) for p in stakes] == [("stake", 1, 600)] * 2
    assert not any(isinstance(p, pb.HandStarted) for p in table_events(world, table_id))
    hold_money(world, table_id, "stake", 1)
    next_step(world, table_id)
    # Every win is 25. ann's 1st: column 1; a wall; bob's 1st: column 1; ann's 2nd: columns 1
    # and 2 (column 1 ends at 50 - 25); ann's 3rd: columns 2 and 3 (column 2 ends at 50 - 0,
    # a shutout); bob's 2nd and 3rd: column 3, the only one running (it ends at 25 - 50).
    for ending, winner in [("knock", 0), ("wall", 0), ("knock", 1), ("knock", 0)]:
        _play(world, table_id, ending, winner)
        next_step(world, table_id)
    sheets = world.view(table_id, None).match.sheets
    assert [(s.number, s.running) for s in sheets] == [(1, False), (2, True), (3, True)]
    for winner in (0, 1):
        _play(world, table_id, "knock", winner)
        next_step(world, table_id)
    _play(world, table_id, "knock", 1)
    assert _dealers(world, table_id) == [0, 1, 1, 0, 1, 0, 1]
    view = world.view(table_id, "ann").match
    assert [
        (s.number, s.winner, [(x.points, x.boxes, x.bonus, x.total) for x in s.seats])
        for s in view.sheets
    ] == [
        (1, 0, [(50, 2, 150, 200), (25, 1, 25, 50)]),  # game bonus 100, boxes 25 each
        (2, 0, [(50, 2, 250, 300), (0, 0, 0, 0)]),  # shutout 200
        (3, 1, [(25, 1, 25, 50), (50, 2, 150, 200)]),
    ]
    assert not any(s.running for s in view.sheets)
    # Capped nets (cap 100): column 1 ann +100 (150), column 2 ann +100 (300), column 3 bob
    # +100 (150): ann +100 in all; bob pays 100 x 0.02 = 2.00 of the 6.00 he holds; 10% = 0.20.
    game = last(world, table_id, mpb.GameEnded)
    assert (game.game_no, [(t.seat, t.points) for t in game.totals]) == (1, [(0, 100), (1, -100)])
    assert [(ln.held_hundredths, ln.amount_hundredths) for ln in game.settlement.lines] == [
        (600, 180),
        (600, -200),
    ]
    assert game.settlement.commission_hundredths == 20
    assert last(world, table_id, mpb.MatchEnded).reason == "games_played"
    rebuilt = fold(table_records(world)).tables[table_id]
    live = world.app.projection.tables[table_id]
    assert snapshot.encode_table(rebuilt) == snapshot.encode_table(live)
