"""The match-format interface and what every format shares.

A **match format** wraps a variant's hands ("deals") the way a variant wraps turns: a state
machine ``decide(state, command) -> events`` (raises ``RuleViolation``, changes nothing),
``apply(state, event) -> state``, ``fold(events) -> state`` over one
:class:`~rummy_rules.formats.state.MatchState`. It consumes each deal's generic result
(:class:`~rummy_rules.formats.messages.DealResult`: points, winners, who left, who timed out) or
its abort, and owns the money (``rummy_rules.formats.money``). ``deal_rules`` is what it asks of
each deal, in its own terms (its kind and target; None: the variant's own rule set): the variant
turns it into its rule set. Nothing here names a variant. ``docs/rules/formats.md``.

:class:`MatchRules` is the shared half: starting, the phase checks, a deal's validation, a voided
deal, an abort, a leave; each format adds its scoring and its end.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ..commands import Command
from ..errors import ErrorCode, RuleViolation
from ..events import Event
from ..rules import INT64_MAX, check_bounds
from .messages import (
    AbortMatch,
    AcceptRejoin,
    BeginDeal,
    DealResult,
    DealRules,
    DealScored,
    DealStarted,
    DealVoided,
    DeclineRejoin,
    LeaveMatch,
    MatchAborted,
    MatchStarted,
    RecordDeal,
    RecordDealAborted,
    RejoinNotHeld,
    RequestSplit,
    SeatForfeitedGame,
    SeatLeft,
    StartMatch,
)
from .state import MatchPhase, MatchState, OutReason, Pairs, fold, pairs

#: The seats a match of any format may have (a table's 2 to 8). A format or its variant may take
#: fewer: the variant refuses a seat count it deals no such deals for (``Variant.deal_rule_set``).
MATCH_SEATS = (2, 8)


class MatchFormat(Protocol):
    """One match format behind the interface a host uses."""

    @property
    def min_seats(self) -> int:
        """The fewest seats a match of this format starts with."""
        ...

    @property
    def max_seats(self) -> int:
        """The most seats a match of this format takes."""
        ...

    @property
    def name(self) -> str:
        """``single``, ``pool-101``, ``deals-3``, ``best-of-3``, ``game-to-100`` ..."""
        ...

    @property
    def deal_rules(self) -> DealRules | None:
        """What this format asks of each deal's rule set (its kind and target), or None (the
        table's own rule set); ``Variant.deal_rule_set`` answers."""
        ...

    @property
    def hold_hundredths(self) -> int:
        """The most one reservation of this format holds for one seat, in hundredths (an entry,
        a game's stake; 0: the format reserves nothing of its own)."""
        ...

    def initial_state(self) -> MatchState: ...

    def decide(self, state: MatchState, command: Command) -> tuple[Event, ...]:
        """The events ``command`` causes. Raises RuleViolation for a command refused."""
        ...

    def apply(self, state: MatchState, event: Event) -> MatchState: ...

    def fold(self, events: Iterable[Event], state: MatchState | None = None) -> MatchState: ...

    def deals_left(self, state: MatchState) -> int | None:
        """Deals still to play by the format's count (0 in a tie-break), None if it has none."""
        ...

    def chips(self, state: MatchState) -> dict[int, int] | None:
        """Each seat's chips (deals), None for a format without chips."""
        ...

    def keeps_dealer(self, state: MatchState) -> bool:
        """Whether the next deal is dealt by the last deal's dealer (the last deal counted was
        drawn: gin's wall, "same dealer redeals"); otherwise the host moves the button."""
        ...


