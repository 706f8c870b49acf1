"""CPU per call of a grpc.aio host's interceptors: the chain of one interceptor per scope
against the one :class:`rummy_platform.rpc_scope.AioScopes` an aio host installs now.

Usage::

    .venv/bin/python libs/platform/bench/interceptors.py [--rounds 15] [--calls 2000] \
        [--messages 4000] [--direct]

Two ``grpc.aio`` servers in this process, on one event loop thread, with the scopes of
:func:`rummy_platform.server.service_interceptors` (metrics, logging context, auth, rate limits
with a bucket that never empties, error mapping) and the request limits: "chain" installs them
as separate interceptors plus :class:`~rummy_platform.rpc_scope.Offload` (as the host did
before), "fused" as one ``AioScopes``. Each serves the ledger's ``GetBalance`` as a synchronous
handler (run in the pool, like the table's commands) and, as ``Follow``, a response stream from
an async generator (like ``WatchTable``). Per round and server, in turn: ``--calls`` unary calls
one after the other, then one stream of ``--messages`` messages, both from a client process
with a player's token; it prints this (the servers') process's CPU microseconds per unary call
and per streamed message, medians over ``--rounds`` rounds that alternate which server goes
first.

``--direct`` measures the interceptors alone, without gRPC's transport: in one thread, each
server's interceptors are chained the way ``grpc.aio`` chains them (each ``intercept_service``
awaited per call), and the handler found is called with a stand-in context, ``--calls`` unary
calls (an async handler: no pool hop) and one stream of ``--messages`` messages per round.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import grpc.aio
from prometheus_client import CollectorRegistry

from rummy.ledger.v1 import ledger_service_pb2 as ledger_pb2
from rummy_platform.auth import bearer_metadata, current_principal
from rummy_platform.config import BucketSpec, Settings
from rummy_platform.logging import configure_logging
from rummy_platform.rpc_scope import AioScopes, Offload
from rummy_platform.server import service_interceptors
from rummy_testing.token_keys import issuer_authority, token_settings

SERVICE = "rummy.ledger.v1.LedgerService"


def _balance(request: ledger_pb2.GetBalanceRequest, context: Any) -> Any:
    account = current_principal().account_id
    return ledger_pb2.GetBalanceResponse(account_id=account, balance_hundredths=100)


def _handlers(messages: int) -> grpc.GenericRpcHandler:
    async def follow(request: ledger_pb2.GetBalanceRequest, context: Any) -> AsyncIterator[Any]:
        response = ledger_pb2.GetBalanceResponse(account_id=request.account_id)
        for n in range(messages):
            response.balance_hundredths = n
            yield response

    codecs: dict[str, Callable[..., Any]] = {
        "request_deserializer": ledger_pb2.GetBalanceRequest.FromString,
        "response_serializer": ledger_pb2.GetBalanceResponse.SerializeToString,
    }
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "GetBalance": grpc.unary_unary_rpc_method_handler(_balance, **codecs),
            "Follow": grpc.unary_stream_rpc_method_handler(follow, **codecs),
        },
    )


def _client(orders: Any, answers: Any, token: str) -> None:
    """The client process: each order ``(port, "unary" | "stream", count)`` runs that many calls
    (or one stream of that many messages) and answers with the count; None ends it."""
    metadata = bearer_metadata(token)
    request = ledger_pb2.GetBalanceRequest(account_id="bench-player")
    channels: dict[int, grpc.Channel] = {}
    while (order := orders.get()) is not None:
        port, kind, count = order
        channel = channels.get(port) or channels.setdefault(
            port, grpc.insecure_channel(f"127.0.0.1:{port}")
        )
        codecs: dict[str, Any] = {
            "request_serializer": ledger_pb2.GetBalanceRequest.SerializeToString,
            "response_deserializer": ledger_pb2.GetBalanceResponse.FromString,
        }
        if kind == "unary":
            unary = channel.unary_unary(f"/{SERVICE}/GetBalance", **codecs)
            for _ in range(count):
                unary(request, metadata=metadata)
            answers.put(count)
        else:
            stream = channel.unary_stream(f"/{SERVICE}/Follow", **codecs)
            answers.put(sum(1 for _ in stream(request, metadata=metadata)))


class _Context:
    """The part of a ``grpc.aio`` servicer context the scopes use, for ``--direct``."""

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self._metadata = metadata
        self._code: Any = None
        self._details: Any = None

    def invocation_metadata(self) -> Any:
        return self._metadata

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def auth_context(self) -> dict[str, list[bytes]]:
        return {}  # a plaintext peer: no certificate

    def code(self) -> Any:
        return self._code

    def details(self) -> Any:
        return self._details

    def set_code(self, code: Any) -> None:
        self._code = code

    def set_details(self, details: Any) -> None:
        self._details = details

    def cancelled(self) -> bool:
        return False

    def done(self) -> bool:
        return False

    def time_remaining(self) -> float | None:
        return None


class _Details:
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


def _direct(args: argparse.Namespace, settings: Settings, executor: ThreadPoolExecutor) -> None:
    token = issuer_authority().issue("bench-player", "player")
    metadata = bearer_metadata(token)
    request = ledger_pb2.GetBalanceRequest(account_id="bench-player")

    async def balance(request: Any, context: Any) -> Any:
        return ledger_pb2.GetBalanceResponse(account_id="bench-player", balance_hundredths=1)

    async def follow(request: Any, context: Any) -> AsyncIterator[Any]:
        response = ledger_pb2.GetBalanceResponse(account_id=request.account_id)
        for _ in range(args.messages):
            yield response

    handlers: dict[str, Any] = {
        f"/{SERVICE}/GetBalance": grpc.unary_unary_rpc_method_handler(balance),
        f"/{SERVICE}/Follow": grpc.unary_stream_rpc_method_handler(follow),
    }

    def chain(kind: str) -> Callable[[str], Any]:
        scopes, limits = service_interceptors("bench", settings, CollectorRegistry())
        if kind == "chain":
            kept: list[Any] = [*scopes, limits]
            interceptors: list[Any] = [*(i.aio() for i in kept), Offload(executor)]
        else:
            interceptors = [AioScopes([s.scope for s in scopes], executor, request_check=limits)]

        async def find(method: str) -> Any:
            async def innermost(details: Any) -> Any:
                return handlers[details.method]

            continuation: Any = innermost
            for interceptor in reversed(interceptors):  # as grpc.aio's server chains them
                continuation = _bound(interceptor, continuation)
            return await continuation(_Details(method))

        return find

    finders = {kind: chain(kind) for kind in ("chain", "fused")}

    async def measure(kind: str) -> tuple[float, float]:
        find = finders[kind]
        started = time.process_time()
        for _ in range(args.calls):
            handler = await find(f"/{SERVICE}/GetBalance")
            await handler.unary_unary(request, _Context(metadata))
        per_call = (time.process_time() - started) / args.calls * 1e6
        started = time.process_time()
        handler = await find(f"/{SERVICE}/Follow")
        received = 0
        async for _ in handler.unary_stream(request, _Context(metadata)):
            received += 1
        assert received == args.messages
        return per_call, (time.process_time() - started) / args.messages * 1e6

    async def rounds() -> dict[str, list[tuple[float, float]]]:
        for kind in finders:
            await measure(kind)
        figures: dict[str, list[tuple[float, float]]] = {"chain": [], "fused": []}
        for n in range(args.rounds):
            for kind in ("chain", "fused") if n % 2 == 0 else ("fused", "chain"):
                figures[kind].append(await measure(kind))
        return figures

    _print(asyncio.run(rounds()), args.rounds)


def _bound(interceptor: Any, continuation: Any) -> Any:
    async def call(details: Any) -> Any:
        return await interceptor.intercept_service(continuation, details)

    return call


def _print(figures: dict[str, list[tuple[float, float]]], rounds: int) -> None:
    for kind, rows in figures.items():
        calls = statistics.median(r[0] for r in rows)
        messages = statistics.median(r[1] for r in rows)
        print(
            f"{kind}: {calls:.1f} us CPU per unary call, {messages:.1f} us per streamed message "
            f"(medians of {rounds} rounds; range {min(r[0] for r in rows):.1f}-"
            f"{max(r[0] for r in rows):.1f} / {min(r[1] for r in rows):.1f}-"
            f"{max(r[1] for r in rows):.1f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=4000)
    parser.add_argument("--direct", action="store_true", help="the interceptors alone")
    args = parser.parse_args()
    configure_logging("info")
    settings = Settings(
        **token_settings(),
        grpc_port=0,
        metrics_port=0,
        rate_limit_player=BucketSpec(rate_per_second=1e9, burst=1_000_000_000),
    )
    executor = ThreadPoolExecutor(max_workers=8)
    if args.direct:
        _direct(args, settings, executor)
        return
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    def run(coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def interceptors(kind: str) -> list[Any]:
        scopes, limits = service_interceptors("bench", settings, CollectorRegistry())
        if kind == "chain":
            kept: list[Any] = [*scopes, limits]
            return [*(i.aio() for i in kept), Offload(executor)]
        return [AioScopes([s.scope for s in scopes], executor, request_check=limits)]

    async def start(kind: str) -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server(interceptors=interceptors(kind))
        server.add_generic_rpc_handlers((_handlers(args.messages),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return server, port

    token = issuer_authority().issue("bench-player", "player")
    servers = {kind: run(start(kind)) for kind in ("chain", "fused")}

    context = multiprocessing.get_context("spawn")  # no fork of a process running gRPC
    orders, answers = context.Queue(), context.Queue()
    client = context.Process(target=_client, args=(orders, answers, token), daemon=True)
    client.start()

    def measure(kind: str) -> tuple[float, float]:
        port = servers[kind][1]
        started = time.process_time()
        orders.put((port, "unary", args.calls))
        answers.get()
        per_call = (time.process_time() - started) / args.calls * 1e6
        started = time.process_time()
        orders.put((port, "stream", args.messages))
        assert answers.get() == args.messages
        per_message = (time.process_time() - started) / args.messages * 1e6
        return per_call, per_message

    for kind in servers:  # warm up both
        measure(kind)
    figures: dict[str, list[tuple[float, float]]] = {"chain": [], "fused": []}
    for n in range(args.rounds):
        order = ("chain", "fused") if n % 2 == 0 else ("fused", "chain")
        for kind in order:
            figures[kind].append(measure(kind))
    _print(figures, args.rounds)
    orders.put(None)
    client.join(10)
    for server, _ in servers.values():
        run(server.stop(0))
    loop.call_soon_threadsafe(loop.stop)


if __name__ == "__main__":
    main()
