"""Match formats <-> the wire (``rummy.match.v1``): a table's format options, the match's events on
the table stream, the players' match commands and the match view.

- Options: ``rummy.match.v1.MatchOptions`` (``OpenTableRequest.match``, ``TableOpened.match``)
  <-> :func:`rummy_rules.formats.make_format`; the table's ``commission_bps`` is the format's
  commission (absent options or ``single``: :class:`~rummy_rules.formats.Single`, a points table).
  A game to N's and a Hollywood table's game-end scoring is ``rummy.match.v1.GameScoring``
  (:func:`scoring_from_pb`): left out, nothing is added (the games of records written before it),
  and a scoring that adds nothing is recorded left out.
- Events: one payload per event of ``rummy_rules.formats.messages``, exactly:
  ``event_from_pb(event_to_pb(e, state, hand_id), at_ms) == e`` where ``at_ms`` is the event's
  own (the envelope's ``occurred_at``: the table stamps every envelope with the command's time).
  What the wire carries beyond the rules event comes from the host: ``MoneyReserved.game_no``
  from the match state (the open game of a ``stake``), the ``hand_id`` of ``DealStarted`` /
  ``DealScored`` / ``DealVoided`` (the hand that plays the deal). The rules' purpose ``game`` is
  the wire's ``stake``.
- Commands (``PlayRequest.command``): ``AcceptRejoin``, ``DeclineRejoin``, ``RequestSplit``,
  answered with ``MatchCommandAnswer``.
- The view: :func:`view_to_pb` of :func:`rummy_rules.formats.match_view`, with the score sheets
  (:func:`sheet_to_pb`: game to N's games, Hollywood's columns).

Ops' replay imports this module; it knows no variant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as mpb
from rummy_rules.commands import Command
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import (
    GameScoring,
    MatchFormat,
    MatchState,
    MatchView,
    SheetView,
    make_format,
)
from rummy_rules.formats import messages as fm
from rummy_rules.formats.best_of import BestOf
from rummy_rules.formats.deals import Deals
from rummy_rules.formats.game_to import GameTo
from rummy_rules.formats.hollywood import Hollywood
from rummy_rules.formats.money import MatchSettlement, MoneyLine
from rummy_rules.formats.pool import Pool
from rummy_rules.formats.race_to import RaceTo
from rummy_rules.formats.single import Single
from rummy_rules.formats.state import apply
from rummy_rules.rules import RuleSetError

from . import money_purposes
from .variant_wire import StreamPayloadError

# -- options -------------------------------------------------------------------------------------

#: The oneof arm of MatchOptions -> the format kind of ``rummy_rules.formats.FORMAT_KINDS``.
ARM_KINDS = {
    "single": "single",
    "pool": "pool",
    "deals": "deals",
    "best_of": "best-of",
    "game_to": "game-to",
    "hollywood": "hollywood",
    "race_to": "race-to",
}

#: A format option's name in the rules -> its request field (``{arm}``: the oneof arm).
_OPTION_FIELDS = {
    "format": "match",
    "format options": "match",
    "target": "match.{arm}.target",
    "entry_hundredths": "match.{arm}.entry_fee_hundredths",
    "deals": "match.{arm}.deals",
    "games": "match.{arm}.games",
    "point_value_hundredths": "match.{arm}.point_value_hundredths",
    "max_game_points": "match.{arm}.max_game_points",
    "game_bonus": "match.{arm}.scoring.game_bonus_points",
    "shutout_game_bonus": "match.{arm}.scoring.shutout_bonus_points",
    "box_points": "match.{arm}.scoring.box_points",
    "commission_bps": "commission_bps",
    "seats": "seat_count",
}


def arm_of(options: mpb.MatchOptions | None) -> str:
    """The oneof arm ``options`` sets (``single`` when absent or unset)."""
    if options is None:
        return "single"
    return options.WhichOneof("format") or "single"


def is_match(options: mpb.MatchOptions | None) -> bool:
    """Whether ``options`` name a format other than ``single`` (a match table)."""
    return arm_of(options) != "single"


def option_message(error: RuleSetError, options: mpb.MatchOptions | None) -> str:
    """The format's refusal of an option, naming the request field
    (``match.pool.target must be 101 or 201, got 150``)."""
    name = _OPTION_FIELDS.get(error.option, f"match.{{arm}}.{error.option}")
    return error.describe(name.format(arm=arm_of(options)))


def format_from_pb(options: mpb.MatchOptions | None, commission_bps: int) -> MatchFormat:
    """The format ``options`` ask for, with the table's ``commission_bps`` (hundredths of a
    percent) on its prize pool or game stakes. Raises RuleSetError for an option out of bounds
    (:func:`option_message` names its request field)."""
    arm = arm_of(options)
    if arm == "single":
        return make_format("single")
    assert options is not None
    given = getattr(options, arm)
    kwargs: dict[str, Any] = {"commission_bps": commission_bps}
    if arm == "pool":
        kwargs.update(
            target=given.target,
            entry_hundredths=given.entry_fee_hundredths,
            rejoin=given.rejoin,
            split=given.split,
        )
    elif arm in ("deals", "best_of"):
        kwargs.update(deals=given.deals, entry_hundredths=given.entry_fee_hundredths)
    elif arm == "race_to":  # game stakes; every seat scores every deal
        kwargs.update(
            target=given.target,
            point_value_hundredths=given.point_value_hundredths,
            max_game_points=given.max_game_points,
        )
    else:  # game_to, hollywood: game stakes, the variant's game-end scoring
        kwargs.update(
            target=given.target,
            point_value_hundredths=given.point_value_hundredths,
            max_game_points=given.max_game_points,
            missed_turns_lose_game=given.missed_turns_lose_game,
            scoring=scoring_from_pb(given.scoring),
        )
        if arm == "game_to":
            kwargs["games"] = given.games
    return make_format(ARM_KINDS[arm], **kwargs)


def scoring_from_pb(scoring: mpb.GameScoring) -> GameScoring:
    """The game-end scoring ``scoring`` carries (absent or all 0: nothing added, the games of
    records written before it). Raises RuleSetError for an amount above the rules' bound."""
    return GameScoring(
        game_bonus=scoring.game_bonus_points,
        shutout_game_bonus=scoring.shutout_bonus_points,
        box_points=scoring.box_points,
    )


