"""The thin gRPC servicer of ``rummy.ledger.v1.LedgerService``: decode, check who may ask, call
the handler, encode. Ledger errors become platform errors through one table
(:data:`STATUS_OF`); the host's ErrorMappingInterceptor turns those into status codes.

Who may do what (``docs/rules/promises.md#identity``):

- ``GetBalance`` / ``GetStatement``: a player reads only its own account (``account_id`` empty
  or its own; another's is PERMISSION_DENIED); operator and service read any account and must
  name it. A player's own account that has never been granted anything reads as a zero balance
  and an empty statement (every player has a wallet, opened at 0); an unknown account named by
  an operator or service is NOT_FOUND.
- ``Grant``: operator only (PERMISSION_DENIED otherwise). ``amount_hundredths`` must be > 0,
  ``idempotency_key`` and a player ``account_id`` are required (INVALID_ARGUMENT), and the amount is
  at most the ledger's maximum grant, the balance after it at most the maximum balance
  (``rummy_ledger.domain.accounts.GrantLimits``; INVALID_ARGUMENT, nothing moves). A retry with the
  same key and body returns the first result (the balance right after the first grant); the same key
  with another account or amount is ALREADY_EXISTS. ``memo`` is not stored.
- Every string field is bounded and ``page_token`` parsed strictly (``rummy_platform.limits``):
  INVALID_ARGUMENT before any query.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ledger.application import accounts as application
from rummy_ledger.application.accounts import Balance, StatementItem
from rummy_ledger.application.ports import LedgerUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.domain.accounts import (
    AccountNotFound,
    Conflict,
    Grant,
    InvalidCommand,
    LedgerError,
    SettlementRefused,
)
from rummy_platform import errors
from rummy_platform.auth import Principal, Role, current_principal, require_role
from rummy_platform.limits import parse_position_token

SERVICE_NAME = "rummy.ledger.v1.LedgerService"
add_to_server = pb_grpc.add_LedgerServiceServicer_to_server

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500

#: The platform error (and so the status code) each ledger error is returned as.
STATUS_OF: Mapping[type[LedgerError], type[errors.ServiceError]] = {
    InvalidCommand: errors.InvalidArgument,
    AccountNotFound: errors.NotFound,
    Conflict: errors.AlreadyExists,
    SettlementRefused: errors.FailedPrecondition,
}


@contextmanager
def ledger_errors() -> Iterator[None]:
    """Re-raise a ledger error as the platform error of :data:`STATUS_OF`, same message."""
    try:
        yield
    except LedgerError as error:
        for cls in type(error).__mro__:
            if cls in STATUS_OF:
                raise STATUS_OF[cls](str(error)) from error
        raise


class LedgerServicer(pb_grpc.LedgerServiceServicer):
    def __init__(self, ledger: Ledger, uow: LedgerUnitOfWork) -> None:
        self._ledger = ledger
        self._uow = uow

    def GetBalance(  # noqa: N802 - generated name
        self, request: pb.GetBalanceRequest, context: grpc.ServicerContext
    ) -> pb.GetBalanceResponse:
        principal = current_principal()
        account_id = readable_account(principal, request.account_id)
        try:
            with ledger_errors():
                balance = application.get_balance(self._uow, account_id)
        except errors.NotFound:
            if account_id != principal.account_id:
                raise
            balance = Balance(account_id, 0, 0, 0)
        return pb.GetBalanceResponse(
            account_id=balance.account_id,
            balance_hundredths=balance.balance_hundredths,
            reserved_hundredths=balance.reserved_hundredths,
            available_hundredths=balance.available_hundredths,
        )

    def GetStatement(  # noqa: N802 - generated name
        self, request: pb.GetStatementRequest, context: grpc.ServicerContext
    ) -> pb.GetStatementResponse:
        principal = current_principal()
        account_id = readable_account(principal, request.account_id)
        page_size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        before = parse_position_token(request.page_token)
        try:
            with ledger_errors():
                items = application.get_statement(
                    self._uow, account_id, limit=page_size + 1, before=before
                )
        except errors.NotFound:
            if account_id != principal.account_id:
                raise
            items = ()
        page = items[:page_size]
        more = len(items) > page_size
        return pb.GetStatementResponse(
            entries=[statement_entry(item) for item in page],
            next_page_token=str(page[-1].seq) if more else "",
        )

    def Grant(  # noqa: N802 - generated name
        self, request: pb.GrantRequest, context: grpc.ServicerContext
    ) -> pb.GrantResponse:
        principal = require_role(context, Role.OPERATOR)
        command = Grant(
            operator=principal.account_id,
            account_id=request.account_id,
            amount_hundredths=request.amount_hundredths,
            idempotency_key=request.idempotency_key,
        )
        with ledger_errors():
            result = self._ledger.grant(self._uow, command)
        return pb.GrantResponse(
            journal_transaction_id=result.transaction_id,
            balance_hundredths=result.balance_hundredths,
        )


def readable_account(principal: Principal, requested: str) -> str:
    """The account ``principal`` asks about. Raises PermissionDenied when a player names another
    account, InvalidArgument when an operator or service names none."""
    if principal.role is Role.PLAYER:
        if requested and requested != principal.account_id:
            raise errors.PermissionDenied(
                f"a player may read only its own account ({principal.account_id!r}), "
                f"not {requested!r}"
            )
        return principal.account_id
    if not requested:
        raise errors.InvalidArgument(f"account_id is required for the {principal.role} role")
    return requested


def statement_entry(item: StatementItem) -> pb.StatementEntry:
    """One statement item as a ``StatementEntry`` (with its memo)."""
    posted_at = Timestamp()
    posted_at.FromDatetime(item.posted_at)
    entry = pb.StatementEntry(
        journal_transaction_id=item.transaction_id,
        posted_at=posted_at,
        amount_hundredths=item.amount_hundredths,
        balance_after_hundredths=item.balance_after_hundredths,
        memo=statement_memo(item),
        hand_id=item.hand_id or "",
        kind=item.kind,
        table_id=item.table_id or "",
        cost_hundredths=item.cost_hundredths,
        winnings_hundredths=item.winnings_hundredths,
        commission_hundredths=item.commission_hundredths,
    )
    if item.points is not None:
        entry.points = item.points
    return entry


def statement_memo(item: StatementItem) -> str:
    """A line a person reads: ``"grant"``, ``"hand h1: lost, 40 points, cost 1000"``,
    ``"hand h1: won 3500, commission 437"``, ``"hand h1: commission 437"`` (the house)."""
    if item.hand_id is None:
        return item.kind
    if item.points is None:  # the house's commission line
        return f"hand {item.hand_id}: commission {item.commission_hundredths}"
    if item.points == 0 and not item.cost_hundredths:
        return (
            f"hand {item.hand_id}: won {item.winnings_hundredths}, "
            f"commission {item.commission_hundredths}"
        )
    return f"hand {item.hand_id}: lost, {item.points} points, cost {item.cost_hundredths}"
