"""The Indian points variant's wire (``indian-points``, Bombay Baazi): its options, events,
commands and answers (protobuf package ``rummy.indian.v1``) <-> ``rummy_rules.indian``.

Its bundle, :data:`INDIAN_BUNDLE` (rules, wire, payloads, codec classes, verifier script,
docs), is the entry point ``indian-points`` of the group ``rummy.variants`` (``libs/game``'s
``pyproject.toml``): hosts find it there (``rummy_game.bundle``); no host imports this module.

- Options: ``rummy.indian.v1.IndianPointsOptions`` in ``RuleSet.variant_options.indian_points``,
  and the same options in the flat fields 2-5, 7 and 8 of ``rummy.common.v1.RuleSet``, which a
  record written before the oneof has only (written both ways, equal, so readers of older
  builds keep reading new records; a request is read from the flat field when set, else from
  the oneof, both set and different is refused; a record of the older shape is upcast first,
  :meth:`IndianWire.upcast_options`). ``shoes`` (which shoes the
  table deals from, ``rummy_rules.indian.rules.IndianShoes``) is in the oneof only; left out, a
  table keeps the house shoes (Bombay Baazi's at 4, 6, 8 seats, else the rulebook's).
- Events: ``Declared``, ``DeclarationRejected``, ``PlayerDropped`` (records of the old types
  ``rummy.table.v1.*`` decode as these: the bundle's ``payload_aliases``,
  ``rummy_game.upcast.TYPE_ALIASES``).
- Commands (``PlayRequest.command``): ``Declare`` (answer ``DeclareAnswer``), ``Drop`` (answer
  ``DropAnswer``); the older RPCs ``Declare`` / ``Drop`` of ``rummy.table.v1.TableService``
  send the same commands (:meth:`IndianWire.request_command`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

from google.protobuf import any_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as ipb
from rummy.indian.v1 import rules_pb2 as indian_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_rules.commands import Command, LeaveHand
from rummy_rules.deck import Shoe
from rummy_rules.events import Event
from rummy_rules.indian import INDIAN_POINTS
from rummy_rules.indian import events as indian
from rummy_rules.indian.cases import INDIAN_CASES
from rummy_rules.indian.commands import Declare, Drop
from rummy_rules.indian.equivalence import equivalent_results
from rummy_rules.indian.rules import (
    INDIAN_POINTS_VARIANT,
    IndianPointsRules,
    IndianShoes,
    indian_rules,
)
from rummy_rules.indian.state import HandState
from rummy_rules.rules import RuleSet, RuleSetError

from . import upcast
from .bundle import CounterSeries, DemoGame, DemoTable, Outcome, VariantBundle
from .variant_wire import (
    HandContext,
    StreamPayloadError,
    card_from_pb,
    card_to_pb,
    cards_from_pb,
    cards_to_pb,
    given,
)

_Switch = Literal[
    "jokers_only_group_is_impure_sequence", "card_taken_from_discard_cannot_be_discarded"
]

#: The on/off options (explicit presence; on at Bombay Baazi). A record written before explicit
#: presence left a switch that was off out (a proto3 zero): read so.
SWITCHES: tuple[_Switch, ...] = (
    "jokers_only_group_is_impure_sequence",
    "card_taken_from_discard_cannot_be_discarded",
)

DROP_KIND_TO_PB = {
    indian.DropKind.FIRST: ipb.DROP_KIND_FIRST,
    indian.DropKind.MIDDLE: ipb.DROP_KIND_MIDDLE,
    indian.DropKind.TIMEOUT: ipb.DROP_KIND_TIMEOUT,
    indian.DropKind.LEAVE: ipb.DROP_KIND_LEAVE,
}
_DROP_KIND_BACK = {v: k for k, v in DROP_KIND_TO_PB.items()}

_REJECTED_REASON = "the shown cards do not make a valid declaration under their best arrangement"


#: The Indian options that also have a flat field of ``rummy.common.v1.RuleSet`` (``shoes``
#: has none: it is read from ``variant_options.indian_points`` only).
_FLAT_FIELDS = tuple(
    f
    for f in indian_pb2.IndianPointsOptions.DESCRIPTOR.fields
    if f.name in cards_pb2.RuleSet.DESCRIPTOR.fields_by_name
)


def _is_set(message: Message, field: FieldDescriptor) -> bool:
    """Whether ``message`` sets ``field`` (by name: ``field`` may be another message's field of
    that name): present when the field tracks presence, else not its zero value."""
    name = field.name
    return message.HasField(name) if field.has_presence else bool(getattr(message, name))


#: The shoe options <-> the wire's enum.
SHOES_TO_PB = {
    IndianShoes.BOMBAY_BAAZI: indian_pb2.INDIAN_SHOES_BOMBAY_BAAZI,
    IndianShoes.RULEBOOK: indian_pb2.INDIAN_SHOES_RULEBOOK,
    IndianShoes.RULEBOOK_ONE_DECK_HEADS_UP: indian_pb2.INDIAN_SHOES_RULEBOOK_ONE_DECK_HEADS_UP,
}
_SHOES_BACK = {v: k for k, v in SHOES_TO_PB.items()}


def _shoes_of(rules: RuleSet) -> IndianShoes | None:
    """The shoe option ``rules`` deals from (None: shoes of no option)."""
    return next((o for o in IndianShoes if o.shoes == rules.shoes), None)


def _with_shoes(options: cards_pb2.RuleSet, rules: RuleSet) -> RuleSet:
    """``rules`` on the shoes ``options.indian_points.shoes`` names (left out: as they are).
    Raises RuleSetError for an unknown value or shoes without a shoe for the seat count."""
    if options.WhichOneof("variant_options") != "indian_points":
        return rules
    given = options.indian_points
    if not given.HasField("shoes"):
        return rules
    chosen = _SHOES_BACK.get(given.shoes)
    if chosen is None:
        allowed = ", ".join(indian_pb2.IndianShoes.Name(v) for v in SHOES_TO_PB.values())
        raise RuleSetError("shoes", f"one of {allowed}", given.shoes)
    seat_counts = dict(chosen.shoes)
    if rules.seats not in seat_counts:
        counts = ", ".join(str(n) for n in sorted(seat_counts))
        raise RuleSetError("seats", f"one of {counts} on the {chosen.value} shoes", rules.seats)
    return replace(rules, shoes=chosen.shoes)


def _with_variant_options(options: cards_pb2.RuleSet) -> tuple[cards_pb2.RuleSet, str]:
    """``options`` read with its ``indian_points`` arm: each Indian option is the flat field
    when set, else the oneof's; and the first option set in both to different values (``""``:
    none), which the caller refuses once the options are otherwise valid."""
    if options.WhichOneof("variant_options") != "indian_points":
        return options, ""
    merged = cards_pb2.RuleSet()
    merged.CopyFrom(options)
    merged.ClearField("variant_options")
    given, conflict = options.indian_points, ""
    for field in _FLAT_FIELDS:
        name = field.name
        in_oneof, in_flat = _is_set(given, field), _is_set(options, field)
        if in_oneof and not in_flat:
            setattr(merged, name, getattr(given, name))
        elif in_oneof and getattr(given, name) != getattr(options, name) and not conflict:
            conflict = name
    return merged, conflict


class IndianWire:
    """:class:`rummy_game.variant_wire.VariantWire` of the Indian points variant."""

    variant = INDIAN_POINTS_VARIANT
    event_types: tuple[type[Message], ...] = (
        ipb.PlayerDropped,
        ipb.Declared,
        ipb.DeclarationRejected,
    )
    command_types: tuple[type[Message], ...] = (ipb.Declare, ipb.Drop)
    option_names: Mapping[str, str] = {
        "points_cap": "rule_set.max_points",
        "first_drop_points": "rule_set.first_drop_points",
        "middle_drop_points": "rule_set.middle_drop_points",
        "wrong_declare_points": "rule_set.wrong_declare_points",
        "shoes": "rule_set.indian_points.shoes",
    }

    # -- options -------------------------------------------------------------------------------

    def upcast_options(
        self, options: cards_pb2.RuleSet, house: RuleSet | None
    ) -> cards_pb2.RuleSet:
        """A recorded rule set in today's shape (``rummy_game.upcast.rule_set``):

        - each switch (:data:`SWITCHES`) a writer before explicit presence left out, in neither
          the flat field nor the ``indian_points`` arm, set off in the flat field, as that
          writer meant it;
        - a rule set written before ``RuleSet.variant_options`` (the flat fields 2-5, 7 and 8
          only) gets the ``indian_points`` arm today's writer adds (:meth:`options_to_pb`): the
          flat fields' values, and the shoes of ``house`` (the house rule set at the record's
          seat count, the shoes such a hand was dealt from; None or shoes of no option: left
          out).

        A copy when something changed, else ``options`` itself. Never raises."""
        merged, _conflict = _with_variant_options(options)
        missing = [n for n in SWITCHES if not merged.HasField(n)]
        before_oneof = options.WhichOneof("variant_options") is None
        if not missing and not before_oneof:
            return options
        as_written = cards_pb2.RuleSet()
        as_written.CopyFrom(options)
        for name in missing:
            setattr(as_written, name, False)
        if before_oneof:
            arm = as_written.indian_points
            for field in _FLAT_FIELDS:
                if _is_set(as_written, field) or not field.has_presence:
                    setattr(arm, field.name, getattr(as_written, field.name))
            shoes = None if house is None else _shoes_of(house)
            if shoes is not None:
                arm.shoes = SHOES_TO_PB[shoes]
        return as_written

    def options_from_pb(self, options: cards_pb2.RuleSet, house: RuleSet) -> RuleSet:
        given_options = options
        options, conflict = _with_variant_options(options)
        default = indian_rules(house)

        played = replace(
            default,
            first_drop_points=given(options, "first_drop_points", default.first_drop_points),
            middle_drop_points=given(options, "middle_drop_points", default.middle_drop_points),
            wrong_declare_points=given(
                options, "wrong_declare_points", default.wrong_declare_points
            ),
            points_cap=options.max_points or None,
            meld_options=replace(
                default.meld_options,
                jokers_only_group_is_sequence=given(
                    options,
                    "jokers_only_group_is_impure_sequence",
                    default.meld_options.jokers_only_group_is_sequence,
                ),
            ),
            no_discard_of_card_taken_from_pile=given(
                options,
                "card_taken_from_discard_cannot_be_discarded",
                default.no_discard_of_card_taken_from_pile,
            ),
        )
        rules = _with_shoes(given_options, replace(house, options=played))
        if conflict:
            raise RuleSetError(
                f"rule_set.indian_points.{conflict}",
                f"equal to rule_set.{conflict} when both are set",
                "a different value",
            )
        return rules

    def options_to_pb(self, rules: RuleSet, out: cards_pb2.RuleSet) -> None:
        played = indian_rules(rules)
        given = indian_pb2.IndianPointsOptions(
            max_points=played.points_cap or 0,
            first_drop_points=played.first_drop_points,
            middle_drop_points=played.middle_drop_points,
            wrong_declare_points=played.wrong_declare_points,
            jokers_only_group_is_impure_sequence=played.meld_options.jokers_only_group_is_sequence,
            card_taken_from_discard_cannot_be_discarded=played.no_discard_of_card_taken_from_pile,
        )
        shoes = _shoes_of(rules)
        if shoes is not None:
            given.shoes = SHOES_TO_PB[shoes]
        out.indian_points.CopyFrom(given)
        for field in _FLAT_FIELDS:
            setattr(out, field.name, getattr(given, field.name))

    # -- events --------------------------------------------------------------------------------

    def event_to_pb(self, event: Event, ctx: HandContext) -> Message | None:
        shoe, hand_id = ctx.shoe, ctx.hand_id
        if isinstance(event, indian.PlayerDropped):
            return ipb.PlayerDropped(
                hand_id=hand_id,
                seat=event.seat,
                turn_no=event.turn_no,
                kind=DROP_KIND_TO_PB[event.kind],
                points=event.points,
            )
        if isinstance(event, indian.Declared):
            return ipb.Declared(
                hand_id=hand_id,
                seat=event.seat,
                turn_no=event.turn_no,
                face_down=card_to_pb(event.face_down, shoe),
                shown=cards_to_pb(event.shown, shoe),
            )
        if isinstance(event, indian.DeclarationRejected):
            return ipb.DeclarationRejected(
                hand_id=hand_id,
                seat=event.seat,
                turn_no=event.turn_no,
                face_down=card_to_pb(event.face_down, shoe),
                shown=cards_to_pb(event.shown, shoe),
                points=event.points,
                reason=_REJECTED_REASON,
            )
        return None

    def event_from_pb(self, payload: Message, ctx: HandContext) -> tuple[Event, ...]:
        shoe = ctx.shoe
        if isinstance(payload, ipb.PlayerDropped):
            if payload.kind not in _DROP_KIND_BACK:
                raise StreamPayloadError(f"drop kind {payload.kind} is not known")
            return (
                indian.PlayerDropped(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    kind=_DROP_KIND_BACK[payload.kind],
                    points=payload.points,
                ),
            )
        if isinstance(payload, ipb.Declared):
            return (
                indian.Declared(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    face_down=card_from_pb(payload.face_down, shoe),
                    shown=cards_from_pb(payload.shown, shoe),
                ),
            )
        if isinstance(payload, ipb.DeclarationRejected):
            return (
                indian.DeclarationRejected(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    face_down=card_from_pb(payload.face_down, shoe),
                    shown=cards_from_pb(payload.shown, shoe),
                    points=payload.points,
                ),
            )
        raise StreamPayloadError(f"{type(payload).DESCRIPTOR.full_name} is not an Indian event")

    def view_to_pb(self, view: object, shoe: Shoe) -> Message | None:
        return None  # no variant part in its view

    def metric(self, payload: Message) -> tuple[str, str] | None:
        if isinstance(payload, ipb.Declared):
            return ("declares", "valid")
        if isinstance(payload, ipb.DeclarationRejected):
            return ("declares", "wrong")
        if isinstance(payload, ipb.PlayerDropped) and payload.kind in _DROP_KIND_BACK:
            return ("drops", _DROP_KIND_BACK[payload.kind].value)
        return None

    # -- commands ------------------------------------------------------------------------------

    def command(self, message: Message, seat: int, turn_no: int, at_ms: int, shoe: Shoe) -> Command:
        if isinstance(message, ipb.Declare):
            if not message.HasField("face_down"):
                raise StreamPayloadError("a Declare names the card laid face down (face_down)")
            card = card_from_pb(message.face_down, shoe)
            return Declare(seat=seat, turn_no=turn_no, face_down=card, at_ms=at_ms)
        if isinstance(message, ipb.Drop):
            return Drop(seat=seat, turn_no=turn_no, at_ms=at_ms)
        raise StreamPayloadError(f"{type(message).DESCRIPTOR.full_name} is not an Indian command")

    def command_to_pb(self, command: Command, shoe: Shoe) -> Message | None:
        if isinstance(command, Declare):
            return ipb.Declare(face_down=card_to_pb(command.face_down, shoe))
        if isinstance(command, Drop):
            return ipb.Drop()
        return None

    def replay_command(self, event: Event, at_ms: int) -> Command | None:
        if isinstance(event, indian.Declared | indian.DeclarationRejected):
            return Declare(
                seat=event.seat, turn_no=event.turn_no, face_down=event.face_down, at_ms=at_ms
            )
        if isinstance(event, indian.PlayerDropped):
            if event.kind is indian.DropKind.LEAVE:
                return LeaveHand(seat=event.seat, at_ms=at_ms)
            if event.kind is indian.DropKind.TIMEOUT:
                return None
            return Drop(seat=event.seat, turn_no=event.turn_no, at_ms=at_ms)
        return None

    def answer(self, message: Message, payloads: Sequence[Message]) -> Message | None:
        if isinstance(message, ipb.Declare):
            for p in payloads:
                if isinstance(p, ipb.DeclarationRejected):
                    return ipb.DeclareAnswer(valid=False, points=p.points, reason=p.reason)
            ended = next((p for p in payloads if isinstance(p, table_pb.HandEnded)), None)
            mine = None if ended is None else _winner_result(ended)
            return ipb.DeclareAnswer(
                valid=True, arrangement=mine.arrangement if mine is not None else None
            )
        if isinstance(message, ipb.Drop):
            dropped = next((p for p in payloads if isinstance(p, ipb.PlayerDropped)), None)
            if dropped is None:
                return ipb.DropAnswer()
            return ipb.DropAnswer(kind=dropped.kind, points=dropped.points)
        return None

    # -- bots ----------------------------------------------------------------------------------

    def unpack_answer(self, packed: any_pb2.Any) -> Message | None:
        for cls in (ipb.DeclareAnswer, ipb.DropAnswer):
            if packed.Is(cls.DESCRIPTOR):
                answer = cls()
                packed.Unpack(answer)
                return answer
        return None

    def accepted(self, answer: Message) -> bool:
        return not isinstance(answer, ipb.DeclareAnswer) or answer.valid

    # -- the older per-command RPCs --------------------------------------------------------------

    def request_command(self, request: Message) -> Message | None:
        """The command message of an older RPC's request (``DeclareRequest``, ``DropRequest``);
        None for another request."""
        if isinstance(request, api.DeclareRequest):
            command = ipb.Declare(groups=request.groups)
            if request.HasField("face_down"):
                command.face_down.CopyFrom(request.face_down)
            return command
        if isinstance(request, api.DropRequest):
            return ipb.Drop()
        return None

    def request_answer(self, request: Message, answer: Message | None) -> Message | None:
        """The older RPC's response for ``answer`` (:meth:`answer`); None for another request."""
        if isinstance(request, api.DeclareRequest) and isinstance(answer, ipb.DeclareAnswer):
            return api.DeclareResponse(
                valid=answer.valid,
                arrangement=answer.arrangement if answer.HasField("arrangement") else None,
                points=answer.points,
                reason=answer.reason,
            )
        if isinstance(request, api.DropRequest) and isinstance(answer, ipb.DropAnswer):
            return api.DropResponse(kind=answer.kind, points=answer.points)  # type: ignore[arg-type]
        return None


