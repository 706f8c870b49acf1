"""The ledger's reactions to a match's events on table-events (``rummy.match.v1``; stream id =
table id, correlation id = match id), ``Ledger.matches``
(:class:`rummy_ledger.application.reactions.Ledger`):

=====================  =====================  =================================================
consumed               handler                published (ledger-events, key = table id,
                       (application.matches)  correlation id = match id)
=====================  =====================  =================================================
``TableOpened``        ``record_table``       (the table's rate, when it hosts a match format)
``MatchStarted``       ``start_match``        (the seats' accounts)
``GameStarted``        ``start_game``         (the seats a game's stakes are asked of)
``MoneyReserved``      ``hold_money``         ``MatchMoneyRejected`` per seat it cannot hold;
                                              ``MatchMoneyHeld`` once every seat of the batch
                                              has its outcome
``GameEnded``,         ``settle_match``       ``MatchSettled``, or ``MatchSettlementRefused``
``MatchEnded``                                (holds released); nothing for a free match
``MatchAborted``       ``abort_match``        ``MatchHoldsReleased``
=====================  =====================  =================================================

A refused settlement is counted as a hand's is (``rummy_ledger_settlements_refused_total``,
alert RummySettlementRefused) and by purpose; anything else the ledger refuses is logged and
counted (``rummy_ledger_refused_events_total{type}``) and consumed, as for hands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from google.protobuf.message import Message

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.application import history, upcast
from rummy_ledger.application import matches as match_application
from rummy_ledger.application.accounts import OutgoingEvent, line_memo
from rummy_ledger.application.matches import (
    HoldResult,
    MatchRefusal,
    MatchRelease,
    MatchSettleResult,
)
from rummy_ledger.application.ports import Counters, LedgerUnitOfWork
from rummy_ledger.domain.accounts import InvalidCommand
from rummy_ledger.domain.matches import (
    INSUFFICIENT_BALANCE,
    HoldMoney,
    MoneyLine,
    SettleMatch,
    StartMatch,
    purpose_of,
    settlement_purpose,
)
from rummy_platform.envelope import Envelope
from rummy_platform.logging import get_logger, log_context

_log = get_logger(__name__)
R = TypeVar("R")

_REASONS = {
    INSUFFICIENT_BALANCE: ledger_events.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE,
}
#: The player's own limits (``domain.limits.Reason`` values): the table is told "not dealt in",
#: the player's key which limit (``ReservationRefusedByLimit``).
_LIMIT_REASONS = {
    "loss_limit": ledger_events.LIMIT_REASON_LOSS_LIMIT,
    "stake_limit": ledger_events.LIMIT_REASON_STAKE_LIMIT,
    "break": ledger_events.LIMIT_REASON_BREAK,
    "self_exclusion": ledger_events.LIMIT_REASON_SELF_EXCLUSION,
}


def settle_command(
    table_id: str, match_id: str, game_no: int, event: match_pb2.GameEnded | match_pb2.MatchEnded
) -> SettleMatch:
    """The ``SettleMatch`` of a ``GameEnded`` (its game) or a ``MatchEnded`` (game 0): the
    settlement as the table computed it (``present`` False when the event carries none).
    Raises InvalidCommand for a GameEnded of game 0 (games are numbered from 1)."""
    if isinstance(event, match_pb2.GameEnded) and game_no < 1:
        raise InvalidCommand("a GameEnded names its game (1, 2, ...), not game 0")
    if not event.HasField("settlement"):
        return SettleMatch(table_id, match_id, game_no, present=False)
    s = event.settlement
    return SettleMatch(
        table_id=table_id,
        match_id=match_id,
        game_no=game_no,
        pool_hundredths=s.pool_hundredths,
        commission_bps=s.commission_bps,
        commission_hundredths=s.commission_hundredths,
        lines=tuple(
            MoneyLine(line.seat, line.held_hundredths, line.amount_hundredths)
            for line in sorted(s.lines, key=lambda line: line.seat)
        ),
        winners=tuple(s.winners),
    )


class _Held(Protocol):
    @property
    def seat(self) -> int: ...
    @property
    def account_id(self) -> str: ...
    @property
    def amount_hundredths(self) -> int: ...


def reservation_messages(rows: Iterable[_Held]) -> list[ledger_events.Reservation]:
    """``rummy.ledger.v1.Reservation`` of each row (a seat, its account, an amount held)."""
    return [
        ledger_events.Reservation(
            seat=r.seat, account_id=r.account_id, amount_hundredths=r.amount_hundredths
        )
        for r in rows
    ]


class Refusing(Protocol):
    """``Ledger._refusing``: ``call()``, or None when the ledger refuses the command (logged,
    counted)."""

    def __call__(self, source: Envelope, call: Callable[[], R]) -> R | None: ...


#: ``Ledger``'s outgoing envelope of a payload caused by a table event, with the match id as
#: its correlation id.
Emit = Callable[[LedgerUnitOfWork, Envelope, Message, str], OutgoingEvent]
#: ``Ledger.limit_refusal_event``: a ``ReservationRefusedByLimit`` keyed by the player's account.
EmitPrivate = Callable[
    [LedgerUnitOfWork, Envelope, str, int, ledger_events.ReservationRefusedByLimit], OutgoingEvent
]


class MatchReactions:
    """The match reactions, on the ledger's plumbing (``reactions.Ledger`` builds one as its
    ``matches``): ``emit`` builds an outgoing event, ``refusing`` runs a command and turns a
    refusal into None, ``counters`` are the ledger's metric callbacks."""

    def __init__(
        self, emit: Emit, refusing: Refusing, counters: Counters, emit_private: EmitPrivate
    ) -> None:
        self._emit = emit
        self._emit_private = emit_private
        self._refusing = refusing
        self._counters = counters

    def _event(
        self, uow: LedgerUnitOfWork, source: Envelope, payload: Message, match_id: str
    ) -> OutgoingEvent:
        return self._emit(uow, source, payload, match_id)

    # -- facts the ledger remembers -------------------------------------------------------------

    def on_table_opened(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        """Remember the variant every table plays (its players' history) and the rate of a
        table hosting a match format (any format but ``single``)."""
        opened = source.payload
        assert isinstance(opened, table_events.TableOpened)
        with log_context(table_id=source.stream_id):
            self._refusing(
                source,
                lambda: history.record_variant(
                    uow, source.stream_id, upcast.variant_name(opened.rule_set)
                ),
            )
        if not opened.HasField("match") or opened.match.WhichOneof("format") in (None, "single"):
            return
        with log_context(table_id=source.stream_id):
            self._refusing(
                source,
                lambda: match_application.record_table(
                    uow, source.stream_id, opened.commission_bps
                ),
            )

    def on_match_started(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        started = source.payload
        assert isinstance(started, match_pb2.MatchStarted)
        command = StartMatch(
            table_id=source.stream_id,
            match_id=started.match_id,
            match_format=started.match_format,
            seats=tuple((s.seat, s.account_id) for s in started.seats),
        )
        with log_context(table_id=source.stream_id, match_id=started.match_id):
            if self._refusing(source, lambda: match_application.start_match(uow, command)):
                _log.info("match started", match_format=started.match_format)

    def on_game_started(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        game = source.payload
        assert isinstance(game, match_pb2.GameStarted)
        table_id, match_id = source.stream_id, source.correlation_id
        with log_context(table_id=table_id, match_id=match_id):
            self._refusing(
                source,
                lambda: match_application.start_game(
                    uow, table_id, match_id, game.game_no, tuple(game.seats)
                ),
            )

    # -- money --------------------------------------------------------------------------------

    def on_money_reserved(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        """Hold one seat's money; answer the batch once complete."""
        asked = source.payload
        assert isinstance(asked, match_pb2.MoneyReserved)
        table_id, match_id = source.stream_id, source.correlation_id

        def outbox(result: HoldResult) -> list[OutgoingEvent]:
            hold, batch = result.hold, result.batch
            events = []
            if not hold.held:
                limit = _LIMIT_REASONS.get(hold.reason or "")
                if limit is not None:
                    private = ledger_events.ReservationRefusedByLimit(
                        account_id=hold.account_id,
                        table_id=table_id,
                        purpose=batch.purpose,
                        reason=limit,
                        detail=hold.detail or hold.reason or "",
                        required_hundredths=hold.amount_hundredths,
                    )
                    events.append(self._emit_private(uow, source, match_id, 0, private))
                rejected = ledger_events.MatchMoneyRejected(
                    match_id=match_id,
                    purpose=batch.purpose,
                    game_no=batch.game_no,
                    seat=hold.seat,
                    account_id=hold.account_id,
                    reason=ledger_events.STAKE_REJECTION_REASON_NOT_DEALT_IN
                    if limit is not None
                    else _REASONS.get(
                        hold.reason or "", ledger_events.STAKE_REJECTION_REASON_UNKNOWN_ACCOUNT
                    ),
                    available_hundredths=0 if limit is not None else hold.available_hundredths,
                    required_hundredths=hold.amount_hundredths,
                )
                events.append(self._event(uow, source, rejected, match_id))
            if result.answer:
                held = ledger_events.MatchMoneyHeld(
                    match_id=match_id,
                    purpose=batch.purpose,
                    game_no=batch.game_no,
                    reservations=reservation_messages(
                        h for h in sorted(batch.holds, key=lambda h: h.seat) if h.held
                    ),
                )
                events.append(self._event(uow, source, held, match_id))
            return events

        def hold() -> HoldResult:
            command = HoldMoney(
                table_id=table_id,
                match_id=match_id,
                seat=asked.seat,
                amount_hundredths=asked.amount_hundredths,
                purpose=purpose_of(asked.purpose),
                game_no=asked.game_no,
            )
            return match_application.hold_money(uow, command, outbox=outbox, at=source.occurred_at)

        with log_context(table_id=table_id, match_id=match_id, seat=asked.seat):
            result = self._refusing(source, hold)
            if result is None or result.replayed:
                return
            outcome = "held" if result.hold.held else "rejected"
            self._counters.match_hold(result.batch.purpose, outcome)
            if result.hold.reason in _LIMIT_REASONS:
                self._counters.limit_refusal(result.hold.reason or "")
            _log.info(
                f"match money {outcome}",
                purpose=result.batch.purpose,
                game_no=result.batch.game_no,
                amount_hundredths=result.hold.amount_hundredths,
                reason=result.hold.reason,
                batch_answered=result.answer,
            )

    def on_game_ended(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        ended = source.payload
        assert isinstance(ended, match_pb2.GameEnded)
        self._settle(uow, source, ended.game_no, ended)

    def on_match_ended(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        ended = source.payload
        assert isinstance(ended, match_pb2.MatchEnded)
        self._settle(uow, source, 0, ended)

    def _settle(
        self,
        uow: LedgerUnitOfWork,
        source: Envelope,
        game_no: int,
        ended: match_pb2.GameEnded | match_pb2.MatchEnded,
    ) -> None:
        table_id, match_id = source.stream_id, source.correlation_id
        purpose = settlement_purpose(game_no)

        def settled(result: MatchSettleResult) -> list[OutgoingEvent]:
            payload = ledger_events.MatchSettled(
                match_id=match_id,
                game_no=game_no,
                journal_transaction_id=result.transaction_id,
                lines=[
                    ledger_events.JournalLine(
                        account_id=line.account_id,
                        amount_hundredths=line.amount_hundredths,
                        memo=line_memo(line.line_kind, line.seat),
                    )
                    for line in result.lines
                ],
                commission_hundredths=result.commission_hundredths,
            )
            return [self._event(uow, source, payload, match_id)]

        def refused(refusal: MatchRefusal) -> list[OutgoingEvent]:
            payload = ledger_events.MatchSettlementRefused(
                match_id=match_id,
                game_no=game_no,
                reason=refusal.reason,
                released=reservation_messages(refusal.released),
            )
            return [self._event(uow, source, payload, match_id)]

        with log_context(table_id=table_id, match_id=match_id, game_no=game_no):
            result = self._refusing(
                source,
                lambda: match_application.settle_match(
                    uow,
                    settle_command(table_id, match_id, game_no, ended),
                    settled=settled,
                    refused=refused,
                    at=source.occurred_at,
                    winners=tuple(ended.winners) if isinstance(ended, match_pb2.MatchEnded) else (),
                ),
            )
            if isinstance(result, MatchRefusal):
                self._counters.match_settlement_refused(purpose)
                _log.error(
                    "match settlement refused; its holds released, nothing else moved",
                    event_id=source.event_id,
                    reason=result.reason,
                    released_seats=[r.seat for r in result.released],
                )
            elif isinstance(result, MatchSettleResult):
                self._counters.match_settlement(purpose, result.commission_hundredths)
                _log.info(
                    "match settled",
                    purpose=purpose,
                    commission_hundredths=result.commission_hundredths,
                )

    def on_match_aborted(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        """Release every hold of the match; ``MatchHoldsReleased``."""
        assert isinstance(source.payload, match_pb2.MatchAborted)
        table_id, match_id = source.stream_id, source.correlation_id

        def outbox(result: MatchRelease) -> list[OutgoingEvent]:
            payload = ledger_events.MatchHoldsReleased(
                match_id=match_id, released=reservation_messages(result.released)
            )
            return [self._event(uow, source, payload, match_id)]

        with log_context(table_id=table_id, match_id=match_id):
            result = self._refusing(
                source,
                lambda: match_application.abort_match(
                    uow, table_id, match_id, outbox=outbox, at=source.occurred_at
                ),
            )
            if result is None or result.replayed:
                return
            self._counters.match_aborted()
            _log.info("match holds released", seats=[r.seat for r in result.released])
