"""The gin family's wire (variant ``gin``: Gin Rummy, Oklahoma Gin, Hollywood Gin): its options,
events, commands and answers (protobuf package ``rummy.gin.v1``) <-> ``rummy_rules.gin``.

Its bundle, :data:`GIN_BUNDLE` (rules, wire, payloads, codec classes, rules cases, docs), is the
entry point ``gin`` of the group ``rummy.variants`` (``libs/game``'s ``pyproject.toml``): hosts
find it there (``rummy_game.bundle``); no host imports this module.

- Options: ``rummy.gin.v1.GinOptions`` packed in ``RuleSet.variant_options.other_variant`` (an
  option left out keeps the house rule: Gin Rummy, big gin on, the missed-turns forfeit on). A
  rule set with ``oklahoma`` is ``oklahoma-gin/1``, else ``gin-rummy/1``.
- Events: ``GinUpcardPassed``, ``GinKnocked``, ``GinHandScored``, ``GinWallReached``,
  ``GinSeatForfeited`` (draws, discards, timeouts, turns and the hand's end are the generic
  ``rummy.table.v1`` events).
- The view: ``rummy.gin.v1.GinView`` in ``PlayerView.variant_view`` (the knock limit, the
  doubling, the knock's public melds and deadwood, the score with the lay-offs).
- Commands (``PlayRequest.command``): ``PassUpcard``, ``Knock`` (face-down card, optional named
  melds), ``Gin``, ``BigGin``; each answered by ``GinAnswer``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from google.protobuf import any_pb2
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gpb
from rummy.gin.v1 import rules_pb2 as gin_rules_pb
from rummy.gin.v1 import view_pb2 as gin_view_pb
from rummy.match.v1 import match_pb2 as match_pb
from rummy_rules.commands import Command
from rummy_rules.deck import Shoe
from rummy_rules.events import Event, ScoredGroup
from rummy_rules.gin import hand
from rummy_rules.gin.cases import GIN_CASES
from rummy_rules.gin.rules import GIN_VARIANT, GinOptions, gin_options, gin_rule_set
from rummy_rules.gin.variant import GIN, GinState
from rummy_rules.rules import RuleSet

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


def _melds_to_pb(groups: Sequence[ScoredGroup], shoe: Shoe) -> list[cards_pb2.Meld]:
    return [cards_pb2.Meld(kind=g.kind, cards=cards_to_pb(g.cards, shoe)) for g in groups]


def _melds_from_pb(melds: object, shoe: Shoe) -> tuple[ScoredGroup, ...]:
    return tuple(
        ScoredGroup(m.kind, cards_from_pb(m.cards, shoe))
        for m in melds  # type: ignore[attr-defined]
    )


def _knocked_to_pb(event: hand.GinKnocked, hand_id: str, shoe: Shoe) -> gpb.GinKnocked:
    out = gpb.GinKnocked(
        hand_id=hand_id,
        seat=event.seat,
        turn_no=event.turn_no,
        outcome=event.outcome,
        melds=_melds_to_pb(event.melds, shoe),
        deadwood_cards=cards_to_pb(event.deadwood_cards, shoe),
        deadwood=event.deadwood,
        melds_named=event.melds_named,
    )
    if event.face_down is not None:
        out.face_down.CopyFrom(card_to_pb(event.face_down, shoe))
    return out


def _scored_to_pb(event: hand.GinHandScored, hand_id: str, shoe: Shoe) -> gpb.GinHandScored:
    return gpb.GinHandScored(
        hand_id=hand_id,
        outcome=event.outcome,
        winner_seat=event.winner_seat,
        points=event.points,
        knocker_seat=event.knocker_seat,
        knocker_deadwood=event.knocker_deadwood,
        defender_seat=event.defender_seat,
        defender_cards=cards_to_pb(event.defender_cards, shoe),
        layoffs=[
            gpb.GinLayoff(card=card_to_pb(lay.card, shoe), meld=lay.meld) for lay in event.layoffs
        ],
        defender_melds=_melds_to_pb(event.defender_melds, shoe),
        defender_deadwood_cards=cards_to_pb(event.defender_deadwood_cards, shoe),
        defender_deadwood=event.defender_deadwood,
    )


def gin_view_to_pb(view: hand.GinView, shoe: Shoe) -> gin_view_pb.GinView:
    """``rummy.gin.v1.GinView`` of a seat's gin view (``rummy_rules.gin.hand.view``, already
    held to the seat's privacy: the face-down knock card only the knocker's until the score)."""
    out = gin_view_pb.GinView(
        knock_limit=view.knock_limit,
        doubled=view.doubled,
        first_turn_offer=view.may_take_upcard,
        other_card_count=view.other_card_count,
        walled=isinstance(view.ending, hand.GinWallReached),
        forfeited=isinstance(view.ending, hand.GinSeatForfeited),
    )
    if view.pile_taken is not None:
        out.pile_taken.CopyFrom(card_to_pb(view.pile_taken, shoe))
    if view.knocked is not None:
        out.knock.CopyFrom(_knocked_to_pb(view.knocked, view.hand_id, shoe))
    if isinstance(view.ending, hand.GinHandScored):
        out.score.CopyFrom(_scored_to_pb(view.ending, view.hand_id, shoe))
    return out


def gin_view_lines(packed: any_pb2.Any) -> list[str]:
    """``rummy watch``'s lines of a packed ``rummy.gin.v1.GinView`` (a spectator's: the knock
    limit, the upcard offer, a card taken from the pile, the knock's melds and deadwood as laid on
    the table, the score or the wall); no hand's cards, not even the scored defender's.
    ``[]`` for another message."""
    view = gin_view_pb.GinView()
    if not packed.Unpack(view):
        return []
    lines = [
        f"knock limit {view.knock_limit}" + (", doubled (a spade upcard)" if view.doubled else "")
    ]
    if view.first_turn_offer:
        lines.append("the upcard is on offer")
    if view.HasField("pile_taken"):
        lines.append(f"taken from the pile this turn: {view.pile_taken.face}")
    if view.HasField("knock"):
        k = view.knock
        melds = " ".join(f"[{faces(m.cards)}]" for m in k.melds) or "-"
        lines.append(
            f"s{k.seat} knocked ({k.outcome}): melds {melds}, deadwood {k.deadwood}"
            f" [{faces(k.deadwood_cards)}]"
        )
    if view.HasField("score"):
        sc = view.score
        lines.append(
            f"scored: {sc.outcome}, s{sc.winner_seat} +{sc.points} (knocker s{sc.knocker_seat} "
            f"deadwood {sc.knocker_deadwood}, defender s{sc.defender_seat} deadwood "
            f"{sc.defender_deadwood}, {len(sc.layoffs)} laid off)"
        )
    if view.walled:
        lines.append("the wall: a draw (the same dealer deals again)")
    if view.forfeited:
        lines.append("forfeited on missed turns")
    return lines


class GinWire(OwnAnswers):
    """The gin wire (see the module)."""

    variant = GIN_VARIANT
    answer_type: type[Message] = gpb.GinAnswer
    event_types: tuple[type[Message], ...] = (
        gpb.GinUpcardPassed,
        gpb.GinKnocked,
        gpb.GinHandScored,
        gpb.GinWallReached,
        gpb.GinSeatForfeited,
    )
    command_types: tuple[type[Message], ...] = (gpb.PassUpcard, gpb.Knock, gpb.Gin, gpb.BigGin)
    option_names: Mapping[str, str] = {
        "oklahoma": "rule_set.other_variant.oklahoma",
        "big_gin": "rule_set.other_variant.big_gin",
        "missed_turns_forfeit": "rule_set.other_variant.missed_turns_forfeit",
        "seats": "seats",
    }

    # -- options -------------------------------------------------------------------------------

    def upcast_options(
        self, options: cards_pb2.RuleSet, house: RuleSet | None
    ) -> cards_pb2.RuleSet:
        return options  # every gin record is of today's shape

    def options_from_pb(self, options: cards_pb2.RuleSet, house: RuleSet) -> RuleSet:
        default = gin_options(house)
        sent = packed_options(options, gin_rules_pb.GinOptions())
        if sent is None:
            return house
        chosen = GinOptions(
            oklahoma=given(sent, "oklahoma", default.oklahoma),
            big_gin=given(sent, "big_gin", default.big_gin),
            missed_turns_forfeit=given(sent, "missed_turns_forfeit", default.missed_turns_forfeit),
        )
        named = gin_rule_set(oklahoma=chosen.oklahoma)
        return replace(house, name=named.name, options=chosen)

    def options_to_pb(self, rules: RuleSet, out: cards_pb2.RuleSet) -> None:
        played = gin_options(rules)
        out.other_variant.Pack(
            gin_rules_pb.GinOptions(
                oklahoma=played.oklahoma,
                big_gin=played.big_gin,
                missed_turns_forfeit=played.missed_turns_forfeit,
            )
        )

    # -- events --------------------------------------------------------------------------------

    def event_to_pb(self, event: Event, ctx: HandContext) -> Message | None:
        shoe, hand_id = ctx.shoe, ctx.hand_id
        if isinstance(event, hand.GinUpcardPassed):
            return gpb.GinUpcardPassed(hand_id=hand_id, seat=event.seat, turn_no=event.turn_no)
        if isinstance(event, hand.GinKnocked):
            return _knocked_to_pb(event, hand_id, shoe)
        if isinstance(event, hand.GinHandScored):
            return _scored_to_pb(event, hand_id, shoe)
        if isinstance(event, hand.GinWallReached):
            return gpb.GinWallReached(
                hand_id=hand_id,
                turn_no=event.turn_no,
                first_hand=cards_to_pb(event.hands[0], shoe),
                second_hand=cards_to_pb(event.hands[1], shoe),
            )
        if isinstance(event, hand.GinSeatForfeited):
            return gpb.GinSeatForfeited(
                hand_id=hand_id, seat=event.seat, turn_no=event.turn_no, misses=event.misses
            )
        return None

    def event_from_pb(self, payload: Message, ctx: HandContext) -> tuple[Event, ...]:
        """The rules event of a gin payload. Raises StreamPayloadError."""
        shoe = ctx.shoe
        if isinstance(payload, gpb.GinUpcardPassed):
            return (hand.GinUpcardPassed(seat=payload.seat, turn_no=payload.turn_no),)
        if isinstance(payload, gpb.GinKnocked):
            face_down = (
                card_from_pb(payload.face_down, shoe) if payload.HasField("face_down") else None
            )
            return (
                hand.GinKnocked(
                    seat=payload.seat,
                    turn_no=payload.turn_no,
                    outcome=payload.outcome,
                    face_down=face_down,
                    melds=_melds_from_pb(payload.melds, shoe),
                    deadwood_cards=cards_from_pb(payload.deadwood_cards, shoe),
                    deadwood=payload.deadwood,
                    melds_named=payload.melds_named,
                ),
            )
        if isinstance(payload, gpb.GinHandScored):
            return (
                hand.GinHandScored(
                    outcome=payload.outcome,
                    winner_seat=payload.winner_seat,
                    points=payload.points,
                    knocker_seat=payload.knocker_seat,
                    knocker_deadwood=payload.knocker_deadwood,
                    defender_seat=payload.defender_seat,
                    defender_cards=cards_from_pb(payload.defender_cards, shoe),
                    layoffs=tuple(
                        hand.GinLayoff(card=card_from_pb(lay.card, shoe), meld=lay.meld)
                        for lay in payload.layoffs
                    ),
                    defender_melds=_melds_from_pb(payload.defender_melds, shoe),
                    defender_deadwood_cards=cards_from_pb(payload.defender_deadwood_cards, shoe),
                    defender_deadwood=payload.defender_deadwood,
                ),
            )
        if isinstance(payload, gpb.GinWallReached):
            hands = (
                cards_from_pb(payload.first_hand, shoe),
                cards_from_pb(payload.second_hand, shoe),
            )
            return (hand.GinWallReached(turn_no=payload.turn_no, hands=hands),)
        if isinstance(payload, gpb.GinSeatForfeited):
            return (
                hand.GinSeatForfeited(
                    seat=payload.seat, turn_no=payload.turn_no, misses=payload.misses
                ),
            )
        raise StreamPayloadError(f"{type(payload).DESCRIPTOR.full_name} is not a gin event")

    def view_to_pb(self, view: object, shoe: Shoe) -> Message | None:
        """``rummy.gin.v1.GinView`` of the gin part of a seat's view (:func:`gin_view_to_pb`)."""
        return gin_view_to_pb(view, shoe) if isinstance(view, hand.GinView) else None

    def metric(self, payload: Message) -> tuple[str, str] | None:
        if isinstance(payload, gpb.GinHandScored):
            return ("gin_hands", payload.outcome)
        if isinstance(payload, gpb.GinWallReached):
            return ("gin_hands", "wall")
        return None

    # -- commands ------------------------------------------------------------------------------

    def command(self, message: Message, seat: int, turn_no: int, at_ms: int, shoe: Shoe) -> Command:
        if isinstance(message, gpb.PassUpcard):
            return hand.GinPassUpcard(seat=seat, turn_no=turn_no, at_ms=at_ms)
        if isinstance(message, gpb.BigGin):
            return hand.DeclareBigGin(seat=seat, turn_no=turn_no, at_ms=at_ms)
        if isinstance(message, gpb.Knock | gpb.Gin):
            if not message.HasField("face_down"):
                raise StreamPayloadError("a knock names the card laid face down (face_down)")
            card = card_from_pb(message.face_down, shoe)
            if isinstance(message, gpb.Gin):
                return hand.DeclareGin(seat=seat, turn_no=turn_no, face_down=card, at_ms=at_ms)
            melds = tuple(cards_from_pb(g.cards, shoe) for g in message.melds) or None
            return hand.GinKnock(
                seat=seat, turn_no=turn_no, face_down=card, melds=melds, at_ms=at_ms
            )
        raise StreamPayloadError(f"{type(message).DESCRIPTOR.full_name} is not a gin command")

    def command_to_pb(self, command: Command, shoe: Shoe) -> Message | None:
        if isinstance(command, hand.GinPassUpcard):
            return gpb.PassUpcard()
        if isinstance(command, hand.DeclareBigGin):
            return gpb.BigGin()
        if isinstance(command, hand.DeclareGin):
            return gpb.Gin(face_down=card_to_pb(command.face_down, shoe))
        if isinstance(command, hand.GinKnock):
            return gpb.Knock(
                face_down=card_to_pb(command.face_down, shoe),
                melds=[
                    cards_pb2.CardGroup(cards=cards_to_pb(m, shoe)) for m in command.melds or ()
                ],
            )
        return None

    def replay_command(self, event: Event, at_ms: int) -> Command | None:
        """A pass answers ``GinUpcardPassed`` (unless a timeout made it: replay gives it by the
        TurnTimedOut before it); big gin ``DeclareBigGin``; any other knock ``GinKnock``, with
        its recorded melds named when the knocker named them (``melds_named``), else none (the
        server arranges again, and must arrive at the recorded melds)."""
        if isinstance(event, hand.GinUpcardPassed):
            return hand.GinPassUpcard(seat=event.seat, turn_no=event.turn_no, at_ms=at_ms)
        if isinstance(event, hand.GinKnocked):
            if event.face_down is None:
                return hand.DeclareBigGin(seat=event.seat, turn_no=event.turn_no, at_ms=at_ms)
            return hand.GinKnock(
                seat=event.seat,
                turn_no=event.turn_no,
                face_down=event.face_down,
                melds=tuple(m.cards for m in event.melds) if event.melds_named else None,
                at_ms=at_ms,
            )
        return None

    def answer(self, message: Message, payloads: Sequence[Message]) -> Message | None:
        if isinstance(message, gpb.PassUpcard):
            return gpb.GinAnswer(outcome="pass")
        if isinstance(message, gpb.Knock | gpb.Gin | gpb.BigGin):
            scored = next((p for p in payloads if isinstance(p, gpb.GinHandScored)), None)
            if scored is None:
                return gpb.GinAnswer()
            return gpb.GinAnswer(
                outcome=scored.outcome, winner_seat=scored.winner_seat, points=scored.points
            )
        return None


