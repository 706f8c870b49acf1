"""The table's views list the moves the viewing seat may make now, as the hand's variant lists
them (``Variant.legal_commands``, ``PlayerView.legal_moves``): the seat on turn sees its draws
and its drop before drawing, then a discard and a declare for each card it may let go (never the
card it took from the pile); every other seat and a spectator see none; a listed move sent as
its RPC is accepted."""

from __future__ import annotations

import table_calls
from test_table_service import on_turn, playing_table
from world import World

from rummy.indian.v1 import events_pb2 as ipb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api


def _arms(view: api.PlayerView) -> list[str]:
    return [str(m.WhichOneof("move")) for m in view.legal_moves]


def test_the_seat_on_turn_sees_its_legal_moves_and_nobody_else_sees_any() -> None:
    world = World()
    table_id, _ = playing_table(world, ("alice", "bob", "carol"))
    account, view = on_turn(world, table_id)
    assert _arms(view) == ["draw", "draw", "command"]
    assert [m.draw for m in view.legal_moves[:2]] == [
        pb.DRAW_SOURCE_STOCK,
        pb.DRAW_SOURCE_DISCARD_PILE,
    ]
    assert view.legal_moves[2].command.Is(ipb.Drop.DESCRIPTOR)
    for other in ("alice", "bob", "carol"):
        if other != account:
            assert not world.view(table_id, other).legal_moves
    assert not world.view(table_id, None).legal_moves  # a spectator


def test_after_a_draw_from_the_pile_every_card_but_the_taken_one_may_leave() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    pile = view.legal_moves[1]
    drawn = table_calls.draw(
        world.app,
        account,
        world.turn_request(api.DrawCardRequest, table_id, view, source=pile.draw),
    )
    after = world.view(table_id, account)
    discards = [m.discard.index for m in after.legal_moves if m.HasField("discard")]
    held = [c.index for c in after.my_cards]
    assert sorted(discards) == sorted(i for i in held if i != drawn.card.index)
    declares = [m for m in after.legal_moves if m.HasField("command")]
    assert len(declares) == len(discards)
    assert all(m.command.Is(ipb.Declare.DESCRIPTOR) for m in declares)
    move = next(m for m in after.legal_moves if m.HasField("discard"))
    table_calls.discard(
        world.app,
        account,
        world.turn_request(api.DiscardCardRequest, table_id, after, card=move.discard),
    )
    assert not world.view(table_id, account).legal_moves  # the turn has passed
