"""A table by its name or its id, wherever an ops command takes a table (``rummy tables``,
``rummy close-table``, ``rummy watch``, ``rummy replay --table``, ``rummy export --table``).

A table id (a UUID, as OpenTable answers it) passes through as given, without a call. Anything
else is a name, looked up among every table the table service lists (ListTables with closed
tables included, page by page, through :class:`~rummy_table.contract.TableRouter`): one table
of that name is its id; none is an error naming it; several are refused with the candidates'
ids (and states) listed, so the operator picks one by id.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import TypeVar

import click
import grpc

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.operator_auth import operator_options, operator_token
from rummy_ops.reach import TABLE_SERVICE, WrongService, refused, require_grpc
from rummy_platform.auth import bearer_metadata
from rummy_platform.ports import DEFAULT_PORTS
from rummy_table.contract import TableRouter

#: The tables one ListTables page asks for (the service's largest page).
PAGE_SIZE = 500
#: Seconds a listing keeps retrying an unavailable table service before it gives up.
LIST_WAIT_S = 5.0
#: Seconds one ListTables call may take.
LIST_TIMEOUT_S = 10.0
#: The table service's default address (``--address``, ``RUMMY_TABLE_ADDRESS``).
DEFAULT_TABLE_ADDRESS = f"127.0.0.1:{DEFAULT_PORTS['table'][0]}"

F = TypeVar("F", bound=Callable[..., object])


class TableNameError(click.ClickException):
    """A table name that names no table, or several (``Error: ...``, exit status 1)."""


def no_such_table(text: str) -> TableNameError:
    """The error for ``text``, which names no table."""
    return TableNameError(f"no table named {text!r} (`rummy tables` lists every table)")


def is_table_id(text: str) -> bool:
    """Whether ``text`` is a table id (a UUID in its canonical text form), not a name."""
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False


def state_name(state: api.TableState.ValueType) -> str:
    """``open``, ``closing`` or ``closed`` for a ``TableState`` value."""
    return api.TableState.Name(state).removeprefix("TABLE_STATE_").lower()


def matching(text: str, tables: Iterable[api.TableSummary]) -> list[api.TableSummary]:
    """The tables ``text`` names: the one of that id, else every table of that name (exact,
    case and all), in the order given."""
    listed = list(tables)
    by_id = [t for t in listed if t.table_id == text]
    return by_id or [t for t in listed if t.name == text]


def resolve(text: str, tables: Callable[[], Iterable[api.TableSummary]]) -> str:
    """The table id ``text`` names: ``text`` itself when it is a table id (``tables`` not
    called), else the id of the one table ``tables()`` lists by that name. Raises
    TableNameError when no table has that name or several have (their ids listed)."""
    if is_table_id(text):
        return text
    found = matching(text, tables())
    if not found:
        raise no_such_table(text)
    if len(found) > 1:
        candidates = ", ".join(f"{t.table_id} ({state_name(t.state)})" for t in found)
        raise TableNameError(
            f"{len(found)} tables are named {text!r}: {candidates}; give the table's id"
        )
    return found[0].table_id


def list_tables(
    router: TableRouter, metadata: tuple[tuple[str, str], ...], include_closed: bool = True
) -> list[api.TableSummary]:
    """Every table the table service lists (closed ones too with ``include_closed``), in
    table-id order, page after page. Raises click.ClickException naming the address when the
    service refuses or cannot be reached."""
    found: list[api.TableSummary] = []
    token = ""
    while True:
        request = api.ListTablesRequest(
            page_size=PAGE_SIZE, page_token=token, include_closed=include_closed
        )
        try:
            page = router.call("ListTables", request, metadata=metadata, timeout=LIST_TIMEOUT_S)
        except grpc.RpcError as error:
            why = refused(TABLE_SERVICE, router.address_for(""), error)
            if isinstance(why, WrongService):
                raise why from None
            raise click.ClickException(
                f"cannot list the tables at {router.address_for('')}: {why.message}"
            ) from None
        found.extend(page.tables)
        token = page.next_page_token
        if not token:
            return found


def table_router(address: str, wait_s: float = LIST_WAIT_S) -> TableRouter:
    """A :class:`~rummy_table.contract.TableRouter` from the table-service instance at
    ``address`` (retrying UNAVAILABLE for ``wait_s`` seconds, as the service's contract asks),
    once something there answers gRPC (:func:`rummy_ops.reach.require_grpc`, 5 s at most).
    Raises rummy_ops.reach.Unreachable (``Error: cannot reach the table service at ...``)
    when nothing does: a wrong address fails at once instead of being retried."""
    require_grpc(TABLE_SERVICE, address)
    return TableRouter(address, wait_s=wait_s)


def table_id_of(text: str, router: TableRouter, metadata: tuple[tuple[str, str], ...]) -> str:
    """:func:`resolve` with the tables of the service ``router`` reaches (asked only for a
    name). Raises TableNameError or click.ClickException."""
    return resolve(text, lambda: list_tables(router, metadata))


def resolve_option(text: str, address: str, token: str | None, operator: str) -> str:
    """:func:`table_id_of` for a command that has no router of its own: an id at once, a name
    through the table service at ``address`` with ``token`` (or one minted for ``operator``).
    Raises TableNameError or click.ClickException (rummy_ops.reach.Unreachable when nothing
    answers at ``address``)."""
    if is_table_id(text):
        return text
    router = table_router(address)
    try:
        return table_id_of(text, router, bearer_metadata(operator_token(token, operator)))
    finally:
        router.close()


def table_service_options(flag: str = "--address") -> Callable[[F], F]:
    """The table service's address (``flag``, parameter ``address``, RUMMY_TABLE_ADDRESS) and
    the operator's ``--token`` / ``--operator`` of a command that calls it."""

    def add(command: F) -> F:
        command = operator_options(command)
        return click.option(
            flag,
            "address",
            envvar="RUMMY_TABLE_ADDRESS",
            default=DEFAULT_TABLE_ADDRESS,
            show_default=True,
            help="The table service (RUMMY_TABLE_ADDRESS; any instance: its redirects are "
            "followed).",
        )(command)

    return add