def scoring_to_pb(scoring: GameScoring) -> mpb.GameScoring:
    """The wire form of a game-end scoring (the inverse of :func:`scoring_from_pb`)."""
    return mpb.GameScoring(
        game_bonus_points=scoring.game_bonus,
        shutout_bonus_points=scoring.shutout_game_bonus,
        box_points=scoring.box_points,
    )


def format_to_pb(fmt: MatchFormat) -> mpb.MatchOptions:
    """The options of ``fmt`` (its commission travels as the table's ``commission_bps``); the
    inverse of :func:`format_from_pb`. Raises ValueError for a format class it does not know."""
    if isinstance(fmt, Single):
        return mpb.MatchOptions(single=mpb.SingleOptions())
    if isinstance(fmt, Pool):
        return mpb.MatchOptions(
            pool=mpb.PoolOptions(
                target=fmt.target,
                entry_fee_hundredths=fmt.entry_hundredths,
                rejoin=fmt.rejoin,
                split=fmt.split,
            )
        )
    if isinstance(fmt, Deals):
        return mpb.MatchOptions(
            deals=mpb.DealsOptions(deals=fmt.deals, entry_fee_hundredths=fmt.entry_hundredths)
        )
    if isinstance(fmt, BestOf):
        return mpb.MatchOptions(
            best_of=mpb.BestOfOptions(deals=fmt.deals, entry_fee_hundredths=fmt.entry_hundredths)
        )
    if isinstance(fmt, RaceTo):  # before GameTo, which it extends
        return mpb.MatchOptions(
            race_to=mpb.RaceToOptions(
                target=fmt.target,
                point_value_hundredths=fmt.point_value_hundredths,
                max_game_points=fmt.max_game_points,
            )
        )
    if isinstance(fmt, GameTo):
        return mpb.MatchOptions(
            game_to=mpb.GameToOptions(
                target=fmt.target,
                games=fmt.games,
                point_value_hundredths=fmt.point_value_hundredths,
                max_game_points=fmt.max_game_points,
                missed_turns_lose_game=fmt.missed_turns_lose_game,
                scoring=_scoring_or_none(fmt.scoring),
            )
        )
    if isinstance(fmt, Hollywood):
        return mpb.MatchOptions(
            hollywood=mpb.HollywoodOptions(
                target=fmt.target,
                point_value_hundredths=fmt.point_value_hundredths,
                max_game_points=fmt.max_game_points,
                missed_turns_lose_game=fmt.missed_turns_lose_game,
                scoring=_scoring_or_none(fmt.scoring),
            )
        )
    raise ValueError(f"no wire options for format {type(fmt).__name__}")


