"""The one way this package intercepts server calls: run each RPC inside a scope.

A *scope* is a function ``(method, context) -> context manager``. :class:`ScopeInterceptor`
enters it in the worker thread that runs the RPC, before the servicer method, and leaves it when
the call is over: after a unary response is returned, or after a response stream is exhausted.
Exceptions raised by the servicer (including the one ``context.abort`` raises) pass through the
scope, so a scope can observe, translate or time them. Auth, metrics, logging context and error
mapping are each one scope; gRPC applies interceptors outermost first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import grpc

Scope = Callable[[str, grpc.ServicerContext], AbstractContextManager[None]]


class ScopeInterceptor(grpc.ServerInterceptor):
    """Runs every RPC's servicer method inside ``scope(full_method, context)``."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = continuation(handler_call_details)
        if handler is None:  # unknown method: gRPC answers UNIMPLEMENTED itself
            return None
        return _wrap(handler, handler_call_details.method, self._scope)


def split_method(full_method: str) -> tuple[str, str]:
    """Split a full method name into (service, method):
    ``"/rummy.table.v1.TableService/Drop"`` -> ``("rummy.table.v1.TableService", "Drop")``."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service, method


def final_code(context: grpc.ServicerContext, error: BaseException | None) -> grpc.StatusCode:
    """The status a finished call ends with, given the exception it raised (or None).

    ``context.abort``/``set_code`` record the code on the context; a call whose client went
    away (cancelled, disconnected or past its deadline: the context is no longer active) or a
    response stream closed early is CANCELLED; any other exception ends the call UNKNOWN
    (gRPC's own behaviour); otherwise it is OK.
    """
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(error, GeneratorExit) or not context.is_active():
        return grpc.StatusCode.CANCELLED
    return grpc.StatusCode.UNKNOWN if error is not None else grpc.StatusCode.OK


def _wrap(handler: grpc.RpcMethodHandler, method: str, scope: Scope) -> grpc.RpcMethodHandler:
    def around_unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            with scope(method, context):
                return behavior(request, context)

        return call

    def around_stream(behavior: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            with scope(method, context):
                yield from behavior(request, context)

        return call

    codecs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(around_unary(handler.unary_unary), **codecs)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(around_unary(handler.stream_unary), **codecs)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(around_stream(handler.unary_stream), **codecs)
    return grpc.stream_stream_rpc_method_handler(around_stream(handler.stream_stream), **codecs)
