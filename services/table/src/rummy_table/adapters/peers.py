"""ListTables of the other table-service instances (outbound: a gRPC client of each)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import fields

import grpc

from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import authorized_channel
from rummy_platform.limits import open_channel
from rummy_platform.logging import get_logger
from rummy_table.application.ownership import Ownership
from rummy_table.application.results import TableSummary
from rummy_table.contract import LIST_SCOPE_METADATA_KEY

_log = get_logger(__name__)


class PeerTables:
    """ListTables of the other instances (:attr:`TableApp.peer_tables`): each instance the
    directory names as an owner is asked for its own tables (request metadata
    ``rummy-list-scope: local``) with a service token from ``token``. An instance that does not
    answer within ``timeout_s`` seconds is left out of the page (logged): the lobby shows the
    tables that can be reached. ``max_page_size``: the most one instance answers with (its
    ListTables' largest page)."""

    def __init__(
        self,
        ownership: Ownership,
        token: Callable[[], str],
        timeout_s: float = 3.0,
        max_page_size: int = 500,
    ) -> None:
        self._ownership = ownership
        self._token = token
        self._timeout_s = timeout_s
        self._max_page_size = max_page_size
        self._stubs: dict[str, api_grpc.TableServiceStub] = {}
        self._lock = threading.Lock()

    def _stub(self, address: str) -> api_grpc.TableServiceStub:
        with self._lock:
            found = self._stubs.get(address)
            if found is None:
                channel = authorized_channel(open_channel(address), self._token)
                found = self._stubs[address] = api_grpc.TableServiceStub(channel)
            return found

    def __call__(
        self, limit: int | None, after: str | None, include_closed: bool = False
    ) -> list[TableSummary]:
        request = api.ListTablesRequest(
            page_size=min(limit or self._max_page_size, self._max_page_size),
            page_token=after or "",
            include_closed=include_closed,
        )
        found: list[TableSummary] = []
        for address in self._ownership.peers():
            try:
                reply = self._stub(address).ListTables(
                    request,
                    metadata=((LIST_SCOPE_METADATA_KEY, "local"),),
                    timeout=self._timeout_s,
                )
            except grpc.RpcError as error:
                _log.warning(
                    "ListTables: an instance did not answer; its tables are left out",
                    address=address,
                    code=error.code().name,
                )
                continue
            found.extend(_summary(t) for t in reply.tables)
        return found


def _summary(table: api.TableSummary) -> TableSummary:
    """A table of another instance's ListTables page (the fields by their names)."""
    given = {f.name: getattr(table, f.name) for f in fields(TableSummary)}
    state = api.TableState.Name(table.state).removeprefix("TABLE_STATE_").lower()
    match = table.match if table.HasField("match") else None
    return TableSummary(**{**given, "state": state, "match": match})
