"""Helpers for a service's bootstrap: background loops next to the gRPC host, the crash-test
fault points, and the watch that ends a service whose supervisor died. (Settings, the topic
prefix among them, are read once by ``rummy_platform.config``.)

::

    loops = BackgroundLoops()
    loops.start("reactor", reactor.run)
    loops.start("outbox", relay.run)
    host.on_shutdown(loops.stop)
    host.serve_forever()
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

from rummy_platform.logging import get_logger

_log = get_logger(__name__)


class BackgroundLoops:
    """Daemon threads each running ``loop(stop_event)``; :meth:`stop` sets the event and joins.

    A loop that raises is logged and, if ``exit_on_failure``, ends the whole process with status
    1 (a reactor whose writer was fenced must not keep serving as if it owned its streams).
    """

    def __init__(self, *, exit_on_failure: bool = True) -> None:
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._exit_on_failure = exit_on_failure

    def start(self, name: str, loop: Callable[[threading.Event], None]) -> None:
        def body() -> None:
            try:
                loop(self._stop)
            except Exception:
                _log.exception("background loop failed", loop=name)
                if self._exit_on_failure and not self._stop.is_set():
                    os._exit(1)

        thread = threading.Thread(target=body, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask every loop to stop and wait up to ``timeout_s`` seconds for each."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout_s)


def fault_hook(point: str, armed: str | None) -> Callable[[str], None] | None:
    """A hook that SIGKILLs this process when called, if ``armed`` (the settings'
    ``fault_point``, ``RUMMY_FAULT_POINT``) equals ``point``; otherwise None. For crash-recovery
    tests only: unset in production."""
    if armed != point:
        return None

    def die(_event_id: str) -> None:
        _log.warning("fault point reached: killing the process", fault_point=point)
        os.kill(os.getpid(), signal.SIGKILL)

    return die


class SupervisorWatch:
    """Ends a supervised service when its supervisor is gone (``RUMMY_SUPERVISOR_PID``).

    ``rummy demo`` / ``rummy up`` start each service as a child and pass their own pid. A
    supervisor that is SIGKILLed cannot stop its children, which the OS then hands to another
    parent (init or a subreaper): from that moment ``os.getppid()`` differs from the pid given.
    A daemon thread compares the two every ``period_s`` seconds (and once at once, in case the
    supervisor died before the service started) and, the first time they differ, logs it and
    calls ``on_gone`` (the host's normal graceful shutdown). Should the process still be alive
    ``exit_after_s`` seconds later (a shutdown hook hanging), it exits with status 1 through
    ``os._exit``: an orphan must not hold its ports.

    A portable check (no ``prctl``), safe with threads, with a reaction time of ``period_s``.
    """

    def __init__(
        self,
        supervisor_pid: int,
        on_gone: Callable[[], None],
        *,
        period_s: float = 0.5,
        exit_after_s: float = 60.0,
    ) -> None:
        self.supervisor_pid = supervisor_pid
        self._on_gone = on_gone
        self._period_s = period_s
        self._exit_after_s = exit_after_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def supervisor_alive(self) -> bool:
        """True while this process's parent is still the supervisor."""
        return os.getppid() == self.supervisor_pid

    def start(self) -> None:
        """Start watching (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._watch, name="supervisor-watch", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop watching (the service is shutting down for another reason)."""
        self._stop.set()

    def _watch(self) -> None:
        while self.supervisor_alive():
            if self._stop.wait(self._period_s):
                return
        if self._stop.is_set():
            return
        _log.warning(
            "supervisor gone; shutting down",
            supervisor_pid=self.supervisor_pid,
            parent_pid=os.getppid(),
        )
        self._on_gone()
        if not self._stop.wait(self._exit_after_s):
            _log.error(
                "shutdown after the supervisor died took too long; exiting",
                waited_s=self._exit_after_s,
            )
            os._exit(1)