def refuse(code: ErrorCode, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def after(state: MatchState, events: Sequence[Event]) -> MatchState:
    """The state once ``events`` are applied (to decide what follows them)."""
    return fold(events, state)


def added_totals(state: MatchState, result: DealResult) -> Pairs:
    """The running totals once each seat dealt in adds the points ``result`` charged it."""
    totals = dict(state.totals)
    for seat, p in result.points:
        totals[seat] = totals.get(seat, 0) + p
    return pairs(totals)


def check_money_option(option: str, cents: int, seats: int, copies: int = 1) -> None:
    """Raise RuleSetError unless ``0 <= cents`` and ``seats x copies x cents`` fits an int64."""
    check_bounds(
        option,
        cents,
        0,
        INT64_MAX // (seats * copies),
        "hundredths of a House Token; the pool "
        "of every seat's holds must fit a signed 64-bit amount",
    )


class MatchRules:
    """The shared half of a format; a subclass sets ``name``, the seat bounds and implements
    :meth:`_score` (a deal's result) and, where it has them, rejoins and splits."""

    min_seats: int = MATCH_SEATS[0]
    max_seats: int = MATCH_SEATS[1]

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def deal_rules(self) -> DealRules | None:
        return None

    @property
    def hold_hundredths(self) -> int:
        """The most one reservation of this format holds for one seat (hundredths of a House
        Token): an entry (pool, deals, best of N), a game's stake (game to N); 0 when the
        format reserves nothing of its own (single: the hand reserves)."""
        return 0

    def initial_state(self) -> MatchState:
        return MatchState()

    def apply(self, state: MatchState, event: Event) -> MatchState:
        return fold((event,), state)

    def fold(self, events: Iterable[Event], state: MatchState | None = None) -> MatchState:
        return fold(events, state)

    def deals_left(self, state: MatchState) -> int | None:
        return None

    def chips(self, state: MatchState) -> dict[int, int] | None:
        return None

    def keeps_dealer(self, state: MatchState) -> bool:
        return state.last_deal_drawn

    @property
    def takes_drawn_deals(self) -> bool:
        """Whether a deal may end drawn (no winner, nothing charged): game to N, Hollywood."""
        return False

    # ---------------------------------------------------------------------------------- decide

    def decide(self, state: MatchState, command: Command) -> tuple[Event, ...]:  # noqa: C901
        if isinstance(command, StartMatch):
            return self._start(state, command)
        if state.phase is MatchPhase.NOT_STARTED:
            raise refuse(ErrorCode.WRONG_PHASE, "the match has not started")
        if state.is_over:
            raise refuse(ErrorCode.WRONG_PHASE, "the match is over")
        if isinstance(command, AbortMatch):
            released = tuple((seat, cents) for seat, cents in state.held if cents > 0)
            return (MatchAborted(reason=command.reason, released=released, at_ms=command.at_ms),)
        if isinstance(command, BeginDeal):
            self._between_deals(state, "deal the next deal")
            return self._begin(state, command.at_ms)
        if isinstance(command, RecordDeal):
            self._in_deal(state, "record a deal's result")
            self._check_result(state, command.result, command.most_points)
            return self._score(state, command.result, command.at_ms)
        if isinstance(command, RecordDealAborted):
            self._in_deal(state, "void a deal")
            return self._void(state, command)
        if isinstance(command, LeaveMatch):
            self._seat_in(state, command.seat)
            return self._leave(state, command)
        if isinstance(command, AcceptRejoin | DeclineRejoin):
            return self._rejoin(state, command)
        if isinstance(command, RejoinNotHeld):
            return self._rejoin_not_held(state, command)
        if isinstance(command, RequestSplit):
            return self._split(state, command)
        raise refuse(ErrorCode.INVALID_COMMAND, f"{type(command).__name__} is not a match command")

    def _between_deals(self, state: MatchState, what: str) -> None:
        if state.phase is not MatchPhase.BETWEEN_DEALS:
            raise refuse(ErrorCode.WRONG_PHASE, f"cannot {what} while a deal is being played")

    def _in_deal(self, state: MatchState, what: str) -> None:
        if state.phase is not MatchPhase.IN_DEAL:
            raise refuse(ErrorCode.WRONG_PHASE, f"cannot {what}: no deal is being played")

    def _seat_in(self, state: MatchState, seat: int) -> None:
        if seat not in state.seat_numbers:
            raise refuse(ErrorCode.NOT_IN_HAND, f"seat {seat} is not in this match")
        if seat not in state.active:
            raise refuse(ErrorCode.WRONG_PHASE, f"seat {seat} is out of the match")

    def _start(self, state: MatchState, command: StartMatch) -> tuple[Event, ...]:
        if state.phase is not MatchPhase.NOT_STARTED:
            raise refuse(ErrorCode.DUPLICATE, "the match has already started")
        if not command.match_id:
            raise refuse(ErrorCode.INVALID_COMMAND, "a match needs an id")
        seats = [s.seat for s in command.seats]
        accounts = [s.account_id for s in command.seats]
        if not self.min_seats <= len(seats) <= self.max_seats:
            raise refuse(
                ErrorCode.INVALID_COMMAND,
                f"a {self.name} match needs {self.min_seats}..{self.max_seats} seats, "
                f"got {len(seats)}",
            )
        if len(set(seats)) != len(seats) or any(seat < 0 for seat in seats):
            raise refuse(ErrorCode.INVALID_COMMAND, "every seat must be a distinct number >= 0")
        if len(set(accounts)) != len(accounts) or not all(accounts):
            raise refuse(ErrorCode.INVALID_COMMAND, "one seat per account, every seat an account")
        started = MatchStarted(
            match_id=command.match_id,
            match_format=self.name,
            seats=tuple(sorted(command.seats, key=lambda s: s.seat)),
            at_ms=command.at_ms,
        )
        return (started, *self._start_money(sorted(seats)))

    def _start_money(self, seats: Sequence[int]) -> tuple[Event, ...]:
        return ()

    def _next_deal_seats(self, state: MatchState) -> tuple[int, ...]:
        active = set(state.active)
        chosen = state.next_seats if state.next_seats is not None else state.active
        return tuple(seat for seat in chosen if seat in active)

    def _begin(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        return (
            DealStarted(
                deal_no=state.deals_scored + 1,
                seats=self._next_deal_seats(state),
                tie_break=state.next_tie_break,
                at_ms=at_ms,
            ),
        )

    def _check_result(self, state: MatchState, result: DealResult, most: int | None) -> None:
        seats = result.seats
        bad = ErrorCode.INVALID_DEAL
        if list(seats) != sorted(set(seats)) or set(seats) != set(state.deal_seats):
            raise refuse(bad, f"the deal was dealt to {list(state.deal_seats)}, not {list(seats)}")
        winners = result.winners
        if result.drawn and self.takes_drawn_deals:
            if any(p != 0 for _, p in result.points) or result.left or result.timed_out:
                raise refuse(bad, "a drawn deal charges nobody, and nobody leaves or times out")
            return
        if not winners or len(set(winners)) != len(winners) or not set(winners) <= set(seats):
            raise refuse(bad, "a deal's winners must be distinct seats dealt in")
        if len(winners) == len(seats):
            raise refuse(bad, "a deal needs at least one loser")
        points = dict(result.points)
        for seat, p in points.items():
            if p < 0 or (most is not None and p > most):
                bounds = f"0..{most}" if most is not None else ">= 0"
                raise refuse(bad, f"seat {seat} is charged {p} points; a deal charges {bounds}")
        if any(points[w] != 0 for w in winners):
            raise refuse(bad, "a deal's winner is charged no points")
        if not (result.left | result.timed_out) <= set(seats) - set(winners):
            raise refuse(bad, "only a losing seat dealt in can leave or time out")

    def _scored(
        self, state: MatchState, result: DealResult, *, totals: Pairs = (), chips: Pairs = ()
    ) -> DealScored:
        """The DealScored of ``result`` with the standings after it."""
        return DealScored(
            deal_no=state.deals_scored + 1,
            points=result.points,
            winners=result.winners,
            totals=totals,
            chips=chips,
            timed_out=tuple(sorted(result.timed_out)),
        )

    def _void(self, state: MatchState, command: RecordDealAborted) -> tuple[Event, ...]:
        voided = DealVoided(deal_no=state.deals_scored + 1, reason=command.reason)
        now = self.fold((voided,), state)
        # Seats left mid-deal and the deal is void: no result decides what follows them.
        if not now.active:  # nobody left to win: as an aborted match, every hold released
            return (voided, self._abandoned(now, "every seat left a voided deal", command.at_ms))
        if len(now.active) == 1:  # the match ends as after a leave between deals
            return (voided, *self._after_leave(now, command.at_ms))
        return (voided,)

    def _abandoned(self, state: MatchState, reason: str, at_ms: int) -> MatchAborted:
        """The match's end when no seat is left to win it (every seat left): as an aborted
        match, every hold released, no winner paid."""
        released = tuple((seat, cents) for seat, cents in state.held if cents > 0)
        return MatchAborted(reason=reason, released=released, at_ms=at_ms)

    def _left_mid_deal(self, state: MatchState, result: DealResult) -> tuple[Event, ...]:
        gone = state.out_seats
        return tuple(
            SeatLeft(seat=seat, mid_deal=True)
            for seat in sorted(result.left)
            if gone.get(seat) is not OutReason.LEFT
        )

    def _forfeits_for_missed_turns(
        self, state: MatchState, result: DealResult
    ) -> tuple[SeatForfeitedGame, ...]:
        """A game format's ``missed_turns_lose_game``: a SeatForfeitedGame for each seat the deal
        ``result`` timed out (and that did not leave it) that has not forfeited the game yet."""
        return tuple(
            SeatForfeitedGame(seat=seat)
            for seat in sorted(result.timed_out - result.left)
            if seat not in state.forfeited
        )

    def _leave(self, state: MatchState, command: LeaveMatch) -> tuple[Event, ...]:
        mid_deal = command.seat in state.deal_seats
        left = SeatLeft(seat=command.seat, mid_deal=mid_deal)
        if state.phase is MatchPhase.IN_DEAL:
            # Mid-deal the variant scores the seat's deal; what follows is decided with the
            # deal's result (also for a seat sitting out a tie-break being played).
            return (left,)
        return (left, *self._after_leave(self.fold((left,), state), command.at_ms))

    def _after_leave(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        return ()

    def _score(self, state: MatchState, result: DealResult, at_ms: int) -> tuple[Event, ...]:
        raise NotImplementedError

    def _rejoin(
        self, state: MatchState, command: AcceptRejoin | DeclineRejoin
    ) -> tuple[Event, ...]:
        raise refuse(ErrorCode.INVALID_COMMAND, f"a {self.name} match has no rejoin")

    def _rejoin_not_held(self, state: MatchState, command: RejoinNotHeld) -> tuple[Event, ...]:
        raise refuse(ErrorCode.INVALID_COMMAND, f"a {self.name} match has no rejoin")

    def _split(self, state: MatchState, command: RequestSplit) -> tuple[Event, ...]:
        raise refuse(ErrorCode.INVALID_COMMAND, f"a {self.name} match has no split")
