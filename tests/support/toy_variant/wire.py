"""The toy variant's wire (``rummy_game.variant_wire.VariantWire``): its options, its ``Knocked``
event, its ``Knock`` command and answer, in its own proto package ``rummy.toy.v1`` (``toy.proto``,
generated beside it as ``toy_pb2``). :func:`register_toy` adds the toy to the hosts' registries
(the rules', the wires', the payloads'): the test suite only ever calls it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from google.protobuf import any_pb2
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game.bundle import VariantBundle
from rummy_game.variant_wire import HandContext, StreamPayloadError
from rummy_rules.commands import Command
from rummy_rules.deck import Shoe
from rummy_rules.events import Event
from rummy_rules.rules import RuleSet, RuleSetError

from . import toy_pb2
from .game import TOY, TOY_NAME, Knock, Knocked, ToyOptions, ToyState


class ToyWire:
    variant = TOY_NAME
    event_types: tuple[type[Message], ...] = (toy_pb2.Knocked,)
    command_types: tuple[type[Message], ...] = (toy_pb2.Knock,)
    option_names: Mapping[str, str] = {
        "max_points": "rule_set.other_variant.max_points",
        "max_turns": "rule_set.other_variant.max_turns",
        "wall": "rule_set.other_variant.wall",
    }

    def upcast_options(
        self, options: cards_pb2.RuleSet, house: RuleSet | None
    ) -> cards_pb2.RuleSet:
        return options  # the toy has no older records

    def options_from_pb(self, options: cards_pb2.RuleSet, house: RuleSet) -> RuleSet:
        default = house.options
        assert isinstance(default, ToyOptions)
        if options.WhichOneof("variant_options") is None:
            return house
        packed = options.other_variant
        given = toy_pb2.ToyOptions()
        if options.WhichOneof("variant_options") != "other_variant" or not packed.Unpack(given):
            raise RuleSetError("rule_set.variant_options", "a rummy.toy.v1.ToyOptions", "another")
        return replace(
            house,
            options=ToyOptions(
                max_points=given.max_points or default.max_points,
                max_turns=given.max_turns or default.max_turns,
                wall=given.wall,
            ),
        )

    def options_to_pb(self, rules: RuleSet, out: cards_pb2.RuleSet) -> None:
        played = rules.options
        assert isinstance(played, ToyOptions)
        out.other_variant.Pack(
            toy_pb2.ToyOptions(
                max_points=played.max_points, max_turns=played.max_turns, wall=played.wall
            )
        )

    def event_to_pb(self, event: Event, ctx: HandContext) -> Message | None:
        if isinstance(event, Knocked):
            return toy_pb2.Knocked(hand_id=ctx.hand_id, seat=event.seat, turn_no=event.turn_no)
        return None

    def event_from_pb(self, payload: Message, ctx: HandContext) -> tuple[Event, ...]:
        if isinstance(payload, toy_pb2.Knocked):
            return (Knocked(seat=payload.seat, turn_no=payload.turn_no),)
        raise StreamPayloadError(f"{type(payload).DESCRIPTOR.full_name} is not a toy event")

    def command(self, message: Message, seat: int, turn_no: int, at_ms: int, shoe: Shoe) -> Command:
        if isinstance(message, toy_pb2.Knock):
            return Knock(seat=seat, turn_no=turn_no, at_ms=at_ms)
        raise StreamPayloadError(f"{type(message).DESCRIPTOR.full_name} is not a toy command")

    def command_to_pb(self, command: Command, shoe: Shoe) -> Message | None:
        return toy_pb2.Knock() if isinstance(command, Knock) else None

    def replay_command(self, event: Event, at_ms: int) -> Command | None:
        if isinstance(event, Knocked):
            return Knock(seat=event.seat, turn_no=event.turn_no, at_ms=at_ms)
        return None

    def answer(self, message: Message, payloads: Sequence[Message]) -> Message | None:
        if not isinstance(message, toy_pb2.Knock):
            return None
        knocked = next(p for p in payloads if isinstance(p, toy_pb2.Knocked))
        ended = next(p for p in payloads if isinstance(p, table_pb.HandEnded))
        mine = next(r for r in ended.results if r.seat == knocked.seat)
        return toy_pb2.KnockAnswer(winner_seat=ended.winner_seat, points=mine.points)

    def request_command(self, request: Message) -> Message | None:
        return None

    def request_answer(self, request: Message, answer: Message | None) -> Message | None:
        return None

    def unpack_answer(self, packed: any_pb2.Any) -> Message | None:
        answer = toy_pb2.KnockAnswer()
        return answer if packed.Unpack(answer) else None

    def accepted(self, answer: Message) -> bool:
        return True

    def view_to_pb(self, view: object, shoe: Shoe) -> Message | None:
        return None  # no variant part in its view

    def metric(self, payload: Message) -> tuple[str, str] | None:
        return None


TOY_WIRE = ToyWire()


#: The toy as one plug-in: its rules, wire, payloads and codec classes.
TOY_BUNDLE = VariantBundle(
    variant=TOY,
    wire=TOY_WIRE,
    payload_modules=(toy_pb2,),
    codec_classes=(ToyOptions, Knock, Knocked, ToyState),
)


def register_toy() -> None:
    """Make the toy playable by the hosts in this process: its bundle's one call
    (``VariantBundle.install``). Registering twice is harmless."""
    TOY_BUNDLE.install()
