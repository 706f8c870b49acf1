"""A draw that takes nothing: a variant whose empty stock ends the round (Rummy 500,
docs/rules/rummy500.md#empty-stock) records the draw and ends the hand; DrawCard answers with no
card, and the same request sent again gets the same answer."""

from __future__ import annotations

import table_calls
from test_table_service import discard_last
from world import World

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api


def test_a_draw_from_the_empty_stock_is_answered_without_a_card_and_ends_the_hand() -> None:
    world = World()
    table_id = world.open_table(seats=2, rules=cards_pb2.RuleSet(variant="rummy500"))
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)  # the dealer's deal in the variant's layout
    accounts = {s.seat: s.account_id for s in world.view(table_id, None).seats}
    while True:
        view = world.view(table_id, None)
        assert view.phase == api.HAND_PHASE_PLAYING
        account = accounts[view.turn_seat]
        request = api.DrawCardRequest(
            table_id=table_id,
            hand_id=hand_id,
            turn_no=view.turn_no,
            client_request_id=world.request_id(),
            source=pb.DRAW_SOURCE_STOCK,
        )
        if view.stock_count == 0:
            break
        assert table_calls.draw(world.app, account, request).HasField("card")
        discard_last(world, table_id, account)
    answer = table_calls.draw(world.app, account, request)
    assert not answer.HasField("card")
    assert world.view(table_id, None).phase == api.HAND_PHASE_ENDED
    assert world.app.get_hand_result(None, table_id, hand_id).hand_id == hand_id
    again = table_calls.draw(world.app, account, request)  # answered from its first events
    assert not again.HasField("card")
