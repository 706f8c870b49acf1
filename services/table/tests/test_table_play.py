"""Play: an Indian table takes the variant's own commands packed in a google.protobuf.Any, the
older Drop/Declare RPCs go the same way, and bad commands change nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import table_calls
from google.protobuf import any_pb2
from test_table_service import on_turn, playing_table, table_events
from world import World

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import InvalidArgument
from rummy_platform.limits import check_request


def _play(world: World, table_id: str, hand_id: str, view: api.PlayerView) -> api.PlayRequest:
    return world.turn_request(api.PlayRequest, table_id, view, hand_id=hand_id)


def test_a_drop_sent_through_play_is_a_first_drop_answered_with_the_variants_answer() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    request = _play(world, table_id, hand_id, view)
    request.command.Pack(indian_pb.Drop())
    reply = table_calls.play(world.app, account, request)
    answer = indian_pb.DropAnswer()
    assert reply.answer.Unpack(answer)
    assert (answer.kind, answer.points) == (indian_pb.DROP_KIND_FIRST, 20)
    assert any(isinstance(p, indian_pb.PlayerDropped) for p in table_events(world, table_id))
    again = table_calls.play(world.app, account, request)  # a retry gets the first answer
    assert again == reply


def _declare_bytes_that_do_not_parse(command: any_pb2.Any) -> None:
    command.type_url = "type.googleapis.com/rummy.indian.v1.Declare"
    command.value = b"\x0a\xff"


@pytest.mark.parametrize(
    ("pack", "says"),
    [
        (lambda a: a.Clear(), "command is missing"),
        (lambda a: a.Pack(cards_pb2.Card(index=3)), "unknown command type"),
        (lambda a: a.Pack(indian_pb.Declare()), "face_down"),
        (lambda a: a.Pack(indian_pb.Declare(face_down=cards_pb2.Card(index=999))), "not in the"),
        (_declare_bytes_that_do_not_parse, "not a valid rummy.indian.v1.Declare"),
    ],
    ids=[
        "no command",
        "unknown type",
        "no face-down card",
        "card outside the shoe",
        "bytes that do not parse",
    ],
)
def test_a_bad_command_is_invalid_argument_and_appends_nothing(
    pack: Callable[[any_pb2.Any], object], says: str
) -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    before = len(table_events(world, table_id))
    request = _play(world, table_id, hand_id, view)
    pack(request.command)
    with pytest.raises(InvalidArgument, match=says):
        table_calls.play(world.app, account, request)
    assert len(table_events(world, table_id)) == before


def _declare(faces: str) -> indian_pb.Declare:
    """A Declare of the rules' largest grouping (13 groups of 14 cards), each card with a face."""
    card = cards_pb2.Card(index=150, face=faces)
    return indian_pb.Declare(
        face_down=card, groups=[cards_pb2.CardGroup(cards=[card] * 14) for _ in range(13)]
    )


def test_the_largest_declare_the_rules_allow_passes_plays_size_check_whole() -> None:
    request = api.PlayRequest(table_id="t", hand_id="h", client_request_id="r")
    request.command.Pack(_declare("x" * 8))  # faces of the most bytes allowed
    assert len(request.command.value) > 2048
    check_request(request)


def test_a_commands_own_fields_are_held_to_the_request_limits_once_unpacked() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    before = len(table_events(world, table_id))
    request = _play(world, table_id, hand_id, view)
    request.command.Pack(_declare("x" * 9))
    with pytest.raises(InvalidArgument, match=r"command\.face_down\.face is 9 bytes long"):
        table_calls.play(world.app, account, request)
    assert len(table_events(world, table_id)) == before
