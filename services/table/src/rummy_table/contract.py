"""The table's contract: reaching the table-service instance that serves a table (the ops tools
and test players import this module and no other of the table service).

Table-service instances share the tables by partition (``docs/rules/promises.md#scales-out``). An
instance asked about a table it does not serve ends the call UNAVAILABLE, with the owner's gRPC
address in the trailing metadata key :data:`OWNER_METADATA_KEY` when it knows it (and without it
while the table's partition is being handed over between instances). :class:`TableRouter` is
the client side: it sends each call to the instance it last learned serves the table, follows a
redirect at once, and retries an UNAVAILABLE without one (handover, an instance that went away,
a commit not confirmed) with a short backoff. Every table command carries a
``client_request_id``, so sending it again is safe: a command that was recorded the first time
is answered from its first events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import grpc

from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.limits import open_channel

#: The trailing metadata key of an UNAVAILABLE that names the instance serving the table.
OWNER_METADATA_KEY = "rummy-table-owner"
#: The request metadata key (value ``local``) asking an instance for its own tables only (the
#: instances' fan-out of ListTables to each other).
LIST_SCOPE_METADATA_KEY = "rummy-list-scope"

Reply = TypeVar("Reply")


def owner_named_by(error: grpc.RpcError) -> str | None:
    """The owner's address an UNAVAILABLE ``error`` names, or None."""
    if error.code() != grpc.StatusCode.UNAVAILABLE:
        return None
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for entry in trailing or ():  # grpc's _Metadatum: a (key, value) named tuple
        if entry.key == OWNER_METADATA_KEY and isinstance(entry.value, str) and entry.value:
            return entry.value
    return None


def resend(
    send: Callable[[], Reply], learn: Callable[[grpc.RpcError], bool | None], wait_s: float
) -> Reply:
    """``send()`` until it answers, as the contract asks of a client: on a grpc.RpcError,
    ``learn(error)`` says what to do: True, send again at once (a redirect to the owner was
    learned); False, send again after a backoff (0.05 s, doubling to 1 s); None, raise it.
    Raises the last error once ``wait_s`` seconds passed."""
    deadline = time.monotonic() + wait_s
    pause = 0.05
    while True:
        try:
            return send()
        except grpc.RpcError as error:
            verdict = learn(error)
            if verdict is None or time.monotonic() >= deadline:
                raise
            if not verdict:
                time.sleep(pause)
                pause = min(pause * 2, 1.0)


def handed_over(error: grpc.RpcError) -> bool | None:
    """:func:`resend`'s ``learn`` for a client bound to one instance: an UNAVAILABLE that names
    no owner (the partition is being handed over) is sent again after a backoff; anything else
    (also a redirect to another owner) is raised."""
    if error.code() == grpc.StatusCode.UNAVAILABLE and owner_named_by(error) is None:
        return False
    return None


class TableRouter:
    """Table-service calls routed to the instance serving each table.

    ``addresses``: the instances to start from (``host:port``; any one will do, the others are
    tried when it does not answer). ``wait_s``: how long a call keeps retrying UNAVAILABLE
    (seconds) before the error is raised. ``channel``: builds a channel to an address (default
    :func:`rummy_platform.limits.open_channel`). Thread-safe; one channel per address.
    """

    def __init__(
        self,
        addresses: str | Sequence[str],
        *,
        wait_s: float = 30.0,
        channel: Callable[[str], grpc.Channel] = open_channel,
    ) -> None:
        self._homes = [addresses] if isinstance(addresses, str) else list(addresses)
        if not self._homes:
            raise ValueError("TableRouter needs at least one address")
        self._wait_s = wait_s
        self._channel = channel
        self._lock = threading.Lock()
        self._channels: dict[str, grpc.Channel] = {}
        self._stubs: dict[str, api_grpc.TableServiceStub] = {}
        self._owners: dict[str, str] = {}
        self._home = 0
        #: Redirects followed (for benchmarks and tests).
        self.redirects = 0

    def address_for(self, table_id: str) -> str:
        """Where a call about ``table_id`` goes now."""
        with self._lock:
            return self._owners.get(table_id) or self._homes[self._home]

    def stub(self, address: str) -> api_grpc.TableServiceStub:
        """The stub of the instance at ``address``."""
        with self._lock:
            found = self._stubs.get(address)
            if found is None:
                self._channels[address] = self._channel(address)
                found = self._stubs[address] = api_grpc.TableServiceStub(self._channels[address])
            return found

    def stub_for(self, table_id: str) -> api_grpc.TableServiceStub:
        """The stub of the instance serving ``table_id`` as far as this router knows (for
        streams: on an error, call :meth:`follow` and open the stream again)."""
        return self.stub(self.address_for(table_id))

    def follow(self, error: grpc.RpcError, table_id: str, address: str | None = None) -> bool:
        """Learn from ``error`` of a call about ``table_id`` (sent to ``address``): True when the
        call is worth sending again (an UNAVAILABLE: to the owner it names, else after a pause,
        see :meth:`call`). An instance that did not answer is forgotten as the table's owner and
        the next start address is tried."""
        if error.code() != grpc.StatusCode.UNAVAILABLE:
            return False
        owner = owner_named_by(error)
        with self._lock:
            if owner is not None:
                self.redirects += 1
                if table_id:
                    self._owners[table_id] = owner
                return True
            used = address or self._owners.get(table_id) or self._homes[self._home]
            if self._owners.get(table_id) == used:
                del self._owners[table_id]
            if used == self._homes[self._home]:
                self._home = (self._home + 1) % len(self._homes)
        return True

    def call(self, method: str, request: Any, **kwargs: Any) -> Any:
        """``TableService.<method>(request, **kwargs)`` on the instance serving
        ``request.table_id`` (OpenTable and ListTables: any instance; a redirect is followed for
        that call). Raises grpc.RpcError: any status but UNAVAILABLE at once, UNAVAILABLE once
        ``wait_s`` seconds of retries passed."""
        table_id: str = getattr(request, "table_id", "")
        target: str | None = None  # the owner the last refusal named
        sent = ""

        def send() -> Any:
            nonlocal sent
            sent = target or self.address_for(table_id)
            return getattr(self.stub(sent), method)(request, **kwargs)

        def learn(error: grpc.RpcError) -> bool | None:
            nonlocal target
            if not self.follow(error, table_id, sent):
                return None
            target = owner_named_by(error)
            return target is not None

        return resend(send, learn, self._wait_s)

    def close(self) -> None:
        with self._lock:
            channels, self._channels, self._stubs = list(self._channels.values()), {}, {}
        for channel in channels:
            channel.close()
