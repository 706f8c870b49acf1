"""A table's match: the format a table hosts over its variant, its state folded from the table
stream (live and on replay alike), and the match payloads its decisions write.

A table of a format other than ``single`` (``TableOpened.match``) holds one :class:`MatchHost`
(``rummy_table.domain.table.Table.match``). The host only records and decides; the table says
when (``rummy_table.domain.match_hosting``): a match starts when every seat is taken
(StartMatch: MatchStarted and the entries' MoneyReserved), its first deal waits for the
ledger's MatchMoneyHeld (a MatchMoneyRejected aborts the match), each deal is one hand of the
variant whose rule set is the format's (``Variant.deal_rule_set``), the hand's end is the deal's
result (RecordDeal; an aborted hand voids the deal: RecordDealAborted), a game's stakes (game
to N) are held before its first hand is dealt. ``docs/rules/formats.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy_rules.commands import Command
from rummy_rules.errors import RuleViolation
from rummy_rules.formats import MatchFormat, MatchPhase, MatchState, MatchView, match_view
from rummy_rules.rules import RuleSet
from rummy_rules.variant import Variant

from . import match_payloads

#: The ledger's answers about a match's money, recorded on the table stream as inputs.
MONEY_ANSWERS = (ledger_pb.MatchMoneyHeld, ledger_pb.MatchMoneyRejected)


def format_of(opened: pb.TableOpened) -> MatchFormat | None:
    """The format a TableOpened hosts, None for a points table (no ``match`` or ``single``).
    Raises RuleSetError for options out of bounds."""
    if not opened.HasField("match") or not match_payloads.is_match(opened.match):
        return None
    return match_payloads.format_from_pb(opened.match, opened.commission_bps)


@dataclass
class MatchHost:
    """One table's match. ``deal_rules``: each deal's rule set (the variant's, for the format's
    DealRules; the table's own when the format asks none); ``matches``: matches started here.

    ``awaiting``: the (purpose, game_no) whose holds were asked (MoneyReserved) and not answered
    yet; ``deal_hand_id``: the hand that plays the current deal (its DealStarted names it);
    ``deal_hand_started``: its HandStarted is appended. ``log``: the current match's payloads
    with their times (what a snapshot stores: folding it rebuilds the host)."""

    fmt: MatchFormat
    deal_rules: RuleSet
    state: MatchState = field(default_factory=MatchState)
    matches: int = 0
    awaiting: set[tuple[str, int]] = field(default_factory=set)
    deal_hand_id: str = ""
    deal_hand_started: bool = False
    log: list[tuple[Message, int]] = field(default_factory=list, repr=False)

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

    def view_pb(self) -> mpb.MatchView:
        return match_payloads.view_to_pb(self.view())

    def owns(self, payload: Message) -> bool:
        """Whether ``payload`` is the host's to fold (a match event or a money answer)."""
        return match_payloads.is_match_payload(payload) or isinstance(payload, MONEY_ANSWERS)

    def answers_this_match(self, payload: Message) -> bool:
        """Whether a ledger money answer is about the current match and awaited."""
        key = (getattr(payload, "purpose", ""), getattr(payload, "game_no", 0))
        return self.running and payload.match_id == self.match_id and key in self.awaiting  # type: ignore[attr-defined]

    # -- folding ------------------------------------------------------------------------------

    def apply(self, payload: Message, at_ms: int) -> None:
        """Fold one match payload or money answer (of this table's stream)."""
        if isinstance(payload, mpb.MatchStarted):
            self.state = self.fmt.initial_state()
            self.matches += 1
            self.awaiting.clear()
            self.deal_hand_id, self.deal_hand_started = "", False
            self.log = []
        self.log.append((payload, at_ms))
        if isinstance(payload, MONEY_ANSWERS):
            self.awaiting.discard((payload.purpose, payload.game_no))
            return
        if isinstance(payload, mpb.MoneyReserved):
            self.awaiting.add((payload.purpose, payload.game_no))
        elif isinstance(payload, mpb.DealStarted):
            self.deal_hand_id, self.deal_hand_started = payload.hand_id, False
        elif isinstance(payload, mpb.MatchAborted):
            self.awaiting.clear()
        self.state = self.fmt.apply(self.state, match_payloads.event_from_pb(payload, at_ms))

    def awaiting_since_ms(self) -> int | None:
        """When the money the match awaits was asked for (the last MoneyReserved's time, ms
        since the epoch), or None when nothing is awaited."""
        if not self.awaiting:
            return None
        return next(
            (at for payload, at in reversed(self.log) if isinstance(payload, mpb.MoneyReserved)),
            None,
        )

    def deals_voided_in_a_row(self) -> int:
        """How many deals of the current match were voided since its last scored deal (or its
        start)."""
        count = 0
        for payload, _ in reversed(self.log):
            if isinstance(payload, mpb.DealScored | mpb.MatchStarted):
                break
            count += isinstance(payload, mpb.DealVoided)
        return count

    def hand_started(self, hand_id: str) -> None:
        if hand_id == self.deal_hand_id:
            self.deal_hand_started = True

    def restore(self, log: list[tuple[Message, int]], matches: int) -> None:
        """The host as a snapshot stored it: ``log`` folded again, ``matches`` counted."""
        for payload, at_ms in log:
            self.apply(payload, at_ms)
        self.matches = matches

    # -- deciding -----------------------------------------------------------------------------

    def decide(
        self, commands: list[Command], state: MatchState | None = None, hand_id: str = ""
    ) -> tuple[list[Message], MatchState]:
        """The payloads ``commands`` cause, decided in turn from ``state`` (default: the
        host's), and the state after them; ``hand_id``: the hand of a deal begun (else the
        current deal's). Raises RuleViolation if the format refuses one (nothing changes)."""
        current = self.state if state is None else state
        out: list[Message] = []
        for command in commands:
            events = self.fmt.decide(current, command)
            out += match_payloads.events_to_pb(events, current, hand_id or self.deal_hand_id)
            current = self.fmt.fold(events, current)
        return out, current

    def state_after(self, payloads: list[Message]) -> MatchState:
        """The host's state with the match payloads among ``payloads`` applied (not folded)."""
        state = self.state
        for payload in payloads:
            if match_payloads.is_match_payload(payload):
                state = self.fmt.apply(state, match_payloads.event_from_pb(payload, 0))
        return state

    def try_decide(self, commands: list[Command], state: MatchState | None = None) -> list[Message]:
        """:meth:`decide`'s payloads, or none when the format refuses (a follow-up that no
        longer applies)."""
        try:
            return self.decide(commands, state)[0]
        except RuleViolation:
            return []
