"""The table aggregate: seating, hand numbering, the dealer button, and the current hand's state.

A :class:`Table` is rebuilt from its stream by :meth:`Table.apply` (one envelope at a time, live
and on replay alike). Decisions (``take_seat``, ``leave``, ``start_hand``, ``hand_commands``) are
pure: they read the table and return the payloads to append, or raise. Hand-level rules are the
variant's (``rummy_rules`` ``decide``/``apply``), reached only through the Variant interface; the
table knows seats, accounts and the order of hands.

Closing (an operator's CloseTable): from TableClosing on no hand starts and no seat is taken; a
hand being played plays out, and the facts that end it are followed (in the same transaction) by
a TablePlayerLeft for every seat still taken and TableClosed.

Memory (flat in the number of hands played): a table keeps the HandEnded of its last
:data:`RESULT_WINDOW` ended hands and the answers of its last :data:`ANSWER_WINDOW` commands and
inputs (by causation id); of every other hand only its entry in :attr:`Table.hands` (hand id ->
offset of its HandStarted in the table's partition) and whether its seed reveal and settlement are
recorded. Older results and proofs are read back from the log from that offset. A closed table
is a stub: no hand state, no results, its last :data:`CLOSED_ANSWER_WINDOW` answers.

A match table (``TableOpened.match`` of a format other than ``single``) holds a
:class:`~rummy_game.match_host.MatchHost`: a match starts when every seat is taken (and the
start delay passed) and its entries are held, each deal is one hand of the seats still in
(eliminated and left seats stay seated, not dealt in), the hand's end is recorded as the deal's
result in the same transaction, a leave is the seat's LeaveMatch (mid-deal also the variant's
LeaveHand), a close mid-match aborts the match after the deal being played; once it is over, a
new match starts when every seat is taken again. Rejoin offers and split requests stay open for
the start delay after a deal (the next deal is dealt then, and they lapse).

Seat rules: one seat per account per table; a seat that could not cover the reservation sits out
of later hands (``sitting_out_reason``) until its player leaves and takes a seat again. A hand
starts when at least ``min_players`` seats are eligible and the start delay has passed since the
last seat change or hand end; the dealer button moves to the next eligible seat each hand (at a
match table, unless the format keeps the dealer after a drawn deal: ``MatchFormat.keeps_dealer``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_wire
from rummy_game import stream_codec as codec
from rummy_game.match_host import MatchHost, format_of
from rummy_platform.envelope import Envelope
from rummy_platform.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.commands import AbortHand, Command, LeaveHand, StartHand
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.formats import MatchPhase, MatchState, deal_result
from rummy_rules.formats import messages as fm
from rummy_rules.rules import RuleSet
from rummy_rules.variant import Variant

#: The reason of a match aborted by an operator's CloseTable.
_CLOSED_MID_MATCH = "the table was closed by an operator mid-match"
#: The steps of a hand's start that another service answers, or that the dealer's answer follows
#: (``Table.hand_inputs`` records which of them a hand has).
_SERVICE_ANSWERS = (
    ledger_pb.StakesReserved,
    fairness_pb.SeedCommitted,
    pb.SeedsLocked,
    dealer_pb.HandDealt,
)
#: A match whose deals were voided this many times in a row (the last one by a service gone past
#: its deadline) is aborted: no redeal is possible within the deadline.
MAX_DEALS_VOIDED_IN_A_ROW = 2
#: Ended hands whose HandEnded a table keeps in memory (older ones are read from the log).
RESULT_WINDOW = 4
#: Commands and inputs (by causation id) whose answers a table keeps: a client retrying a
#: request id within its table's last 256 commands and inputs gets the first answer.
ANSWER_WINDOW = 256
#: The answers a closed table keeps.
CLOSED_ANSWER_WINDOW = 8

#: Told of every call of the variant's ``decide``: the command and its outcome (``accepted``, or
#: the RuleViolation's code in lower case).
DecisionObserver = Callable[[Command, str], None]


@dataclass
class SeatInfo:
    account_id: str
    sitting_out_reason: str = ""


def _rejection_text(rejected: ledger_pb.StakeRejected | ledger_pb.MatchMoneyRejected) -> str:
    reason = (
        ledger_pb.StakeRejectionReason.Name(rejected.reason)
        .removeprefix("STAKE_REJECTION_REASON_")
        .lower()
        .replace("_", " ")
    )
    return (
        f"could not cover the reservation of {rejected.required_hundredths} hundredths "
        f"(available {rejected.available_hundredths}; {reason}); leave and take a seat again "
        "to play"
    )


def _name(cls: type[Message]) -> str:
    return cls.DESCRIPTOR.full_name


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
    ctx: codec.HandContext | None = None
    #: The current hand's HandStarted (``ctx`` is made from it).
    started: pb.HandStarted | None = None
    #: The HandEnded of the last RESULT_WINDOW ended hands, oldest first.
    results: dict[str, pb.HandEnded] = field(default_factory=dict)
    #: The last ANSWER_WINDOW causation ids, oldest first -> the payloads they caused (kept for
    #: a client's request only; an input's event id maps to [] : it is only ever looked up).
    answers: dict[str, list[Message]] = field(default_factory=dict)
    #: The request digest of each client request in ``answers``.
    digests: dict[str, str] = field(default_factory=dict)
    #: Every hand started here -> the offset of its HandStarted in the table's partition (-1
    #: when not known: read from the partition's start).
    hands: dict[str, int] = field(default_factory=dict)
    revealed: set[str] = field(default_factory=set)
    settled: set[str] = field(default_factory=set)
    #: Hands whose settlement the ledger refused (void: holds released, nothing moved) -> why.
    voided: dict[str, str] = field(default_factory=dict)
    #: The hand state after each payload of the last :meth:`hand_commands` (by the payload's
    #: identity): folding those very payloads once appended takes that state instead of
    #: decoding and applying them again.
    _decided: dict[int, tuple[Message, Any]] = field(default_factory=dict, repr=False)
    closing: bool = False
    closed: bool = False
    on_decision: DecisionObserver | None = None
    #: Client request keys dropped from ``answers`` since the projection last looked.
    evicted: list[str] = field(default_factory=list, repr=False, compare=False)
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
    def opened_from(cls, envelope: Envelope, on_decision: DecisionObserver | None = None) -> Table:
        """The table an envelope carrying TableOpened creates (``on_decision`` is told of each
        decision it asks of the rules). Raises ValueError for bad options."""
        opened = envelope.payload
        assert isinstance(opened, pb.TableOpened)
        table = cls.for_opened(opened, on_decision)
        table.apply(envelope)
        return table

    @classmethod
    def for_opened(cls, opened: pb.TableOpened, on_decision: DecisionObserver | None) -> Table:
        """A table of ``opened``'s options with nothing folded yet. Raises ValueError for bad
        options."""
        rules = codec.recorded_rule_set_from_pb(
            opened.rule_set, opened.seat_count, opened.point_value_hundredths, opened.commission_bps
        )
        variant = registry.lookup(rules.variant)
        fmt = format_of(opened)
        host = None if fmt is None else MatchHost.for_table(fmt, rules, variant)
        return cls(opened.table_id, opened, rules, variant, on_decision=on_decision, match=host)

    @property
    def start_delay_ms(self) -> int:
        return codec.start_delay_seconds_from_pb(self.opened.rule_set) * 1000

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

    def _remember(self, envelope: Envelope) -> None:
        """Record the envelope's causation id (and, for a client's request, its payload and
        digest) in the answer window, dropping the oldest beyond ANSWER_WINDOW."""
        key = envelope.causation_id
        found = self.answers.get(key)
        if found is None:
            found = self.answers[key] = []
            if envelope.request_digest:
                self.digests[key] = envelope.request_digest
            self._trim_answers(ANSWER_WINDOW)
        if envelope.request_digest:
            found.append(envelope.payload)

    def _trim_answers(self, keep: int) -> None:
        while len(self.answers) > keep:
            oldest = next(iter(self.answers))
            del self.answers[oldest]
            if self.digests.pop(oldest, None) is not None:
                self.evicted.append(oldest)

    def apply(self, envelope: Envelope, offset: int = -1) -> None:  # noqa: C901 - one branch per fact
        """Fold one envelope of this table's stream into the state; ``offset``: where it lies in
        the table's partition (-1: not known)."""
        payload = envelope.payload
        at_ms = codec.datetime_to_ms(envelope.occurred_at)
        self.version = envelope.stream_version
        if envelope.causation_id:
            self._remember(envelope)
        if isinstance(payload, pb.TableOpened):
            self.last_change_ms = at_ms
        elif isinstance(payload, pb.TablePlayerSeated):
            self.seats[payload.seat] = SeatInfo(payload.account_id)
            self.last_change_ms = at_ms
        elif isinstance(payload, pb.TablePlayerLeft):
            self.seats.pop(payload.seat, None)
            self.last_change_ms = at_ms
        elif self.match is not None and self.match.owns(payload):
            self._apply_match(payload, at_ms)
        elif isinstance(payload, pb.HandStarted):
            if self.match is not None:
                self.match.hand_started(payload.hand_id)
            self.ctx = codec.hand_context(payload)
            self.started = payload
            self.hands[sys.intern(payload.hand_id)] = offset
            self.hand_no = payload.hand_no
            self.dealer_seat = payload.dealer_seat
            started = codec.hand_started_from_pb(payload, at_ms)
            self.hand = self.variant.apply(self.variant.initial_state(), started)
            self.hand_since_ms, self.hand_inputs = at_ms, set()
        elif isinstance(payload, ledger_pb.StakeRejected):
            info = self.seats.get(payload.seat)
            if info is not None and info.account_id == payload.account_id:
                info.sitting_out_reason = _rejection_text(payload)
        elif isinstance(payload, pb.TableClosing):
            self.closing = True
        elif isinstance(payload, pb.TableClosed):
            self.closed = True
            self._to_stub()
        elif isinstance(payload, fairness_pb.SeedRevealed):
            self.revealed.add(sys.intern(payload.hand_id))
        elif isinstance(payload, ledger_pb.HandSettled):
            self.settled.add(sys.intern(payload.hand_id))
        elif isinstance(payload, ledger_pb.SettlementRefused):
            self.settled.add(sys.intern(payload.hand_id))
            self.voided[payload.hand_id] = payload.reason
        elif codec.is_hand_payload(payload):
            assert self.ctx is not None, "a hand event before any HandStarted"
            decided = self._decided.pop(id(payload), None)
            if decided is not None and decided[0] is payload:
                self.hand = decided[1]  # the state decide produced for this very payload
            else:
                for event in codec.from_payload(payload, self.ctx, at_ms):
                    self.hand = self.variant.apply(self.hand, event)
            self.hand_since_ms = at_ms
            if isinstance(payload, _SERVICE_ANSWERS):
                self.hand_inputs.add(payload.DESCRIPTOR.full_name)
            if isinstance(payload, pb.HandEnded):
                self.results[payload.hand_id] = payload
                while len(self.results) > RESULT_WINDOW:
                    del self.results[next(iter(self.results))]
            if isinstance(payload, pb.HandEnded | pb.HandAborted):
                self.last_change_ms = at_ms

    def _apply_match(self, payload: Message, at_ms: int) -> None:
        assert self.match is not None
        self.match.apply(payload, at_ms)
        if isinstance(payload, ledger_pb.MatchMoneyRejected):
            info = self.seats.get(payload.seat)
            if info is not None and info.account_id == payload.account_id:
                info.sitting_out_reason = _rejection_text(payload)
        if isinstance(
            payload,
            mpb.MatchStarted
            | mpb.DealScored
            | mpb.DealVoided
            | mpb.MatchEnded
            | mpb.MatchAborted
            | ledger_pb.MatchMoneyHeld,
        ):
            self.last_change_ms = at_ms

    def correlation_ids(self, payloads: Sequence[Message]) -> list[str]:
        """Each envelope's correlation id of ``payloads`` (to be appended in this order): its
        match's id for a match payload or money answer, else its hand's id (or "")."""
        match_id = self.match.match_id if self.match is not None else ""
        out = []
        for payload in payloads:
            if isinstance(payload, mpb.MatchStarted):
                match_id = payload.match_id
            if self.match is not None and self.match.owns(payload):
                out.append(match_id)
            else:
                out.append(str(getattr(payload, "hand_id", "")))
        return out

    def _to_stub(self) -> None:
        """A closed table keeps no hand state, no results and few answers (its hands' results
        and proofs are read from the log)."""
        if not self.hand_running:
            self.hand, self.ctx, self.started = None, None, None
        self.results.clear()
        self._decided.clear()
        self._trim_answers(CLOSED_ANSWER_WINDOW)

    # -- decisions -------------------------------------------------------------------------

    def take_seat(self, account_id: str, wanted: int | None) -> list[Message]:
        """TablePlayerSeated for ``account_id`` at ``wanted`` or the first free seat.
        Raises InvalidArgument (no such seat) or FailedPrecondition (seated, taken, full, the
        table closing or closed)."""
        if self.closing:
            raise FailedPrecondition(f"this table is {self.state_name}: no seat is taken")
        already = self.seat_of(account_id)
        if already is not None:
            raise FailedPrecondition(f"you already sit at seat {already} of this table")
        count = self.opened.seat_count
        if wanted is not None:
            if not 0 <= wanted < count:
                raise InvalidArgument(f"seats are numbered 0..{count - 1}")
            if wanted in self.seats:
                raise FailedPrecondition(f"seat {wanted} is taken")
            seat = wanted
        else:
            free = [s for s in range(count) if s not in self.seats]
            if not free:
                raise FailedPrecondition("the table is full")
            seat = free[0]
        if self.dealt_in(seat):
            raise FailedPrecondition(f"seat {seat} is still playing the current hand")
        return [pb.TablePlayerSeated(seat=seat, account_id=account_id)]

    def leave(self, account_id: str, at_ms: int) -> list[Message]:
        """TablePlayerLeft, and the seat's exit from a running hand (the variant's LeaveHand).
        Raises PermissionDenied if the account is not seated here."""
        seat = self.seat_of(account_id)
        if seat is None:
            raise PermissionDenied("you do not sit at this table")
        during = self.dealt_in(seat)
        out: list[Message] = [
            pb.TablePlayerLeft(seat=seat, account_id=account_id, during_hand=during)
        ]
        match = self.match
        if (
            match is not None
            and match.running
            and seat in match.state.active
            and self._match_seat_account(seat) == account_id
        ):
            out += match.decide([fm.LeaveMatch(seat=seat, at_ms=at_ms)])[0]
        if during and self._seat_still_playing(seat):
            out += self.hand_commands([LeaveHand(seat=seat, at_ms=at_ms)])
        return out

    def _match_seat_account(self, seat: int) -> str:
        assert self.match is not None
        return next((s.account_id for s in self.match.state.seats if s.seat == seat), "")

    def _seat_still_playing(self, seat: int) -> bool:
        view = self.variant.view(self.hand, seat)
        status = next((s.status for s in view.seats if s.seat == seat), "")
        return status in ("waiting", "playing")

    def eligible_seats(self) -> list[int]:
        """Seats that may be dealt into the next hand, ascending."""
        return sorted(s for s, info in self.seats.items() if not info.sitting_out_reason)

    def start_due_ms(self, speed: float = 1.0) -> int | None:
        """When the next hand may start (ms since the epoch), or None while it cannot: a hand
        runs, or fewer than ``min_players`` seats are eligible. ``speed`` shortens the delay.
        At a match table: when the match starts (every seat taken), the next deal is dealt, or
        the current deal's hand starts (its money held); None while money is awaited."""
        if self.match is not None:
            return self._match_due_ms(speed)
        if (
            self.closing
            or self.hand_running
            or len(self.eligible_seats()) < self.rule_set.min_players
        ):
            return None
        return self.last_change_ms + int(self.start_delay_ms / speed)

    def _match_due_ms(self, speed: float) -> int | None:
        match = self.match
        assert match is not None
        if self.closing or self.hand_running or match.awaiting:
            return None
        delay = int(self.start_delay_ms / speed)
        if not match.running:
            full = len(self.eligible_seats()) == self.opened.seat_count
            return self.last_change_ms + delay if full else None
        if match.state.phase is MatchPhase.IN_DEAL:
            return None if match.deal_hand_started else self.last_change_ms
        return self.last_change_ms + delay

    def next_dealer(self, among: Sequence[int] | None = None) -> int:
        """The seat the button moves to: the first eligible seat (of ``among``, when given)
        after the last dealer."""
        seats = self.eligible_seats() if among is None else sorted(among)
        if self.dealer_seat is None:
            return seats[0]
        later = [s for s in seats if s > self.dealer_seat]
        return later[0] if later else seats[0]

    @property
    def state_name(self) -> str:
        """``open``, ``closing`` or ``closed``."""
        return "closed" if self.closed else "closing" if self.closing else "open"

    def close(self, operator_account_id: str, reason: str, at_ms: int = 0) -> list[Message]:
        """TableClosing by ``operator_account_id``; when no hand is being played, also every
        seat's TablePlayerLeft and TableClosed. Raises FailedPrecondition if the table is
        already closing or closed."""
        if self.closing:
            raise FailedPrecondition(f"table {self.table_id} is already {self.state_name}")
        out: list[Message] = [
            pb.TableClosing(operator_account_id=operator_account_id, reason=reason)
        ]
        if not self.hand_running:
            out += self._abort_match(out, _CLOSED_MID_MATCH, at_ms)
            out += self._stand_up_and_close(out)
        return out

    def follow_up(self, payloads: Sequence[Message], at_ms: int) -> list[Message]:
        """What follows ``payloads`` (about to be appended) in the same transaction: at a match
        table, the deal's result when they end its hand (RecordDeal; an aborted hand voids the
        deal); at a closing table whose hand they end, the match aborted (when it is not over),
        every seat still taken stood up and the table closed; else nothing."""
        ended = next((p for p in payloads if isinstance(p, pb.HandEnded | pb.HandAborted)), None)
        if ended is None:
            return []
        out = self._record_deal(payloads, ended, at_ms)
        if self.closing and not self.closed:
            before = [*payloads, *out]
            out += self._abort_match(before, _CLOSED_MID_MATCH, at_ms)
            out += self._stand_up_and_close([*before, *out])
        return out

    def _record_deal(
        self, payloads: Sequence[Message], ended: pb.HandEnded | pb.HandAborted, at_ms: int
    ) -> list[Message]:
        match = self.match
        if match is None or self.ctx is None or self.ctx.hand_id != match.deal_hand_id:
            return []
        state = match.state_after(list(payloads))
        if state.phase is not MatchPhase.IN_DEAL:
            return []
        if isinstance(ended, pb.HandAborted):
            command: Command = fm.RecordDealAborted(reason=ended.reason, at_ms=at_ms)
        else:
            (hand_ended,) = codec.from_payload(ended, self.ctx, at_ms)
            assert isinstance(hand_ended, ev.HandEnded)
            command = fm.RecordDeal(
                result=deal_result(hand_ended),
                at_ms=at_ms,
                most_points=self.variant.max_loss_points(match.deal_rules),
            )
        return match.decide([command], state)[0]

    def _abort_match(self, before: Sequence[Message], reason: str, at_ms: int) -> list[Message]:
        """AbortMatch's payloads when the match (after ``before``) is running, else none."""
        match = self.match
        if match is None:
            return []
        state = match.state_after(list(before))
        if state.phase is MatchPhase.NOT_STARTED or state.is_over:
            return []
        return match.decide([fm.AbortMatch(reason=reason, at_ms=at_ms)], state)[0]

    def _stand_up_and_close(self, before: Sequence[Message]) -> list[Message]:
        left = {p.seat for p in before if isinstance(p, pb.TablePlayerLeft)}
        out: list[Message] = [
            pb.TablePlayerLeft(seat=seat, account_id=info.account_id, during_hand=False)
            for seat, info in sorted(self.seats.items())
            if seat not in left
        ]
        return [*out, pb.TableClosed()]

    def start_hand(self, hand_id: str, at_ms: int) -> list[Message]:
        """HandStarted for hand ``hand_id`` with every eligible seat, and whatever else the
        variant decides with it (e.g. its SeedWindowOpened). Raises FailedPrecondition if no hand
        can start, RuleViolation if the rules refuse it."""
        if self.start_due_ms() is None:
            raise FailedPrecondition("a hand runs, or fewer than two seats are eligible")
        if self.match is not None:
            return self._match_step(hand_id, at_ms)
        command = StartHand(
            hand_id=hand_id,
            seats=tuple(ev.SeatAccount(s, self.seats[s].account_id) for s in self.eligible_seats()),
            dealer_seat=self.next_dealer(),
            rule_set=self.rule_set,
            at_ms=at_ms,
        )
        return self._started_payloads(command)

    def _started_payloads(self, command: StartHand) -> list[Message]:
        state = self.variant.initial_state()
        started, *more = self._decide(state, command)
        assert isinstance(started, ev.HandStarted)
        first = codec.hand_started_to_pb(started, self.hand_no + 1)
        out: list[Message] = [first]
        if more:  # a variant whose start also opens the seed window (the events it decides)
            ctx = codec.hand_context(first)
            for event in more:
                out.append(codec.to_payload(event, ctx))
        return out

    def _match_step(self, hand_id: str, at_ms: int) -> list[Message]:
        """The match's next step: start a match (its first deal at once at a free table), deal
        the next deal (its hand at once unless a game's stakes are to be held first), or start
        the hand of a deal whose money is now held."""
        match = self.match
        assert match is not None
        if match.running and match.state.phase is MatchPhase.IN_DEAL:
            return self._deal_hand(match.deal_hand_id, match.state, at_ms)
        out: list[Message] = []
        state = match.state
        if not match.running:
            seats = tuple(
                ev.SeatAccount(s, self.seats[s].account_id) for s in self.eligible_seats()
            )
            match_id = f"{self.table_id}/{match.matches + 1}"
            started, state = match.decide(
                [fm.StartMatch(match_id=match_id, seats=seats, at_ms=at_ms)],
                match.fmt.initial_state(),
            )
            out += started
            if any(isinstance(p, mpb.MoneyReserved) for p in started):
                return out  # the first deal waits for the entries to be held
        begun, state = match.decide([fm.BeginDeal(at_ms=at_ms)], state, hand_id=hand_id)
        out += begun
        if any(isinstance(p, mpb.MoneyReserved) for p in begun):
            return out  # the game's stakes are held before its first hand is dealt
        return out + self._deal_hand(hand_id, state, at_ms)

    def _deal_hand(self, hand_id: str, state: MatchState, at_ms: int) -> list[Message]:
        """The HandStarted of the deal ``state`` is in (its seats; the format's rule set). Its
        dealer is the last hand's when the format keeps it (the last deal counted was drawn:
        gin's wall, "same dealer redeals") and that seat is dealt in; otherwise the button
        moves (:meth:`next_dealer`)."""
        assert self.match is not None
        accounts = {s.seat: s.account_id for s in state.seats}
        seats = state.deal_seats
        dealer = self.dealer_seat
        if dealer is None or dealer not in seats or not self.match.fmt.keeps_dealer(state):
            dealer = self.next_dealer(seats)
        command = StartHand(
            hand_id=hand_id,
            seats=tuple(ev.SeatAccount(s, accounts[s]) for s in seats),
            dealer_seat=dealer,
            rule_set=self.match.deal_rules,
            at_ms=at_ms,
        )
        return self._started_payloads(command)

    def hand_commands(self, commands: Sequence[Command]) -> list[Message]:
        """The payloads of the events ``commands`` cause in the current hand, decided in turn.
        Raises FailedPrecondition if no hand runs, RuleViolation if the rules refuse one."""
        if self.hand is None or self.ctx is None:
            raise FailedPrecondition("no hand is being played at this table")
        state, out, automatic = self.hand, [], False
        self._decided.clear()  # an earlier decision was appended and folded, or failed
        for command in commands:
            for event in self._decide(state, command):
                state = self.variant.apply(state, event)
                if isinstance(event, ev.TurnTimedOut):
                    automatic = True
                elif isinstance(event, ev.TurnStarted):
                    automatic = False
                public = self.variant.view(state, -1)
                payload = codec.to_payload(
                    event,
                    self.ctx,
                    top_discard=public.discard_pile[-1] if public.discard_pile else None,
                    automatic=automatic and isinstance(event, ev.CardDrawn | ev.CardDiscarded),
                    wild_cut=public.wild_cut,
                )
                out.append(payload)
                self._decided[id(payload)] = (payload, state)
        return out

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

    def close_proof(
        self,
        closing: fairness_pb.SeedRevealed | ledger_pb.HandSettled | ledger_pb.SettlementRefused,
    ) -> list[Message]:
        """Record a hand's seed reveal or settlement (or the ledger's refusal of it, which voids
        the hand), which closes that hand's proof: accepted for any hand started at this table,
        the current one or an earlier one, whatever phase the current hand is in (a reveal may
        arrive after the next hand started). Raises FailedPrecondition for a hand this table
        never started, or one whose reveal (or settlement or refusal) is already recorded."""
        if closing.hand_id not in self.hands:
            raise FailedPrecondition(f"hand {closing.hand_id!r} was not played at this table")
        done = self.revealed if isinstance(closing, fairness_pb.SeedRevealed) else self.settled
        if closing.hand_id in done:
            kind = closing.DESCRIPTOR.name
            raise FailedPrecondition(f"{kind} of hand {closing.hand_id} is already recorded")
        return [closing]

    def match_money(
        self, answer: ledger_pb.MatchMoneyHeld | ledger_pb.MatchMoneyRejected, at_ms: int
    ) -> list[Message]:
        """Record the ledger's answer about the current match's money. A rejected rejoin undoes
        that seat's rejoin (it stays eliminated; the match goes on). Any other rejection aborts
        the match (every hold released by the ledger) and the seat sits out until its player
        leaves and sits again; the others wait for a full table. Raises FailedPrecondition for
        an answer about another match, or one not awaited (already recorded)."""
        match = self.match
        rejected = isinstance(answer, ledger_pb.MatchMoneyRejected)
        # Every rejection of the current match is recorded (several seats may be short; the
        # first aborts the match), a hold only while it is awaited.
        about_it = match is not None and (
            match.answers_this_match(answer) or (rejected and answer.match_id == match.match_id)
        )
        if match is None or not about_it:
            raise FailedPrecondition(
                f"no hold of match {answer.match_id!r} ({answer.purpose}) is awaited here"
            )
        out: list[Message] = [answer]
        if (
            isinstance(answer, ledger_pb.MatchMoneyRejected)
            and answer.purpose == match_wire.REJOIN_PURPOSE
            and match.running
        ):
            out += match.try_decide([fm.RejoinNotHeld(seat=answer.seat, at_ms=at_ms)])
        elif isinstance(answer, ledger_pb.MatchMoneyRejected) and match.running:
            reason = f"seat {answer.seat} could not cover its {answer.purpose}"
            out += match.decide([fm.AbortMatch(reason=reason, at_ms=at_ms)])[0]
        return out

    def match_settled(self, settled: ledger_pb.MatchSettled) -> list[Message]:
        """Record the ledger's MatchSettled (what it posted for the match, or a game of it) on
        the table's stream, where the match's replay checks it against MatchEnded. Raises
        FailedPrecondition unless it settles this table's current (or last) match: a game of
        it (``game_no`` > 0, game to N) any time, the match itself once it is over. The input is
        recorded once (a redelivery is answered from the table's answers)."""
        match = self.match
        ours = match is not None and settled.match_id == match.match_id
        if match is None or not ours or (settled.game_no == 0 and match.running):
            raise FailedPrecondition(
                f"no settlement of match {settled.match_id!r} (game {settled.game_no}) is "
                "awaited at this table"
            )
        return [settled]

    def match_command(self, account_id: str, message: Message, at_ms: int) -> list[Message]:
        """A player's match command (``rummy.match.v1`` AcceptRejoin, DeclineRejoin,
        RequestSplit) for the account's seat in the match. Raises FailedPrecondition (not a
        match table, no match running), PermissionDenied (not a seat of the match),
        RuleViolation (the format refuses it: nothing changes)."""
        match = self.match
        if match is None:
            raise FailedPrecondition("this table hosts no match (a points table)")
        if not match.running:
            raise FailedPrecondition("no match is being played at this table")
        seat = self.seat_of(account_id)
        if seat is None or self._match_seat_account(seat) != account_id:
            raise PermissionDenied("you do not play this table's match")
        command = match_wire.command_from_pb(message, seat, at_ms)
        if isinstance(command, fm.AcceptRejoin) and match.awaiting:
            raise RuleViolation(ErrorCode.WRONG_PHASE, "the match's money is not held yet")
        return match.decide([command])[0]

    def overdue_reason(self, now_ms: int, wait_ms: int, wait_text: str) -> str | None:
        """Why the current hand (or match) is to be aborted at ``now_ms``: the hand runs,
        nothing in it is timed by the clock (the variant's ``deadline`` is None: it waits for
        another service's answer, the ledger's stakes, fairness's commitment or the dealer's
        deal) and its last fact is ``wait_ms`` (ms) old or older. The reason names what is
        missing and ends "within ``wait_text``" (e.g. "the dealer did not deal within 60 s").
        At a match table with no hand running: the money the match awaits (entries, a rejoin,
        a game's stake) was asked for ``wait_ms`` ago or more. None when nothing is overdue."""
        if not self.hand_running:
            return self._money_overdue(now_ms, wait_ms, wait_text)
        if self.variant.deadline(self.hand) is not None:
            return None
        if now_ms - self.hand_since_ms < wait_ms:
            return None
        return f"{self._missing_answer()} within {wait_text}"

    def _money_overdue(self, now_ms: int, wait_ms: int, wait_text: str) -> str | None:
        match = self.match
        since = match.awaiting_since_ms() if match is not None and match.running else None
        if match is None or since is None or now_ms - since < wait_ms:
            return None
        asked = " and ".join(sorted({purpose for purpose, _ in match.awaiting}))
        return f"no deal could start: the ledger did not hold the {asked} within {wait_text}"

    def _missing_answer(self) -> str:
        got = self.hand_inputs
        if _name(pb.SeedsLocked) in got and _name(dealer_pb.HandDealt) not in got:
            return "the dealer did not deal"
        missing = [
            text
            for cls, text in (
                (ledger_pb.StakesReserved, "the ledger did not reserve the stakes"),
                (fairness_pb.SeedCommitted, "fairness did not commit the seed"),
            )
            if _name(cls) not in got
        ]
        if missing:
            return " and ".join(missing)
        phase = self.variant.view(self.hand, -1).phase
        return f"no service answered the hand waiting in phase {phase}"

    def abort_overdue(self, reason: str, at_ms: int) -> list[Message]:
        """The current hand aborted for ``reason`` (a service gone past its deadline, see
        :meth:`overdue_reason`): every reservation is released, the seed revealed, nothing else
        moves. At a match table the deal is voided (replayed with the same seats); when that
        makes :data:`MAX_DEALS_VOIDED_IN_A_ROW` voided deals in a row, no redeal is possible
        within the deadline and the match is aborted too (every entry released). Raises
        FailedPrecondition if no hand runs, RuleViolation if the variant refuses the abort.

        With no hand running, the match whose money the ledger did not hold in time is
        aborted (no deal can start: every entry released)."""
        if not self.hand_running:
            return self._abort_match([], reason, at_ms)
        out = self.hand_commands([AbortHand(reason=reason, at_ms=at_ms)])
        ended = next((p for p in out if isinstance(p, pb.HandAborted)), None)
        match = self.match
        if ended is None or match is None:
            return out
        out += self._record_deal(out, ended, at_ms)
        voided = sum(isinstance(p, mpb.DealVoided) for p in out)
        if voided and match.deals_voided_in_a_row() + voided >= MAX_DEALS_VOIDED_IN_A_ROW:
            why = f"no redeal was possible within the deadline ({reason})"
            out += self._abort_match(out, why, at_ms)
        return out

    def stake_rejected(self, rejected: ledger_pb.StakeRejected, at_ms: int) -> list[Message]:
        """The ledger could not hold a seat's reservation: record it (the seat sits out of later
        hands) and abort the hand before the deal (every reservation is released, nothing else
        moves); the next hand starts without that seat."""
        out: list[Message] = [rejected]
        if self.hand_running:
            reason = f"seat {rejected.seat} could not cover the reservation"
            out += self.hand_commands([AbortHand(reason=reason, at_ms=at_ms)])
        return out
