"""A gRPC refusal as a stub call raises it (:class:`Refused`), for tests of a client's handling
of statuses without a server. Not a test module."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import grpc

from rummy_table.contract import OWNER_METADATA_KEY

#: One trailing-metadata entry, shaped as grpc's (a key and a value).
Metadatum = namedtuple("Metadatum", "key value")


class Refused(grpc.RpcError):
    """A refusal with status ``code``, ``details`` and, when ``owner`` is given, the trailing
    metadata by which a table-service instance names the table's owner
    (``rummy_table.contract.OWNER_METADATA_KEY``)."""

    def __init__(self, code: grpc.StatusCode, details: str = "", owner: str = "") -> None:
        super().__init__(code.name)
        self._code, self._details = code, details or code.name
        self._trailing = (Metadatum(OWNER_METADATA_KEY, owner),) if owner else ()

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> Any:
        return self._trailing
