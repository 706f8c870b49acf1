"""The aio interceptors build each method's wrapped handler once, not once per call."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from rummy_platform.rpc_scope import AioHandlerInterceptor


class _Details:
    """The call details a server hands an interceptor (grpc.HandlerCallDetails)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata: tuple[tuple[str, str | bytes], ...] = ()


def _handler() -> grpc.RpcMethodHandler[Any, Any]:
    return grpc.unary_unary_rpc_method_handler(lambda request, context: request)


def _recording(seen: list[tuple[Any, str]]) -> AioHandlerInterceptor:
    """An interceptor whose wrap notes each (inner handler, method) it is asked to wrap."""

    def wrap(
        handler: grpc.RpcMethodHandler[Any, Any], method: str
    ) -> grpc.RpcMethodHandler[Any, Any]:
        seen.append((handler, method))
        return _handler()

    return AioHandlerInterceptor(wrap)


def _intercept(interceptor: AioHandlerInterceptor, handler: Any, method: str) -> Any:
    async def continuation(_details: Any) -> Any:
        return handler

    return asyncio.run(interceptor.intercept_service(continuation, _Details(method)))


def test_a_method_called_again_gets_the_handler_wrapped_the_first_time_and_wrap_runs_once() -> None:
    wraps: list[tuple[Any, str]] = []
    interceptor = _recording(wraps)
    inner = _handler()
    first = _intercept(interceptor, inner, "/pkg.Service/Draw")
    second = _intercept(interceptor, inner, "/pkg.Service/Draw")
    other = _intercept(interceptor, inner, "/pkg.Service/Discard")
    assert second is first
    assert other is not first
    assert [method for _, method in wraps] == ["/pkg.Service/Draw", "/pkg.Service/Discard"]


def test_another_inner_handler_for_the_same_method_is_wrapped_anew_and_unknown_methods_stay_none() -> None:  # noqa: E501  # fmt: skip
    wraps: list[tuple[Any, str]] = []
    interceptor = _recording(wraps)
    old, new = _handler(), _handler()
    from_old = _intercept(interceptor, old, "/pkg.Service/Draw")
    from_new = _intercept(interceptor, new, "/pkg.Service/Draw")
    assert from_new is not from_old
    assert [handler for handler, _ in wraps] == [old, new]
    assert _intercept(interceptor, None, "/pkg.Service/Nope") is None
    assert len(wraps) == 2
