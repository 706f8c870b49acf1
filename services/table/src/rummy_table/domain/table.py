"""The table aggregate: seating, hand numbering, the dealer button, and the current hand's state.

A :class:`Table` is rebuilt from its stream by :meth:`Table.fold` (one fact at a time, live and
on replay alike). Decisions (``take_seat``, ``leave``, ``start_hand``, ``hand_commands``) are
pure: they read the table and return the facts to append (:data:`Fact`), or raise. Every fact is
one of :mod:`.facts`'s dataclasses (a hand's hold the variant's events); the application maps
each to and from its payload on the log (``rummy_table.application.stream_facts``), and keeps
what a reader needs of a hand's payloads (its HandStarted, the last hands' HandEnded:
``rummy_table.application.held_table``).
Hand-level rules are the variant's (``rummy_rules`` ``decide``/``apply``), reached only through
the Variant interface; the table knows seats, accounts and the order of hands.

Memory (flat in the number of hands played): of every hand a table keeps only its entry in
:attr:`Table.hands` (hand id -> offset of its HandStarted in the table's partition) and whether
its seed reveal and settlement are recorded, packed in 25 bytes (:mod:`.played_hands`); of the
current hand its HandStarted and state.
Results and proofs are read back from the log from that offset. A closed table is a stub: no
hand state. (The answers to its last commands, which make a retried request idempotent, are the
application's: :class:`rummy_table.application.answers.AnswerWindow`.)

Its jobs' modules: :mod:`.seating` (seats, the button), :mod:`.match_hosting` (a match
table's match), :mod:`.closing` (closing, overdue and stake aborts); a refusal raises one of
:mod:`.errors`. A hand starts when at least ``min_players`` seats are eligible and the start delay
has passed since the last seat change or hand end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Self

from rummy_game.hand_decisions import decide_in_turn
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.commands import Command, StartHand
from rummy_rules.errors import RuleViolation
from rummy_rules.formats import messages as fm
from rummy_rules.rules import RuleSet
from rummy_rules.variant import Variant

from . import facts, match_hosting, seating
from .closing import HAND_DEALT, SEED_COMMITTED, SEEDS_LOCKED, STAKES_RESERVED
from .errors import WrongState
from .match_host import MatchHost
from .played_hands import HandFlag, PlayedHands
from .seating import SeatInfo, rejection_text

#: What the table folds and its decisions return: a table-level, match or hand fact (:mod:`.facts`).
Fact = facts.TableOpened | facts.TableFact | facts.HandFact

#: The rules events that record another service's answer in a hand's start, or the step the
#: dealer's answer follows, by the names ``Table.hand_inputs`` records them under.
_SERVICE_ANSWERS: dict[type[ev.Event], str] = {
    ev.StakeReserved: STAKES_RESERVED,
    ev.SeedCommitted: SEED_COMMITTED,
    ev.SeedsLocked: SEEDS_LOCKED,
    ev.HandDealt: HAND_DEALT,
}

#: Told of every call of the variant's ``decide``: the command and its outcome (``accepted``, or
#: the RuleViolation's code in lower case).
DecisionObserver = Callable[[Command, str], None]


@dataclass
class Table:
    """One table's state, folded from its stream. Mutated only by :meth:`fold`."""

    table_id: str
    rule_set: RuleSet
    variant: Variant[Any]
    #: Its seats (numbered 0..seat_count - 1).
    seat_count: int
    #: How long after the last seat change or hand end the next hand may start (ms).
    start_delay_ms: int
    opened_by: str = ""
    seats: dict[int, SeatInfo] = field(default_factory=dict)
    version: int = 0
    last_change_ms: int = 0
    hand_no: int = 0
    dealer_seat: int | None = None
    hand: Any = None
    #: The current (or last) hand's HandStarted.
    hand_started: facts.HandStarted | None = None
    #: Every hand started here -> the offset of its HandStarted in the table's partition (-1
    #: when not known: read from the partition's start), with whether its reveal and its
    #: settlement are recorded (:attr:`revealed`, :attr:`settled`); 25 bytes a hand.
    hands: PlayedHands = field(default_factory=PlayedHands)
    #: Hands whose settlement the ledger refused (void: holds released, nothing moved) -> why.
    voided: dict[str, str] = field(default_factory=dict)
    closing: bool = False
    closed: bool = False
    on_decision: DecisionObserver | None = None
    #: The match of a match table (None at a points table).
    match: MatchHost | None = None
    #: When the current hand's last fact was folded (ms since the epoch): what a hand waiting
    #: for another service's answer has waited since.
    hand_since_ms: int = 0
    #: The names (:data:`_SERVICE_ANSWERS`) of the other services' answers recorded in the
    #: current hand (the ledger's stakes, fairness's commitment, the locked seeds, the deal).
    hand_inputs: set[str] = field(default_factory=set)

    # -- building --------------------------------------------------------------------------

    @classmethod
    def for_opened(cls, opened: facts.TableOpened, on_decision: DecisionObserver | None) -> Self:
        """A table of ``opened``'s options with nothing folded yet. Raises UnknownVariant for a
        variant that is not installed."""
        rules = opened.rule_set
        variant = registry.lookup(rules.variant)
        fmt = opened.fmt
        host = None if fmt is None else MatchHost.for_table(fmt, rules, variant)
        return cls(
            opened.table_id,
            rules,
            variant,
            opened.seat_count,
            opened.start_delay_ms,
            on_decision=on_decision,
            match=host,
        )

    @property
    def revealed(self) -> HandFlag:
        """The hands whose seed reveal is recorded."""
        return self.hands.revealed

    @property
    def settled(self) -> HandFlag:
        """The hands whose settlement (or the ledger's refusal of it) is recorded."""
        return self.hands.settled

    @property
    def hand_running(self) -> bool:
        return self.hand is not None and not self.variant.is_over(self.hand)

    @property
    def match_id(self) -> str:
        """The current (or last) match's id; "" at a points table or before the first."""
        return self.match.match_id if self.match is not None else ""

    @property
    def hand_id(self) -> str:
        return self.hand_started.hand_id if self.hand_started is not None else ""

    def seat_of(self, account_id: str) -> int | None:
        for seat, info in self.seats.items():
            if info.account_id == account_id:
                return seat
        return None

    def dealt_in(self, seat: int) -> bool:
        return (
            self.hand_started is not None
            and seat in self.hand_started.accounts
            and self.hand_running
        )

    # -- apply -----------------------------------------------------------------------------

    def fold(self, fact: Fact | None, at_ms: int, version: int, offset: int = -1) -> None:  # noqa: C901 - one branch per fact
        """Fold one fact of this table's stream into the state: the ``version``-th of the
        stream, at ``at_ms`` (ms since the epoch; None: a record the state does not hold, it
        counts in the version only); ``offset``: where it lies in the table's partition (-1: not
        known)."""
        self.version = version
        if fact is None:
            pass
        elif isinstance(fact, facts.TableOpened):
            self.last_change_ms = at_ms
        elif isinstance(fact, facts.PlayerSeated):
            self.seats[fact.seat] = SeatInfo(fact.account_id)
            self.last_change_ms = at_ms
        elif isinstance(fact, facts.PlayerLeft):
            self.seats.pop(fact.seat, None)
            self.last_change_ms = at_ms
        elif isinstance(fact, facts.StakeRejected):
            info = self.seats.get(fact.seat)
            if info is not None and info.account_id == fact.account_id:
                info.sitting_out_reason = rejection_text(
                    fact.required_hundredths, fact.available_hundredths, fact.reason
                )
        elif isinstance(fact, facts.TableClosing):
            self.closing = True
        elif isinstance(fact, facts.TableClosed):
            self.closed = True
            self._to_stub()
        elif isinstance(fact, facts.SeedRevealed):
            self.revealed.add(fact.hand_id)
        elif isinstance(fact, facts.HandSettled):
            self.settled.add(fact.hand_id)
        elif isinstance(fact, facts.SettlementRefused):
            self.settled.add(fact.hand_id)
            self.voided[fact.hand_id] = fact.reason
        elif isinstance(fact, facts.MatchSettled):
            pass  # recorded for the match's replay; nothing of the table's state changes
        elif isinstance(fact, facts.MatchFact | facts.MatchMoneyHeld | facts.MatchMoneyRejected):
            if self.match is not None:  # a points table has no match: nothing to fold
                self._apply_match(fact, at_ms)
        elif isinstance(fact, facts.HandStarted):
            if self.match is not None:
                self.match.hand_started(fact.hand_id)
            self.hand_started = fact
            self.hands[fact.hand_id] = offset
            self.hand_no = fact.hand_no
            self.dealer_seat = fact.dealer_seat
            self.hand = self.variant.apply(self.variant.initial_state(), fact.event(at_ms))
            self.hand_since_ms, self.hand_inputs = at_ms, set()
        elif isinstance(fact, facts.HandEvents):
            assert self.hand_started is not None, "a hand event before any HandStarted"
            for event in fact.events:
                self.hand = self.variant.apply(self.hand, event)
                answer = _SERVICE_ANSWERS.get(type(event))
                if answer is not None:
                    self.hand_inputs.add(answer)
            self.hand_since_ms = at_ms
            if fact.end is not None:
                self.last_change_ms = at_ms
        else:
            raise TypeError(f"not a fact of a table's stream: {fact!r}")

    def _apply_match(self, fact: facts.MatchRecord, at_ms: int) -> None:
        assert self.match is not None
        self.match.apply(fact, at_ms)
        if isinstance(fact, facts.MatchMoneyRejected):
            info = self.seats.get(fact.seat)
            if info is not None and info.account_id == fact.account_id:
                info.sitting_out_reason = rejection_text(
                    fact.required_hundredths,
                    fact.available_hundredths,
                    fact.reason,
                )
        if isinstance(fact, facts.MatchMoneyHeld) or (
            isinstance(fact, facts.MatchFact)
            and isinstance(
                fact.event,
                fm.MatchStarted | fm.DealScored | fm.DealVoided | fm.MatchEnded | fm.MatchAborted,
            )
        ):
            self.last_change_ms = at_ms

    def correlation_ids(self, decided: Sequence[Fact]) -> list[str]:
        """Each envelope's correlation id of ``decided`` (to be appended in this order): its
        match's id for a match fact or money answer, else its hand's id (or "")."""
        match_id = self.match.match_id if self.match is not None else ""
        out = []
        for fact in decided:
            if isinstance(fact, facts.MatchFact) and isinstance(fact.event, fm.MatchStarted):
                match_id = fact.event.match_id
            if self.match is not None and self.match.owns(fact):
                out.append(match_id)
            else:
                out.append(str(getattr(fact, "hand_id", "")))
        return out

    def hand_end(self, fact: Fact, at_ms: int) -> ev.HandEnded | ev.HandAborted:
        """The rules event of ``fact``, the current hand's HandEnded or HandAborted, at
        ``at_ms`` (as its record reads back from the log)."""
        assert isinstance(fact, facts.HandEvents) and fact.end is not None
        return replace(fact.end, at_ms=at_ms)

    def ends_hand(self, fact: Fact) -> bool:
        """Whether ``fact`` ends the current hand (its HandEnded or HandAborted)."""
        return isinstance(fact, facts.HandEvents) and fact.end is not None

    def aborts_hand(self, fact: Fact) -> bool:
        """Whether ``fact`` aborts the current hand (its HandAborted)."""
        return isinstance(fact, facts.HandEvents) and isinstance(fact.end, ev.HandAborted)

    def _to_stub(self) -> None:
        """A closed table keeps no hand state (its hands' results and proofs are read from the
        log)."""
        if not self.hand_running:
            self.hand, self.hand_started = None, None

    # -- decisions -------------------------------------------------------------------------

    def start_due_ms(self, speed: float = 1.0) -> int | None:
        """When the next hand may start (ms since the epoch), or None while it cannot: a hand
        runs, or fewer than ``min_players`` seats are eligible. ``speed`` shortens the delay.
        At a match table: when the match starts (every seat taken), the next deal is dealt, or
        the current deal's hand starts (its money held); None while money is awaited."""
        if self.match is not None:
            return match_hosting.match_due_ms(self, speed)
        if (
            self.closing
            or self.hand_running
            or len(seating.eligible_seats(self)) < self.rule_set.min_players
        ):
            return None
        return self.last_change_ms + int(self.start_delay_ms / speed)

    @property
    def state_name(self) -> str:
        """``open``, ``closing`` or ``closed``."""
        return "closed" if self.closed else "closing" if self.closing else "open"

    def start_hand(self, hand_id: str, at_ms: int) -> list[Fact]:
        """HandStarted for hand ``hand_id`` with every eligible seat, and whatever else the
        variant decides with it (e.g. its SeedWindowOpened). Raises WrongState if no hand
        can start, RuleViolation if the rules refuse it."""
        if self.start_due_ms() is None:
            raise WrongState("a hand runs, or fewer than two seats are eligible")
        if self.match is not None:
            return match_hosting.match_step(self, hand_id, at_ms)
        command = StartHand(
            hand_id=hand_id,
            seats=tuple(
                ev.SeatAccount(s, self.seats[s].account_id) for s in seating.eligible_seats(self)
            ),
            dealer_seat=seating.next_dealer(self),
            rule_set=self.rule_set,
            at_ms=at_ms,
        )
        return self.started_facts(command)

    def started_facts(self, command: StartHand) -> list[Fact]:
        """The next hand's HandStarted that ``command`` decides, and the events the variant
        decides with it (e.g. its SeedWindowOpened). Raises RuleViolation if the rules refuse
        it."""
        started, *more = self._decide(self.variant.initial_state(), command)
        assert isinstance(started, ev.HandStarted)
        out: list[Fact] = [facts.HandStarted.of(started, self.hand_no + 1)]
        # a variant whose start also opens the seed window (the events it decides)
        out += [facts.HandEvents(started.hand_id, (event,)) for event in more]
        return out

    def hand_commands(self, commands: Sequence[Command]) -> list[Fact]:
        """The records of the events ``commands`` cause in the current hand, decided in turn
        (one event each). Raises WrongState if no hand runs, RuleViolation if the rules refuse
        one."""
        if self.hand is None or self.hand_started is None:
            raise WrongState("no hand is being played at this table")
        hand_id = self.hand_started.hand_id
        return [
            facts.HandEvents(
                hand_id,
                (d.event,),
                top_discard=d.top_discard,
                automatic=d.automatic,
                wild_cut=d.wild_cut,
            )
            for d in decide_in_turn(self.variant, self.hand, commands, self._decide)
        ]

    def _decide(self, state: Any, command: Command) -> tuple[ev.Event, ...]:
        """The variant's ``decide``, with its outcome told to :attr:`on_decision`."""
        try:
            events = self.variant.decide(state, command)
        except RuleViolation as exc:
            if self.on_decision is not None:
                self.on_decision(command, exc.code.value.lower())
            raise
        if self.on_decision is not None:
            self.on_decision(command, "accepted")
        return events

    def close_proof(self, proof: facts.ProofClosing) -> list[Fact]:
        """Record a hand's seed reveal or settlement (or the ledger's refusal of it, which voids
        the hand), which closes that hand's proof: accepted for any hand started at this table,
        the current one or an earlier one, whatever phase the current hand is in (a reveal may
        arrive after the next hand started). Raises WrongState for a hand this table
        never started, or one whose reveal (or settlement or refusal) is already recorded."""
        if proof.hand_id not in self.hands:
            raise WrongState(f"hand {proof.hand_id!r} was not played at this table")
        done = self.revealed if isinstance(proof, facts.SeedRevealed) else self.settled
        if proof.hand_id in done:
            kind = type(proof).__name__
            raise WrongState(f"{kind} of hand {proof.hand_id} is already recorded")
        return [proof]
