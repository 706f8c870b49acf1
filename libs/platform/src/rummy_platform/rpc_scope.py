"""The one way this package intercepts server calls: run each RPC inside a scope.

A *scope* is a function ``(method, context) -> context manager``. :class:`ScopeInterceptor`
enters it in the worker thread that runs the RPC, before the servicer method, and leaves it when
the call is over: after a unary response is returned, or after a response stream is exhausted.
Exceptions raised by the servicer (including the one ``context.abort`` raises) pass through the
scope, so a scope can observe, translate or time them. Auth, metrics, logging context and error
mapping are each one scope; gRPC applies interceptors outermost first.

The same scope serves both servers: :meth:`ScopeInterceptor.aio` is its ``grpc.aio``
interceptor. There the scope runs on the event loop around the awaited handler and sees the
call through :class:`AioCallView`, the synchronous face of an aio context (its ``abort`` raises
:class:`ScopeAbort`, which the aio wrapper turns into the real ``await context.abort``), so
each scope is written once. :class:`Offload` (innermost) runs the synchronous handlers of an aio
server in a bounded thread pool, with the call's context variables (principal, log context).
:class:`AioScopes` is all of that in one ``grpc.aio`` interceptor (what an aio host installs):
every scope, the request check and the offload around one coroutine per call (and one async
generator per response stream) instead of one per interceptor.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from contextlib import AbstractContextManager, ExitStack, aclosing, contextmanager
from typing import Any, Never, Protocol, TypeAlias

import grpc
import grpc.aio
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # gRPC's core binding, no stubs

# (Quoted: grpc's classes are generic only in their stubs.)
#: A method handler of either server, for any request and response type.
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
#: The servicer context of an aio server, for any request and response type.
AioContext: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class CallContext(Protocol):
    """What a scope uses of a call: a synchronous server's ``grpc.ServicerContext``, or an
    :class:`AioCallView` over an aio server's context. ``code``/``details`` are what
    ``set_code``/``set_details``/``abort`` recorded so far (None when nothing was; the details
    are bytes on a synchronous server)."""

    def invocation_metadata(self) -> Any: ...
    def peer(self) -> str: ...
    def auth_context(self) -> Mapping[str, Iterable[bytes]]: ...
    def code(self) -> grpc.StatusCode | None: ...
    def details(self) -> str | bytes | None: ...
    def is_active(self) -> bool: ...
    def time_remaining(self) -> float | None: ...
    def set_code(self, code: grpc.StatusCode) -> None: ...
    def set_details(self, details: str) -> None: ...
    def set_trailing_metadata(self, trailing_metadata: Any) -> None: ...
    def add_callback(self, callback: Callable[[], None]) -> bool: ...
    def abort(self, code: grpc.StatusCode, details: str) -> Never: ...
    def abort_with_status(self, status: grpc.Status) -> Never: ...


Scope = Callable[[str, CallContext], AbstractContextManager[None]]


def sync_call_context(context: grpc.ServicerContext) -> CallContext:
    """A synchronous server's context as the :class:`CallContext` it is."""
    return context  # type: ignore[return-value]  # its code(), details(): not in types-grpcio


class ScopeInterceptor(grpc.ServerInterceptor):
    """Runs every RPC's servicer method inside ``scope(full_method, context)``."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope

    @property
    def scope(self) -> Scope:
        """The scope each call runs in."""
        return self._scope

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = continuation(handler_call_details)
        if handler is None:  # unknown method: gRPC answers UNIMPLEMENTED itself
            return None
        return _wrap(handler, handler_call_details.method, self._scope)

    def aio(self) -> grpc.aio.ServerInterceptor:
        """The same scope as a ``grpc.aio`` server interceptor."""
        return AioScopeInterceptor(self._scope)


def split_method(full_method: str) -> tuple[str, str]:
    """Split a full method name into (service, method):
    ``"/rummy.table.v1.TableService/Drop"`` -> ``("rummy.table.v1.TableService", "Drop")``."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service, method


