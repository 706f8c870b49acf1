"""The table aggregate: seating, hand numbering, the dealer button, and the current hand's state.

A :class:`Table` is rebuilt from its stream by :meth:`Table.fold` (one fact at a time, live and
on replay alike). Decisions (``take_seat``, ``leave``, ``start_hand``, ``hand_commands``) are
pure: they read the table and return the facts to append (:data:`Fact`), or raise. The table-level
facts and a match's (its format's events, the ledger's answers about its money) are :mod:`.facts`'s
dataclasses; a hand's facts, and the other services' answers about a hand, are still their
payloads here (``rummy_table.application.stream_facts`` maps both).
Hand-level rules are the variant's (``rummy_rules`` ``decide``/``apply``), reached only through
the Variant interface; the table knows seats, accounts and the order of hands.

Memory (flat in the number of hands played): a table keeps the HandEnded of its last
:data:`RESULT_WINDOW` ended hands; of every other hand only its entry in :attr:`Table.hands` (hand
id -> offset of its HandStarted in the table's partition) and whether its seed reveal and
settlement are recorded, packed in 25 bytes (:mod:`.played_hands`). Older results and proofs are
read back from the log from that offset. A
closed table is a stub: no hand state, no results. (The answers to its last commands, which make
a retried request idempotent, are the application's:
:class:`rummy_table.application.answers.AnswerWindow`.)

Its jobs' modules: :mod:`.seating` (seats, the button), :mod:`.match_hosting` (a match
table's match), :mod:`.closing` (closing, overdue and stake aborts); a refusal raises one of
:mod:`.errors`. A hand starts when at least ``min_players`` seats are eligible and the start delay
has passed since the last seat change or hand end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Self, cast

from google.protobuf.message import Message

from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_payloads, stream_payloads, upcast
from rummy_game.hand_payloads import hand_payloads
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.commands import Command, StartHand
from rummy_rules.errors import RuleViolation
from rummy_rules.formats import MatchFormat
from rummy_rules.formats import messages as fm
from rummy_rules.rules import RuleSet
from rummy_rules.variant import Variant

from . import facts, match_hosting, seating
from .errors import WrongState
from .match_host import MatchHost
from .played_hands import HandFlag, PlayedHands
from .seating import SeatInfo, rejection_text

#: What the table folds and its decisions return: a table-level or match fact (:mod:`.facts`), or
#: the payload of a hand's fact or of another service's answer about a hand.
Fact = facts.TableFact | Message

#: The steps of a hand's start that another service answers, or that the dealer's answer follows
#: (``Table.hand_inputs`` records which of them a hand has).
_SERVICE_ANSWERS = (
    ledger_pb.StakesReserved,
    fairness_pb.SeedCommitted,
    pb.SeedsLocked,
    dealer_pb.HandDealt,
)
#: Ended hands whose HandEnded a table keeps in memory (older ones are read from the log).
RESULT_WINDOW = 4

#: Told of every call of the variant's ``decide``: the command and its outcome (``accepted``, or
#: the RuleViolation's code in lower case).
DecisionObserver = Callable[[Command, str], None]


@dataclass
class Table:
    """One table's state, folded from its stream. Mutated only by :meth:`apply`."""

    table_id: str
    opened: pb.TableOpened
    rule_set: RuleSet
    variant: Variant[Any]
    opened_by: str = ""
    seats: dict[int, SeatInfo] = field(default_factory=dict)
    version: int = 0
    last_change_ms: int = 0
    hand_no: int = 0
    dealer_seat: int | None = None
    hand: Any = None
    ctx: stream_payloads.HandContext | None = None
    #: The current hand's HandStarted (``ctx`` is made from it).
    started: pb.HandStarted | None = None
    #: The HandEnded of the last RESULT_WINDOW ended hands, oldest first.
    results: dict[str, pb.HandEnded] = field(default_factory=dict)
    #: Every hand started here -> the offset of its HandStarted in the table's partition (-1
    #: when not known: read from the partition's start), with whether its reveal and its
    #: settlement are recorded (:attr:`revealed`, :attr:`settled`); 25 bytes a hand.
    hands: PlayedHands = field(default_factory=PlayedHands)
    #: Hands whose settlement the ledger refused (void: holds released, nothing moved) -> why.
    voided: dict[str, str] = field(default_factory=dict)
    #: Each payload of the last :meth:`hand_commands` with the hand state after it, in order:
    #: folding those payloads (equal ones) once appended takes that state instead of decoding
    #: and applying them again.
    _decided: list[tuple[Message, Any]] = field(default_factory=list, repr=False)
    closing: bool = False
    closed: bool = False
    on_decision: DecisionObserver | None = None
    #: The match of a match table (None at a points table).
    match: MatchHost | None = None
    #: When the current hand's last fact was folded (ms since the epoch): what a hand waiting
    #: for another service's answer has waited since.
    hand_since_ms: int = 0
    #: The payload types (full names) of the other services' answers recorded in the current
    #: hand (the ledger's StakesReserved, fairness's SeedCommitted, the dealer's HandDealt).
    hand_inputs: set[str] = field(default_factory=set)

    # -- building --------------------------------------------------------------------------

    @classmethod
    def for_opened(cls, opened: pb.TableOpened, on_decision: DecisionObserver | None) -> Self:
        """A table of ``opened``'s options with nothing folded yet. Raises ValueError for bad
        options."""
        rules = stream_payloads.recorded_rule_set_from_pb(
            opened.rule_set, opened.seat_count, opened.point_value_hundredths, opened.commission_bps
        )
        variant = registry.lookup(rules.variant)
        fmt = _format_of(opened)
        host = None if fmt is None else MatchHost.for_table(fmt, rules, variant)
        return cls(opened.table_id, opened, rules, variant, on_decision=on_decision, match=host)

    @property
    def start_delay_ms(self) -> int:
        return stream_payloads.start_delay_seconds_from_pb(self.opened.rule_set) * 1000

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
        return self.ctx.hand_id if self.ctx is not None else ""

    def seat_of(self, account_id: str) -> int | None:
        for seat, info in self.seats.items():
            if info.account_id == account_id:
                return seat
        return None

    def dealt_in(self, seat: int) -> bool:
        return self.ctx is not None and seat in self.ctx.accounts and self.hand_running

    # -- apply -----------------------------------------------------------------------------

    def fold(self, payload: Fact, at_ms: int, version: int, offset: int = -1) -> None:  # noqa: C901 - one branch per fact
        """Fold one fact of this table's stream into the state: the ``version``-th of the
        stream, at ``at_ms`` (ms since the epoch); ``offset``: where it lies in the table's
        partition (-1: not known)."""
        self.version = version
        if isinstance(payload, pb.TableOpened):
            self.last_change_ms = at_ms
        elif isinstance(payload, facts.PlayerSeated):
            self.seats[payload.seat] = SeatInfo(payload.account_id)
            self.last_change_ms = at_ms
        elif isinstance(payload, facts.PlayerLeft):
            self.seats.pop(payload.seat, None)
            self.last_change_ms = at_ms
        elif isinstance(payload, facts.StakeRejected):
            info = self.seats.get(payload.seat)
            if info is not None and info.account_id == payload.account_id:
                info.sitting_out_reason = rejection_text(
                    payload.required_hundredths, payload.available_hundredths, payload.reason
                )
        elif isinstance(payload, facts.TableClosing):
            self.closing = True
        elif isinstance(payload, facts.TableClosed):
            self.closed = True
            self._to_stub()
        elif isinstance(payload, facts.SeedRevealed):
            self.revealed.add(payload.hand_id)
        elif isinstance(payload, facts.HandSettled):
            self.settled.add(payload.hand_id)
        elif isinstance(payload, facts.SettlementRefused):
            self.settled.add(payload.hand_id)
            self.voided[payload.hand_id] = payload.reason
        elif isinstance(payload, facts.MatchSettled):
            pass  # recorded for the match's replay; nothing of the table's state changes
        elif isinstance(payload, facts.MatchFact | facts.MatchMoneyHeld | facts.MatchMoneyRejected):
            if self.match is not None:  # a points table has no match: nothing to fold
                self._apply_match(payload, at_ms)
        elif not isinstance(payload, Message):
            raise TypeError(f"not a fact of a table's stream: {payload!r}")
        elif isinstance(payload, pb.HandStarted):
            if self.match is not None:
                self.match.hand_started(payload.hand_id)
            self.ctx = stream_payloads.hand_context(payload)
            self.started = payload
            self.hands[payload.hand_id] = offset
            self.hand_no = payload.hand_no
            self.dealer_seat = payload.dealer_seat
            started = stream_payloads.hand_started_from_pb(payload, at_ms)
            self.hand = self.variant.apply(self.variant.initial_state(), started)
            self.hand_since_ms, self.hand_inputs = at_ms, set()
        elif stream_payloads.is_hand_payload(payload):
            assert self.ctx is not None, "a hand event before any HandStarted"
            decided = self._decided.pop(0) if self._decided else None
            if decided is not None and decided[0] == payload:
                self.hand = decided[1]  # the state decide produced for this very payload
            else:
                self._decided.clear()  # not the payloads decided last: decode them all
                for event in stream_payloads.from_payload(payload, self.ctx, at_ms):
                    self.hand = self.variant.apply(self.hand, event)
            self.hand_since_ms = at_ms
            if isinstance(payload, _SERVICE_ANSWERS):
                self.hand_inputs.add(payload.DESCRIPTOR.full_name)
            if isinstance(payload, pb.HandEnded):
                # a record of an older writer reads in today's shape (its deadwood points as
                # the variant counts them, under the hand's cut card)
                cut = self.variant.view(self.hand, -1).wild_cut
                self.results[payload.hand_id] = cast(
                    pb.HandEnded, upcast.hand_payload(payload, self.ctx, cut)
                )
                while len(self.results) > RESULT_WINDOW:
                    del self.results[next(iter(self.results))]
            if isinstance(payload, pb.HandEnded | pb.HandAborted):
                self.last_change_ms = at_ms

    def _apply_match(self, payload: facts.MatchRecord, at_ms: int) -> None:
        assert self.match is not None
        self.match.apply(payload, at_ms)
        if isinstance(payload, facts.MatchMoneyRejected):
            info = self.seats.get(payload.seat)
            if info is not None and info.account_id == payload.account_id:
                info.sitting_out_reason = rejection_text(
                    payload.required_hundredths,
                    payload.available_hundredths,
                    payload.reason,
                )
        if isinstance(payload, facts.MatchMoneyHeld) or (
            isinstance(payload, facts.MatchFact)
            and isinstance(
                payload.event,
                fm.MatchStarted | fm.DealScored | fm.DealVoided | fm.MatchEnded | fm.MatchAborted,
            )
        ):
            self.last_change_ms = at_ms

    def correlation_ids(self, payloads: Sequence[Fact]) -> list[str]:
        """Each envelope's correlation id of ``payloads`` (to be appended in this order): its
        match's id for a match payload or money answer, else its hand's id (or "")."""
        match_id = self.match.match_id if self.match is not None else ""
        out = []
        for payload in payloads:
            if isinstance(payload, facts.MatchFact) and isinstance(payload.event, fm.MatchStarted):
                match_id = payload.event.match_id
            if self.match is not None and self.match.owns(payload):
                out.append(match_id)
            else:
                out.append(str(getattr(payload, "hand_id", "")))
        return out

    def hand_end(self, fact: Fact, at_ms: int) -> ev.HandEnded | ev.HandAborted:
        """The rules event of ``fact``, the current hand's HandEnded or HandAborted (at
        ``at_ms``)."""
        assert self.ctx is not None and self.ends_hand(fact)
        assert isinstance(fact, Message)
        (event,) = stream_payloads.from_payload(fact, self.ctx, at_ms)
        assert isinstance(event, ev.HandEnded | ev.HandAborted)
        return event

    def ends_hand(self, fact: Fact) -> bool:
        """Whether ``fact`` ends the current hand (its HandEnded or HandAborted)."""
        return isinstance(fact, pb.HandEnded | pb.HandAborted)

    def aborts_hand(self, fact: Fact) -> bool:
        """Whether ``fact`` aborts the current hand (its HandAborted)."""
        return isinstance(fact, pb.HandAborted)

    def _to_stub(self) -> None:
        """A closed table keeps no hand state and no results (its hands' results and proofs are
        read from the log)."""
        if not self.hand_running:
            self.hand, self.ctx, self.started = None, None, None
        self.results.clear()
        self._decided.clear()

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
        return self.started_payloads(command)

    def started_payloads(self, command: StartHand) -> list[Fact]:
        state = self.variant.initial_state()
        started, *more = self._decide(state, command)
        assert isinstance(started, ev.HandStarted)
        first = stream_payloads.hand_started_to_pb(started, self.hand_no + 1)
        out: list[Fact] = [first]
        if more:  # a variant whose start also opens the seed window (the events it decides)
            ctx = stream_payloads.hand_context(first)
            for event in more:
                out.append(stream_payloads.to_payload(event, ctx))
        return out

    def hand_commands(self, commands: Sequence[Command]) -> list[Fact]:
        """The payloads of the events ``commands`` cause in the current hand, decided in turn.
        Raises WrongState if no hand runs, RuleViolation if the rules refuse one."""
        if self.hand is None or self.ctx is None:
            raise WrongState("no hand is being played at this table")
        self._decided = hand_payloads(self.variant, self.hand, self.ctx, commands, self._decide)
        return [payload for payload, _ in self._decided]

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

    def close_proof(self, closing: facts.ProofClosing) -> list[Fact]:
        """Record a hand's seed reveal or settlement (or the ledger's refusal of it, which voids
        the hand), which closes that hand's proof: accepted for any hand started at this table,
        the current one or an earlier one, whatever phase the current hand is in (a reveal may
        arrive after the next hand started). Raises WrongState for a hand this table
        never started, or one whose reveal (or settlement or refusal) is already recorded."""
        if closing.hand_id not in self.hands:
            raise WrongState(f"hand {closing.hand_id!r} was not played at this table")
        done = self.revealed if isinstance(closing, facts.SeedRevealed) else self.settled
        if closing.hand_id in done:
            kind = type(closing).__name__
            raise WrongState(f"{kind} of hand {closing.hand_id} is already recorded")
        return [closing]


def _format_of(opened: pb.TableOpened) -> MatchFormat | None:
    """The format a TableOpened hosts, None for a points table (no ``match`` or ``single``).
    Raises RuleSetError for options out of bounds."""
    if not opened.HasField("match") or not match_payloads.is_match(opened.match):
        return None
    return match_payloads.format_from_pb(opened.match, opened.commission_bps)
