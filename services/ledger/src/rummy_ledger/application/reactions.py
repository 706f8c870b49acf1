"""The ledger as the running service uses it: reactions to table-events, and the announced grant.

Each reaction runs inside the transaction ``rummy_platform.reactor.PostgresReactor`` opened for
one table-events record (which also stores the consumed offset and the event id), reached
through a unit of work joined to it (``entrypoints.events`` wires
``PostgresUnitOfWork.joining(conn)``; the tests hand the in-memory fake); it decodes the
payload into a command, calls the application handler on that unit of work, and writes the
ledger-events it causes to the outbox in the same transaction:

==================  ===========================  ==========================================
consumed            handler                      published (ledger-events, key = table id)
==================  ===========================  ==========================================
``HandStarted``     ``reserve_stakes``           ``StakeRejected`` per seat short of its
                                                 reservation, then ``StakesReserved``
``HandEnded``       ``settle_hand``              ``HandSettled``
                    or ``refuse_settlement``     or ``SettlementRefused`` (holds released)
``HandAborted``     ``abort_hand``               ``ReservationsReleased``
==================  ===========================  ==========================================

A match's events (``TableOpened``, ``rummy.match.v1``: its holds, settlements and abort) have
their reactions in :mod:`rummy_ledger.application.match_reactions` (``Ledger.matches``), on
the same plumbing.

The settlement posted is the one the table computed with the rules library and carried in
``HandEnded``; the ledger checks its invariants (``domain.accounts.check_settlement``) and never
recomputes it. One that fails them is refused as ``docs/rules/money.md#refused-settlement``
says: recorded (``SettlementRefused`` with the reason), its holds released, nothing else moved,
counted (``rummy_ledger_settlements_refused_total``, which the RummySettlementRefused alert
watches) and logged at error.

Every published envelope has ``correlation_id`` = the hand id, ``causation_id`` = the table
event's id, the table event's rules and shuffle versions, and an event id derived from the table
event's (``reaction_event_id``), so a reaction written twice would carry the same ids. A command
replayed under its idempotency key (the same hand re-recorded under a new event id) writes no
event. Any other command the ledger refuses (a body that conflicts with the first one, a
malformed command) moves nothing, is logged with the reason and counted, and is consumed:
retrying it could never succeed, and it must not block the partition's other tables.

``Ledger.grant`` (operator's gRPC ``Grant``) writes ``TokensGranted`` keyed by account id.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC
from typing import TypeVar

from google.protobuf.message import Message

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.application import accounts as application
from rummy_ledger.application import history, upcast
from rummy_ledger.application.accounts import (
    AbortResult,
    GrantResult,
    OutgoingEvent,
    RefusalResult,
    ReserveResult,
    SettleResult,
    line_memo,
)
from rummy_ledger.application.limits import (
    LimitsReport,
    change_limits,
    read_limits,
    seat_refusal,
)
from rummy_ledger.application.match_reactions import MatchReactions, reservation_messages
from rummy_ledger.application.ports import Clock, Counters, LedgerUnitOfWork
from rummy_ledger.domain.accounts import (
    DEFAULT_GRANT_LIMITS,
    AbortHand,
    Grant,
    GrantLimits,
    LedgerError,
    RefuseSettlement,
    ReserveStakes,
    SeatResult,
    SeatStake,
    SettleHand,
    SettlementRefused,
)
from rummy_ledger.domain.limits import LimitCommand, LimitFact, Reason, Refusal
from rummy_platform.envelope import Envelope, reaction_event_id, type_name
from rummy_platform.logging import get_logger, log_context
from rummy_platform.topics import LEDGER_EVENTS

_log = get_logger(__name__)

R = TypeVar("R")
_GRANT_NAMESPACE = uuid.UUID("0b6f4a53-1d2e-4c8b-9f4e-6a2d7c1e5b38")


#: The ``ReservationRefusedByLimit`` reason of each limit (``domain.limits.Reason`` values).
LIMIT_REASONS = {
    Reason.LOSS_LIMIT.value: ledger_events.LIMIT_REASON_LOSS_LIMIT,
    Reason.STAKE_LIMIT.value: ledger_events.LIMIT_REASON_STAKE_LIMIT,
    Reason.BREAK.value: ledger_events.LIMIT_REASON_BREAK,
    Reason.SELF_EXCLUSION.value: ledger_events.LIMIT_REASON_SELF_EXCLUSION,
}


def settle_command(table_id: str, ended: table_events.HandEnded) -> SettleHand:
    """The ``SettleHand`` of a ``HandEnded``: the settlement lines the table computed with the
    rules library, as given (the ledger checks their invariants; it does not recompute them).
    Raises SettlementRefused when the event carries no settlement."""
    if not ended.settlement:
        raise SettlementRefused(f"hand {ended.hand_id}: HandEnded carries no settlement lines")
    return SettleHand(
        hand_id=ended.hand_id,
        table_id=table_id,
        winner_seat=ended.winner_seat,
        seats=tuple(
            SeatResult(seat=line.seat, points=line.points, amount_hundredths=line.amount_hundredths)
            for line in sorted(ended.settlement, key=lambda line: line.seat)
        ),
        commission_hundredths=ended.commission_hundredths,
        point_value_hundredths=ended.point_value_hundredths,
        commission_bps=ended.commission_bps,
        co_winner_seats=tuple(ended.co_winner_seats),
    )


def check_seat_accounts(uow: LedgerUnitOfWork, ended: table_events.HandEnded) -> None:
    """Raise SettlementRefused when a settlement line names another account than the one the
    ledger holds that seat's reservation for (the ledger pays by the reservation's account)."""
    held = {r.seat: r.account_id for r in uow.reservations.lock_held(ended.hand_id)}
    for line in ended.settlement:
        if line.account_id and line.seat in held and held[line.seat] != line.account_id:
            raise SettlementRefused(
                f"hand {ended.hand_id}: seat {line.seat} is {line.account_id!r} in HandEnded "
                f"but its reservation is held for {held[line.seat]!r}"
            )


class Ledger:
    """The reactions (a match's in ``matches``, a
    :class:`~rummy_ledger.application.match_reactions.MatchReactions`) and the announced grant,
    with their topic, clock, metric callbacks and the grants' limits."""

    def __init__(
        self,
        *,
        clock: Clock,
        topic: str = LEDGER_EVENTS,
        counters: Counters | None = None,
        grant_limits: GrantLimits = DEFAULT_GRANT_LIMITS,
    ) -> None:
        self._topic = topic
        self._clock = clock
        self._counters = counters or Counters()
        self._grant_limits = grant_limits
        self.matches = MatchReactions(
            lambda uow, source, payload, match_id: self._event(uow, source, payload, match_id),
            self._refusing,
            self._counters,
            self.limit_refusal_event,
        )

    # -- reactions to table-events (inside the reactor's transaction) ---------------------------

    def on_hand_started(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        """Reserve ``reservation_hundredths`` for each seat dealt in (all-or-nothing per seat)."""
        started = source.payload
        assert isinstance(started, table_events.HandStarted)
        command = ReserveStakes(
            hand_id=started.hand_id,
            table_id=source.stream_id,
            seats=tuple(
                SeatStake(s.seat, s.account_id, started.reservation_hundredths)
                for s in started.seats
            ),
        )

        def outbox(result: ReserveResult) -> list[OutgoingEvent]:
            # A seat held back by its own limits is "not dealt in" on the table's answer; which
            # limit goes to the player's own key (ReservationRefusedByLimit).
            rejected = [
                ledger_events.StakeRejected(
                    hand_id=started.hand_id,
                    seat=s.seat,
                    account_id=s.account_id,
                    reason=ledger_events.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE
                    if s.refused_by is None
                    else ledger_events.STAKE_REJECTION_REASON_NOT_DEALT_IN,
                    available_hundredths=s.available_hundredths if s.refused_by is None else 0,
                    required_hundredths=s.amount_hundredths,
                )
                for s in result.rejected
            ]
            private = [
                self.limit_refusal_event(
                    uow,
                    source,
                    started.hand_id,
                    index,
                    ledger_events.ReservationRefusedByLimit(
                        account_id=s.account_id,
                        table_id=source.stream_id,
                        purpose="hand",
                        reason=LIMIT_REASONS[s.refused_by or ""],
                        detail=s.reason or "",
                        required_hundredths=s.amount_hundredths,
                    ),
                )
                for index, s in enumerate(r for r in result.rejected if r.refused_by is not None)
            ]
            reserved = ledger_events.StakesReserved(
                hand_id=started.hand_id,
                reservations=reservation_messages(result.reserved),
            )
            return (
                private
                + [
                    self._event(uow, source, payload, started.hand_id, index)
                    for index, payload in enumerate(rejected)
                ]
                + [self._event(uow, source, reserved, started.hand_id)]
            )

        with log_context(table_id=source.stream_id, hand_id=started.hand_id):
            self._refusing(
                source,
                lambda: history.record_variant(
                    uow, source.stream_id, upcast.variant_name(started.rule_set)
                ),
            )
            result = self._refusing(
                source,
                lambda: application.reserve_stakes(
                    uow, command, outbox=outbox, at=source.occurred_at
                ),
            )
            if result is None or result.replayed:
                return
            for seat in result.seats:
                self._counters.reservation("reserved" if seat.reserved else "rejected")
                if not seat.reserved:
                    _log.info("stake rejected", seat=seat.seat, reason=seat.reason)
                    if seat.refused_by is not None:
                        self._counters.limit_refusal(seat.refused_by)
            _log.info("stakes reserved", seats=[s.seat for s in result.reserved])

    def on_hand_ended(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        """Post the hand's settlement once and release what is left; ``HandSettled``."""
        ended = source.payload
        assert isinstance(ended, table_events.HandEnded)

        def outbox(result: SettleResult) -> list[OutgoingEvent]:
            settled = ledger_events.HandSettled(
                hand_id=ended.hand_id,
                journal_transaction_id=result.transaction_id,
                lines=[
                    ledger_events.JournalLine(
                        account_id=line.account_id,
                        amount_hundredths=line.amount_hundredths,
                        memo=line_memo(line.line_kind, line.seat, line.points),
                    )
                    for line in result.lines
                ],
                commission_hundredths=result.commission_hundredths,
            )
            return [self._event(uow, source, settled, ended.hand_id)]

        def settle() -> SettleResult | RefusalResult:
            try:
                check_seat_accounts(uow, ended)
                command = settle_command(source.stream_id, ended)
                return application.settle_hand(
                    uow,
                    command,
                    outbox=outbox,
                    at=source.occurred_at,
                    outcomes={r.seat: r.outcome for r in ended.results},
                )
            except SettlementRefused as error:
                return self._refuse_settlement(uow, source, ended.hand_id, str(error))

        with log_context(table_id=source.stream_id, hand_id=ended.hand_id):
            result = self._refusing(source, settle)
            if result is None or result.replayed or isinstance(result, RefusalResult):
                return
            self._counters.settlement(result.commission_hundredths)
            _log.info(
                "hand settled",
                commission_hundredths=result.commission_hundredths,
                released_seats=list(result.released_seats),
            )

    def _refuse_settlement(
        self, uow: LedgerUnitOfWork, source: Envelope, hand_id: str, reason: str
    ) -> RefusalResult:
        """Record a refused settlement (``SettlementRefused`` in the outbox), release the hand's
        holds, count it and log it; nothing else moves
        (``docs/rules/money.md#refused-settlement``)."""

        def outbox(result: RefusalResult) -> list[OutgoingEvent]:
            refused = ledger_events.SettlementRefused(
                hand_id=hand_id,
                reason=result.reason,
                released=reservation_messages(result.released),
            )
            return [self._event(uow, source, refused, hand_id)]

        command = RefuseSettlement(hand_id, source.stream_id)
        result = application.refuse_settlement(
            uow, command, reason, outbox=outbox, at=source.occurred_at
        )
        if not result.replayed:
            self._counters.settlement_refused()
            _log.error(
                "settlement refused; the hand is void and its holds released, nothing else moved",
                event_id=source.event_id,
                reason=result.reason,
                released_seats=[r.seat for r in result.released],
            )
        return result

    def on_hand_aborted(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        """Release every held reservation of the hand; ``ReservationsReleased``."""
        aborted = source.payload
        assert isinstance(aborted, table_events.HandAborted)

        def outbox(_result: AbortResult) -> list[OutgoingEvent]:
            released = ledger_events.ReservationsReleased(hand_id=aborted.hand_id)
            return [self._event(uow, source, released, aborted.hand_id)]

        with log_context(table_id=source.stream_id, hand_id=aborted.hand_id):
            result = self._refusing(
                source,
                lambda: application.abort_hand(uow, AbortHand(aborted.hand_id), outbox=outbox),
            )
            if result is None or result.replayed:
                return
            self._counters.aborted()
            _log.info("reservations released", seats=[r.seat for r in result.released])

    # -- the operator's grant ----------------------------------------------------------------

    def grant(self, uow: LedgerUnitOfWork, command: Grant) -> GrantResult:
        """``application.grant`` in one transaction with ``TokensGranted`` (keyed by the account
        id) in the outbox; a retry under the same key returns the first result and writes no
        second event. Raises InvalidCommand or Conflict."""

        with uow.transaction():

            def outbox(result: GrantResult) -> list[OutgoingEvent]:
                payload = ledger_events.TokensGranted(
                    account_id=result.account_id,
                    amount_hundredths=result.amount_hundredths,
                    idempotency_key=command.idempotency_key,
                    journal_transaction_id=result.transaction_id,
                    operator_account_id=command.operator,  # the audit trail names who granted
                )
                envelope = Envelope.new(
                    payload,
                    event_id=str(uuid.uuid5(_GRANT_NAMESPACE, result.transaction_id)),
                    stream_id=result.account_id,
                    stream_version=uow.outbox.next_stream_version(result.account_id),
                    occurred_at=self._clock(),
                    causation_id=command.idempotency_key,
                )
                return [OutgoingEvent.from_envelope(self._topic, envelope)]

            result = application.grant(uow, command, limits=self._grant_limits, outbox=outbox)
        if not result.replayed:
            self._counters.granted(result.amount_hundredths)
        return result

    # -- responsible play (a player's own limits; the ledger's clock) --------------------------

    def change_limits(
        self, uow: LedgerUnitOfWork, account_id: str, command: LimitCommand
    ) -> LimitsReport:
        """``application.limits.change_limits`` now, each fact a ``LimitChanged`` (keyed by the
        account id) in the outbox of the same transaction. Raises InvalidCommand or
        LimitRefused (nothing changed)."""
        now = self._clock()

        def outbox(facts: tuple[LimitFact, ...]) -> list[OutgoingEvent]:
            return [self._limit_event(uow, fact) for fact in facts]

        report = change_limits(uow, account_id, command, now, outbox=outbox)
        for fact in report.facts:
            self._counters.limit_change(fact.kind.value)
            _log.info(
                "limits changed",
                account_id=account_id,
                change=fact.kind.value,
                what=fact.what,
                effective_at=fact.effective_at.isoformat(),
            )
        return report

    def read_limits(self, uow: LedgerUnitOfWork, account_id: str) -> LimitsReport:
        """The account's limits in force now, pending changes, period losses."""
        return read_limits(uow, account_id, self._clock())

    def check_seat(
        self, uow: LedgerUnitOfWork, account_id: str, amount_hundredths: int
    ) -> Refusal | None:
        """Why the account's limits would refuse a seat reserving ``amount_hundredths`` now."""
        return seat_refusal(uow, account_id, amount_hundredths, self._clock())

    def limit_refusal_event(
        self,
        uow: LedgerUnitOfWork,
        source: Envelope,
        correlation_id: str,
        index: int,
        payload: ledger_events.ReservationRefusedByLimit,
    ) -> OutgoingEvent:
        """``payload`` keyed by the player's account (private to it and operators), caused by
        the table event ``source``; its event id derived from the source's, as ``_event``'s."""
        envelope = Envelope.new(
            payload,
            event_id=reaction_event_id(source, type_name(payload), index),
            stream_id=payload.account_id,
            stream_version=uow.outbox.next_stream_version(payload.account_id),
            occurred_at=self._clock(),
            correlation_id=correlation_id,
            causation_id=source.event_id,
        )
        return OutgoingEvent.from_envelope(self._topic, envelope)

    def _limit_event(self, uow: LedgerUnitOfWork, fact: LimitFact) -> OutgoingEvent:
        payload = ledger_events.LimitChanged(
            account_id=fact.account_id,
            change=fact.kind.value,
            what=fact.what,
        )
        if isinstance(fact.value, int) and fact.what == "self_exclusion":
            payload.months = fact.value
        elif isinstance(fact.value, int):
            payload.amount_hundredths = fact.value
        elif isinstance(fact.value, str):
            payload.time_zone = fact.value
        payload.effective_at.FromDatetime(fact.effective_at.astimezone(UTC))
        if fact.until is not None:
            payload.until.FromDatetime(fact.until.astimezone(UTC))
        envelope = Envelope.new(
            payload,
            stream_id=fact.account_id,
            stream_version=uow.outbox.next_stream_version(fact.account_id),
            occurred_at=fact.asked_at,
        )
        return OutgoingEvent.from_envelope(self._topic, envelope)

    # -- plumbing -----------------------------------------------------------------------------

    def _event(
        self,
        uow: LedgerUnitOfWork,
        source: Envelope,
        payload: Message,
        correlation_id: str,
        index: int = 0,
    ) -> OutgoingEvent:
        """The outgoing envelope of ``payload`` caused by ``source``; ``correlation_id``: the
        hand id (or the match id) the payload names; ``index``: the payload's place among the
        reaction's payloads of its type (its event id)."""
        table_id = source.stream_id
        envelope = Envelope.new(
            payload,
            event_id=reaction_event_id(source, type_name(payload), index),
            stream_id=table_id,
            stream_version=uow.outbox.next_stream_version(table_id),
            occurred_at=self._clock(),
            correlation_id=correlation_id,
            causation_id=source.event_id,
            rules_version=source.rules_version,
            shuffle_version=source.shuffle_version,
        )
        return OutgoingEvent.from_envelope(self._topic, envelope)

    def _refusing(self, source: Envelope, call: Callable[[], R]) -> R | None:
        """``call()``, or None when the ledger refuses the command (logged, counted; the
        command's savepoint is rolled back, so nothing moved). Database errors propagate: the
        reactor rolls back and retries the record."""
        try:
            return call()
        except LedgerError as error:
            self._counters.refused(source.type)
            _log.error(
                "table event refused by the ledger; nothing moved",
                event_id=source.event_id,
                error=type(error).__name__,
                reason=str(error),
            )
            return None
