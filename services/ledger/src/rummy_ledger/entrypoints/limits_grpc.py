"""The responsible-play RPCs of ``rummy.ledger.v1.LedgerService`` (a part of the ledger's servicer,
:class:`rummy_ledger.entrypoints.grpc.LedgerServicer`), with their protobuf codecs.

Who may do what: a player changes and reads only its own limits (``account_id`` empty or its
own; another's is PERMISSION_DENIED); operators and services read any account's
(``GetLimits``) and change none (PERMISSION_DENIED); ``CheckSeat`` is the service role's (the
table's TakeSeat). Bad input (a negative amount, an unspecified period, an unknown time zone, a
break outside 24 hours .. 6 weeks, an exclusion outside 6 .. 60 months) is INVALID_ARGUMENT; a
change the account's state does not allow now (ending an exclusion early, no break to end)
FAILED_PRECONDITION; nothing changes either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy_ledger.application.limits import LimitsReport
from rummy_ledger.application.ports import LedgerUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.domain.accounts import InvalidCommand
from rummy_ledger.domain.limits import (
    DAY,
    MONTH,
    WEEK,
    AskToReturn,
    EndBreak,
    LimitCommand,
    LimitRefused,
    Reason,
    Refusal,
    SelfExclude,
    SetLossLimit,
    SetStakeLimit,
    SetTimeZone,
    StartBreak,
)
from rummy_platform import errors
from rummy_platform.auth import Principal, Role, current_principal, require_role

PERIOD_OF = {pb.LIMIT_PERIOD_DAY: DAY, pb.LIMIT_PERIOD_WEEK: WEEK, pb.LIMIT_PERIOD_MONTH: MONTH}
PERIOD_PB = {v: k for k, v in PERIOD_OF.items()}
CLOSED_PB = {
    Reason.BREAK: pb.PLAY_CLOSED_REASON_BREAK,
    Reason.SELF_EXCLUSION: pb.PLAY_CLOSED_REASON_SELF_EXCLUSION,
    Reason.LOSS_LIMIT: pb.PLAY_CLOSED_REASON_LOSS_LIMIT,
    Reason.STAKE_LIMIT: pb.PLAY_CLOSED_REASON_STAKE_LIMIT,
}


@contextmanager
def limit_errors() -> Iterator[None]:
    """A limits error as its status: InvalidCommand INVALID_ARGUMENT, LimitRefused
    FAILED_PRECONDITION (other ledger errors propagate to the servicer's table)."""
    try:
        yield
    except InvalidCommand as error:
        raise errors.InvalidArgument(str(error)) from error
    except LimitRefused as error:
        raise errors.FailedPrecondition(str(error)) from error


def own_account(principal: Principal, requested: str) -> str:
    """The account a player changes: its own. Raises PermissionDenied for another role or
    another account."""
    if principal.role is not Role.PLAYER:
        raise errors.PermissionDenied("only the player itself may change its limits")
    if requested and requested != principal.account_id:
        raise errors.PermissionDenied(
            f"a player may change only its own limits ({principal.account_id!r}), not {requested!r}"
        )
    return principal.account_id


def _timestamp(at: datetime | None) -> Timestamp | None:
    """``at`` on the wire; None (a message field left unset) for None."""
    if at is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(at.astimezone(UTC))
    return stamp


def _put(target: Timestamp, at: datetime) -> None:
    target.FromDatetime(at.astimezone(UTC))


def limits_message(report: LimitsReport) -> pb.Limits:
    """``rummy.ledger.v1.Limits`` of a report."""
    limits = report.limits
    message = pb.Limits(
        account_id=limits.account_id,
        time_zone=limits.time_zone,
        excluded=limits.excluded_at is not None,
    )
    for period in report.losses:
        item = message.periods.add(
            period=PERIOD_PB[period.period], net_loss_hundredths=period.net_loss_hundredths
        )
        limit = limits.loss_limit(period.period)
        if limit is not None:
            item.limit_hundredths = limit
        _put(item.period_ends_at, period.ends_at)
    if limits.stake_limit_hundredths is not None:
        message.stake_limit_hundredths = limits.stake_limit_hundredths
    if limits.break_until is not None:
        _put(message.break_until, limits.break_until)
    if limits.excluded_until is not None:
        _put(message.excluded_until, limits.excluded_until)
    for change in limits.pending:
        pending = message.pending.add(what=change.what)
        if isinstance(change.value, int):
            pending.amount_hundredths = change.value
        elif isinstance(change.value, str):
            pending.time_zone = change.value
        _put(pending.asked_at, change.asked_at)
        _put(pending.effective_at, change.effective_at)
    if report.closed is not None:
        message.closed_reason = CLOSED_PB[report.closed.reason]
        if report.closed.until is not None:
            _put(message.closed_until, report.closed.until)
    return message


def _effective(report: LimitsReport) -> Timestamp:
    """When the command's change applies: its last fact's time (now, when nothing waited)."""
    at = max((f.effective_at for f in report.facts), default=report.at)
    stamp = _timestamp(at)
    assert stamp is not None
    return stamp


class LimitsRpcs:
    """The responsible-play methods of the ledger's servicer (``_ledger``, ``_uow`` set by it)."""

    _ledger: Ledger
    _uow: LedgerUnitOfWork

    def _change(self, requested: str, build: Callable[[], LimitCommand]) -> LimitsReport:
        account_id = own_account(current_principal(), requested)
        with limit_errors():
            command = build()
            return self._ledger.change_limits(self._uow, account_id, command)

    def GetLimits(  # noqa: N802 - generated name
        self, request: pb.GetLimitsRequest, context: grpc.ServicerContext
    ) -> pb.GetLimitsResponse:
        principal = current_principal()
        if principal.role is Role.PLAYER:
            if request.account_id and request.account_id != principal.account_id:
                raise errors.PermissionDenied(
                    f"a player may read only its own limits ({principal.account_id!r})"
                )
            account_id = principal.account_id
        elif not request.account_id:
            raise errors.InvalidArgument(f"account_id is required for the {principal.role} role")
        else:
            account_id = request.account_id
        with limit_errors():
            report = self._ledger.read_limits(self._uow, account_id)
        return pb.GetLimitsResponse(limits=limits_message(report))

    def SetLossLimit(  # noqa: N802 - generated name
        self, request: pb.SetLossLimitRequest, context: grpc.ServicerContext
    ) -> pb.SetLossLimitResponse:
        def build() -> LimitCommand:
            period = PERIOD_OF.get(request.period)
            if period is None:
                raise InvalidCommand("period is required: day, week or month")
            amount = request.amount_hundredths if request.HasField("amount_hundredths") else None
            return SetLossLimit(period, amount)

        report = self._change(request.account_id, build)
        return pb.SetLossLimitResponse(
            limits=limits_message(report), effective_at=_effective(report)
        )

    def SetStakeLimit(  # noqa: N802 - generated name
        self, request: pb.SetStakeLimitRequest, context: grpc.ServicerContext
    ) -> pb.SetStakeLimitResponse:
        amount = request.amount_hundredths if request.HasField("amount_hundredths") else None
        report = self._change(request.account_id, lambda: SetStakeLimit(amount))
        return pb.SetStakeLimitResponse(
            limits=limits_message(report), effective_at=_effective(report)
        )

    def SetLimitsTimeZone(  # noqa: N802 - generated name
        self, request: pb.SetLimitsTimeZoneRequest, context: grpc.ServicerContext
    ) -> pb.SetLimitsTimeZoneResponse:
        report = self._change(request.account_id, lambda: SetTimeZone(request.time_zone))
        return pb.SetLimitsTimeZoneResponse(
            limits=limits_message(report), effective_at=_effective(report)
        )

    def StartBreak(  # noqa: N802 - generated name
        self, request: pb.StartBreakRequest, context: grpc.ServicerContext
    ) -> pb.StartBreakResponse:
        report = self._change(request.account_id, lambda: StartBreak(request.duration_seconds))
        return pb.StartBreakResponse(
            limits=limits_message(report), until=_timestamp(report.limits.break_until)
        )

    def EndBreak(  # noqa: N802 - generated name
        self, request: pb.EndBreakRequest, context: grpc.ServicerContext
    ) -> pb.EndBreakResponse:
        report = self._change(request.account_id, EndBreak)
        return pb.EndBreakResponse(limits=limits_message(report), effective_at=_effective(report))

    def SelfExclude(  # noqa: N802 - generated name
        self, request: pb.SelfExcludeRequest, context: grpc.ServicerContext
    ) -> pb.SelfExcludeResponse:
        months = None if request.indefinite else request.months
        report = self._change(request.account_id, lambda: SelfExclude(months))
        return pb.SelfExcludeResponse(
            limits=limits_message(report), until=_timestamp(report.limits.excluded_until)
        )

    def AskToReturn(  # noqa: N802 - generated name
        self, request: pb.AskToReturnRequest, context: grpc.ServicerContext
    ) -> pb.AskToReturnResponse:
        report = self._change(request.account_id, AskToReturn)
        return pb.AskToReturnResponse(
            limits=limits_message(report), effective_at=_effective(report)
        )

    def CheckSeat(  # noqa: N802 - generated name
        self, request: pb.CheckSeatRequest, context: grpc.ServicerContext
    ) -> pb.CheckSeatResponse:
        require_role(context, Role.SERVICE)
        with limit_errors():
            refused = self._ledger.check_seat(
                self._uow, request.account_id, request.amount_hundredths
            )
        return check_seat_response(refused)


def check_seat_response(refused: Refusal | None) -> pb.CheckSeatResponse:
    """``CheckSeatResponse`` of a refusal (None: allowed)."""
    if refused is None:
        return pb.CheckSeatResponse(allowed=True)
    return pb.CheckSeatResponse(
        allowed=False,
        reason=CLOSED_PB[refused.reason],
        detail=refused.describe(),
        until=_timestamp(refused.until),
    )


__all__ = ["LimitsRpcs", "check_seat_response", "limits_message"]
