"""What a player sees of a match: every seat's standing, the deal count, the open offers.

A match holds no secret (the cards are the hands' business and their views'), so every seat and
a spectator see the same :class:`MatchView` (``docs/rules/formats.md#view``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import MatchFormat
from .messages import MatchAborted, MatchEnded
from .state import MatchState


@dataclass(frozen=True)
class MatchSeatView:
    """One seat: ``status`` ``in``, ``eliminated`` or ``left``; ``total`` (points: pool, best of
    N; the open game's total: game to N); ``chips`` (deals, else None); ``held_cents`` reserved
    now; ``games_won``; ``rejoin_total`` (the total an open rejoin offer brings it back at, else
    None); ``asked_split``."""

    seat: int
    account_id: str
    status: str
    total: int
    chips: int | None
    held_cents: int
    games_won: int
    rejoin_total: int | None
    asked_split: bool


@dataclass(frozen=True)
class MatchView:
    """The match: its format, phase, deals counted and still to play by the count (None: no
    count; 0 once only tie-breaks are left), the deal being played (its seats, a tie-break or
    not), the next deal's seats when only some play it, every seat, and the result once over."""

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
                held_cents=held.get(s.seat, 0),
                games_won=won.get(s.seat, 0),
                rejoin_total=offers.get(s.seat),
                asked_split=s.seat in state.split_requests,
            )
            for s in state.seats
        ),
        result=state.result,
    )