def _winner_result(ended: table_pb.HandEnded) -> table_pb.SeatResult | None:
    return next((r for r in ended.results if r.seat == ended.winner_seat), None)


#: The Indian wire (``rummy_game.variant_wires`` registers it).
INDIAN_WIRE = IndianWire()


def _pool(
    target: int, entry: int, *, rejoin: bool = False, split: bool = False
) -> match_pb.MatchOptions:
    pool = match_pb.PoolOptions(
        target=target, entry_fee_hundredths=entry, rejoin=rejoin, split=split
    )
    return match_pb.MatchOptions(pool=pool)


#: ``rummy demo --game``: one table of each Indian match format with modest entry fees
#: (``docs/rules/formats.md``): a 101 pool with rejoin (3 seats: a rejoin needs two others still
#: in), a 201 pool with split (its bots ask to split once two are left), a 2-deal deals table and
#: a best of 3.
DEMO_GAMES = (
    DemoGame(
        "pool101", (DemoTable("pool101-3", 3, 0, 1000, match=_pool(101, 10_00, rejoin=True)),)
    ),
    DemoGame(
        "pool201",
        (
            DemoTable(
                "pool201-3", 3, 0, 1000, match=_pool(201, 10_00, split=True), split_at_seats=2
            ),
        ),
    ),
    DemoGame(
        "deals",
        (
            DemoTable(
                "deals2-3",
                3,
                0,
                500,
                match=match_pb.MatchOptions(
                    deals=match_pb.DealsOptions(deals=2, entry_fee_hundredths=5_00)
                ),
            ),
        ),
    ),
    DemoGame(
        "best-of",
        (
            DemoTable(
                "bestof3-2",
                2,
                0,
                500,
                match=match_pb.MatchOptions(
                    best_of=match_pb.BestOfOptions(deals=3, entry_fee_hundredths=5_00)
                ),
            ),
        ),
    ),
)

