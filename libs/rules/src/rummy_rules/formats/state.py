"""A match's state, folded from its events: one state and one ``apply`` for every format.

The format decides (``rummy_rules.formats.base``); the state only records facts. Immutable: maps
are tuples of ``(seat, value)`` pairs, ascending seats. ``docs/rules/formats.md#state``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

from ..events import Event, SeatAccount
from .messages import (
    DealScored,
    DealStarted,
    DealVoided,
    GameEnded,
    GameStarted,
    MatchAborted,
    MatchEnded,
    MatchStarted,
    MoneyReserved,
    RejoinDeclined,
    Rejoined,
    RejoinOffered,
    RejoinRefused,
    SeatEliminated,
    SeatForfeitedGame,
    SeatLeft,
    SplitRequested,
    TieBreakDue,
)

Pairs = tuple[tuple[int, int], ...]


def pairs(mapping: Mapping[int, int]) -> Pairs:
    """``mapping`` as ``(seat, value)`` pairs, ascending seats."""
    return tuple(sorted(mapping.items()))


def with_value(items: Pairs, seat: int, value: int) -> Pairs:
    """``items`` with ``seat`` set to ``value``."""
    return pairs({**dict(items), seat: value})


class MatchPhase(Enum):
    NOT_STARTED = "not_started"
    BETWEEN_DEALS = "between_deals"
    IN_DEAL = "in_deal"
    ENDED = "ended"
    ABORTED = "aborted"


class OutReason(Enum):
    ELIMINATED = "eliminated"
    LEFT = "left"


@dataclass(frozen=True)
class GameSheet:
    """One game's score sheet (game to N: one per game started; Hollywood: its three columns).

    ``number``: the game (1, 2, ...) or the column (1..3); ``points``: the points each seat
    scored from hands in it; ``boxes``: the hands each seat won in it (Hollywood: the wins
    entered in this column); ``winner``: None while it runs; ``totals``: once ended, each seat's
    total after the game-end scoring (game bonus, boxes: ``rummy_rules.formats.scoring``),
    while it runs the same as ``points``; ``forfeited``: seats that lost it at the cap."""

    number: int
    points: Pairs
    boxes: Pairs
    winner: int | None = None
    totals: Pairs = ()
    forfeited: frozenset[int] = frozenset()

    @property
    def running(self) -> bool:
        return self.winner is None

    def boxes_of(self, seat: int) -> int:
        return dict(self.boxes).get(seat, 0)

    def points_of(self, seat: int) -> int:
        return dict(self.points).get(seat, 0)

    def total_of(self, seat: int) -> int:
        return dict(self.totals or self.points).get(seat, 0)


def new_sheet(number: int, seats: Iterable[int]) -> GameSheet:
    """A game (or column) just started: every seat at 0 points and 0 boxes."""
    zero = pairs({seat: 0 for seat in seats})
    return GameSheet(number=number, points=zero, boxes=zero)


@dataclass(frozen=True)
class MatchState:
    """Everything a format decides from.

    - ``seats``: every seat that started (ascending); ``out``: ``(seat, OutReason)`` of those out;
    - ``held``: cents each seat has reserved now (entries, or the open game's stake);
    - ``totals``: running points (pool, best of N) or the open game's totals (game to N);
      ``chips``: deals only;
    - ``deals_scored``: deals counted (a voided deal does not count); ``deal_seats``: the deal
      being played (empty between deals); ``next_seats``: who the next deal is dealt to when not
      every seat still in (a tie-break, or a voided deal replayed), and ``next_tie_break``;
    - ``rejoin_offers``: ``(seat, total)`` open offers; ``rejoined``: seats that used theirs,
      ``rejoined_from`` their totals before (what a refused rejoin puts back);
      ``split_requests``: seats that asked to split since the last deal;
    - ``game_no``, ``game_open``, ``game_seats``, ``forfeited`` (lost the open game at the cap),
      ``games_won``: game to N;
    - ``hands_won``: deals each seat won in the open game (boxes; the whole match for a format
      without games); ``last_deal_drawn``: the last deal counted was drawn (no winner: gin's
      wall), so its dealer deals again; ``sheets``: the score sheet of every game started
      (game to N, the last one the open game) or of Hollywood's columns;
    - ``result``: the MatchEnded or MatchAborted that closed it.
    """

    match_id: str = ""
    match_format: str = ""
    phase: MatchPhase = MatchPhase.NOT_STARTED
    seats: tuple[SeatAccount, ...] = ()
    out: tuple[tuple[int, OutReason], ...] = ()
    held: Pairs = ()
    totals: Pairs = ()
    chips: Pairs = ()
    deals_scored: int = 0
    deal_seats: tuple[int, ...] = ()
    tie_break: bool = False
    next_seats: tuple[int, ...] | None = None
    next_tie_break: bool = False
    rejoin_offers: Pairs = ()
    rejoined: frozenset[int] = frozenset()
    rejoined_from: Pairs = ()
    split_requests: frozenset[int] = frozenset()
    game_no: int = 0
    game_open: bool = False
    game_seats: tuple[int, ...] = ()
    forfeited: frozenset[int] = frozenset()
    games_won: Pairs = ()
    hands_won: Pairs = ()
    last_deal_drawn: bool = False
    sheets: tuple[GameSheet, ...] = ()
    result: MatchEnded | MatchAborted | None = field(default=None)

    @property
    def seat_numbers(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats)

    @property
    def out_seats(self) -> dict[int, OutReason]:
        return dict(self.out)

    @property
    def active(self) -> tuple[int, ...]:
        """Seats still in the match, ascending."""
        gone = self.out_seats
        return tuple(seat for seat in self.seat_numbers if seat not in gone)

    def total(self, seat: int) -> int:
        return dict(self.totals).get(seat, 0)

    @property
    def is_over(self) -> bool:
        return self.phase in (MatchPhase.ENDED, MatchPhase.ABORTED)


def apply(state: MatchState, event: Event) -> MatchState:  # noqa: C901 - one branch per event
    """The state after ``event``. Never raises on a history a format's ``decide`` produced."""
    if isinstance(event, MatchStarted):
        seats = tuple(sorted(event.seats, key=lambda s: s.seat))
        zero = pairs({s.seat: 0 for s in seats})
        return replace(
            state,
            match_id=event.match_id,
            match_format=event.match_format,
            phase=MatchPhase.BETWEEN_DEALS,
            seats=seats,
            held=zero,
            totals=zero,
            games_won=zero,
        )
    if isinstance(event, MoneyReserved):
        held = dict(state.held)
        return replace(
            state,
            held=with_value(
                state.held, event.seat, held.get(event.seat, 0) + event.amount_hundredths
            ),
        )
    if isinstance(event, GameStarted):
        return replace(
            state,
            game_no=event.game_no,
            game_open=True,
            game_seats=event.seats,
            totals=pairs({seat: 0 for seat in event.seats}),
            forfeited=frozenset(),
            hands_won=pairs({seat: 0 for seat in event.seats}),
            sheets=(*state.sheets, new_sheet(event.game_no, event.seats)),
        )
    if isinstance(event, DealStarted):
        return replace(
            state,
            phase=MatchPhase.IN_DEAL,
            deal_seats=event.seats,
            tie_break=event.tie_break,
            next_seats=None,
            next_tie_break=False,
            rejoin_offers=(),
            split_requests=frozenset(),
        )
    if isinstance(event, DealScored):
        won = dict(state.hands_won)
        for seat in event.winners:
            won[seat] = won.get(seat, 0) + 1
        now = replace(
            state,
            phase=MatchPhase.BETWEEN_DEALS,
            deals_scored=state.deals_scored + 1,
            deal_seats=(),
            totals=event.totals or state.totals,
            chips=event.chips or state.chips,
            hands_won=pairs(won),
            last_deal_drawn=not event.winners,
        )
        if state.game_open and state.sheets and state.sheets[-1].running:
            sheet = replace(state.sheets[-1], points=now.totals, boxes=now.hands_won)
            now = replace(now, sheets=(*state.sheets[:-1], sheet))
        return now
    if isinstance(event, TieBreakDue):
        return replace(state, next_seats=event.seats, next_tie_break=True)
    if isinstance(event, DealVoided):
        gone = state.out_seats
        return replace(
            state,
            phase=MatchPhase.BETWEEN_DEALS,
            next_seats=tuple(seat for seat in state.deal_seats if seat not in gone),
            next_tie_break=state.tie_break,
            deal_seats=(),
        )
    if isinstance(event, SeatEliminated):
        return replace(state, out=_out(state, event.seat, OutReason.ELIMINATED))
    if isinstance(event, SeatLeft):
        offers = tuple(o for o in state.rejoin_offers if o[0] != event.seat)
        return replace(state, out=_out(state, event.seat, OutReason.LEFT), rejoin_offers=offers)
    if isinstance(event, SeatForfeitedGame):
        return replace(state, forfeited=state.forfeited | {event.seat})
    if isinstance(event, RejoinOffered):
        return replace(
            state, rejoin_offers=with_value(state.rejoin_offers, event.seat, event.total)
        )
    if isinstance(event, Rejoined):
        return replace(
            state,
            out=tuple(o for o in state.out if o[0] != event.seat),
            totals=with_value(state.totals, event.seat, event.total),
            rejoined=state.rejoined | {event.seat},
            rejoined_from=with_value(state.rejoined_from, event.seat, state.total(event.seat)),
            rejoin_offers=tuple(o for o in state.rejoin_offers if o[0] != event.seat),
        )
    if isinstance(event, RejoinRefused):
        return replace(
            state,
            out=_out(state, event.seat, OutReason.ELIMINATED),
            totals=with_value(state.totals, event.seat, event.total),
            held=with_value(
                state.held, event.seat, dict(state.held).get(event.seat, 0) - event.entry_hundredths
            ),
            rejoined=state.rejoined - {event.seat},
            rejoined_from=tuple(r for r in state.rejoined_from if r[0] != event.seat),
        )
    if isinstance(event, RejoinDeclined):
        return replace(
            state, rejoin_offers=tuple(o for o in state.rejoin_offers if o[0] != event.seat)
        )
    if isinstance(event, SplitRequested):
        return replace(state, split_requests=state.split_requests | {event.seat})
    if isinstance(event, GameEnded):
        won = dict(state.games_won)
        sheets = state.sheets
        if sheets and sheets[-1].number == event.game_no and sheets[-1].running:
            gone = state.out_seats
            lost = state.forfeited | {
                seat for seat in state.game_seats if gone.get(seat) is OutReason.LEFT
            }
            sheet = replace(sheets[-1], winner=event.winner, totals=event.totals, forfeited=lost)
            sheets = (*sheets[:-1], sheet)
        return replace(
            state,
            sheets=sheets,
            game_open=False,
            game_seats=(),
            held=pairs({seat: 0 for seat, _ in state.held}),
            games_won=with_value(state.games_won, event.winner, won.get(event.winner, 0) + 1),
            totals=event.totals,
            next_seats=None,
            next_tie_break=False,
        )
    if isinstance(event, MatchEnded):
        return replace(state, phase=MatchPhase.ENDED, result=event, deal_seats=())
    if isinstance(event, MatchAborted):
        return replace(state, phase=MatchPhase.ABORTED, result=event, deal_seats=())
    return state


def _out(state: MatchState, seat: int, reason: OutReason) -> tuple[tuple[int, OutReason], ...]:
    rest = tuple(o for o in state.out if o[0] != seat)
    return tuple(sorted((*rest, (seat, reason)), key=lambda o: o[0]))


def fold(events: Iterable[Event], state: MatchState | None = None) -> MatchState:
    """``apply`` each event in order, from ``state`` or a match not yet started."""
    current = MatchState() if state is None else state
    for event in events:
        current = apply(current, event)
    return current
