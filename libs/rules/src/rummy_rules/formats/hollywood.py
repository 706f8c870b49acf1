"""Hollywood: three games (columns) of a two-player game scored at once, for game stakes.

House plan "Gin family" (rulebook "Hollywood Gin": "Three simultaneous games are played, scored
on three columns. A player's first win is recorded in Game 1. The second win in both Games 1
and 2. The third in all three. Each game ends when one player reaches 100."), as the house plan
rules it: "a player's n-th hand win is scored in the first min(n, 3) columns that are still running
(a first win in column 1; a second in columns 1 and 2; a third and later in all three; a column
that has ended takes no more scores); each column ends when a player reaches the target in it,
with its own game bonus, boxes and shutout; the match ends when the third column ends."

**The reading of "n-th hand win"** (:func:`columns_for`): ``n`` counts, per player, the deals
that player has won in the match so far, this one included — every deal it won counts, whichever
columns it was entered in, also those entered only in columns that have ended since; a drawn
deal (the wall) or a voided deal is nobody's win. The win is entered in the first ``min(n, 3)``
of the columns still running, in column order: with column 1 ended, a player's first win goes to
column 2, its second to columns 2 and 3. A column's **boxes** are the wins entered in it, and
"scored no points in the game" (shutout) is read per column: no points entered in that column.
A column ends on the deal whose entry brings a player to the ``target`` in it (several may end
on one deal); its totals then get the game-end scoring (``scoring``: gin's game bonus 100,
shutout 200, 25 a box) and its result is the capped difference (``money.game_nets``).

Money (house plan "Money by format", game stakes): ``3 x max_game_points x point_value_hundredths``
is reserved from each player when the match's one game opens (``GameStarted`` game 1 at the first
deal, before its first hand); when the third column ends, the result is the sum of the three
columns' capped nets (``money.add_nets``), paid by the player below 0 to the other less the
commission (``money.settle_nets``), in ``GameEnded`` (game 1: the ledger settles it as a game's
stakes) followed by ``MatchEnded``. A player who leaves, or (``missed_turns_lose_game``) is
dropped on missed turns, loses every column still running at the cap; the columns that had ended
stand. A voided deal is redealt, holds stay; an aborted match releases every hold. The match's
winner is the player above 0; at 0 the one who won more columns.

The columns are a projection of each ``DealScored`` (its winner and the points it charged the
loser) under this format's target and scoring: :meth:`Hollywood.apply` enters them, so the table
stream, replay and the ledger carry no event a game to N does not.
``docs/rules/formats.md#hollywood``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..errors import ErrorCode
from ..events import Event
from ..rules import RuleSetError, check_bounds, check_commission
from .base import check_money_option, refuse
from .game_to import MAX_TARGET, GameStakes
from .messages import (
    DealResult,
    DealScored,
    DealStarted,
    GameEnded,
    GameStarted,
    MatchEnded,
    SeatForfeitedGame,
    SeatLeft,
)
from .money import add_nets, game_nets, game_stake_hundredths, settle_nets
from .scoring import GameScoring, game_end_totals
from .state import GameSheet, MatchState, new_sheet, pairs
from .state import fold as fold_events

#: Hollywood's columns.
COLUMNS = 3


def columns_for(sheets: Sequence[GameSheet], n: int) -> tuple[int, ...]:
    """The indexes (0-based) of the columns a player's ``n``-th win (``n >= 1``) is entered in:
    the first ``min(n, 3)`` of those still running. Raises ValueError for ``n < 1``."""
    if n < 1:
        raise ValueError(f"a player's wins are counted from 1, got {n}")
    running = [i for i, sheet in enumerate(sheets) if sheet.running]
    return tuple(running[: min(n, COLUMNS)])


def _ended(sheet: GameSheet, winner: int, scoring: GameScoring, lost: Iterable[int]) -> GameSheet:
    totals = game_end_totals(scoring, dict(sheet.points), dict(sheet.boxes), winner)
    return replace(sheet, winner=winner, totals=pairs(totals), forfeited=frozenset(lost))


def enter_win(
    sheets: Sequence[GameSheet],
    seat: int,
    points: int,
    n: int,
    *,
    target: int,
    scoring: GameScoring,
) -> tuple[GameSheet, ...]:
    """The columns once ``seat``'s ``n``-th win, worth ``points``, is entered
    (:func:`columns_for`): each such column adds the points and a box to ``seat``, and ends
    (won by ``seat``, the game-end scoring added) when its points reach ``target``."""
    into = set(columns_for(sheets, n))
    out: list[GameSheet] = []
    for i, sheet in enumerate(sheets):
        if i in into:
            pts, boxes = dict(sheet.points), dict(sheet.boxes)
            pts[seat] = pts.get(seat, 0) + points
            boxes[seat] = boxes.get(seat, 0) + 1
            sheet = replace(sheet, points=pairs(pts), boxes=pairs(boxes))
            if pts[seat] >= target:
                sheet = _ended(sheet, seat, scoring, ())
        out.append(sheet)
    return tuple(out)


def forfeit_columns(
    sheets: Sequence[GameSheet], loser: int, scoring: GameScoring
) -> tuple[GameSheet, ...]:
    """The columns once ``loser`` loses every column still running at the cap (it left or was
    dropped on missed turns): each is won by the other player, the game-end scoring added."""
    out: list[GameSheet] = []
    for sheet in sheets:
        if sheet.running:
            (winner,) = (seat for seat, _ in sheet.points if seat != loser)
            sheet = _ended(sheet, winner, scoring, (loser,))
        out.append(sheet)
    return tuple(out)


def column_nets(sheets: Sequence[GameSheet], max_game_points: int) -> dict[int, int]:
    """The sum of the ended columns' capped nets (points, per seat, summing to 0)."""
    return add_nets(
        *(
            game_nets(
                dict(sheet.totals),
                sheet.winner,
                max_game_points=max_game_points,
                forfeited=sheet.forfeited,
            )
            for sheet in sheets
            if sheet.winner is not None
        )
    )