def _scoring_or_none(scoring: GameScoring) -> mpb.GameScoring | None:
    """The scoring to record: none when it adds nothing, so a table without one records the
    options it always did."""
    return None if scoring.adds_nothing else scoring_to_pb(scoring)


def commission_of(fmt: MatchFormat) -> int:
    """The format's commission in basis points (0 for ``single``: the hand's own)."""
    commission = getattr(fmt, "commission_bps", 0)
    assert isinstance(commission, int)
    return commission


# -- events --------------------------------------------------------------------------------------

#: The payload messages of a match's events (table stream).
EVENT_TYPES: tuple[type[Message], ...] = (
    mpb.MatchStarted,
    mpb.MoneyReserved,
    mpb.GameStarted,
    mpb.DealStarted,
    mpb.DealScored,
    mpb.TieBreakDue,
    mpb.DealVoided,
    mpb.SeatEliminated,
    mpb.SeatLeft,
    mpb.SeatForfeitedGame,
    mpb.RejoinOffered,
    mpb.Rejoined,
    mpb.RejoinDeclined,
    mpb.RejoinRefused,
    mpb.SplitRequested,
    mpb.GameEnded,
    mpb.MatchEnded,
    mpb.MatchAborted,
)

#: The rules' MoneyReserved purpose -> the wire's (and back): the ledger's names
#: (:mod:`rummy_game.money_purposes`).
_PURPOSE_TO_PB = money_purposes.LEDGER_PURPOSE
_PURPOSE_BACK = money_purposes.FORMAT_PURPOSE


def is_match_payload(payload: Message) -> bool:
    """Whether ``payload`` is one of a match's events."""
    return isinstance(payload, EVENT_TYPES)


def _points_pb(items: Iterable[tuple[int, int]]) -> list[mpb.SeatPoints]:
    return [mpb.SeatPoints(seat=seat, points=points) for seat, points in items]


def _points_back(items: Iterable[mpb.SeatPoints]) -> tuple[tuple[int, int], ...]:
    return tuple((p.seat, p.points) for p in items)


def settlement_to_pb(s: MatchSettlement) -> mpb.MatchSettlement:
    return mpb.MatchSettlement(
        pool_hundredths=s.pool_hundredths,
        commission_bps=s.commission_bps,
        commission_hundredths=s.commission_hundredths,
        lines=[
            mpb.MoneyLine(
                seat=line.seat,
                held_hundredths=line.held_hundredths,
                amount_hundredths=line.amount_hundredths,
            )
            for line in s.lines
        ],
        winners=list(s.winners),
    )


def settlement_from_pb(s: mpb.MatchSettlement) -> MatchSettlement:
    return MatchSettlement(
        pool_hundredths=s.pool_hundredths,
        commission_bps=s.commission_bps,
        commission_hundredths=s.commission_hundredths,
        lines=tuple(
            MoneyLine(line.seat, line.held_hundredths, line.amount_hundredths) for line in s.lines
        ),
        winners=tuple(s.winners),
    )