#: The gin wire (its bundle registers it).
GIN_WIRE = GinWire()


# --- demo games (``rummy demo --game gin|oklahoma|hollywood``) -------------------------------

#: The gin family's game-end scoring (docs/rules/formats.md#game-end-scoring): game bonus 100,
#: shutout 200, box 25.
_GIN_SCORING = match_pb.GameScoring(game_bonus_points=100, shutout_bonus_points=200, box_points=25)


def _game_to(target: int) -> match_pb.MatchOptions:
    """One game to ``target`` at 0.05 a point, a loss capped at 300 points (15.00 reserved)."""
    return match_pb.MatchOptions(
        game_to=match_pb.GameToOptions(
            target=target,
            games=1,
            point_value_hundredths=5,
            max_game_points=300,
            missed_turns_lose_game=True,
            scoring=_GIN_SCORING,
        )
    )


def _packed(options: Message) -> any_pb2.Any:
    out = any_pb2.Any()
    out.Pack(options)
    return out


#: ``rummy demo --game``: a two-seat Gin Rummy game to 100, an Oklahoma Gin game to 100 and a
#: Hollywood match (three columns to 100), each with game bonus, boxes and shutout
#: (docs/rules/formats.md#game-end-scoring, #money-by-format: game stakes, commission 5% of the
#: winner's take).
DEMO_GAMES = (
    DemoGame("gin", (DemoTable("gin-2", 2, 0, 500, match=_game_to(100)),)),
    DemoGame(
        "oklahoma",
        (
            DemoTable(
                "oklahoma-2",
                2,
                0,
                500,
                match=_game_to(100),
                variant_options=_packed(gin_rules_pb.GinOptions(oklahoma=True)),
            ),
        ),
    ),
    DemoGame(
        "hollywood",
        (
            DemoTable(
                "hollywood-2",
                2,
                0,
                500,
                match=match_pb.MatchOptions(
                    hollywood=match_pb.HollywoodOptions(
                        target=100,
                        point_value_hundredths=5,
                        max_game_points=300,
                        missed_turns_lose_game=True,
                        scoring=_GIN_SCORING,
                    )
                ),
            ),
        ),
    ),
)

