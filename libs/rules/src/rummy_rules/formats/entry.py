"""What the entry-fee formats (pool, deals, best of N) share: the entries reserved at the start,
the winner paid the pool less the commission, each deal asked of the variant by the format's kind
(its rule set is the variant's: ``Variant.deal_rule_set``), and the end of a match decided by
standings with tie-break deals (deals, best of N). ``docs/rules/formats.md#money``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from ..events import Event
from ..rules import check_commission
from .base import MatchRules, after, check_money_option
from .messages import DealResult, DealRules, DealScored, MatchEnded, MoneyReserved, TieBreakDue
from .money import entry_reservations, settle_winner
from .state import MatchState


class EntryFeeFormat(MatchRules):
    """A format played for an entry fee: ``entry_hundredths`` per seat (0: a free table) and
    ``commission_bps`` on the prize pool; each deal asked of the variant as ``kind``."""

    #: The format's kind (``rummy_rules.formats.FORMAT_KINDS``), what its deals are asked as.
    kind: ClassVar[str]
    entry_hundredths: int
    commission_bps: int

    @property
    def hold_hundredths(self) -> int:
        return self.entry_hundredths

    @property
    def entry_copies(self) -> int:
        """The most entries one seat can hold (2 when a rejoin adds one)."""
        return 1

    def _check_money(self) -> None:
        check_money_option(
            "entry_hundredths", self.entry_hundredths, self.max_seats, self.entry_copies
        )
        check_commission(self.commission_bps)

    @property
    def deal_rules(self) -> DealRules | None:
        return DealRules(kind=self.kind)

    def _start_money(self, seats: Sequence[int]) -> tuple[Event, ...]:
        if self.entry_hundredths == 0:
            return ()
        return tuple(
            MoneyReserved(seat=seat, amount_hundredths=cents, purpose="entry")
            for seat, cents in entry_reservations(seats, self.entry_hundredths)
        )

    def _won(self, state: MatchState, winner: int, reason: str, at_ms: int) -> MatchEnded:
        settlement = settle_winner(dict(state.held), winner, self.commission_bps)
        return MatchEnded(winners=(winner,), reason=reason, settlement=settlement, at_ms=at_ms)

    def _after_leave(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        if len(state.active) == 1:
            return (self._won(state, state.active[0], "last_left", at_ms),)
        return ()


class RankedFormat(EntryFeeFormat):
    """A fixed number of deals (``deals``) ranked by a standing (chips: most wins; points: least
    wins); a tie at the top plays one more deal among the tied seats, until it is broken."""

    deals: int
    #: The reason a MatchEnded gives when the standings decide.
    ranked_reason: ClassVar[str]

    def _standing(self, state: MatchState) -> Mapping[int, int]:
        """Each seat's standing, higher is better."""
        raise NotImplementedError

    def _deal_scored(self, state: MatchState, result: DealResult) -> DealScored:
        raise NotImplementedError

    def deals_left(self, state: MatchState) -> int | None:
        return max(self.deals - state.deals_scored, 0)

    def _score(self, state: MatchState, result: DealResult, at_ms: int) -> tuple[Event, ...]:
        events: tuple[Event, ...] = (
            self._deal_scored(state, result),
            *self._left_mid_deal(state, result),
        )
        return events + self._decided(after(state, events), at_ms)

    def _after_leave(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        return self._decided(state, at_ms)

    def _decided(self, state: MatchState, at_ms: int) -> tuple[Event, ...]:
        """The match's end or a tie-break once the deals are played (or one seat is left)."""
        active = state.active
        if not active:  # every seat left mid-deal
            return (self._abandoned(state, "every seat left the match", at_ms),)
        if len(active) == 1:
            return (self._won(state, active[0], "last_left", at_ms),)
        if state.deals_scored < self.deals:
            return ()
        standing = self._standing(state)
        best = max(standing[seat] for seat in active)
        top = tuple(seat for seat in active if standing[seat] == best)
        if len(top) == 1:
            return (self._won(state, top[0], self.ranked_reason, at_ms),)
        return (TieBreakDue(seats=top),)
