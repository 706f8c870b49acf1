"""Hands played through the public API to their end: a timeout auto-drop, a wrong declare, and a
valid declare found by the rules library's solver on the declarer's own view.

Tables: point value 10 hundredths per point, commission 500 bps (5%); every player is granted
5000 hundredths (the reservation is 130 x 10 = 1300). The session's clock runs 10 times faster
than real time (a 30 s turn lasts 3 s).
"""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_rules.indian.arrangement import best_arrangement, valid_discards
from rummy_rules.melds import MeldOptions
from rummy_testing.players import (
    STOCK,
    Operator,
    Player,
    Table,
    next_turn,
    on_turn,
    play_turn_with_solver,
    rule_set,
    seed_and_wait_for_play,
)
from rummy_testing.stacks import RunningStack

BOMBAY_BAAZI_MELDS = MeldOptions(jokers_only_group_is_sequence=True)
MAX_TURNS = 400  # a solver hand goes out long before; bounds a hand that never does


def _others(players: list[Player], *out: Player) -> list[Player]:
    return [p for p in players if p not in out]


def test_three_missed_turns_drop_the_seat_for_40_points(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500, rule_set(turn_seconds=30))
    try:
        players = table.seated("clock", 2, grant=5000)
        view = seed_and_wait_for_play(players)
        sleeper = on_turn(players, view)  # never acts: each of its turns times out
        awake = _others(players, sleeper)[0]
        missed = []
        turn: api.PlayerView | None = view
        while turn is not None:
            if on_turn(players, turn) is awake:
                awake.draw_and_discard_drawn()
            else:
                missed.append(turn.turn_no)
            turn = next_turn(players, turn.turn_no, timeout=15)
        assert len(missed) == 3
        result = awake.wait_phase(api.HAND_PHASE_ENDED).result
        assert {r.account_id: (r.outcome, r.points) for r in result.results} == {
            sleeper.account_id: ("timed_out", 40),
            awake.account_id: ("won", 0),
        }
        # 40 x 10 = 400; commission floor(400 x 500 / 10000) = 20; the winner gets 380.
        money = {line.account_id: line.amount_hundredths for line in result.settlement}
        assert money == {sleeper.account_id: -400, awake.account_id: 380}
        assert result.commission_hundredths == 20
        assert operator.settled_balances([sleeper.account_id, awake.account_id]) == {
            sleeper.account_id: 4600,
            awake.account_id: 5380,
        }
    finally:
        table.close()


def _wrong_declare(player: Player) -> api.DeclareResponse:
    """Draw from the stock and declare with a card whose lay-aside leaves no valid show."""
    view = player.wait_my_turn()
    drawn = player.draw(STOCK, view.turn_no).card
    cards = [*player.hand(view), player.card(drawn)]
    valid = set(valid_discards(cards, player.wild(view), BOMBAY_BAAZI_MELDS))
    face_down = next(c for c in cards if c not in valid)
    return player.declare(player.wire(face_down), view.turn_no)


def test_a_wrong_declare_costs_80_and_play_goes_on_to_the_last_seat(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        players = table.seated("wrong", 3, grant=5000)
        view = seed_and_wait_for_play(players)
        wrong = on_turn(players, view)
        answer = _wrong_declare(wrong)
        assert (answer.valid, answer.points) == (False, 80)
        # Play goes on: the next seat's first turn; it drops at once (a first drop, 20).
        turn = next_turn(players, view.turn_no)
        assert turn is not None
        dropper = on_turn(players, turn)
        dropped = dropper.drop(turn.turn_no)
        assert (dropped.kind, dropped.points) == (table_events.DROP_KIND_FIRST, 20)
        last = _others(players, wrong, dropper)[0]
        result = last.wait_phase(api.HAND_PHASE_ENDED).result
        assert {r.account_id: (r.outcome, r.points) for r in result.results} == {
            wrong.account_id: ("wrong_declare", 80),
            dropper.account_id: ("first_drop", 20),
            last.account_id: ("won", 0),
        }
        # 800 + 200 = 1000; commission floor(1000 x 500 / 10000) = 50; the winner gets 950.
        money = {line.account_id: line.amount_hundredths for line in result.settlement}
        assert money == {wrong.account_id: -800, dropper.account_id: -200, last.account_id: 950}
        assert result.commission_hundredths == 50
        assert operator.settled_balances([p.account_id for p in players]) == {
            wrong.account_id: 4200,
            dropper.account_id: 4800,
            last.account_id: 5950,
        }
    finally:
        table.close()


def test_a_wrong_declare_then_a_valid_declare_by_another_seat(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        players = table.seated("show", 3, grant=5000)
        view = seed_and_wait_for_play(players)
        wrong = on_turn(players, view)
        assert _wrong_declare(wrong).points == 80
        turn = next_turn(players, view.turn_no)
        assert turn is not None
        declarer = on_turn(
            players, turn
        )  # plays with the solver; the other only draws and discards
        counted = _others(players, wrong, declarer)[0]
        declared = None
        for _ in range(MAX_TURNS):
            if on_turn(players, turn) is declarer:
                declared = play_turn_with_solver(declarer, BOMBAY_BAAZI_MELDS)
            else:
                counted.draw_and_discard_drawn()
            if declared is not None:
                break
            turn = next_turn(players, turn.turn_no)
            assert turn is not None, "the hand ended before anyone declared"
        assert declared is not None and declared.valid, declared
        result = declarer.wait_phase(api.HAND_PHASE_ENDED).result
        assert result.winner_seat == declarer.view.my_seat
        seats = {r.account_id: r for r in result.results}
        assert (seats[wrong.account_id].outcome, seats[wrong.account_id].points) == (
            "wrong_declare",
            80,
        )
        assert (seats[declarer.account_id].outcome, seats[declarer.account_id].points) == (
            "won",
            0,
        )
        # The counted seat pays the points of the best arrangement of the 13 cards it holds.
        held = [counted.card(c) for c in seats[counted.account_id].cards]
        assert len(held) == 13
        points = best_arrangement(held, counted.wild(), BOMBAY_BAAZI_MELDS).points
        assert seats[counted.account_id].outcome == "counted"
        assert seats[counted.account_id].points == points
        assert seats[counted.account_id].arrangement.deadwood_points == points
        # Losers pay points x 10; commission floor(total x 500 / 10000); the winner the rest.
        total = 800 + points * 10
        commission = total * 500 // 10000
        money = {line.account_id: line.amount_hundredths for line in result.settlement}
        assert money == {
            wrong.account_id: -800,
            counted.account_id: -points * 10,
            declarer.account_id: total - commission,
        }
        assert result.commission_hundredths == commission
        assert operator.settled_balances([p.account_id for p in players]) == {
            wrong.account_id: 5000 - 800,
            counted.account_id: 5000 - points * 10,
            declarer.account_id: 5000 + total - commission,
        }
    finally:
        table.close()
