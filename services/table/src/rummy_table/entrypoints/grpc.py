"""The thin gRPC servicer of ``rummy.table.v1.TableService``: check the caller's role, decode the
request into its command with the caller's account (never an account from the request) and the
request's digest (:mod:`rummy_table.entrypoints.grpc_messages`), call the one handler, encode the
answer.
Errors are ``rummy_platform.errors`` classes, mapped to status codes by the host's interceptor."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import grpc
import grpc.aio

from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Principal, Role, current_principal
from rummy_platform.errors import PermissionDenied, ResourceExhausted
from rummy_platform.limits import parse_id_token
from rummy_platform.logging import get_logger
from rummy_table.application.app import TableApp
from rummy_table.config import DEFAULT_MAX_WATCHES_PER_ACCOUNT
from rummy_table.contract import LIST_SCOPE_METADATA_KEY
from rummy_table.entrypoints import grpc_messages
from rummy_table.entrypoints.watches import TableWatches

_log = get_logger(__name__)
SERVICE_NAME = "rummy.table.v1.TableService"
#: ListTables: the tables of a page when the request names no page size, and at most.
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
add_to_server = api_grpc.add_TableServiceServicer_to_server


def _player() -> str:
    principal = current_principal()
    if principal.role is not Role.PLAYER:
        raise PermissionDenied(
            f"this call needs the player role; the token's role is {principal.role.value}"
        )
    return principal.account_id


def _reader() -> Principal:
    return current_principal()


class TableServicer(api_grpc.TableServiceServicer):
    """Served by an aio :class:`~rummy_platform.server.ServiceHost`: the unary methods run in
    its thread pool, ``WatchTable`` is an async generator on its loop (:class:`TableWatches`:
    no thread per stream). ``max_watches_per_account``: the streams one account may hold (so
    nobody starves the seated players). :attr:`watches` ends every stream at shutdown
    (``host.on_stopping(servicer.watches.close_all)``)."""

    def __init__(
        self,
        app: TableApp,
        max_watches_per_account: int = DEFAULT_MAX_WATCHES_PER_ACCOUNT,
    ) -> None:
        self._app = app
        self.watches = TableWatches(app)
        self._per_account = max_watches_per_account
        self._watching: dict[str, int] = {}
        self._watching_lock = threading.Lock()

    def watches_held(self, account_id: str) -> int:
        """The WatchTable streams ``account_id`` holds now (a cancelled one until the server
        has ended it)."""
        with self._watching_lock:
            return self._watching.get(account_id, 0)

    @contextmanager
    def _account_watch(self, account_id: str) -> Iterator[None]:
        with self._watching_lock:
            held = self._watching.get(account_id, 0)
            if held >= self._per_account:
                raise ResourceExhausted(
                    f"an account may watch at most {self._per_account} tables at once; "
                    "end another WatchTable stream first"
                )
            self._watching[account_id] = held + 1
        try:
            yield
        finally:
            with self._watching_lock:
                left = self._watching[account_id] - 1
                if left:
                    self._watching[account_id] = left
                else:
                    del self._watching[account_id]

    def OpenTable(  # noqa: N802 - generated names
        self, request: api.OpenTableRequest, context: grpc.ServicerContext
    ) -> api.OpenTableResponse:
        principal = current_principal()
        if principal.role is not Role.OPERATOR:
            raise PermissionDenied("only an operator opens tables")
        table_id = self._app.open_table(grpc_messages.open_table(principal.account_id, request))
        return api.OpenTableResponse(table_id=table_id)

    def CloseTable(  # noqa: N802
        self, request: api.CloseTableRequest, context: grpc.ServicerContext
    ) -> api.CloseTableResponse:
        principal = current_principal()
        if principal.role is not Role.OPERATOR:
            raise PermissionDenied("only an operator closes tables")
        state = self._app.close_table(grpc_messages.close_table(principal.account_id, request))
        return grpc_messages.close_table_response(state)

    def ListTables(  # noqa: N802
        self, request: api.ListTablesRequest, context: grpc.ServicerContext
    ) -> api.ListTablesResponse:
        _reader()
        after = parse_id_token(request.page_token)
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        local = (LIST_SCOPE_METADATA_KEY, "local") in tuple(context.invocation_metadata() or ())
        found = self._app.list_tables(
            size + 1, after, everywhere=not local, include_closed=request.include_closed
        )
        page = found[:size]
        more = len(found) > size
        return api.ListTablesResponse(
            tables=[grpc_messages.table_summary(t) for t in page],
            next_page_token=page[-1].table_id if more else "",
        )

    def TakeSeat(  # noqa: N802
        self, request: api.TakeSeatRequest, context: grpc.ServicerContext
    ) -> api.TakeSeatResponse:
        return api.TakeSeatResponse(
            seat=self._app.take_seat(grpc_messages.take_seat(_player(), request))
        )

    def LeaveTable(  # noqa: N802
        self, request: api.LeaveTableRequest, context: grpc.ServicerContext
    ) -> api.LeaveTableResponse:
        self._app.leave_table(grpc_messages.leave_table(_player(), request))
        return api.LeaveTableResponse()

    def ContributeSeed(  # noqa: N802
        self, request: api.ContributeSeedRequest, context: grpc.ServicerContext
    ) -> api.ContributeSeedResponse:
        self._app.contribute_seed(grpc_messages.contribute_seed(_player(), request))
        return api.ContributeSeedResponse()

    def DrawCard(  # noqa: N802
        self, request: api.DrawCardRequest, context: grpc.ServicerContext
    ) -> api.DrawCardResponse:
        return api.DrawCardResponse(card=self._app.draw(grpc_messages.draw(_player(), request)))

    def DiscardCard(  # noqa: N802
        self, request: api.DiscardCardRequest, context: grpc.ServicerContext
    ) -> api.DiscardCardResponse:
        self._app.discard(grpc_messages.discard(_player(), request))
        return api.DiscardCardResponse()

    def Declare(  # noqa: N802
        self, request: api.DeclareRequest, context: grpc.ServicerContext
    ) -> api.DeclareResponse:
        answer = self._app.play_older_rpc(grpc_messages.older_rpc(_player(), request))
        return grpc_messages.declare_response(answer)

    def Drop(  # noqa: N802
        self, request: api.DropRequest, context: grpc.ServicerContext
    ) -> api.DropResponse:
        answer = self._app.play_older_rpc(grpc_messages.older_rpc(_player(), request))
        return grpc_messages.drop_response(answer)

    def Play(  # noqa: N802
        self, request: api.PlayRequest, context: grpc.ServicerContext
    ) -> api.PlayResponse:
        return grpc_messages.play_response(self._app.play(grpc_messages.play(_player(), request)))

    async def WatchTable(  # noqa: N802
        self,
        request: api.WatchTableRequest,
        context: grpc.aio.ServicerContext[api.WatchTableRequest, api.WatchTableResponse],
    ) -> AsyncIterator[api.WatchTableResponse]:
        principal = _reader()
        account = principal.account_id if principal.role is Role.PLAYER else None
        with self._account_watch(principal.account_id):
            views = self.watches.follow(account, request.table_id, request.after_stream_version)
            async for response in views:
                yield response

    def GetHandResult(  # noqa: N802
        self, request: api.GetHandResultRequest, context: grpc.ServicerContext
    ) -> api.GetHandResultResponse:
        principal = _reader()
        result = self._app.get_hand_result(principal.account_id, request.table_id, request.hand_id)
        voided = self._app.voided_reason(request.table_id, request.hand_id)
        return api.GetHandResultResponse(result=result, voided_reason=voided)

    def GetHandProof(  # noqa: N802
        self, request: api.GetHandProofRequest, context: grpc.ServicerContext
    ) -> api.GetHandProofResponse:
        principal = current_principal()
        if principal.role not in (Role.PLAYER, Role.OPERATOR):
            raise PermissionDenied("only the hand's players and operators get a hand's proof")
        account = principal.account_id if principal.role is Role.PLAYER else None
        bundle = self._app.get_hand_proof(account, request.table_id, request.hand_id)
        return api.GetHandProofResponse(bundle_json=bundle)
