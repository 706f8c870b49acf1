"""Play: an Indian table takes the variant's own commands packed in a google.protobuf.Any, the
older Drop/Declare RPCs go the same way, and bad commands change nothing."""

from __future__ import annotations

import pytest
from test_table_service import on_turn, playing_table, table_events
from world import World

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import InvalidArgument


def _play(world: World, table_id: str, hand_id: str, view: api.PlayerView) -> api.PlayRequest:
    return api.PlayRequest(
        table_id=table_id,
        hand_id=hand_id,
        turn_no=view.turn_no,
        client_request_id=world.request_id(),
    )


def test_a_drop_sent_through_play_is_a_first_drop_answered_with_the_variants_answer() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    request = _play(world, table_id, hand_id, view)
    request.command.Pack(indian_pb.Drop())
    reply = world.app.play(account, request)
    answer = indian_pb.DropAnswer()
    assert reply.answer.Unpack(answer)
    assert (answer.kind, answer.points) == (indian_pb.DROP_KIND_FIRST, 20)
    assert any(isinstance(p, indian_pb.PlayerDropped) for p in table_events(world, table_id))
    again = world.app.play(account, request)  # a retry gets the first answer
    assert again == reply


@pytest.mark.parametrize(
    ("pack", "says"),
    [
        (lambda a: a.Pack(cards_pb2.Card(index=3)), "unknown command type"),
        (lambda a: a.Pack(indian_pb.Declare()), "face_down"),
        (lambda a: a.Pack(indian_pb.Declare(face_down=cards_pb2.Card(index=999))), "not in the"),
        (
            lambda a: (
                setattr(a, "type_url", "type.googleapis.com/rummy.indian.v1.Declare"),
                setattr(a, "value", b"\x0a\xff"),
            ),
            "not a valid rummy.indian.v1.Declare",
        ),
    ],
    ids=["unknown type", "no face-down card", "card outside the shoe", "bytes that do not parse"],
)
def test_a_bad_command_is_invalid_argument_and_appends_nothing(pack: object, says: str) -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    before = len(table_events(world, table_id))
    request = _play(world, table_id, hand_id, view)
    pack(request.command)  # type: ignore[operator]
    with pytest.raises(InvalidArgument, match=says):
        world.app.play(account, request)
    assert len(table_events(world, table_id)) == before
