"""The servicer's path without gRPC and its token (not a test module): each request decoded by
the edge's codec (``rummy_table.entrypoints.codec``, the caller's account given), one handler
call, the answer encoded, as ``TableServicer`` does it. Tests and benchmarks drive a
``TableApp`` through these with the same requests the clients send."""

from __future__ import annotations

from rummy.table.v1 import table_service_pb2 as api
from rummy_table.application.app import TableApp
from rummy_table.entrypoints import codec


def open_table(app: TableApp, operator: str, request: api.OpenTableRequest) -> str:
    return app.open_table(codec.open_table(operator, request))


def close_table(app: TableApp, operator: str, request: api.CloseTableRequest) -> int:
    return codec.close_table_response(app.close_table(codec.close_table(operator, request))).state


def list_tables(
    app: TableApp,
    limit: int | None = None,
    after: str | None = None,
    *,
    everywhere: bool = True,
    include_closed: bool = False,
) -> list[api.TableSummary]:
    found = app.list_tables(limit, after, everywhere=everywhere, include_closed=include_closed)
    return [codec.table_summary(t) for t in found]


def take_seat(app: TableApp, account_id: str, request: api.TakeSeatRequest) -> int:
    return app.take_seat(codec.take_seat(account_id, request))


def leave_table(app: TableApp, account_id: str, request: api.LeaveTableRequest) -> None:
    app.leave_table(codec.leave_table(account_id, request))


def contribute_seed(app: TableApp, account_id: str, request: api.ContributeSeedRequest) -> None:
    app.contribute_seed(codec.contribute_seed(account_id, request))


def draw(app: TableApp, account_id: str, request: api.DrawCardRequest) -> api.DrawCardResponse:
    return api.DrawCardResponse(card=app.draw(codec.draw(account_id, request)))


def discard(app: TableApp, account_id: str, request: api.DiscardCardRequest) -> None:
    app.discard(codec.discard(account_id, request))


def play(app: TableApp, account_id: str, request: api.PlayRequest) -> api.PlayResponse:
    return codec.play_response(app.play(codec.play(account_id, request)))


def declare(app: TableApp, account_id: str, request: api.DeclareRequest) -> api.DeclareResponse:
    return codec.declare_response(app.play_older_rpc(codec.older_rpc(account_id, request)))


def drop(app: TableApp, account_id: str, request: api.DropRequest) -> api.DropResponse:
    return codec.drop_response(app.play_older_rpc(codec.older_rpc(account_id, request)))
