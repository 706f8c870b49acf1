"""Drive a match format through its commands, as a host would (test helper)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from rummy_rules.commands import Command
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import DealResult, MatchFormat, MatchState
from rummy_rules.formats.messages import (
    BeginDeal,
    LeaveMatch,
    MatchEnded,
    RecordDeal,
    StartMatch,
)

T0 = 1_700_000_000_000
E = TypeVar("E", bound=Event)


class Match:
    """A format, its state and every event it produced, in order."""

    def __init__(self, fmt: MatchFormat, seats: int | tuple[int, ...]) -> None:
        self.fmt = fmt
        self.state: MatchState = fmt.initial_state()
        self.events: list[Event] = []
        numbers = tuple(range(seats)) if isinstance(seats, int) else seats
        self.do(
            StartMatch(
                match_id="m-1",
                seats=tuple(SeatAccount(s, f"acct-{s}") for s in numbers),
                at_ms=T0,
            )
        )

    def do(self, command: Command) -> tuple[Event, ...]:
        new = self.fmt.decide(self.state, command)
        self.state = self.fmt.fold(new, self.state)
        self.events += new
        return new

    def deal(
        self,
        points: Mapping[int, int],
        *,
        left: frozenset[int] = frozenset(),
        timed_out: frozenset[int] = frozenset(),
    ) -> tuple[Event, ...]:
        """Begin a deal and record its result: ``points`` for every seat dealt in (the winners
        are the seats charged 0)."""
        self.do(BeginDeal(at_ms=T0))
        return self.record(points, left=left, timed_out=timed_out)

    def record(
        self,
        points: Mapping[int, int],
        *,
        left: frozenset[int] = frozenset(),
        timed_out: frozenset[int] = frozenset(),
    ) -> tuple[Event, ...]:
        winners = tuple(sorted(s for s, p in points.items() if p == 0))
        result = DealResult(
            points=tuple(sorted(points.items())), winners=winners, left=left, timed_out=timed_out
        )
        return self.do(RecordDeal(result=result, at_ms=T0))

    def leave(self, seat: int) -> tuple[Event, ...]:
        return self.do(LeaveMatch(seat=seat, at_ms=T0))

    def ended(self) -> MatchEnded:
        """The MatchEnded that closed the match (fails if it is not over that way)."""
        assert isinstance(self.state.result, MatchEnded)
        return self.state.result

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]
