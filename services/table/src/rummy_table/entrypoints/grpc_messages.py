"""Between the wire and the handlers: each ``rummy.table.v1`` request decoded into its command
(``rummy_table.application.commands``, with the caller's account from the token and the
request's digest, :func:`rummy_platform.envelope.request_digest`, computed here from the request
as it came), and each handler's answer encoded into its response. Pure functions: the values are
checked by the handlers (INVALID_ARGUMENT naming the field), which see them as they came."""

from __future__ import annotations

from dataclasses import asdict

from google.protobuf.message import Message

from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.envelope import request_digest
from rummy_table.application import commands as c
from rummy_table.application.results import TableSummary

from .views import TABLE_STATES


def _client(account_id: str, client_request_id: str, request: Message) -> dict[str, str]:
    """The caller's fields of a command: the account (the token's), the client's request id and
    the digest of the request as it came (its RPC and body)."""
    return {
        "account_id": account_id,
        "client_request_id": client_request_id,
        "request_digest": request_digest(request),
    }


#: The requests of a command on the current hand.
_HandRequest = (
    api.ContributeSeedRequest
    | api.DrawCardRequest
    | api.DiscardCardRequest
    | api.PlayRequest
    | api.DeclareRequest
    | api.DropRequest
)


def _on_hand(account_id: str, request: _HandRequest) -> dict[str, str]:
    """The fields of a command on the current hand: the caller's, the table and the hand."""
    return {
        **_client(account_id, request.client_request_id, request),
        "table_id": request.table_id,
        "hand_id": request.hand_id,
    }


def open_table(operator: str, request: api.OpenTableRequest) -> c.OpenTable:
    return c.OpenTable(
        **_client(operator, request.client_request_id, request),
        name=request.name,
        seat_count=request.seat_count,
        point_value_hundredths=request.point_value_hundredths,
        commission_bps=request.commission_bps,
        rule_set=request.rule_set,
        match=request.match if request.HasField("match") else None,
    )


def close_table(operator: str, request: api.CloseTableRequest) -> c.CloseTable:
    return c.CloseTable(
        **_client(operator, request.client_request_id, request),
        table_id=request.table_id,
        reason=request.reason,
    )


def close_table_response(state: str) -> api.CloseTableResponse:
    """``state``: the table's state name after the command (``closing`` or ``closed``)."""
    return api.CloseTableResponse(state=TABLE_STATES[state])


def table_summary(summary: TableSummary) -> api.TableSummary:
    """A table of the lobby as ListTables answers it (the fields by their names)."""
    return api.TableSummary(**{**asdict(summary), "state": TABLE_STATES[summary.state]})


def take_seat(account_id: str, request: api.TakeSeatRequest) -> c.TakeSeat:
    return c.TakeSeat(
        **_client(account_id, request.client_request_id, request),
        table_id=request.table_id,
        seat=request.seat if request.HasField("seat") else None,
    )


def leave_table(account_id: str, request: api.LeaveTableRequest) -> c.LeaveTable:
    return c.LeaveTable(
        **_client(account_id, request.client_request_id, request), table_id=request.table_id
    )


def contribute_seed(account_id: str, request: api.ContributeSeedRequest) -> c.ContributeSeed:
    return c.ContributeSeed(
        **_on_hand(account_id, request),
        client_seed=request.client_seed,
    )


def draw(account_id: str, request: api.DrawCardRequest) -> c.DrawCard:
    return c.DrawCard(
        **_on_hand(account_id, request),
        turn_no=request.turn_no,
        source=request.source,
    )


def discard(account_id: str, request: api.DiscardCardRequest) -> c.DiscardCard:
    return c.DiscardCard(
        **_on_hand(account_id, request),
        turn_no=request.turn_no,
        card=request.card,
    )


def play(account_id: str, request: api.PlayRequest) -> c.Play:
    return c.Play(
        **_on_hand(account_id, request),
        turn_no=request.turn_no,
        command=request.command,
    )


def play_response(answer: Message | None) -> api.PlayResponse:
    """``answer``: the variant's (or the match's) answer to the command, None for none."""
    response = api.PlayResponse()
    if answer is not None:
        response.answer.Pack(answer)
    return response


def older_rpc(account_id: str, request: api.DeclareRequest | api.DropRequest) -> c.PlayOlderRpc:
    """Declare and Drop, the older per-command RPCs: the request goes as it came, for the hand's
    variant's wire to read."""
    return c.PlayOlderRpc(
        **_on_hand(account_id, request),
        turn_no=request.turn_no,
        request=request,
        action="declare" if isinstance(request, api.DeclareRequest) else "drop",
    )


def declare_response(answer: Message | None) -> api.DeclareResponse:
    """The older Declare RPC's response, as the variant's wire made it."""
    return answer if isinstance(answer, api.DeclareResponse) else api.DeclareResponse()


def drop_response(answer: Message | None) -> api.DropResponse:
    """The older Drop RPC's response, as the variant's wire made it."""
    return answer if isinstance(answer, api.DropResponse) else api.DropResponse()