INDIAN_BUNDLE = VariantBundle(
    variant=INDIAN_POINTS,
    wire=INDIAN_WIRE,
    payload_modules=(ipb,),
    payload_aliases=tuple(upcast.TYPE_ALIASES.items()),
    codec_classes=(
        IndianPointsRules,
        Declare,
        Drop,
        HandState,
        indian.PlayerDropped,
        indian.Declared,
        indian.DeclarationRejected,
    ),
    verifier_script="indian-score.js",
    docs=("docs/rules/declaration.md", "docs/rules/scoring.md", "docs/rules/formats.md"),
    outcomes=(
        Outcome("won", "won", "W"),
        Outcome("counted", "counted", ""),
        Outcome("first_drop", "first drop", "fd"),
        Outcome("middle_drop", "middle drop", "md"),
        Outcome("timed_out", "timeout auto-drop", "to", notable=True),
        Outcome("wrong_declare", "wrong declare", "wd", notable=True),
        Outcome("left", "left", "lv"),
    ),
    counters=(
        CounterSeries("declares", "Declares", "result", ("valid", "wrong")),
        CounterSeries("drops", "Drops", "kind", tuple(kind.value for kind in DROP_KIND_TO_PB)),
    ),
    equivalent_results=equivalent_results,
    # a declare's grouping (Declare, DeclareRequest): at most 13 groups of at most 14 cards
    field_limits=(("groups", 13), ("cards", 14)),
    cli_cases=INDIAN_CASES,
    demo_games=DEMO_GAMES,
)
"""Indian points as one plug-in (entry point ``rummy.variants:indian-points``)."""
