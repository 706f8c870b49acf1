"""A player's commands on the current hand: the seed, draw, discard, and the variant's own
commands (``Play``, and the older Declare and Drop RPCs) or a match's (rejoin, split), each made
into the rules' command for the caller's seat and decided through the commit path."""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_payloads, stream_payloads, variant_wires
from rummy_game.variant_wire import VariantWire
from rummy_platform.errors import (
    FailedPrecondition,
    InvalidArgument,
)
from rummy_platform.limits import MAX_CLIENT_SEED_BYTES, check_request, check_size
from rummy_rules import commands as rc
from rummy_rules.cards import Card
from rummy_table.domain import match_hosting

from . import commands as c
from .commit import TableCore
from .held_table import HeldTable
from .ports import Action


def contribute_seed(core: TableCore, request: c.ContributeSeed) -> None:
    check_size("client_seed", request.client_seed, MAX_CLIENT_SEED_BYTES)
    core.hand_action(
        request,
        lambda seat, at: rc.ContributeClientSeed(
            seat=seat, seed_hex=request.client_seed.hex(), at_ms=at
        ),
        "contribute_seed",
    )


def draw(core: TableCore, request: c.DrawCard) -> cards_pb2.Card | None:
    """Draw from ``request.source``; returns the card drawn (a retry: the first draw's), or None
    when the draw took nothing and the variant ended the hand instead (Rummy 500's empty stock:
    ``docs/rules/rummy500.md#empty-stock``): the command was recorded all the same."""
    if request.source == pb.DRAW_SOURCE_STOCK:
        cls: type[rc.DrawFromStock] | type[rc.DrawFromDiscardPile] = rc.DrawFromStock
    elif request.source == pb.DRAW_SOURCE_DISCARD_PILE:
        cls = rc.DrawFromDiscardPile
    else:
        raise InvalidArgument("source must be DRAW_SOURCE_STOCK or DRAW_SOURCE_DISCARD_PILE")
    payloads = core.hand_action(
        request,
        lambda seat, at: cls(seat=seat, turn_no=request.turn_no, at_ms=at),
        "draw",
    )
    drawn = next((p for p in payloads if isinstance(p, pb.CardDrawn)), None)
    return None if drawn is None else drawn.card


def _card(core: TableCore, table_id: str, card: cards_pb2.Card) -> Card:
    with core.projection.lock:
        table = core._table(table_id)
        if table.ctx is None:
            raise FailedPrecondition("no hand is being played at this table")
        try:
            return stream_payloads.card_from_pb(card, table.ctx.shoe)
        except stream_payloads.StreamPayloadError as exc:
            raise InvalidArgument(str(exc)) from None


def discard(core: TableCore, request: c.DiscardCard) -> None:
    def make(seat: int, at: int) -> rc.Command:
        card = _card(core, request.table_id, request.card)
        return rc.Discard(seat=seat, turn_no=request.turn_no, card=card, at_ms=at)

    core.hand_action(request, make, "discard")


def play(core: TableCore, request: c.Play) -> Message | None:
    """A command of the hand's variant (``request.command``: a ``google.protobuf.Any`` of a
    message of the variant's ``command_types``); returns the variant's answer (None: it
    gives none). Raises InvalidArgument (an unknown type, another variant's command, bytes
    that do not parse, a malformed command: nothing is appended), and as every hand command
    does."""

    if match_payloads.is_match_command(request.command.TypeName()):
        return _match_play(core, request)

    def resolve(wire: VariantWire) -> Message:
        return _unpack_command(wire, request.command)

    wire, message, payloads = _play(core, request, resolve, "play")
    return wire.answer(message, payloads)


def _match_play(core: TableCore, request: c.Play) -> Message:
    """A match command (``rummy.match.v1`` AcceptRejoin, DeclineRejoin, RequestSplit) for
    the account's seat, answered with MatchCommandAnswer."""
    account_id = request.account_id
    type_name = request.command.TypeName()
    cls = next(c for c in match_payloads.COMMAND_TYPES if c.DESCRIPTOR.full_name == type_name)
    message = cls()
    try:
        if not request.command.Unpack(message):
            raise DecodeError("type mismatch")
    except DecodeError:
        raise InvalidArgument(f"command: the bytes are not a valid {type_name}") from None
    payloads = core.act(
        request,
        lambda t, at: match_hosting.match_command(
            t,
            account_id,
            lambda seat, at_ms: match_payloads.command_from_pb(message, seat, at_ms),
            at,
        ),
        action="play",
    )
    return match_payloads.answer(payloads)


