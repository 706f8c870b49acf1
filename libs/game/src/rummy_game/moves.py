"""A seat's legal moves on the wire (``rummy.table.v1.LegalMove``) <-> rules commands.

The table lists a seat's moves in its view from the hand's variant
(``rummy_rules.variant.Variant.legal_commands``); a client (a bot, the fuzz) reads them back as
rules commands and sends the one it chooses as the RPC the move's arm names: ``draw`` ->
``DrawCard``, ``discard`` -> ``DiscardCard``, ``command`` -> ``Play`` with the message packed. The
variant's own commands map through its wire (``VariantWire.command_to_pb`` / ``command``); this
module knows none of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as table_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_rules.commands import Command, Discard, DrawFromDiscardPile, DrawFromStock
from rummy_rules.deck import Shoe

from .variant_wire import StreamPayloadError, VariantWire, card_from_pb, card_to_pb


def move_to_pb(command: Command, wire: VariantWire, shoe: Shoe) -> api.LegalMove:
    """The wire move of one of the variant's legal commands. Raises StreamPayloadError for a
    command neither generic nor the variant's own (its wire maps none)."""
    if isinstance(command, DrawFromStock):
        return api.LegalMove(draw=table_pb.DRAW_SOURCE_STOCK)
    if isinstance(command, DrawFromDiscardPile):
        return api.LegalMove(draw=table_pb.DRAW_SOURCE_DISCARD_PILE)
    if isinstance(command, Discard):
        return api.LegalMove(discard=card_to_pb(command.card, shoe))
    message = wire.command_to_pb(command, shoe)
    if message is None:
        raise StreamPayloadError(f"variant {wire.variant!r} has no message for {command!r}")
    move = api.LegalMove()
    move.command.Pack(message)
    return move


def moves_to_pb(commands: Sequence[Command], wire: VariantWire, shoe: Shoe) -> list[api.LegalMove]:
    """:func:`move_to_pb` of each command, in order."""
    return [move_to_pb(command, wire, shoe) for command in commands]


def command_message(move: api.LegalMove, wire: VariantWire) -> Message:
    """The variant's command message of a ``command`` move (unpacked as one of
    ``wire.command_types``). Raises StreamPayloadError for a type the variant has not."""
    for cls in wire.command_types:
        message = cls()
        if move.command.Unpack(message):
            return message
    raise StreamPayloadError(
        f"{move.command.type_url!r} is not a command of variant {wire.variant!r}"
    )


def move_from_pb(
    move: api.LegalMove, seat: int, turn_no: int, wire: VariantWire, shoe: Shoe
) -> Command:
    """The rules command of a wire move for ``seat`` at turn ``turn_no`` (``at_ms`` 0). Raises
    StreamPayloadError for an empty move, a card outside the shoe or a foreign command."""
    arm = move.WhichOneof("move")
    if arm == "draw":
        if move.draw == table_pb.DRAW_SOURCE_STOCK:
            return DrawFromStock(seat=seat, turn_no=turn_no, at_ms=0)
        if move.draw == table_pb.DRAW_SOURCE_DISCARD_PILE:
            return DrawFromDiscardPile(seat=seat, turn_no=turn_no, at_ms=0)
        raise StreamPayloadError(f"draw source {move.draw} is not a pile")
    if arm == "discard":
        return Discard(seat=seat, turn_no=turn_no, card=card_from_pb(move.discard, shoe), at_ms=0)
    if arm == "command":
        return wire.command(command_message(move, wire), seat, turn_no, 0, shoe)
    raise StreamPayloadError("a legal move names a draw, a discard or a command")