#: The match events whose message has the same fields by the same names (a tuple of numbers is
#: a repeated field): written and read by name, field for field.
_SAME_FIELDS: dict[type[Event], type[Message]] = {
    fm.GameStarted: mpb.GameStarted,
    fm.TieBreakDue: mpb.TieBreakDue,
    fm.SeatEliminated: mpb.SeatEliminated,
    fm.SeatLeft: mpb.SeatLeft,
    fm.SeatForfeitedGame: mpb.SeatForfeitedGame,
    fm.Rejoined: mpb.Rejoined,
    fm.RejoinDeclined: mpb.RejoinDeclined,
    fm.SplitRequested: mpb.SplitRequested,
}
_SAME_FIELDS_BACK = {message: event for event, message in _SAME_FIELDS.items()}


def _same_fields_to_pb(event: Any, message: type[Message]) -> Message:
    values = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    return message(**{k: list(v) if isinstance(v, tuple) else v for k, v in values.items()})


def _same_fields_from_pb(payload: Message, event: Any) -> Event:
    values = {f.name: getattr(payload, f.name) for f in dataclasses.fields(event)}
    made: Event = event(
        **{k: v if isinstance(v, bool | int | str) else tuple(v) for k, v in values.items()}
    )
    return made


def event_to_pb(  # noqa: C901 - one branch per event type
    event: Event, state: MatchState, hand_id: str = ""
) -> Message:
    """The payload of match event ``event``; ``state``: the match before it (a stake's game
    number), ``hand_id``: the hand that plays the deal (DealStarted, DealScored, DealVoided).
    Raises StreamPayloadError for an event that is not a match's."""
    same = _SAME_FIELDS.get(type(event))
    if same is not None:
        return _same_fields_to_pb(event, same)
    if isinstance(event, fm.MatchStarted):
        return mpb.MatchStarted(
            match_id=event.match_id,
            match_format=event.match_format,
            seats=[cards_pb2.Seat(seat=s.seat, account_id=s.account_id) for s in event.seats],
        )
    if isinstance(event, fm.MoneyReserved):
        if event.purpose not in _PURPOSE_TO_PB:
            raise StreamPayloadError(f"money purpose {event.purpose!r} is not known")
        return mpb.MoneyReserved(
            seat=event.seat,
            amount_hundredths=event.amount_hundredths,
            purpose=_PURPOSE_TO_PB[event.purpose],
            game_no=state.game_no if event.purpose == "game" else 0,
        )
    if isinstance(event, fm.DealStarted):
        return mpb.DealStarted(
            deal_no=event.deal_no,
            seats=list(event.seats),
            tie_break=event.tie_break,
            hand_id=hand_id,
        )
    if isinstance(event, fm.DealScored):
        return mpb.DealScored(
            deal_no=event.deal_no,
            points=_points_pb(event.points),
            winners=list(event.winners),
            totals=_points_pb(event.totals),
            chips=_points_pb(event.chips),
            timed_out=list(event.timed_out),
            hand_id=hand_id,
        )
    if isinstance(event, fm.DealVoided):
        return mpb.DealVoided(deal_no=event.deal_no, reason=event.reason, hand_id=hand_id)
    if isinstance(event, fm.RejoinOffered):
        return mpb.RejoinOffered(
            seat=event.seat, total=event.total, entry_fee_hundredths=event.entry_hundredths
        )
    if isinstance(event, fm.RejoinRefused):
        return mpb.RejoinRefused(
            seat=event.seat, total=event.total, entry_fee_hundredths=event.entry_hundredths
        )
    if isinstance(event, fm.GameEnded):
        return mpb.GameEnded(
            game_no=event.game_no,
            winner=event.winner,
            totals=_points_pb(event.totals),
            settlement=settlement_to_pb(event.settlement),
        )
    if isinstance(event, fm.MatchEnded):
        ended = mpb.MatchEnded(winners=list(event.winners), reason=event.reason)
        if event.settlement is not None:
            ended.settlement.CopyFrom(settlement_to_pb(event.settlement))
        return ended
    if isinstance(event, fm.MatchAborted):
        return mpb.MatchAborted(reason=event.reason, released=_points_pb(event.released))
    raise StreamPayloadError(f"{type(event).__name__} is not a match event")


