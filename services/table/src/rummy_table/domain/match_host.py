"""A table's match: the format a table hosts over its variant, its state folded from the table's
match facts (live and on replay alike), and the match facts its decisions write.

A table of a format other than ``single`` (``TableOpened.match``) holds one :class:`MatchHost`
(:attr:`rummy_table.domain.table.Table.match`). The host only records and decides; the table says
when (:mod:`.match_hosting`): a match starts when every seat is taken (StartMatch: MatchStarted and
the entries' MoneyReserved), its first deal waits for the ledger's MatchMoneyHeld (a
MatchMoneyRejected aborts the match), each deal is one hand of the variant whose rule set is the
format's (``Variant.deal_rule_set``), the hand's end is the deal's result (RecordDeal; an aborted
hand voids the deal: RecordDealAborted), a game's stakes (game to N) are held before its first
hand is dealt. ``docs/rules/formats.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, TypeGuard

from rummy_game.money_purposes import LEDGER_PURPOSE
from rummy_rules.commands import Command
from rummy_rules.errors import RuleViolation
from rummy_rules.formats import MatchFormat, MatchPhase, MatchState, MatchView, match_view
from rummy_rules.formats import messages as fm
from rummy_rules.formats.state import apply
from rummy_rules.rules import RuleSet
from rummy_rules.variant import Variant

from .facts import MatchFact, MatchMoney, MatchMoneyHeld, MatchMoneyRejected, MatchRecord

#: The match events whose record names the hand that plays the deal.
_OF_A_DEAL = (fm.DealStarted, fm.DealScored, fm.DealVoided)


def match_fact(event: fm.MatchEvent, before: MatchState, hand_id: str) -> MatchFact:
    """``event`` as its fact, decided from match state ``before``: with ``hand_id`` when it is
    a deal's, with the open game of a game's MoneyReserved."""
    stake = isinstance(event, fm.MoneyReserved) and event.purpose == "game"
    return MatchFact(
        event,
        hand_id=hand_id if isinstance(event, _OF_A_DEAL) else "",
        game_no=before.game_no if stake else 0,
    )


@dataclass
class MatchHost:
    """One table's match. ``deal_rules``: each deal's rule set (the variant's, for the format's
    DealRules; the table's own when the format asks none); ``matches``: matches started here.

    ``awaiting``: the (purpose, game_no) whose holds were asked (MoneyReserved; the ledger's
    name of the purpose) and not answered yet; ``deal_hand_id``: the hand that plays the
    current deal (its DealStarted names it); ``deal_hand_started``: its HandStarted is
    appended. ``log``: the current match's facts with their times (ms since the epoch; what a
    snapshot stores: folding it rebuilds the host)."""

    fmt: MatchFormat
    deal_rules: RuleSet
    state: MatchState = field(default_factory=MatchState)
    matches: int = 0
    awaiting: set[tuple[str, int]] = field(default_factory=set)
    deal_hand_id: str = ""
    deal_hand_started: bool = False
    log: list[tuple[MatchRecord, int]] = field(default_factory=list, repr=False)

    @classmethod
    def for_table(cls, fmt: MatchFormat, rule_set: RuleSet, variant: Variant[Any]) -> MatchHost:
        """The host of ``fmt`` at a table of ``rule_set``. Raises RuleSetError if the variant
        plays no such deals."""
        rules = fmt.deal_rules
        deal = rule_set if rules is None else variant.deal_rule_set(rule_set, rules)
        return cls(fmt, deal)

    # -- reading ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """A match started and not over."""
        return self.state.phase is not MatchPhase.NOT_STARTED and not self.state.is_over

    @property
    def match_id(self) -> str:
        return self.state.match_id

    def view(self) -> MatchView:
        return match_view(self.fmt, self.state)

    def owns(self, fact: object) -> TypeGuard[MatchRecord]:
        """Whether ``fact`` is the host's to fold (a match fact or a money answer)."""
        return isinstance(fact, MatchFact | MatchMoneyHeld | MatchMoneyRejected)

    def answers_this_match(self, answer: MatchMoney) -> bool:
        """Whether a ledger money answer is about the current match and awaited."""
        key = (answer.purpose, answer.game_no)
        return self.running and answer.match_id == self.match_id and key in self.awaiting

    # -- folding ------------------------------------------------------------------------------

    def apply(self, fact: MatchRecord, at_ms: int) -> None:
        """Fold one match fact or money answer (of this table's stream) at ``at_ms``."""
        if isinstance(fact, MatchFact) and isinstance(fact.event, fm.MatchStarted):
            self.state = self.fmt.initial_state()
            self.matches += 1
            self.awaiting.clear()
            self.deal_hand_id, self.deal_hand_started = "", False
            self.log = []
        self.log.append((fact, at_ms))
        if not isinstance(fact, MatchFact):
            self.awaiting.discard((fact.purpose, fact.game_no))
            return
        event = fact.event
        if isinstance(event, fm.MoneyReserved):
            self.awaiting.add((LEDGER_PURPOSE[event.purpose], fact.game_no))
        elif isinstance(event, fm.DealStarted):
            self.deal_hand_id, self.deal_hand_started = fact.hand_id, False
        elif isinstance(event, fm.MatchAborted):
            self.awaiting.clear()
        self.state = self.fmt.apply(self.state, event)

    def awaiting_since_ms(self) -> int | None:
        """When the money the match awaits was asked for (the last MoneyReserved's time, ms
        since the epoch), or None when nothing is awaited."""
        if not self.awaiting:
            return None
        return next(
            (at for fact, at in reversed(self.log) if _is(fact, fm.MoneyReserved)),
            None,
        )

    def deals_voided_in_a_row(self) -> int:
        """How many deals of the current match were voided since its last scored deal (or its
        start)."""
        count = 0
        for fact, _ in reversed(self.log):
            if _is(fact, fm.DealScored | fm.MatchStarted):
                break
            count += _is(fact, fm.DealVoided)
        return count

    def hand_started(self, hand_id: str) -> None:
        if hand_id == self.deal_hand_id:
            self.deal_hand_started = True

    def restore(self, log: list[tuple[MatchRecord, int]], matches: int) -> None:
        """The host as a snapshot stored it: ``log`` folded again, ``matches`` counted."""
        for fact, at_ms in log:
            self.apply(fact, at_ms)
        self.matches = matches

    # -- deciding -----------------------------------------------------------------------------

    def decide(
        self, commands: list[Command], state: MatchState | None = None, hand_id: str = ""
    ) -> tuple[list[MatchFact], MatchState]:
        """The facts ``commands`` cause, decided in turn from ``state`` (default: the host's),
        and the state after them; ``hand_id``: the hand of a deal begun (else the current
        deal's). Raises RuleViolation if the format refuses one (nothing changes)."""
        current = self.state if state is None else state
        out: list[MatchFact] = []
        for command in commands:
            events = self.fmt.decide(current, command)
            before = current
            for event in events:
                assert isinstance(event, fm.MatchEvent)
                out.append(match_fact(event, before, hand_id or self.deal_hand_id))
                before = apply(before, event)
            current = self.fmt.fold(events, current)
        return out, current

    def state_after(self, facts: Sequence[object]) -> MatchState:
        """The host's state with the match facts among ``facts`` applied (not folded)."""
        state = self.state
        for fact in facts:
            if isinstance(fact, MatchFact):
                state = self.fmt.apply(state, fact.event)
        return state

    def try_decide(
        self, commands: list[Command], state: MatchState | None = None
    ) -> list[MatchFact]:
        """:meth:`decide`'s facts, or none when the format refuses (a follow-up that no
        longer applies)."""
        try:
            return self.decide(commands, state)[0]
        except RuleViolation:
            return []


def _is(fact: object, kind: type | UnionType) -> bool:
    """Whether ``fact`` is a match fact of an event of ``kind``."""
    return isinstance(fact, MatchFact) and isinstance(fact.event, kind)


def asks_money(facts: Sequence[object]) -> bool:
    """Whether ``facts`` ask the ledger to hold money (a MoneyReserved)."""
    return any(_is(fact, fm.MoneyReserved) for fact in facts)


def deals_voided(facts: Sequence[object]) -> int:
    """How many of ``facts`` void a deal."""
    return sum(_is(fact, fm.DealVoided) for fact in facts)
