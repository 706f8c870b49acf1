"""The errors application code raises for a caller, and the one table of their gRPC codes.

Handlers raise these (``raise NotFound(f"no table {table_id}")``); the
:class:`ErrorMappingInterceptor` that every :class:`~rummy_platform.server.ServiceHost`
installs ends the call with the code from :data:`STATUS_BY_ERROR` and the exception's message
as details, so servicers never map errors themselves. Domain exceptions of other packages
(e.g. ``rummy_rules.RuleViolation``, which must stay free of gRPC) are re-raised as one of
these by the application layer. Any other exception is a bug: the call ends INTERNAL with a
generic message (internals are not shown to callers) and the traceback goes to the log; but an
exception raised because the client went away (a cancelled or abandoned stream: reading its
requests raises) ends the call CANCELLED, logged at debug level without a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import grpc

from rummy_platform.logging import get_logger
from rummy_platform.rpc_scope import CallContext, ClientGone, ScopeInterceptor

_log = get_logger(__name__)


class ServiceError(Exception):
    """Base of the errors whose message is returned to the caller as the status details.

    ``trailing_metadata``: ``(key, value)`` pairs the call ends with besides the message, for
    clients that act on the error (e.g. ``rummy-table-owner``: the address of the instance that
    serves a table, see :mod:`rummy_table.contract`)."""

    def __init__(self, *args: object, trailing_metadata: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(*args)
        self.trailing_metadata = trailing_metadata


class InvalidArgument(ServiceError):
    """The request is malformed whatever the state (bad card code, empty id)."""


class NotFound(ServiceError):
    """The request names a table, hand, account or event that does not exist."""


class AlreadyExists(ServiceError):
    """Creating something whose id is taken (an idempotency key reused with other fields)."""


class FailedPrecondition(ServiceError):
    """The request is well formed but the state forbids it (not your turn, turn has moved on)."""


class PermissionDenied(ServiceError):
    """The caller is authenticated but may not do this (act for another player's seat)."""


class Conflict(ServiceError):
    """A concurrent writer changed the state first; the caller may retry."""


class Unavailable(ServiceError):
    """A dependency (Kafka, PostgreSQL) cannot be reached now; the caller may retry."""


class ResourceExhausted(ServiceError):
    """The caller holds as many of a bounded resource (e.g. open streams) as it may."""


#: The gRPC status code of each error class (a subclass takes its nearest ancestor's code).
STATUS_BY_ERROR: Mapping[type[ServiceError], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Conflict: grpc.StatusCode.ABORTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
    ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def status_for(error: ServiceError) -> grpc.StatusCode:
    """The code ``error`` ends a call with: that of its nearest class in :data:`STATUS_BY_ERROR`,
    or INTERNAL for a bare :class:`ServiceError`."""
    for cls in type(error).__mro__:
        code = STATUS_BY_ERROR.get(cls)
        if code is not None:
            return code
    return grpc.StatusCode.INTERNAL


class ErrorMappingInterceptor(ScopeInterceptor):
    """Ends a call that raised a :class:`ServiceError` with its code and message, one whose
    client went away with CANCELLED, and one that raised any other exception with INTERNAL
    (logging the traceback)."""

    def __init__(self) -> None:
        super().__init__(self._scope)

    @staticmethod
    @contextmanager
    def _scope(method: str, context: CallContext) -> Iterator[None]:
        try:
            yield
        except ServiceError as error:
            if error.trailing_metadata:
                context.set_trailing_metadata(error.trailing_metadata)
            context.abort(status_for(error), str(error) or type(error).__name__)
        except Exception as exc:
            if context.code() is not None:  # context.abort() already chose the status
                raise
            # cancelled, disconnected or past its deadline (a refused send can tell first)
            if isinstance(exc, ClientGone) or not context.is_active():
                _log.debug("call ended by the client", error=type(exc).__name__)
                context.abort(grpc.StatusCode.CANCELLED, "the call was cancelled by the client")
            _log.exception("unexpected error in handler")
            context.abort(grpc.StatusCode.INTERNAL, "internal error; the server log has details")
