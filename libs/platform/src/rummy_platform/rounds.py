"""The loop every consumer of the event log runs on its thread: round after round until it is
told to stop, another instance's fencing ending it, a failed round retried after a pause.

:class:`rummy_platform.consumer_loop.ConsumerLoop` (the reactors', the clock's and the table's
input loop) calls :func:`run_rounds` with its round (poll once, hand what came to its core), the
failures it retries and the pause between tries; what a round rewinds when it fails is the
caller's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from rummy_platform.eventlog import WriterFenced


def run_rounds(
    stop: threading.Event,
    one_round: Callable[[], object],
    *,
    close: Callable[[], None],
    retried: type[BaseException] | tuple[type[BaseException], ...],
    pause_s: float,
    log: structlog.stdlib.BoundLogger,
    failed: str,
    fenced: str | None = None,
    **fields: object,
) -> None:
    """Call ``one_round`` until ``stop`` is set, then ``close`` (also when a round raises).

    A round raising one of ``retried`` is logged with its traceback (message ``failed``, with
    ``fields``, on the caller's ``log``) and tried again after ``pause_s`` seconds (sooner when
    ``stop`` is set meanwhile). :class:`~rummy_platform.eventlog.WriterFenced` (another
    instance took the writer) ends the loop: logged as an error with ``fenced`` when it is
    given, then raised. Any other exception is raised as it is."""
    try:
        while not stop.is_set():
            try:
                one_round()
            except WriterFenced:
                if fenced is not None:
                    log.error(fenced, **fields)
                raise
            except retried:
                log.exception(failed, **fields)
                stop.wait(pause_s)
    finally:
        close()