@dataclass(frozen=True)
class Hollywood(GameStakes):
    """A Hollywood match: three columns to ``target`` points for ``point_value_hundredths``
    (hundredths of a House Token) a point, each column's loss capped at ``max_game_points``;
    ``scoring``: each column's game-end scoring (the variant's); ``missed_turns_lose_game``: a
    player dropped on missed turns loses every running column at the cap. Two seats. Raises
    RuleSetError for an option out of bounds."""

    target: int = 100
    point_value_hundredths: int = 0
    max_game_points: int = 100
    commission_bps: int = 0
    missed_turns_lose_game: bool = False
    scoring: GameScoring = GameScoring()
    min_seats = 2
    max_seats = 2

    def __post_init__(self) -> None:
        if not isinstance(self.scoring, GameScoring):
            raise RuleSetError("scoring", "a GameScoring", repr(self.scoring))
        check_bounds("target", self.target, 1, MAX_TARGET)
        check_bounds("max_game_points", self.max_game_points, 1, MAX_TARGET)
        check_money_option(
            "point_value_hundredths",
            self.point_value_hundredths,
            self.max_seats,
            COLUMNS * self.max_game_points,
        )
        check_commission(self.commission_bps)

    @property
    def name(self) -> str:
        return f"hollywood-{self.target}"

    @property
    def stake_hundredths(self) -> int:
        """What each player reserves for the match: ``3 x cap x point value``."""
        return COLUMNS * game_stake_hundredths(self.max_game_points, self.point_value_hundredths)

    def columns(self, state: MatchState) -> tuple[GameSheet, ...]:
        """The three columns (empty before the first deal)."""
        return state.sheets

    # -- folding: the columns follow each counted deal and each loss at the cap --------------

    def apply(self, state: MatchState, event: Event) -> MatchState:
        now = fold_events((event,), state)
        if isinstance(event, GameStarted):
            sheets = tuple(new_sheet(column, event.seats) for column in range(1, COLUMNS + 1))
            return replace(now, sheets=sheets)
        if isinstance(event, DealScored):
            sheets = state.sheets
            for seat in event.winners:
                won = dict(state.hands_won).get(seat, 0) + 1
                points = sum(p for s, p in event.points if s != seat)
                sheets = enter_win(
                    sheets, seat, points, won, target=self.target, scoring=self.scoring
                )
            return replace(now, sheets=sheets)
        if isinstance(event, SeatForfeitedGame | SeatLeft) and state.game_open:
            return replace(now, sheets=forfeit_columns(state.sheets, event.seat, self.scoring))
        return now

    def fold(self, events: Iterable[Event], state: MatchState | None = None) -> MatchState:
        current = MatchState() if state is None else state
        for event in events:
            current = self.apply(current, event)
        return current

    # -- deciding --------------------------------------------------------------------------------

    def _begin(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        deal = DealStarted(
            deal_no=state.deals_scored + 1, seats=state.active, tie_break=False, at_ms=at_ms
        )
        if state.game_open:
            return (deal,)
        return (*self._game_started(1, state.active), deal)

    def _check_result(self, state: MatchState, result: DealResult, most: int | None) -> None:
        super()._check_result(state, result, most)
        if len(result.winners) > 1:
            raise refuse(ErrorCode.INVALID_DEAL, "a Hollywood deal has one winner at most")

    def _score(self, state: MatchState, result: DealResult, at_ms: int) -> tuple[Event, ...]:
        totals = dict(state.totals)
        for seat in result.winners:
            totals[seat] += sum(p for s, p in result.points if s != seat)
        events: tuple[Event, ...] = (
            self._scored(state, result, totals=pairs(totals)),
            *self._left_mid_deal(state, result),
        )
        if self.missed_turns_lose_game:
            events += self._forfeits_for_missed_turns(state, result)
        return events + self._decided(self.fold(events, state), at_ms)

    def _after_leave(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        if state.game_open:
            return self._decided(state, at_ms)
        # Left before the first deal: nothing is held, the other player is the last one left.
        return (MatchEnded(winners=state.active, reason="last_left", settlement=None, at_ms=at_ms),)

    def _decided(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        """The match's end once every column has ended, else nothing."""
        if not state.active:  # every seat left mid-deal
            return (self._abandoned(state, "every seat left the match", at_ms),)
        sheets = state.sheets
        if any(sheet.running for sheet in sheets):
            return ()
        nets = column_nets(sheets, self.max_game_points)
        columns_won = {seat: 0 for seat in nets}
        for sheet in sheets:
            assert sheet.winner is not None
            columns_won[sheet.winner] += 1
        winner = max(nets, key=lambda seat: (nets[seat], columns_won[seat], -seat))
        settlement = settle_nets(
            nets,
            winner,
            held_hundredths=self.stake_hundredths,
            point_value_hundredths=self.point_value_hundredths,
            commission_bps=self.commission_bps,
        )
        ended = GameEnded(game_no=1, winner=winner, totals=pairs(nets), settlement=settlement)
        return (
            ended,
            MatchEnded(winners=(winner,), reason="games_played", settlement=None, at_ms=at_ms),
        )

    def deals_left(self, state: MatchState) -> int | None:
        return None
