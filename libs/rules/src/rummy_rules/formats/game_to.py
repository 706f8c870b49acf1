"""Game to N: one or more games, each played in deals to a target score (the gin family's game,
Rummy 500 later; ``docs/rules/formats.md#money``, column "game stakes").

A deal's winner scores the points the deal charged its losers (several winners share them, the
remainder one each to the earliest seats); a drawn deal (gin's wall) scores nothing and its
dealer deals again (:meth:`keeps_dealer`). A game ends when a seat still in it reaches the
``target``: the highest total wins (a tie at the top plays one more deal among the tied seats,
until it is broken), or when one seat is left in it. Then the variant's game-end scoring
(``scoring``, a :class:`~rummy_rules.formats.scoring.GameScoring`; none by default) adds its
bonuses: gin's game bonus 100 (shutout 200) and 25 a box, so a gin table is
``GameTo(target=100, scoring=GameScoring(100, 200, 25), missed_turns_lose_game=True)`` at two
seats. The game's result is the difference of the totals after those bonuses. Money per game:
``max_game_points x point_value_hundredths`` reserved from each seat at the game's start; at its end
each loser pays ``min(winner - loser, cap) x point value`` to the winner less the commission
(``rummy_rules.formats.money.settle_game``). A seat that leaves loses the game at the cap and
is out of the match; with ``missed_turns_lose_game`` (Gin), a seat dropped on missed turns loses
the game at the cap too (it plays the next game). The match is ``games`` games (or ends when
fewer than two seats are left); its winners are the seats still in with the most games won.
``docs/rules/formats.md#game-to``.

**Why gin extends GameTo rather than sitting beside it** (issue 27): a gin hand's result already
has the shape GameTo reads — the hand's scorer is the deal's winner, the other player is charged
the hand's score (knock difference, undercut, gin and big-gin bonuses, Oklahoma's doubling are
the variant's), and "the winner scores what its losers were charged" adds exactly that score to
the scorer's total. What GameTo lacked is data, not another machine: a drawn deal (the wall),
the game-end bonuses and the dealer kept after a wall. Those are generic (a ``GameScoring`` of
plain integers that a table's options carry, a drawn ``DealResult``, ``keeps_dealer``), so the
wire, the ledger (one game, its stakes held at its start and settled by ``GameEnded``) and
replay host gin as they host every game to N, and no format names a variant. Hollywood's three
columns are a different state (``rummy_rules.formats.hollywood``), built on the same game
stakes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Event
from ..rules import RuleSetError, check_bounds, check_commission
from .base import MatchRules, after, check_money_option
from .messages import (
    DealResult,
    DealStarted,
    GameEnded,
    GameStarted,
    MatchEnded,
    MoneyReserved,
    TieBreakDue,
)
from .money import game_stake_hundredths, settle_game
from .scoring import GameScoring, game_end_totals
from .state import MatchState, OutReason, pairs

MAX_GAMES = 10
MAX_TARGET = 100_000


class GameStakes(MatchRules):
    """A format whose money is each game's stake (game to N, Hollywood): each seat holds
    :attr:`stake_hundredths` while a game is open, reserved as the game starts; a deal may end
    drawn (gin's wall)."""

    @property
    def stake_hundredths(self) -> int:
        """What each seat reserves at a game's start (hundredths of a House Token)."""
        raise NotImplementedError

    @property
    def hold_hundredths(self) -> int:
        return self.stake_hundredths

    @property
    def takes_drawn_deals(self) -> bool:
        return True

    def _game_started(self, game_no: int, seats: tuple[int, ...]) -> list[Event]:
        """GameStarted, then each seat's stake reserved (none when the game stakes nothing)."""
        events: list[Event] = [GameStarted(game_no=game_no, seats=seats)]
        if self.stake_hundredths:
            events += [
                MoneyReserved(seat=seat, amount_hundredths=self.stake_hundredths, purpose="game")
                for seat in seats
            ]
        return events


@dataclass(frozen=True)
class GameTo(GameStakes):
    """Games to ``target`` points for ``point_value_hundredths`` (hundredths of a House Token) a
    point, each loser's loss capped at ``max_game_points``; ``scoring``: the points added at
    each game's end (the variant's; none by default); ``missed_turns_lose_game``: a seat dropped
    on missed turns loses the game at the cap (gin). Raises RuleSetError for an option out of
    bounds."""

    target: int = 100
    games: int = 1
    point_value_hundredths: int = 0
    max_game_points: int = 100
    commission_bps: int = 0
    missed_turns_lose_game: bool = False
    scoring: GameScoring = GameScoring()
    min_seats: int = 2
    max_seats: int = 8

    def __post_init__(self) -> None:
        if not isinstance(self.scoring, GameScoring):
            raise RuleSetError("scoring", "a GameScoring", repr(self.scoring))
        check_bounds("target", self.target, 1, MAX_TARGET)
        check_bounds("games", self.games, 1, MAX_GAMES)
        check_bounds("max_game_points", self.max_game_points, 1, MAX_TARGET)
        check_bounds("seats", self.max_seats, 2, 8)
        check_bounds("seats", self.min_seats, 2, self.max_seats)
        check_money_option(
            "point_value_hundredths",
            self.point_value_hundredths,
            self.max_seats,
            self.max_game_points,
        )
        check_commission(self.commission_bps)

    @property
    def name(self) -> str:
        return f"game-to-{self.target}"

    @property
    def stake_hundredths(self) -> int:
        """What each seat reserves at a game's start."""
        return game_stake_hundredths(self.max_game_points, self.point_value_hundredths)

    def in_game(self, state: MatchState) -> tuple[int, ...]:
        """Seats still playing the open game."""
        active = set(state.active)
        return tuple(s for s in state.game_seats if s in active and s not in state.forfeited)

    def _begin(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        if state.game_open:
            chosen = state.next_seats if state.next_seats is not None else self.in_game(state)
            seats = tuple(s for s in chosen if s in self.in_game(state))
            return (
                DealStarted(
                    deal_no=state.deals_scored + 1,
                    seats=seats,
                    tie_break=state.next_tie_break,
                    at_ms=at_ms,
                ),
            )
        seats = state.active
        events = self._game_started(state.game_no + 1, seats)
        events.append(
            DealStarted(deal_no=state.deals_scored + 1, seats=seats, tie_break=False, at_ms=at_ms)
        )
        return tuple(events)

    def _deal_totals(self, state: MatchState, result: DealResult) -> dict[int, int]:
        """The game's totals once ``result`` is counted: its winners share what its losers
        were charged."""
        totals = dict(state.totals)
        paid = sum(p for seat, p in result.points if seat not in result.winners)
        if result.winners:  # a drawn deal scores nothing
            share, remainder = divmod(paid, len(result.winners))
            for i, seat in enumerate(sorted(result.winners)):
                totals[seat] += share + (1 if i < remainder else 0)
        return totals

    def _after_deal(self, played: MatchState, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        """What follows a deal counted (``played``: the state it was played in; ``state``: after
        it): the game's end, a tie-break or nothing yet."""
        return self._decided(state, at_ms)

    def _score(self, state: MatchState, result: DealResult, at_ms: int) -> tuple[Event, ...]:
        totals = self._deal_totals(state, result)
        events: tuple[Event, ...] = (
            self._scored(state, result, totals=pairs(totals)),
            *self._left_mid_deal(state, result),
        )
        if self.missed_turns_lose_game:
            events += self._forfeits_for_missed_turns(state, result)
        return events + self._after_deal(state, after(state, events), at_ms)

    def _after_leave(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        if state.game_open:
            return self._decided(state, at_ms)
        return self._match_over(state, at_ms)

    def _decided(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        """The open game's end (and perhaps the match's), a tie-break, or nothing yet."""
        playing = self.in_game(state)
        if not playing:  # no seat is left in the game (each left or forfeited it mid-deal)
            return (self._abandoned(state, "every seat left the game", at_ms),)
        if len(playing) > 1:
            top = max(state.total(seat) for seat in playing)
            if top < self.target:
                return ()
            tied = tuple(seat for seat in playing if state.total(seat) == top)
            if len(tied) > 1:
                return (TieBreakDue(seats=tied),)
            playing = tied
        return self._won(state, playing[0], at_ms)

    def _won(self, state: MatchState, winner: int, at_ms: int) -> tuple[Event, ...]:
        """The open game's end won by ``winner``: the game-end scoring, the game's settlement
        (each seat that left or forfeited loses at the cap), and the match's end if it is."""
        gone = state.out_seats
        lost_at_cap = state.forfeited | {
            seat for seat in state.game_seats if gone.get(seat) is OutReason.LEFT
        }
        totals = game_end_totals(
            self.scoring,
            {seat: state.total(seat) for seat in state.game_seats},
            dict(state.hands_won),
            winner,
        )
        settlement = settle_game(
            totals,
            winner,
            max_game_points=self.max_game_points,
            point_value_hundredths=self.point_value_hundredths,
            commission_bps=self.commission_bps,
            forfeited=lost_at_cap,
        )
        ended = GameEnded(
            game_no=state.game_no,
            winner=winner,
            totals=pairs(totals),
            settlement=settlement,
        )
        return (ended, *self._match_over(after(state, (ended,)), at_ms))

    def _match_over(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        active = state.active
        if state.game_no < self.games and len(active) >= 2:
            return ()
        won = dict(state.games_won)
        most = max((won.get(seat, 0) for seat in active), default=0)
        winners = tuple(seat for seat in active if won.get(seat, 0) == most)
        return (MatchEnded(winners=winners, reason="games_played", settlement=None, at_ms=at_ms),)