def events_to_pb(events: Sequence[Event], state: MatchState, hand_id: str = "") -> list[Message]:
    """:func:`event_to_pb` of each of ``events`` in turn, from ``state`` (each event's state is
    ``state`` with the earlier ones applied)."""
    out: list[Message] = []
    for event in events:
        out.append(event_to_pb(event, state, hand_id))
        state = apply(state, event)
    return out


def event_from_pb(payload: Message, at_ms: int) -> Event:  # noqa: C901 - one branch per type
    """The match event ``payload`` stands for; ``at_ms``: its envelope's occurred-at (ms since the
    epoch). Raises StreamPayloadError for a payload that is not a match event."""
    same = _SAME_FIELDS_BACK.get(type(payload))
    if same is not None:
        return _same_fields_from_pb(payload, same)
    if isinstance(payload, mpb.MatchStarted):
        return fm.MatchStarted(
            match_id=payload.match_id,
            match_format=payload.match_format,
            seats=tuple(SeatAccount(s.seat, s.account_id) for s in payload.seats),
            at_ms=at_ms,
        )
    if isinstance(payload, mpb.MoneyReserved):
        if payload.purpose not in _PURPOSE_BACK:
            raise StreamPayloadError(f"money purpose {payload.purpose[:40]!r} is not known")
        return fm.MoneyReserved(
            seat=payload.seat,
            amount_hundredths=payload.amount_hundredths,
            purpose=_PURPOSE_BACK[payload.purpose],
        )
    if isinstance(payload, mpb.DealStarted):
        return fm.DealStarted(
            deal_no=payload.deal_no,
            seats=tuple(payload.seats),
            tie_break=payload.tie_break,
            at_ms=at_ms,
        )
    if isinstance(payload, mpb.DealScored):
        return fm.DealScored(
            deal_no=payload.deal_no,
            points=_points_back(payload.points),
            winners=tuple(payload.winners),
            totals=_points_back(payload.totals),
            chips=_points_back(payload.chips),
            timed_out=tuple(payload.timed_out),
        )
    if isinstance(payload, mpb.DealVoided):
        return fm.DealVoided(deal_no=payload.deal_no, reason=payload.reason)
    if isinstance(payload, mpb.RejoinOffered):
        return fm.RejoinOffered(
            seat=payload.seat, total=payload.total, entry_hundredths=payload.entry_fee_hundredths
        )
    if isinstance(payload, mpb.RejoinRefused):
        return fm.RejoinRefused(
            seat=payload.seat, total=payload.total, entry_hundredths=payload.entry_fee_hundredths
        )
    if isinstance(payload, mpb.GameEnded):
        return fm.GameEnded(
            game_no=payload.game_no,
            winner=payload.winner,
            totals=_points_back(payload.totals),
            settlement=settlement_from_pb(payload.settlement),
        )
    if isinstance(payload, mpb.MatchEnded):
        return fm.MatchEnded(
            winners=tuple(payload.winners),
            reason=payload.reason,
            settlement=(
                settlement_from_pb(payload.settlement) if payload.HasField("settlement") else None
            ),
            at_ms=at_ms,
        )
    if isinstance(payload, mpb.MatchAborted):
        return fm.MatchAborted(
            reason=payload.reason, released=_points_back(payload.released), at_ms=at_ms
        )
    raise StreamPayloadError(f"{type(payload).DESCRIPTOR.full_name} is not a match event")


# -- commands ------------------------------------------------------------------------------------

#: The messages a player packs in ``PlayRequest.command`` for the match (not the hand).
COMMAND_TYPES: tuple[type[Message], ...] = (
    mpb.AcceptRejoin,
    mpb.DeclineRejoin,
    mpb.RequestSplit,
)

