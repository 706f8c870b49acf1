"""Drops and leaving through the public API, and the money they move, as literal numbers.

Table: point value 10 hundredths per point, commission 500 bps (5%), every player granted
5000 hundredths (the reservation is 130 x 10 = 1300).
"""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_testing.players import Operator, Table, on_turn, seed_and_wait_for_play
from rummy_testing.stacks import RunningStack


def test_first_drop_middle_drop_and_leaving_pay_the_last_seat_standing(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        players = table.seated("drop", 4, grant=5000)
        view = seed_and_wait_for_play(players)
        assert sum(s.dealt_in for s in view.seats) == 4

        # Turn 1: X drops before drawing on its first turn: a first drop, 20 points.
        x = on_turn(players, view)
        dropped = x.drop(turn_no=view.turn_no)
        assert (dropped.kind, dropped.points) == (table_events.DROP_KIND_FIRST, 20)
        # Turns 2-4: Y, Z and W draw and discard.
        y = on_turn(players, x.wait(lambda v: v.turn_no == view.turn_no + 1))
        y.draw_and_discard_drawn()
        z = on_turn(players, y.wait(lambda v: v.turn_no == view.turn_no + 2))
        z.draw_and_discard_drawn()
        w = on_turn(players, z.wait(lambda v: v.turn_no == view.turn_no + 3))
        w.draw_and_discard_drawn()
        # Turn 5: Y again, after a turn played: a middle drop, 40 points.
        assert on_turn(players, w.wait(lambda v: v.turn_no == view.turn_no + 4)) is y
        dropped = y.drop(turn_no=view.turn_no + 4)
        assert (dropped.kind, dropped.points) == (table_events.DROP_KIND_MIDDLE, 40)
        # Z leaves the table mid-hand: 40 points; W is the last seat standing.
        z.wait(lambda v: v.turn_no == view.turn_no + 5)
        z.leave()

        end = w.wait_phase(api.HAND_PHASE_ENDED, timeout=30)
        result = end.result
        seat = {p: p.view.my_seat for p in (x, y, w)}
        assert result.winner_seat == seat[w]
        outcome = {r.account_id: (r.outcome, r.points) for r in result.results}
        assert outcome == {
            x.account_id: ("first_drop", 20),
            y.account_id: ("middle_drop", 40),
            z.account_id: ("left", 40),
            w.account_id: ("won", 0),
        }
        # Losers pay points x 10: 200 + 400 + 400 = 1000; commission floor(1000 x 500 / 10000)
        # = 50; the winner receives 1000 - 50 = 950.
        money = {line.account_id: line.amount_hundredths for line in result.settlement}
        assert money == {
            x.account_id: -200,
            y.account_id: -400,
            z.account_id: -400,
            w.account_id: 950,
        }
        assert result.commission_hundredths == 50
        balances = operator.settled_balances([p.account_id for p in (x, y, z, w)])
        assert balances == {
            x.account_id: 4800,
            y.account_id: 4600,
            z.account_id: 4600,
            w.account_id: 5950,
        }
    finally:
        table.close()
