"""What a player can see and do through the public API: only its own cards, only its own seat,
and no command acts twice (a past turn is refused, a retried request id answers as before).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc
import pytest

from rummy.table.v1 import table_service_pb2 as api
from rummy_testing.players import (
    STOCK,
    Operator,
    Player,
    Table,
    cards_in,
    next_turn,
    on_turn,
    request_id,
    seed_and_wait_for_play,
)
from rummy_testing.stacks import RunningStack


def _refused(call: Callable[[], object], code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    assert caught.value.code() == code, caught.value.details()
    return caught.value.details() or ""


def _public(view: api.PlayerView) -> set[int]:
    out = {c.index for c in view.discard_pile}
    if view.HasField("wild_cut"):
        out.add(view.wild_cut.index)
    return out


def test_a_player_sees_only_its_own_cards_and_acts_only_for_its_own_seat(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        a, b = (table.player(f"priv{i}", grant=5000) for i in range(2))
        outsider = table.player("outsider", grant=5000)  # follows the table, never seated
        for p in (a, b):
            p.take_seat()
        view = seed_and_wait_for_play([a, b])
        first = on_turn([a, b], view)
        second = b if first is a else a
        first.draw_and_discard_drawn()
        turn = next_turn([a, b], view.turn_no)
        assert turn is not None and on_turn([a, b], turn) is second
        for p in (a, b):  # each stream delivers the new turn in its own time: wait for both
            p.wait(lambda v: v.turn_no == turn.turn_no and len(v.my_cards) == 13)

        # Through WatchTable: every card a view carries is the viewer's own or public.
        mine = {p: {c.index for c in p.view.my_cards} for p in (a, b)}
        assert len(mine[a]) == len(mine[b]) == 13 and not mine[a] & mine[b]
        for p in (a, b, outsider):
            for v in p.views:
                if v.phase != api.HAND_PHASE_ENDED:
                    assert cards_in(v) <= {c.index for c in v.my_cards} | _public(v)
        assert not outsider.view.my_cards and not outsider.view.HasField("my_seat")
        # Through ListTables: no card at all.
        listed = a.call("ListTables", api.ListTablesRequest(page_size=100))
        assert table.table_id in {t.table_id for t in listed.tables}
        assert cards_in(listed) == set()
        # Through GetHandResult before the end: refused, nothing returned.
        with pytest.raises(grpc.RpcError) as caught:
            a.call(
                "GetHandResult",
                api.GetHandResultRequest(table_id=table.table_id, hand_id=view.hand_id),
            )
        assert caught.value.code() in (
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.NOT_FOUND,
        )

        # The seat acting is the token's, never a request field: an account not seated at the
        # table is refused (PERMISSION_DENIED); a seated player whose seat is not on turn cannot
        # play the turn of the seat that is (FAILED_PRECONDITION, naming whose turn it is).
        version = second.view.stream_version
        _refused(lambda: outsider.draw(STOCK, turn.turn_no), grpc.StatusCode.PERMISSION_DENIED)
        _refused(lambda: outsider.drop(turn.turn_no), grpc.StatusCode.PERMISSION_DENIED)
        told = _refused(
            lambda: first.draw(STOCK, turn.turn_no), grpc.StatusCode.FAILED_PRECONDITION
        )
        assert f"seat {turn.turn_seat}" in told
        _refused(lambda: first.drop(turn.turn_no), grpc.StatusCode.FAILED_PRECONDITION)
        # A command naming a past turn: FAILED_PRECONDITION, even from the seat now on turn.
        _refused(lambda: second.draw(STOCK, turn.turn_no - 1), grpc.StatusCode.FAILED_PRECONDITION)
        time.sleep(0.5)
        assert second.view.stream_version == version  # nothing was appended

        # A retried request id returns the first answer and acts once.
        rid = request_id()
        drawn = second.draw(STOCK, turn.turn_no, rid=rid)
        after_draw = second.wait(lambda v: v.has_drawn and len(v.my_cards) == 14)
        again = second.draw(STOCK, turn.turn_no, rid=rid)
        assert again.card == drawn.card
        rid = request_id()
        second.discard(drawn.card, turn.turn_no, rid=rid)
        after_discard = second.wait(lambda v: v.turn_no == turn.turn_no + 1)
        assert after_discard.stream_version > after_draw.stream_version
        second.discard(drawn.card, turn.turn_no, rid=rid)  # the same answer: no error
        time.sleep(0.5)
        assert second.view.stream_version == after_discard.stream_version
        assert len(second.view.my_cards) == 13
        assert [c.index for c in second.view.discard_pile].count(drawn.card.index) == 1

        # The hand ends (a middle drop); now the result shows every seat's cards to everyone.
        nxt = next_turn([a, b], turn.turn_no)
        assert nxt is not None
        first.drop(nxt.turn_no)
        first.wait_phase(api.HAND_PHASE_ENDED)
        result = a.call(
            "GetHandResult", api.GetHandResultRequest(table_id=table.table_id, hand_id=view.hand_id)
        ).result
        assert {r.account_id: len(r.cards) for r in result.results} == {
            a.account_id: 13,
            b.account_id: 13,
        }
    finally:
        table.close()


def test_a_player_token_cannot_open_a_table(operator: Operator, rummy_stack: RunningStack) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 0, 0)
    try:
        p: Player = table.player("nobody")
        details = _refused(
            lambda: p.call(
                "OpenTable", api.OpenTableRequest(client_request_id=request_id(), seat_count=4)
            ),
            grpc.StatusCode.PERMISSION_DENIED,
        )
        assert "operator" in details  # the message says who may open a table
    finally:
        table.close()