_COMMANDS: Mapping[type[Message], type[fm.AcceptRejoin | fm.DeclineRejoin | fm.RequestSplit]] = {
    mpb.AcceptRejoin: fm.AcceptRejoin,
    mpb.DeclineRejoin: fm.DeclineRejoin,
    mpb.RequestSplit: fm.RequestSplit,
}


def is_match_command(type_name: str) -> bool:
    """Whether ``type_name`` (a full protobuf name) is one of :data:`COMMAND_TYPES`."""
    return any(c.DESCRIPTOR.full_name == type_name for c in COMMAND_TYPES)


def command_from_pb(message: Message, seat: int, at_ms: int) -> Command:
    """The rules command ``message`` (one of :data:`COMMAND_TYPES`) is for ``seat``. Raises
    StreamPayloadError for another message."""
    cls = _COMMANDS.get(type(message))
    if cls is None:
        raise StreamPayloadError(f"{type(message).DESCRIPTOR.full_name} is not a match command")
    return cls(seat=seat, at_ms=at_ms)


def answer(payloads: Sequence[Message]) -> mpb.MatchCommandAnswer:
    """The answer to a match command from the payloads it caused: the seat's total after a
    rejoin (``Rejoined``), else 0."""
    rejoined = next((p for p in payloads if isinstance(p, mpb.Rejoined)), None)
    return mpb.MatchCommandAnswer(total=rejoined.total if rejoined is not None else 0)


# -- the view ------------------------------------------------------------------------------------


def view_to_pb(view: MatchView) -> mpb.MatchView:
    """The wire form of a match's view (every seat sees the same)."""
    out = mpb.MatchView(
        match_id=view.match_id,
        match_format=view.match_format,
        phase=view.phase,
        deals_scored=view.deals_scored,
        deal_seats=list(view.deal_seats),
        tie_break=view.tie_break,
        next_seats_limited=view.next_seats is not None,
        next_seats=list(view.next_seats or ()),
        game_no=view.game_no,
    )
    if view.deals_left is not None:
        out.deals_left = view.deals_left
    for s in view.seats:
        seat = out.seats.add(
            seat=s.seat,
            account_id=s.account_id,
            status=s.status,
            total=s.total,
            held_hundredths=s.held_hundredths,
            games_won=s.games_won,
            asked_split=s.asked_split,
        )
        if s.chips is not None:
            seat.chips = s.chips
        if s.rejoin_total is not None:
            seat.rejoin_total = s.rejoin_total
    out.sheets.extend(sheet_to_pb(sheet) for sheet in view.sheets)
    result = view.result
    if isinstance(result, fm.MatchEnded):
        ended = event_to_pb(result, MatchState())
        assert isinstance(ended, mpb.MatchEnded)
        out.ended.CopyFrom(ended)
    elif isinstance(result, fm.MatchAborted):
        aborted = event_to_pb(result, MatchState())
        assert isinstance(aborted, mpb.MatchAborted)
        out.aborted.CopyFrom(aborted)
    return out


def sheet_to_pb(sheet: SheetView) -> mpb.ScoreSheet:
    """The wire form of one score sheet (a game of a game to N, a Hollywood column)."""
    out = mpb.ScoreSheet(
        number=sheet.number,
        running=sheet.running,
        seats=[
            mpb.SheetSeat(
                seat=s.seat,
                points=s.points,
                boxes=s.boxes,
                bonus=s.bonus,
                total=s.total,
                lost_at_cap=s.lost_at_cap,
            )
            for s in sheet.seats
        ],
    )
    if sheet.winner is not None:
        out.winner = sheet.winner
    return out


__all__ = [
    "ARM_KINDS",
    "COMMAND_TYPES",
    "EVENT_TYPES",
    "answer",
    "arm_of",
    "command_from_pb",
    "commission_of",
    "event_from_pb",
    "event_to_pb",
    "events_to_pb",
    "format_from_pb",
    "format_to_pb",
    "is_match",
    "is_match_command",
    "is_match_payload",
    "option_message",
    "scoring_from_pb",
    "scoring_to_pb",
    "sheet_to_pb",
    "view_to_pb",
]
