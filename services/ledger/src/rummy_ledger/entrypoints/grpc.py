"""The thin gRPC servicer of ``rummy.ledger.v1.LedgerService``: check who may ask, decode, call
the handler, encode (the messages: :mod:`.grpc_messages`). Ledger errors become platform errors
through one table (:data:`STATUS_OF`); the host's ErrorMappingInterceptor turns those into status
codes.

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
- ``ListMyHands``: who may read as for ``GetStatement`` (a player its own account, operator
  and service any, naming it); an account with nothing played lists nothing (never NOT_FOUND).
  ``page_size`` 0..100 (0 = 20) and a ``page_token`` it returned, else INVALID_ARGUMENT
  (``rummy_ledger.application.history``).
- Responsible play (``GetLimits``, ``SetLossLimit`` ... ``CheckSeat``): see
  :mod:`rummy_ledger.entrypoints.limits_grpc`.
- Every string field is bounded and ``page_token`` parsed strictly (``rummy_platform.limits``):
  INVALID_ARGUMENT before any query.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import grpc

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ledger.application import accounts as application
from rummy_ledger.application import history
from rummy_ledger.application.ports import LedgerUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.domain.accounts import (
    AccountNotFound,
    Conflict,
    InvalidCommand,
    LedgerError,
    SettlementRefused,
)
from rummy_ledger.entrypoints import grpc_messages
from rummy_ledger.entrypoints.limits_grpc import LimitsRpcs
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


class LedgerServicer(LimitsRpcs, pb_grpc.LedgerServiceServicer):
    """The ledger's RPCs; the responsible-play ones are :class:`LimitsRpcs`'
    (``entrypoints/limits_grpc.py``)."""

    def __init__(self, ledger: Ledger, uow: LedgerUnitOfWork) -> None:
        self._ledger = ledger
        self._uow = uow

    def GetBalance(  # noqa: N802 - generated name
        self, request: pb.GetBalanceRequest, context: grpc.ServicerContext
    ) -> pb.GetBalanceResponse:
        principal = current_principal()
        account_id = readable_account(principal, request.account_id)
        with ledger_errors():
            balance = application.get_balance(
                self._uow, account_id, opened_at_zero=account_id == principal.account_id
            )
        return grpc_messages.balance_response(balance)

    def GetStatement(  # noqa: N802 - generated name
        self, request: pb.GetStatementRequest, context: grpc.ServicerContext
    ) -> pb.GetStatementResponse:
        principal = current_principal()
        account_id = readable_account(principal, request.account_id)
        page_size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        before = parse_position_token(request.page_token)
        with ledger_errors():
            items = application.get_statement(
                self._uow,
                account_id,
                limit=page_size + 1,
                before=before,
                opened_at_zero=account_id == principal.account_id,
            )
        return grpc_messages.statement_response(items, page_size)

    def ListMyHands(  # noqa: N802 - generated name
        self, request: pb.ListMyHandsRequest, context: grpc.ServicerContext
    ) -> pb.ListMyHandsResponse:
        account_id = readable_account(current_principal(), request.account_id)
        with ledger_errors():
            rows, next_token = history.list_played(
                self._uow,
                account_id,
                page_size=request.page_size,
                page_token_in=request.page_token,
            )
        return grpc_messages.played_response(rows, next_token)

    def Grant(  # noqa: N802 - generated name
        self, request: pb.GrantRequest, context: grpc.ServicerContext
    ) -> pb.GrantResponse:
        principal = require_role(context, Role.OPERATOR)
        command = grpc_messages.grant_command(principal.account_id, request)
        with ledger_errors():
            result = self._ledger.grant(self._uow, command)
        return grpc_messages.grant_response(result)


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
