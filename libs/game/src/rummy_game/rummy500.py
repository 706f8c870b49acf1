"""Rummy 500's wire (variant ``rummy500``): its options, events, commands, answers and view
(protobuf package ``rummy.rummy500.v1``) <-> ``rummy_rules.rummy500``.

Its bundle, :data:`RUMMY500_BUNDLE` (rules, wire, payloads, codec classes, rules cases, docs), is
the entry point ``rummy500`` of the group ``rummy.variants`` (``libs/game``'s ``pyproject.toml``):
hosts find it there (``rummy_game.bundle``); no host imports this module.

- Options: ``rummy.rummy500.v1.Rummy500Options`` packed in
  ``RuleSet.variant_options.other_variant`` (left out: every ace 15); the hand size is the
  generic ``hand_size``.
- Events: ``Rummy500PileTaken``, ``Rummy500Melded``, ``Rummy500LaidOff``, ``Rummy500SeatLeft``,
  ``Rummy500RoundEnded`` (draws from the stock, discards, timeouts, turns and the hand's end are
  the generic ``rummy.table.v1`` events; each seat's signed round score is
  ``SeatResult.score``).
- The view: ``rummy.rummy500.v1.Rummy500View`` in ``PlayerView.variant_view`` (every meld with
  its owner and lay-offs, each seat's table points).
- Commands (``PlayRequest.command``): ``TakeFromPile``, ``Meld``, ``LayOff``, ``GoOut``; each
  answered by ``Rummy500Answer``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from google.protobuf import any_pb2
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy.rummy500.v1 import events_pb2 as rpb
from rummy.rummy500.v1 import rules_pb2 as rules_pb
from rummy.rummy500.v1 import view_pb2 as view_pb
from rummy_rules.commands import Command, DrawFromStock
from rummy_rules.deck import Shoe
from rummy_rules.events import Event
from rummy_rules.rules import RuleSet
from rummy_rules.rummy500 import play
from rummy_rules.rummy500.cases import RUMMY500_CASES
from rummy_rules.rummy500.melds import Rummy500Layoff, TableMeld
from rummy_rules.rummy500.rules import RUMMY500_VARIANT, Rummy500Options, rummy500_options
from rummy_rules.rummy500.variant import RUMMY500, Rummy500State

from .bundle import CounterSeries, DemoGame, DemoTable, Outcome, VariantBundle
from .variant_wire import (
    HandContext,
    OwnAnswers,
    StreamPayloadError,
    card_from_pb,
    card_to_pb,
    cards_from_pb,
    cards_to_pb,
    faces,
    given,
    packed_options,
)


def _score_to_pb(s: play.Rummy500SeatScore, shoe: Shoe) -> rpb.Rummy500SeatScore:
    return rpb.Rummy500SeatScore(
        seat=s.seat,
        table_points=s.table_points,
        hand_points=s.hand_points,
        score=s.score,
        cards=cards_to_pb(s.cards, shoe),
    )


def _ended_to_pb(e: play.Rummy500RoundEnded, hand_id: str, shoe: Shoe) -> rpb.Rummy500RoundEnded:
    out = rpb.Rummy500RoundEnded(
        hand_id=hand_id,
        turn_no=e.turn_no,
        reason=e.reason,
        scores=[_score_to_pb(s, shoe) for s in e.scores],
    )
    if e.out_seat is not None:
        out.out_seat = e.out_seat
    return out


def _ended_from_pb(p: rpb.Rummy500RoundEnded, shoe: Shoe) -> play.Rummy500RoundEnded:
    return play.Rummy500RoundEnded(
        turn_no=p.turn_no,
        reason=p.reason,
        out_seat=p.out_seat if p.HasField("out_seat") else None,
        scores=tuple(
            play.Rummy500SeatScore(
                s.seat, s.table_points, s.hand_points, s.score, cards_from_pb(s.cards, shoe)
            )
            for s in p.scores
        ),
    )


def _meld_view(m: TableMeld, shoe: Shoe) -> view_pb.Rummy500MeldView:
    return view_pb.Rummy500MeldView(
        meld_id=m.meld_id,
        owner=m.owner,
        kind=m.kind,
        cards=cards_to_pb(m.cards, shoe),
        layoffs=[
            view_pb.Rummy500LayoffView(card=card_to_pb(lay.card, shoe), seat=lay.seat)
            for lay in m.layoffs
        ],
    )


def rummy500_view_to_pb(view: play.Rummy500View, shoe: Shoe) -> view_pb.Rummy500View:
    """``rummy.rummy500.v1.Rummy500View`` of a seat's round view (public: melds, lay-offs,
    table points; the seat's cards and the pile are the generic view's)."""
    out = view_pb.Rummy500View(
        melds=[_meld_view(m, shoe) for m in view.melds],
        seats=[
            view_pb.Rummy500SeatView(seat=s.seat, table_points=s.table_points, left=s.left)
            for s in view.seats
        ],
        low_ace_one=view.low_ace_one,
    )
    if view.ending is not None:
        out.ending.CopyFrom(_ended_to_pb(view.ending, "", shoe))
    return out


def rummy500_view_lines(packed: any_pb2.Any) -> list[str]:
    """``rummy watch``'s lines of a packed ``rummy.rummy500.v1.Rummy500View``: each meld on the
    table (its id, owner, kind, cards and lay-offs with who laid them), each seat's table points
    (``lv``: it left), the round's end (why, who went out, each seat's score); no hand's cards.
    ``[]`` for another message."""
    view = view_pb.Rummy500View()
    if not packed.Unpack(view):
        return []
    lines = []
    for m in view.melds:
        laid = " ".join(f"{x.card.face}(s{x.seat})" for x in m.layoffs)
        lines.append(
            f"meld {m.meld_id} s{m.owner} {m.kind} [{faces(m.cards)}]"
            + (f" laid off: {laid}" if laid else "")
        )
    points = " ".join(f"s{x.seat}:{x.table_points}{'lv' if x.left else ''}" for x in view.seats)
    lines.append(f"table points [{points}]")
    if view.HasField("ending"):
        e = view.ending
        who = f" by s{e.out_seat}" if e.HasField("out_seat") else ""
        scores = " ".join(f"s{x.seat}:{x.score:+d}" for x in e.scores)
        lines.append(f"round over ({e.reason}{who}): scores [{scores}]")
    return lines


class Rummy500Wire(OwnAnswers):
    """The Rummy 500 wire (see the module)."""

    variant = RUMMY500_VARIANT
    answer_type: type[Message] = rpb.Rummy500Answer
    event_types: tuple[type[Message], ...] = (
        rpb.Rummy500PileTaken,
        rpb.Rummy500Melded,
        rpb.Rummy500LaidOff,
        rpb.Rummy500TookNothing,
        rpb.Rummy500SeatLeft,
        rpb.Rummy500RoundEnded,
    )
    command_types: tuple[type[Message], ...] = (rpb.TakeFromPile, rpb.Meld, rpb.LayOff, rpb.GoOut)
    option_names: Mapping[str, str] = {
        "low_ace_one": "rule_set.other_variant.low_ace_one",
        "seats": "seats",
        "hand_size": "rule_set.hand_size",
    }

    def upcast_options(
        self, options: cards_pb2.RuleSet, house: RuleSet | None
    ) -> cards_pb2.RuleSet:
        return options  # every Rummy 500 record is of today's shape

    def options_from_pb(self, options: cards_pb2.RuleSet, house: RuleSet) -> RuleSet:
        default = rummy500_options(house)
        sent = packed_options(options, rules_pb.Rummy500Options())
        if sent is None:
            return house
        chosen = Rummy500Options(low_ace_one=given(sent, "low_ace_one", default.low_ace_one))
        return replace(house, options=chosen)

    def options_to_pb(self, rules: RuleSet, out: cards_pb2.RuleSet) -> None:
        out.other_variant.Pack(
            rules_pb.Rummy500Options(low_ace_one=rummy500_options(rules).low_ace_one)
        )

    def event_to_pb(self, event: Event, ctx: HandContext) -> Message | None:
        shoe, hand_id = ctx.shoe, ctx.hand_id
        if isinstance(event, play.Rummy500PileTaken):
            out = rpb.Rummy500PileTaken(
                hand_id=hand_id,
                seat=event.seat,
                turn_no=event.turn_no,
                cards=cards_to_pb(event.cards, shoe),
                meld=cards_to_pb(event.meld, shoe),
            )
            if event.lay_off_on is not None:
                out.lay_off_on = event.lay_off_on
            return out
        if isinstance(event, play.Rummy500Melded):
            return rpb.Rummy500Melded(
                hand_id=hand_id,
                seat=event.seat,
                turn_no=event.turn_no,
                meld_id=event.meld_id,
                kind=event.kind,
                cards=cards_to_pb(event.cards, shoe),
                from_pile=event.from_pile,
            )
        if isinstance(event, play.Rummy500LaidOff):
            return rpb.Rummy500LaidOff(
                hand_id=hand_id,
                seat=event.seat,
                turn_no=event.turn_no,
                card=card_to_pb(event.card, shoe),
                meld_id=event.meld_id,
                from_pile=event.from_pile,
            )
        if isinstance(event, play.Rummy500TookNothing):
            return rpb.Rummy500TookNothing(hand_id=hand_id, seat=event.seat, turn_no=event.turn_no)
        if isinstance(event, play.Rummy500SeatLeft):
            return rpb.Rummy500SeatLeft(hand_id=hand_id, seat=event.seat, turn_no=event.turn_no)
        if isinstance(event, play.Rummy500RoundEnded):
            return _ended_to_pb(event, hand_id, shoe)
        return None

    def event_from_pb(self, payload: Message, ctx: HandContext) -> tuple[Event, ...]:
        """The rules event of a Rummy 500 payload. Raises StreamPayloadError."""
        shoe = ctx.shoe
        if isinstance(payload, rpb.Rummy500PileTaken):
            return (
                play.Rummy500PileTaken(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    cards=cards_from_pb(payload.cards, shoe),
                    meld=cards_from_pb(payload.meld, shoe),
                    lay_off_on=payload.lay_off_on if payload.HasField("lay_off_on") else None,
                ),
            )
        if isinstance(payload, rpb.Rummy500Melded):
            return (
                play.Rummy500Melded(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    meld_id=payload.meld_id,
                    kind=payload.kind,
                    cards=cards_from_pb(payload.cards, shoe),
                    from_pile=payload.from_pile,
                ),
            )
        if isinstance(payload, rpb.Rummy500LaidOff):
            return (
                play.Rummy500LaidOff(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    card=card_from_pb(payload.card, shoe),
                    meld_id=payload.meld_id,
                    from_pile=payload.from_pile,
                ),
            )
        if isinstance(payload, rpb.Rummy500TookNothing):
            return (play.Rummy500TookNothing(seat=payload.seat, turn_no=payload.turn_no),)
        if isinstance(payload, rpb.Rummy500SeatLeft):
            return (play.Rummy500SeatLeft(seat=payload.seat, turn_no=payload.turn_no),)
        if isinstance(payload, rpb.Rummy500RoundEnded):
            return (_ended_from_pb(payload, shoe),)
        raise StreamPayloadError(f"{type(payload).DESCRIPTOR.full_name} is not a Rummy 500 event")

    def view_to_pb(self, view: object, shoe: Shoe) -> Message | None:
        return rummy500_view_to_pb(view, shoe) if isinstance(view, play.Rummy500View) else None

    def metric(self, payload: Message) -> tuple[str, str] | None:
        if isinstance(payload, rpb.Rummy500RoundEnded):
            return ("rummy500_rounds", payload.reason)
        return None

    def command(self, message: Message, seat: int, turn_no: int, at_ms: int, shoe: Shoe) -> Command:
        if isinstance(message, rpb.TakeFromPile):
            return play.Rummy500TakeFromPile(
                seat=seat,
                turn_no=turn_no,
                depth=message.depth,
                meld=cards_from_pb(message.meld, shoe),
                lay_off_on=message.lay_off_on if message.HasField("lay_off_on") else None,
                at_ms=at_ms,
            )
        if isinstance(message, rpb.Meld):
            return play.Rummy500Meld(
                seat=seat,
                turn_no=turn_no,
                groups=tuple(cards_from_pb(g.cards, shoe) for g in message.groups),
                at_ms=at_ms,
            )
        if isinstance(message, rpb.LayOff):
            if not message.HasField("card"):
                raise StreamPayloadError("a lay-off names its card")
            return play.Rummy500LayOff(
                seat=seat,
                turn_no=turn_no,
                card=card_from_pb(message.card, shoe),
                meld_id=message.meld_id,
                at_ms=at_ms,
            )
        if isinstance(message, rpb.GoOut):
            return play.Rummy500GoOut(
                seat=seat,
                turn_no=turn_no,
                groups=tuple(cards_from_pb(g.cards, shoe) for g in message.groups),
                layoffs=tuple(
                    play.Rummy500LayoffTarget(
                        card=card_from_pb(lay.card, shoe), meld_id=lay.meld_id
                    )
                    for lay in message.layoffs
                ),
                at_ms=at_ms,
            )
        raise StreamPayloadError(f"{type(message).DESCRIPTOR.full_name} is not a Rummy 500 command")

    def command_to_pb(self, command: Command, shoe: Shoe) -> Message | None:
        if isinstance(command, play.Rummy500TakeFromPile):
            out = rpb.TakeFromPile(depth=command.depth, meld=cards_to_pb(command.meld, shoe))
            if command.lay_off_on is not None:
                out.lay_off_on = command.lay_off_on
            return out
        if isinstance(command, play.Rummy500Meld):
            return rpb.Meld(
                groups=[cards_pb2.CardGroup(cards=cards_to_pb(g, shoe)) for g in command.groups]
            )
        if isinstance(command, play.Rummy500LayOff):
            return rpb.LayOff(card=card_to_pb(command.card, shoe), meld_id=command.meld_id)
        if isinstance(command, play.Rummy500GoOut):
            return rpb.GoOut(
                groups=[cards_pb2.CardGroup(cards=cards_to_pb(g, shoe)) for g in command.groups],
                layoffs=[
                    rpb.LayoffTarget(card=card_to_pb(lay.card, shoe), meld_id=lay.meld_id)
                    for lay in command.layoffs
                ],
            )
        return None

    def replay_command(self, event: Event, at_ms: int) -> Command | None:
        """A draw from the empty stock answers ``Rummy500TookNothing`` (unless a timeout made
        it: replay gives it by the TurnTimedOut before it); a dig answers
        ``Rummy500PileTaken`` (its meld or lay-off recorded with it; the Melded / LaidOff
        ``from_pile`` after it is derived); any other meld ``Rummy500Meld`` of its one group and
        lay-off ``Rummy500LayOff`` (a GoOut or a several-group Meld replays as those, to the
        same events)."""
        if isinstance(event, play.Rummy500TookNothing):
            return DrawFromStock(seat=event.seat, turn_no=event.turn_no, at_ms=at_ms)
        if isinstance(event, play.Rummy500PileTaken):
            return play.Rummy500TakeFromPile(
                seat=event.seat,
                turn_no=event.turn_no,
                depth=len(event.cards),
                meld=event.meld,
                lay_off_on=event.lay_off_on,
                at_ms=at_ms,
            )
        if isinstance(event, play.Rummy500Melded) and not event.from_pile:
            return play.Rummy500Meld(
                seat=event.seat, turn_no=event.turn_no, groups=(event.cards,), at_ms=at_ms
            )
        if isinstance(event, play.Rummy500LaidOff) and not event.from_pile:
            return play.Rummy500LayOff(
                seat=event.seat,
                turn_no=event.turn_no,
                card=event.card,
                meld_id=event.meld_id,
                at_ms=at_ms,
            )
        return None

    def answer(self, message: Message, payloads: Sequence[Message]) -> Message | None:
        if isinstance(message, self.command_types):
            return rpb.Rummy500Answer(
                meld_ids=[p.meld_id for p in payloads if isinstance(p, rpb.Rummy500Melded)],
                round_ended=any(isinstance(p, rpb.Rummy500RoundEnded) for p in payloads),
            )
        return None


#: The Rummy 500 wire (its bundle registers it).
RUMMY500_WIRE = Rummy500Wire()

#: ``rummy demo --game 500``: a 4-seat and a 6-seat match to 500 (one deck, two decks) at 0.05 a
#: point, a loss capped at 500 points (25.00 reserved), commission 5% of the winner's take.
_RACE_TO_500 = match_pb.MatchOptions(
    race_to=match_pb.RaceToOptions(target=500, point_value_hundredths=5, max_game_points=500)
)
DEMO_GAMES = (
    DemoGame(
        "500",
        (
            DemoTable("r500-4", 4, 0, 500, match=_RACE_TO_500),
            DemoTable("r500-6", 6, 0, 500, match=_RACE_TO_500),
        ),
    ),
)

RUMMY500_BUNDLE = VariantBundle(
    variant=RUMMY500,
    wire=RUMMY500_WIRE,
    payload_modules=(rpb,),
    codec_classes=(
        Rummy500Options,
        Rummy500State,
        play.Rummy500Play,
        TableMeld,
        Rummy500Layoff,
        play.Rummy500TakeFromPile,
        play.Rummy500Meld,
        play.Rummy500LayOff,
        play.Rummy500LayoffTarget,
        play.Rummy500GoOut,
        play.Rummy500PileTaken,
        play.Rummy500Melded,
        play.Rummy500LaidOff,
        play.Rummy500TookNothing,
        play.Rummy500SeatLeft,
        play.Rummy500SeatScore,
        play.Rummy500RoundEnded,
    ),
    verifier_script="rummy500.js",
    docs=("docs/rules/rummy500.md", "docs/rules/formats.md"),
    outcomes=(
        Outcome("went_out", "went out", "O"),
        Outcome("scored", "scored", ""),
        Outcome("left", "left", "lv"),
    ),
    counters=(
        CounterSeries(
            "rummy500_rounds",
            "Rummy 500 rounds by how they ended",
            "reason",
            ("went_out", "stock_empty", "players_left"),
        ),
    ),
    field_limits=(("groups", 8), ("meld", 13), ("cards", 13), ("layoffs", 13)),
    cli_cases=RUMMY500_CASES,
    demo_games=DEMO_GAMES,
    view_lines=rummy500_view_lines,
)
"""Rummy 500 as one plug-in (entry point ``rummy.variants:rummy500``)."""
