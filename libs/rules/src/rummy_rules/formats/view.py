"""What a player sees of a match: every seat's standing, the deal count, the open offers.

A match holds no secret (the cards are the hands' business and their views'), so every seat and
a spectator see the same :class:`MatchView` (``docs/rules/formats.md#view``). Game to N and
Hollywood add their score sheets (:class:`SheetView`: each game's, or each column's, points,
boxes, end-of-game bonus and totals).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import MatchFormat
from .messages import MatchAborted, MatchEnded
from .state import GameSheet, MatchState


@dataclass(frozen=True)
class MatchSeatView:
    """One seat: ``status`` ``in``, ``eliminated`` or ``left``; ``total`` (points: pool, best of
    N; the open game's total: game to N); ``chips`` (deals, else None); ``held_hundredths`` reserved
    now; ``games_won``; ``rejoin_total`` (the total an open rejoin offer brings it back at, else
    None); ``asked_split``."""

    seat: int
    account_id: str
    status: str
    total: int
    chips: int | None
    held_hundredths: int
    games_won: int
    rejoin_total: int | None
    asked_split: bool


@dataclass(frozen=True)
class SheetSeatView:
    """One seat on a score sheet: ``points`` scored from hands in that game (column),
    ``boxes`` (hands won in it), ``bonus`` (points added at its end: game bonus and boxes; 0
    while it runs), ``total`` (``points + bonus``), ``lost_at_cap`` (it left or was dropped on
    missed turns: it lost this game at the cap)."""

    seat: int
    points: int
    boxes: int
    bonus: int
    total: int
    lost_at_cap: bool


@dataclass(frozen=True)
class SheetView:
    """One game of a game-to-N match (``number`` 1, 2, ...; every game started, the open one
    last) or one Hollywood column (1..3): ``running`` until a seat reaches the target in it,
    then its ``winner``; ``seats`` ascending."""

    number: int
    running: bool
    winner: int | None
    seats: tuple[SheetSeatView, ...]


def sheet_view(sheet: GameSheet) -> SheetView:
    """The view of one score sheet."""
    boxes = dict(sheet.boxes)
    return SheetView(
        number=sheet.number,
        running=sheet.running,
        winner=sheet.winner,
        seats=tuple(
            SheetSeatView(
                seat=seat,
                points=points,
                boxes=boxes.get(seat, 0),
                bonus=sheet.total_of(seat) - points,
                total=sheet.total_of(seat),
                lost_at_cap=seat in sheet.forfeited,
            )
            for seat, points in sheet.points
        ),
    )


@dataclass(frozen=True)
class MatchView:
    """The match: its format, phase, deals counted and still to play by the count (None: no
    count; 0 once only tie-breaks are left), the deal being played (its seats, a tie-break or
    not), the next deal's seats when only some play it, every seat, the result once over, and
    the score sheets (game to N: every game started; Hollywood: its columns; else empty)."""

    match_id: str
    match_format: str
    phase: str
    deals_scored: int
    deals_left: int | None
    deal_seats: tuple[int, ...]
    tie_break: bool
    next_seats: tuple[int, ...] | None
    game_no: int
    seats: tuple[MatchSeatView, ...]
    result: MatchEnded | MatchAborted | None
    sheets: tuple[SheetView, ...] = ()


def match_view(fmt: MatchFormat, state: MatchState) -> MatchView:
    """The view of ``state`` under ``fmt`` (the same for every seat)."""
    out = state.out_seats
    held = dict(state.held)
    won = dict(state.games_won)
    offers = dict(state.rejoin_offers)
    chips = fmt.chips(state)
    return MatchView(
        match_id=state.match_id,
        match_format=state.match_format,
        phase=state.phase.value,
        deals_scored=state.deals_scored,
        deals_left=fmt.deals_left(state),
        deal_seats=state.deal_seats,
        tie_break=state.tie_break,
        next_seats=state.next_seats,
        game_no=state.game_no,
        seats=tuple(
            MatchSeatView(
                seat=s.seat,
                account_id=s.account_id,
                status=out[s.seat].value if s.seat in out else "in",
                total=state.total(s.seat),
                chips=None if chips is None else chips.get(s.seat),
                held_hundredths=held.get(s.seat, 0),
                games_won=won.get(s.seat, 0),
                rejoin_total=offers.get(s.seat),
                asked_split=s.seat in state.split_requests,
            )
            for s in state.seats
        ),
        result=state.result,
        sheets=tuple(sheet_view(sheet) for sheet in state.sheets),
    )