GIN_BUNDLE = VariantBundle(
    variant=GIN,
    wire=GIN_WIRE,
    payload_modules=(gpb,),
    codec_classes=(
        GinOptions,
        GinState,
        hand.GinPassUpcard,
        hand.GinKnock,
        hand.DeclareGin,
        hand.DeclareBigGin,
        hand.GinUpcardPassed,
        hand.GinKnocked,
        hand.GinLayoff,
        hand.GinHandScored,
        hand.GinWallReached,
        hand.GinSeatForfeited,
    ),
    docs=("docs/rules/gin.md", "docs/rules/formats.md"),
    outcomes=(
        Outcome("knock", "won by a knock", "K"),
        Outcome("undercut", "undercut", "U", notable=True),
        Outcome("gin", "gin", "G", notable=True),
        Outcome("big_gin", "big gin", "BG", notable=True),
        Outcome("lost", "lost", ""),
        Outcome("drawn", "drawn (the wall)", "="),
        # The words Indian points declares too are described as it describes them: the hosts
        # read outcome words as one namespace (rummy_game.bundle.outcome: the first bundle).
        Outcome("won", "won", "W"),
        Outcome("timed_out", "timeout auto-drop", "to", notable=True),
        Outcome("left", "left", "lv"),
    ),
    counters=(
        CounterSeries(
            "gin_hands",
            "Gin hands by how they ended",
            "outcome",
            ("knock", "undercut", "gin", "big_gin", "wall"),
        ),
    ),
    field_limits=(("melds", 3), ("cards", 10)),
    cli_cases=GIN_CASES,
    demo_games=DEMO_GAMES,
    view_lines=gin_view_lines,
)
"""The gin family as one plug-in (entry point ``rummy.variants:gin``)."""
