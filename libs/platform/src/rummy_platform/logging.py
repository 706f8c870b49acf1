"""Structured logs: one JSON object per line on stderr, carrying the context of the work.

Every line has ``timestamp`` (ISO 8601, UTC), ``level``, ``logger`` and ``event``, plus whatever
is bound in the current context: ``service``, ``rpc``, ``account_id``/``role`` (bound per call by
the server interceptors) and ``table_id``, ``hand_id``, ``seat`` (bound by the code that knows
them, with :func:`log_context`). Records from the standard ``logging`` module (grpc, kafka,
psycopg) go through the same formatter, so the whole stream is JSON.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import grpc
import structlog
from structlog.contextvars import (
    bind_contextvars,
    clear_contextvars,
    merge_contextvars,
    reset_contextvars,
)

from rummy_platform.rpc_scope import CallContext, ScopeInterceptor, final_code

_HANDLER_NAME = "rummy-json"
_QUIET = frozenset({grpc.StatusCode.OK, grpc.StatusCode.CANCELLED})
_SERVER_ERRORS = frozenset(
    {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DATA_LOSS}
)


_SHARED: list[Any] = [
    merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.StackInfoRenderer(),
]
#: structlog's processors, one list for the life of the process. A logger is cached on its first
#: use (``cache_logger_on_first_use``) with the list configured then; were a later configuration
#: to install another list, loggers used before it would keep the old one, and whatever changes
#: the current list in place (``structlog.testing.capture_logs``) would miss their lines.
_PROCESSORS: list[Any] = [
    structlog.stdlib.filter_by_level,
    *_SHARED,
    structlog.stdlib.PositionalArgumentsFormatter(),
    structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
]


def configure_logging(level: str = "info", stream: IO[str] | None = None) -> None:
    """Send structlog and standard-library logging at ``level`` and above to ``stream``
    (default stderr) as JSON lines. Calling it again replaces the earlier level and stream;
    structlog is configured only when it is not already (a capture of the logs in progress,
    ``structlog.testing.capture_logs``, goes on)."""
    if structlog.get_config()["processors"] is not _PROCESSORS:
        structlog.configure(
            processors=_PROCESSORS,
            logger_factory=structlog.stdlib.LoggerFactory(),
            wrapper_class=structlog.stdlib.BoundLogger,
            cache_logger_on_first_use=True,
        )
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_SHARED,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A structlog logger named ``name`` (use the module's ``__name__``)."""
    logger: structlog.stdlib.BoundLogger = structlog.stdlib.get_logger(name)
    return logger


@contextmanager
def log_context(
    *,
    table_id: str | None = None,
    hand_id: str | None = None,
    seat: int | None = None,
    **extra: Any,
) -> Iterator[None]:
    """Bind the given keys (those not None) to every log line written inside the block, in
    this thread or task only; the previous values come back when it ends."""
    keys = {"table_id": table_id, "hand_id": hand_id, "seat": seat, **extra}
    # bind + reset by token: what structlog's bound_contextvars does, without the copy of the
    # whole context it takes first (get_contextvars) on every block (every call's scopes).
    tokens = bind_contextvars(**{key: value for key, value in keys.items() if value is not None})
    try:
        yield
    finally:
        reset_contextvars(**tokens)


class LoggingContextInterceptor(ScopeInterceptor):
    """Starts every call with a clean log context holding ``service`` and ``rpc``, and logs
    its end: DEBUG when OK or CANCELLED (the client went away), INFO for a client error,
    WARNING for a server error."""

    def __init__(self, service_name: str) -> None:
        self._service_name = service_name
        self._log = get_logger("rummy_platform.rpc")
        super().__init__(self._scope)

    @contextmanager
    def _scope(self, method: str, context: CallContext) -> Iterator[None]:
        clear_contextvars()  # a worker thread must not carry the last call's context
        started = time.perf_counter()
        error: BaseException | None = None
        with log_context(service=self._service_name, rpc=method):
            try:
                yield
            except BaseException as raised:
                error = raised
                raise
            finally:
                code = final_code(context, error)
                level = (
                    logging.DEBUG
                    if code in _QUIET
                    else logging.WARNING
                    if code in _SERVER_ERRORS
                    else logging.INFO
                )
                # The usual answer (OK, at DEBUG) is dropped by the level: checked first, so
                # that no event is built and run through structlog's processors on every call.
                if self._log.isEnabledFor(level):
                    details = context.details()
                    self._log.log(
                        level,
                        "rpc finished",
                        code=code.name,
                        details=(
                            details.decode("utf-8", "replace")
                            if isinstance(details, bytes)
                            else details or None
                        ),
                        duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    )
