"""Stakes through the public API: the reservation a seat must cover, and a free table.

The reservation of a hand is 130 points x the point value (at 10 hundredths a point: 1300).
"""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_testing.players import Operator, Table, on_turn, seed_and_wait_for_play
from rummy_testing.stacks import RunningStack


def test_a_player_who_cannot_cover_the_reservation_is_not_dealt_in_and_is_told_why(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        rich = [table.player(f"rich{i}", grant=5000) for i in range(2)]
        poor = table.player("poor", grant=1000)  # 1000 < 1300
        for p in (*rich, poor):
            p.take_seat()
        view = seed_and_wait_for_play(rich)
        seats = {s.account_id: s for s in view.seats}
        assert [seats[p.account_id].dealt_in for p in rich] == [True, True]
        assert not seats[poor.account_id].dealt_in
        reason = poor.wait(lambda v: v.hand_id == view.hand_id).seats
        told = {s.account_id: s.sitting_out_reason for s in reason}[poor.account_id]
        assert "reservation of 1300 hundredths" in told and "available 1000" in told
        assert not poor.view.my_cards  # nothing dealt to it

        # The first seat on turn drops at once (20 points); the other seat wins.
        loser = on_turn(rich, view)
        winner = next(p for p in rich if p is not loser)
        assert loser.drop(turn_no=view.turn_no).points == 20
        result = winner.wait_phase(api.HAND_PHASE_ENDED).result
        assert {r.account_id for r in result.results} == {p.account_id for p in rich}
        # 20 x 10 = 200; commission floor(200 x 500 / 10000) = 10; the winner gets 190.
        money = {line.account_id: line.amount_hundredths for line in result.settlement}
        assert money == {loser.account_id: -200, winner.account_id: 190}
        assert result.commission_hundredths == 10
        balances = operator.settled_balances([loser.account_id, winner.account_id, poor.account_id])
        assert balances == {loser.account_id: 4800, winner.account_id: 5190, poor.account_id: 1000}
        # Each player's own ListMyHands lists the hand as the ledger settled it; the seat not
        # dealt in lists nothing.
        listed = {
            p.account_id: [
                (e.kind, e.hand_id, e.table_id, e.variant, e.format, e.result, e.net_hundredths)
                for e in operator.hands(p.account_id, p.token)
            ]
            for p in (loser, winner, poor)
        }
        hand = ("hand", view.hand_id, table.table_id, "indian-points", "single")
        assert listed == {
            loser.account_id: [(*hand, "first_drop", -200)],
            winner.account_id: [(*hand, "won", 190)],
            poor.account_id: [],
        }
    finally:
        table.close()


def test_a_free_table_moves_no_tokens(operator: Operator, rummy_stack: RunningStack) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 0, 500)
    try:
        players = table.seated("free", 2, grant=700)
        view = seed_and_wait_for_play(players)
        loser = on_turn(players, view)
        winner = next(p for p in players if p is not loser)
        dropped = loser.drop(turn_no=view.turn_no)
        assert (dropped.kind, dropped.points) == (table_events.DROP_KIND_FIRST, 20)
        result = winner.wait_phase(api.HAND_PHASE_ENDED).result
        # Points are still counted (20), but at 0 a point nobody pays and no commission is due.
        assert {r.account_id: r.points for r in result.results} == {
            loser.account_id: 20,
            winner.account_id: 0,
        }
        assert [line.amount_hundredths for line in result.settlement] == [0, 0]
        assert result.commission_hundredths == 0
        balances = operator.settled_balances([p.account_id for p in players])
        assert balances == {loser.account_id: 700, winner.account_id: 700}
    finally:
        table.close()
