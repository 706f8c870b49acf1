"""Pool 101 / 201 (the rulebook's "Pool Rummy"; ``docs/rules/formats.md#pool``).

Each deal is a hand of the variant, on its rule set for a pool of this target (Indian points:
drops 20/40 at 101, 25/50 at 201, wrong declare 80, cards capped at 80; ``Variant.deal_rule_set``);
losers add their points to a running total (a deal's winner adds 0); a seat whose total reaches
the target (101 or 201) is eliminated; the last seat left wins the pool less the commission.
Options (off by default): ``rejoin`` (an eliminated seat may buy in once more for a
new entry, at the highest remaining total + 1, while at least two others remain and that total is
at most 79 / 174; offered between deals, lapsing when the next deal is dealt) and ``split``
(when every seat left asks between deals, the pool less the commission is shared:
``rummy_rules.formats.money.settle_split``). ``docs/rules/formats.md#pool``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import ErrorCode
from ..events import Event
from ..rules import RuleSetError
from .base import added_totals, after, refuse
from .entry import EntryFeeFormat
from .messages import (
    AcceptRejoin,
    DealResult,
    DealRules,
    DeclineRejoin,
    MatchEnded,
    MoneyReserved,
    RejoinDeclined,
    Rejoined,
    RejoinNotHeld,
    RejoinOffered,
    RejoinRefused,
    RequestSplit,
    SeatEliminated,
    SplitRequested,
)
from .money import settle_split
from .state import MatchState, OutReason

#: target -> the highest total a rejoin may come back at.
POOL_TARGETS = {101: 79, 201: 174}


@dataclass(frozen=True)
class Pool(EntryFeeFormat):
    """A pool to ``target`` (101 or 201) for ``entry_hundredths`` a seat. Raises RuleSetError for an
    option out of bounds."""

    target: int = 101
    entry_hundredths: int = 0
    commission_bps: int = 0
    rejoin: bool = False
    split: bool = False
    kind: ClassVar[str] = "pool"

    def __post_init__(self) -> None:
        if self.target not in POOL_TARGETS:
            raise RuleSetError("target", "101 or 201", self.target)
        self._check_money()

    @property
    def name(self) -> str:
        return f"pool-{self.target}"

    @property
    def entry_copies(self) -> int:
        return 2 if self.rejoin else 1

    @property
    def deal_rules(self) -> DealRules | None:
        """A pool's deals are asked of the variant with the pool's target (Indian points: drops
        20/40 at 101, 25/50 at 201)."""
        return DealRules(kind=self.kind, target=self.target)

    @property
    def rejoin_limit(self) -> int:
        """The highest total a rejoining seat may come back at (79 or 174)."""
        return POOL_TARGETS[self.target]

    def _score(self, state: MatchState, result: DealResult, at_ms: int) -> tuple[Event, ...]:
        scored = self._scored(state, result, totals=added_totals(state, result))
        totals = dict(scored.totals)
        left = self._left_mid_deal(state, result)
        gone = result.left | set(state.out_seats)
        eliminated = tuple(
            SeatEliminated(seat=seat, total=totals[seat])
            for seat in result.seats
            if seat not in gone and totals[seat] >= self.target
        )
        events: tuple[Event, ...] = (scored, *left, *eliminated)
        now = after(state, events)
        if len(now.active) <= 1:
            winner = now.active[0] if now.active else min(result.winners)
            return (*events, self._won(now, winner, "last_left", at_ms))
        offers = tuple(
            RejoinOffered(seat=e.seat, total=total, entry_hundredths=self.entry_hundredths)
            for e in eliminated
            if (total := self._rejoin_total(now, e.seat)) is not None
        )
        return (*events, *offers)

    def _rejoin_total(self, state: MatchState, seat: int) -> int | None:
        """The total ``seat`` would come back at, or None if it may not rejoin now."""
        if not self.rejoin or seat in state.rejoined:
            return None
        if state.out_seats.get(seat) is not OutReason.ELIMINATED:
            return None
        others = [s for s in state.active if s != seat]
        if len(others) < 2:
            return None
        total = max(state.total(s) for s in others) + 1
        return total if total <= self.rejoin_limit else None

    def _rejoin(
        self, state: MatchState, command: AcceptRejoin | DeclineRejoin
    ) -> tuple[Event, ...]:
        if not self.rejoin:
            raise refuse(ErrorCode.INVALID_COMMAND, f"this {self.name} table has no rejoin")
        self._between_deals(state, "rejoin")
        seat = command.seat
        if seat not in dict(state.rejoin_offers):
            raise refuse(ErrorCode.WRONG_PHASE, f"seat {seat} has no open rejoin offer")
        if isinstance(command, DeclineRejoin):
            return (RejoinDeclined(seat=seat),)
        total = self._rejoin_total(state, seat)
        if total is None:
            raise refuse(
                ErrorCode.WRONG_PHASE,
                f"the rejoin is no longer open (two others must remain and the total would "
                f"have to be at most {self.rejoin_limit})",
            )
        events: tuple[Event, ...] = (Rejoined(seat=seat, total=total),)
        if self.entry_hundredths:
            events += (
                MoneyReserved(seat=seat, amount_hundredths=self.entry_hundredths, purpose="rejoin"),
            )
        return events

    def _rejoin_not_held(self, state: MatchState, command: RejoinNotHeld) -> tuple[Event, ...]:
        """The ledger could not hold ``seat``'s rejoin entry: the rejoin is undone, the seat
        eliminated again at its total before it (DESIGN: the match starts once every entry is
        held; a rejoin that cannot be held is that seat's alone, not the others' match)."""
        seat = command.seat
        before = dict(state.rejoined_from)
        if seat not in state.rejoined or seat not in before:
            raise refuse(ErrorCode.WRONG_PHASE, f"seat {seat} has no rejoin waiting for its entry")
        return (
            RejoinRefused(seat=seat, total=before[seat], entry_hundredths=self.entry_hundredths),
        )

    def _split(self, state: MatchState, command: RequestSplit) -> tuple[Event, ...]:
        if not self.split:
            raise refuse(ErrorCode.INVALID_COMMAND, f"this {self.name} table has no split")
        self._between_deals(state, "split")
        self._seat_in(state, command.seat)
        if command.seat in state.split_requests:
            raise refuse(ErrorCode.DUPLICATE, f"seat {command.seat} has already asked to split")
        requested = SplitRequested(seat=command.seat)
        now = after(state, (requested,))
        if set(now.active) - now.split_requests:
            return (requested,)
        totals = {seat: now.total(seat) for seat in now.active}
        settlement = settle_split(dict(now.held), totals, self.commission_bps)
        ended = MatchEnded(
            winners=now.active, reason="split", settlement=settlement, at_ms=command.at_ms
        )
        return (requested, ended)
