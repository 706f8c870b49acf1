"""The servicer's path without gRPC and its token (not a test module): each request decoded by
the edge's codec (``rummy_table.entrypoints.grpc_messages``, the caller's account given), one
handler call, the answer encoded, as ``TableServicer`` does it. Tests and benchmarks drive a
``TableApp`` through these with the same requests the clients send."""

from __future__ import annotations

from rummy.table.v1 import table_service_pb2 as api
from rummy_table.application.app import TableApp
from rummy_table.entrypoints import grpc_messages


def open_table(app: TableApp, operator: str, request: api.OpenTableRequest) -> str:
    return app.open_table(grpc_messages.open_table(operator, request))


def close_table(app: TableApp, operator: str, request: api.CloseTableRequest) -> int:
    return grpc_messages.close_table_response(
        app.close_table(grpc_messages.close_table(operator, request))
    ).state


def list_tables(
    app: TableApp,
    limit: int | None = None,
    after: str | None = None,
    *,
    everywhere: bool = True,
    include_closed: bool = False,
) -> list[api.TableSummary]:
    found = app.list_tables(limit, after, everywhere=everywhere, include_closed=include_closed)
    return [grpc_messages.table_summary(t) for t in found]


def take_seat(app: TableApp, account_id: str, request: api.TakeSeatRequest) -> int:
    return app.take_seat(grpc_messages.take_seat(account_id, request))


def leave_table(app: TableApp, account_id: str, request: api.LeaveTableRequest) -> None:
    app.leave_table(grpc_messages.leave_table(account_id, request))


def contribute_seed(app: TableApp, account_id: str, request: api.ContributeSeedRequest) -> None:
    app.contribute_seed(grpc_messages.contribute_seed(account_id, request))


def draw(app: TableApp, account_id: str, request: api.DrawCardRequest) -> api.DrawCardResponse:
    return api.DrawCardResponse(card=app.draw(grpc_messages.draw(account_id, request)))


def discard(app: TableApp, account_id: str, request: api.DiscardCardRequest) -> None:
    app.discard(grpc_messages.discard(account_id, request))


def play(app: TableApp, account_id: str, request: api.PlayRequest) -> api.PlayResponse:
    return grpc_messages.play_response(app.play(grpc_messages.play(account_id, request)))


def declare(app: TableApp, account_id: str, request: api.DeclareRequest) -> api.DeclareResponse:
    return grpc_messages.declare_response(
        app.play_older_rpc(grpc_messages.older_rpc(account_id, request))
    )


def drop(app: TableApp, account_id: str, request: api.DropRequest) -> api.DropResponse:
    return grpc_messages.drop_response(
        app.play_older_rpc(grpc_messages.older_rpc(account_id, request))
    )
