"""A response stream of the grpc.aio host (the table's WatchTable) that its client cancels
while the server is waiting to send (the client reading nothing more) ends CANCELLED inside the
call's own task: its scopes (log context, principal, metrics) are left in the context they were
entered in, so nothing is logged as a server error and no task fails with "created in a
different Context" (10,000 watches of played tables in bench/throughput.py logged 1,223 of
those and 3,354 WatchTable calls as UNKNOWN warnings, 2026-12-04)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from host_support import in_process_settings, request_codes
from prometheus_client import CollectorRegistry

from rummy_platform.auth import Role, bearer_metadata
from rummy_platform.logging import log_context
from rummy_platform.server import ServiceHost
from rummy_testing.token_keys import issuer_authority

STREAM_SERVICE = "rummy.probe.v1.StreamProbe"
#: Large enough that a few unread messages fill HTTP/2's flow-control window, so the handler
#: waits in gRPC's send (outside its own frame) when the cancel arrives.
MESSAGE = b"x" * 256 * 1024


async def _flood(request: bytes, context: Any) -> AsyncIterator[bytes]:
    with log_context(table_id="t-1"):  # a scope of the handler's own, as WatchTable's
        while True:
            yield MESSAGE
            await asyncio.sleep(0)


def _add_stream_probe(servicer: object, server: Any) -> None:
    handlers: dict[str, grpc.RpcMethodHandler[bytes, Any]] = {
        "Flood": grpc.unary_stream_rpc_method_handler(_flood)
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(STREAM_SERVICE, handlers),)
    )


def test_a_stream_cancelled_while_the_server_waits_to_send_ends_cancelled_in_its_own_context(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = CollectorRegistry()
    host = ServiceHost("probe", in_process_settings(), registry=registry, aio=True)
    host.add_servicer(_add_stream_probe, None, STREAM_SERVICE)
    host.start()
    token = issuer_authority().issue("alice", Role.PLAYER)
    caplog.set_level(logging.DEBUG)
    try:
        with grpc.insecure_channel(host.address) as channel:
            for _ in range(20):
                flood: Any = channel.unary_stream(f"/{STREAM_SERVICE}/Flood")
                call = flood(b"", metadata=bearer_metadata(token))
                assert next(call) == MESSAGE
                time.sleep(0.05)  # the server fills the window and waits in its send
                call.cancel()
            deadline = time.monotonic() + 30  # the server learns of a cancel asynchronously
            while sum(request_codes(registry, "Flood").values()) < 20:
                assert time.monotonic() < deadline, request_codes(registry, "Flood")
                time.sleep(0.05)
    finally:
        host.stop()
    assert request_codes(registry, "Flood") == {"CANCELLED": 20.0}
    failures = [r.getMessage()[:300] for r in caplog.records if r.levelno >= logging.WARNING]
    assert failures == []
