"""``rummy close-table``: an operator closes a table through the table service's ``CloseTable``.

No new hand starts and no seat is taken from then on; a hand being played plays out; then every
seated player is stood up and the table leaves ListTables. With ``--wait`` (the default) the
command follows the table (``WatchTable``) until it is closed.
"""

from __future__ import annotations

import uuid

import click
import grpc

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.operator_auth import operator_token
from rummy_ops.reach import TABLE_SERVICE, refused
from rummy_ops.table_names import table_id_of, table_router, table_service_options
from rummy_platform.auth import bearer_metadata


@click.command("close-table")
@click.argument("table")
@click.option("--reason", default="", help="Why (at most 200 bytes; in the audit trail).")
@table_service_options()
@click.option(
    "--request-id",
    help="The client request id (default: a fresh UUID); the same id again answers as the first.",
)
@click.option(
    "--wait/--no-wait", default=True, show_default=True, help="Follow the table until closed."
)
@click.option(
    "--timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Seconds to wait for the table to close.",
)
def close_table(
    table: str,
    reason: str,
    address: str,
    token: str | None,
    operator: str,
    request_id: str | None,
    wait: bool,
    timeout: float,
) -> None:
    """Close TABLE (its id, or its name when one table has it): no new hands, the current hand
    plays out, then every player is stood up. Exit status 1 when the table service refuses
    (the status and its message are printed), when nothing answers at the address, or when
    TABLE names no table or several."""
    metadata = bearer_metadata(operator_token(token, operator))
    # Any table-service instance will do: a call to one that does not serve the table is
    # redirected to the one that does (UNAVAILABLE naming it), which the router follows; an
    # address where nothing answers is an error at once (table_router).
    router = table_router(address, wait_s=10.0)
    try:
        table_id = table_id_of(table, router, metadata)
        request = api.CloseTableRequest(
            table_id=table_id, client_request_id=request_id or str(uuid.uuid4()), reason=reason
        )
        try:
            state = router.call("CloseTable", request, metadata=metadata, timeout=30).state
        except grpc.RpcError as error:
            raise refused(TABLE_SERVICE, address, error) from None
        if state == api.TABLE_STATE_CLOSED:
            click.echo(f"table {table_id} closed")
            return
        click.echo(f"table {table_id} closing: the current hand plays out")
        if not wait:
            return
        watch = router.stub_for(table_id).WatchTable(
            api.WatchTableRequest(table_id=table_id), metadata=metadata, timeout=timeout
        )
        try:
            for update in watch:
                if update.view.table_state == api.TABLE_STATE_CLOSED:
                    click.echo(f"table {table_id} closed")
                    return
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise click.ClickException(
                    f"table {table_id} still closing after {timeout:g} s"
                ) from None
            raise refused(TABLE_SERVICE, address, error) from None
        finally:
            watch.cancel()
        raise click.ClickException(f"the watch of table {table_id} ended before it closed")
    finally:
        router.close()