#: What ``grpc.aio``'s ``context.write`` raises when core refuses the send (grpc exports no
#: public name for it; its own server loop catches the same class).
_SEND_REFUSED: type[Exception] = cygrpc.ExecuteBatchError


class ClientGone(Exception):
    """A response could not be sent because the call had ended at the transport (its client
    cancelled or went away, its deadline passed): the call ends CANCELLED (:func:`final_code`,
    the error mapping), never as a server error."""


def final_code(context: CallContext, error: BaseException | None) -> grpc.StatusCode:
    """The status a finished call ends with, given the exception it raised (or None).

    ``context.abort``/``set_code`` record the code on the context; a call whose client went
    away (cancelled, disconnected or past its deadline: the context is no longer active) or a
    response stream closed early is CANCELLED; any other exception ends the call UNKNOWN
    (gRPC's own behaviour); otherwise it is OK.
    """
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(error, GeneratorExit | asyncio.CancelledError | ClientGone) or not (
        context.is_active()
    ):
        return grpc.StatusCode.CANCELLED
    return grpc.StatusCode.UNKNOWN if error is not None else grpc.StatusCode.OK


def _wrap(handler: Handler, method: str, scope: Scope) -> Handler:
    def around_unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            with scope(method, sync_call_context(context)):
                return behavior(request, context)

        return call

    def around_stream(behavior: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            with scope(method, sync_call_context(context)):
                yield from behavior(request, context)

        return call

    return rebuild(handler, around_unary, around_stream)


# -- grpc.aio ------------------------------------------------------------------------------


class ScopeAbort(Exception):
    """Raised by :meth:`AioCallView.abort`: end the call with ``code``, ``details`` and
    ``trailing_metadata`` (the aio wrapper awaits the real ``context.abort``)."""

    def __init__(self, code: grpc.StatusCode, details: str, trailing_metadata: Any = None) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata or ()


class AioCallView:
    """What a scope (or a synchronous handler run by :class:`Offload`) uses of a call, over a
    ``grpc.aio`` servicer context: the methods of ``grpc.ServicerContext`` the platform calls,
    all synchronous. ``abort``/``abort_with_status`` record the status and raise
    :class:`ScopeAbort`."""

    def __init__(self, context: AioContext) -> None:
        self._context = context

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def peer(self) -> str:
        return self._context.peer()

    def auth_context(self) -> Mapping[str, Iterable[bytes]]:
        return self._context.auth_context()

    def code(self) -> grpc.StatusCode | None:
        return self._context.code()

    def details(self) -> str | None:
        return self._context.details()

    def is_active(self) -> bool:
        return not (self._context.cancelled() or self._context.done())

    def time_remaining(self) -> float | None:
        return self._context.time_remaining()

    def set_code(self, code: grpc.StatusCode) -> None:
        self._context.set_code(code)

    def set_details(self, details: str) -> None:
        self._context.set_details(details)

    def set_trailing_metadata(self, metadata: Any) -> None:
        self._context.set_trailing_metadata(metadata)

    def add_callback(self, callback: Callable[[], None]) -> bool:
        self._context.add_done_callback(lambda _context: callback())  # type: ignore[arg-type]  # types-grpcio wants its _DoneCallback class
        return True

    def abort(self, code: grpc.StatusCode, details: str = "") -> Never:
        self._context.set_code(code)
        self._context.set_details(details)
        raise ScopeAbort(code, details)

    def abort_with_status(self, status: grpc.Status) -> Never:
        self._context.set_code(status.code)
        self._context.set_details(status.details)
        raise ScopeAbort(status.code, status.details, status.trailing_metadata)


async def _abort(context: AioContext, abort: ScopeAbort) -> None:
    await context.abort(abort.code, abort.details, abort.trailing_metadata)


class AioHandlerInterceptor(grpc.aio.ServerInterceptor):
    """A ``grpc.aio`` interceptor that replaces each handler found by
    ``wrap(handler, full_method)`` (an unknown method stays None: gRPC answers UNIMPLEMENTED).

    ``wrap`` must depend on its two arguments only: its result is kept per method and handed out
    again while the inner handler found for that method is the same object (gRPC's generic
    handlers return one handler object per method; the interceptors inside this one, being such
    interceptors too, return theirs), so a call does not rebuild the handler chain. Only known
    methods are kept (a handler was found), so the cache is bounded by the services' methods."""

    def __init__(self, wrap: Callable[[Handler, str], Handler]) -> None:
        self._wrap = wrap
        self._wrapped: dict[str, tuple[Handler, Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        kept = self._wrapped.get(method)
        if kept is not None and kept[0] is handler:
            return kept[1]
        wrapped = self._wrap(handler, method)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


class AioScopeInterceptor(AioHandlerInterceptor):
    """Runs every RPC's (asynchronous) handler inside ``scope(full_method, AioCallView)``.
    Install :class:`Offload` innermost so that every handler it wraps is asynchronous."""

    def __init__(self, scope: Scope) -> None:
        super().__init__(lambda handler, method: _scoped_all(handler, method, (scope,), None))


class RequestCheck(Protocol):
    """What :class:`AioScopes` runs on a unary request before its handler (the request limits,
    :class:`rummy_platform.limits.RequestLimitsInterceptor`): ``deserializer(strict)`` is the
    deserializer gRPC calls instead of ``strict``, ``check(request)`` returns the request the
    handler gets or raises (inside every scope, so the error mapping answers for it)."""

    def deserializer(
        self, strict: Callable[[bytes], Any] | None
    ) -> Callable[[bytes], Any] | None: ...
    def check(self, request: Any) -> Any: ...


class AioScopes(AioHandlerInterceptor):
    """The one interceptor of an aio server: every RPC runs inside each of ``scopes``
    (outermost first, as separate interceptors would nest them), a unary request passes
    ``request_check`` inside them, and a synchronous handler runs in ``executor`` like
    :class:`Offload` does.

    Why one: ``grpc.aio`` awaits each interceptor's ``intercept_service`` on every call, and
    each interceptor's wrapper is one more coroutine per call and one more async generator each
    message of a response stream passes through (a table watch sends every view of the table
    through all of them). Measured with ``libs/platform/bench/interceptors.py``: see
    docs/benchmarks.md, issue 19.
    """

    def __init__(
        self,
        scopes: Sequence[Scope],
        executor: Executor,
        *,
        request_check: RequestCheck | None = None,
    ) -> None:
        kept = tuple(scopes)
        super().__init__(
            lambda handler, method: _scoped_all(
                _offloaded(handler, executor), method, kept, request_check
            )
        )


def _scoped_all(
    handler: Handler, method: str, scopes: tuple[Scope, ...], request_check: RequestCheck | None
) -> Handler:
    check: Callable[[Any], Any] = (
        request_check.check
        if request_check is not None and not handler.request_streaming
        else _as_is
    )

    def unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def call(request: Any, context: AioContext) -> Any:
            try:
                with _entered(scopes, method, context):
                    return await behavior(check(request), context)
            except ScopeAbort as abort:
                await _abort(context, abort)

        return call

    def stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
        if not inspect.isasyncgenfunction(behavior):  # writes with context.write
            return unary(behavior)

        # A coroutine writing each response itself, not an async generator handed to gRPC:
        # when the client cancels while gRPC waits to send a yielded response, gRPC drops the
        # generator and the event loop's finalizer closes it in a task of its own, whose
        # context is not the call's, so every scope's exit failed there ("created in a
        # different Context") and the call ended UNKNOWN. Here the cancel arrives inside this
        # coroutine's own task and the handler's stream is closed in it (aclosing).
        async def responses(request: Any, context: AioContext) -> None:
            try:
                with _entered(scopes, method, context):
                    async with aclosing(behavior(check(request), context)) as stream:
                        async for response in stream:
                            await _write(context, response)
            except ScopeAbort as abort:
                await _abort(context, abort)
            except ClientGone:
                pass

        return responses

    deserializer = (
        request_check.deserializer(handler.request_deserializer)
        if request_check is not None and not handler.request_streaming
        else None
    )
    return rebuild(handler, unary, stream, deserializer)


async def _write(context: AioContext, response: Any) -> None:
    """``context.write(response)``; raises :class:`ClientGone` instead of the error of a send
    that gRPC's core refused (``ExecuteBatchError``: the call is over at the transport, e.g.
    cancelled by its client, possibly before ``context.cancelled()`` says so)."""
    try:
        await context.write(response)
    except _SEND_REFUSED as error:
        raise ClientGone from error


@contextmanager
def _entered(scopes: tuple[Scope, ...], method: str, context: AioContext) -> Iterator[None]:
    """Inside every scope, outermost first (an exception, raised entering a scope or inside,
    passes out through each scope entered so far, as nested ``with`` blocks would do)."""
    view = AioCallView(context)
    if len(scopes) == 1:  # one interceptor per scope (AioScopeInterceptor): no stack needed
        with scopes[0](method, view):
            yield
        return
    with ExitStack() as stack:
        for scope in scopes:
            stack.enter_context(scope(method, view))
        yield


def _as_is(request: Any) -> Any:
    return request


_END = object()


def _next_or_end(iterator: Iterator[Any]) -> Any:
    """The iterator's next item, or :data:`_END` once it is exhausted."""
    return next(iterator, _END)


class Offload(AioHandlerInterceptor):
    """The innermost interceptor of an aio server: a synchronous handler runs in ``executor``
    (a bounded thread pool) with a copy of the call's context variables and an
    :class:`AioCallView` as its context; a synchronous response stream takes each of its
    messages in the pool. Asynchronous handlers are left as they are (they run on the loop)."""

    def __init__(self, executor: Executor) -> None:
        super().__init__(lambda handler, _method: _offloaded(handler, executor))


def _offloaded(handler: Handler, executor: Executor) -> Handler:
    def unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(behavior):
            return behavior

        async def call(request: Any, context: AioContext) -> Any:
            run = contextvars.copy_context().run
            view = AioCallView(context)
            return await asyncio.get_running_loop().run_in_executor(
                executor, run, behavior, request, view
            )

        return call

    def stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.isasyncgenfunction(behavior) or inspect.iscoroutinefunction(behavior):
            return behavior

        async def responses(request: Any, context: AioContext) -> Any:
            run = contextvars.copy_context().run
            loop = asyncio.get_running_loop()
            iterator = iter(
                await loop.run_in_executor(executor, run, behavior, request, AioCallView(context))
            )
            try:
                while True:
                    item = await loop.run_in_executor(executor, run, _next_or_end, iterator)
                    if item is _END:
                        return
                    yield item
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    await loop.run_in_executor(executor, run, close)

        return responses

    return rebuild(handler, unary, stream)


def rebuild(
    handler: Handler,
    unary: Callable[[Callable[..., Any]], Callable[..., Any]],
    stream: Callable[[Callable[..., Any]], Callable[..., Any]],
    request_deserializer: Callable[[bytes], Any] | None = None,
) -> Handler:
    """``handler`` with its behaviour wrapped by ``unary`` (unary response) or ``stream``
    (response stream), and optionally another request deserializer."""
    codecs = {
        "request_deserializer": request_deserializer or handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(unary(handler.unary_unary), **codecs)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(unary(handler.stream_unary), **codecs)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(stream(handler.unary_stream), **codecs)
    if handler.stream_stream is None:
        raise ValueError("a method handler with no behaviour")
    return grpc.stream_stream_rpc_method_handler(stream(handler.stream_stream), **codecs)