def play_older_rpc(core: TableCore, command: c.PlayOlderRpc) -> Message | None:
    """An older per-command RPC (Declare, Drop): the hand's variant's command of that name
    (:meth:`play`), made and answered by the variant's wire from the RPC's request; returns
    the RPC's response. Raises InvalidArgument when the variant has no such command."""
    request = command.request

    def resolve(wire: VariantWire) -> Message:
        message = wire.request_command(request)
        if message is None:
            rpc = type(request).DESCRIPTOR.name.removesuffix("Request")
            raise InvalidArgument(
                f"variant {wire.variant!r} has no {rpc}; send its commands with Play"
            )
        check_request(message, "", wire.variant)  # the variant's own limits, not the loosest
        return message

    wire, message, payloads = _play(core, command, resolve, command.action)
    return wire.request_answer(request, wire.answer(message, payloads))


def _play(
    core: TableCore,
    request: c.Play | c.PlayOlderRpc,
    resolve: Callable[[VariantWire], Message],
    action: Action,
) -> tuple[VariantWire, Message, list[Message]]:
    """Decide the variant's command that ``resolve`` makes of ``request`` (table_id,
    hand_id, turn_no, client_request_id) for the account's seat in the current hand; the
    wire, the command message and the payloads appended (or first appended, for a retry)."""
    chosen: list[tuple[VariantWire, Message]] = []

    def make(seat: int, at: int) -> rc.Command:
        with core.projection.lock:
            table = core._table(request.table_id)
            if table.ctx is None:
                raise FailedPrecondition("no hand is being played at this table")
            wire = _wire(table)
            message = resolve(wire)
            chosen.append((wire, message))
            try:
                return wire.command(message, seat, request.turn_no, at, table.ctx.shoe)
            except stream_payloads.StreamPayloadError as exc:
                raise InvalidArgument(f"command: {exc}") from None

    payloads = core.hand_action(request, make, action)
    if not chosen:  # a retried request, answered from its first events
        with core.projection.lock:
            wire = _wire(core._table(request.table_id))
        chosen.append((wire, resolve(wire)))
    wire, message = chosen[-1]
    return wire, message, payloads


def _wire(table: HeldTable) -> VariantWire:
    try:
        return variant_wires.lookup(table.rule_set.variant)
    except variant_wires.UnknownWire as exc:
        raise FailedPrecondition(str(exc)) from None


def _unpack_command(wire: VariantWire, packed: any_pb2.Any) -> Message:
    """The command message ``packed`` holds, of one of ``wire``'s command types. Raises
    InvalidArgument for an unknown type, another variant's command, bytes that do not parse, or a
    field of the command over its variant's request limit (``rummy_platform.limits``)."""
    if not packed.type_url:
        raise InvalidArgument(
            "command is missing: PlayRequest.command holds the variant's command message packed "
            "in a google.protobuf.Any"
        )
    type_name = packed.TypeName()
    command_type = next(
        (c for c in wire.command_types if c.DESCRIPTOR.full_name == type_name), None
    )
    if command_type is None:
        owner = variant_wires.owner_of_command(type_name)
        if owner is not None:
            raise InvalidArgument(
                f"command: {type_name} is a command of variant {owner.variant!r}; this table "
                f"plays {wire.variant!r}"
            )
        known = ", ".join(c.DESCRIPTOR.full_name for c in wire.command_types)
        raise InvalidArgument(
            f"command: unknown command type {type_name[:100]!r} (variant {wire.variant!r} "
            f"plays {known})"
        )
    message = command_type()
    try:
        if not packed.Unpack(message):
            raise DecodeError("type mismatch")
    except DecodeError:
        raise InvalidArgument(f"command: the bytes are not a valid {type_name}") from None
    check_request(message, "command.", wire.variant)
    return message
