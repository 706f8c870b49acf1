"""``rummy up``'s supervision of the services of a running :class:`~rummy_ops.stack.Stack`: the
process side of :mod:`rummy_ops.restart_policy` (which decides), kept thin.

:meth:`Supervisor.tick` (called every half second or so) notices a service whose process exited,
says so on one line and asks the policy; it starts the service again (on the same ports) once
the delay has passed, and says that too. When the policy gives up, :meth:`tick` raises
:class:`~rummy_ops.stack.StackError` naming the service and its exit statuses (``rummy up``
then stops the rest and exits 1). :meth:`status` is the status line of the services.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from rummy_ops.restart_policy import GiveUp, RestartPolicy, ServiceHistory
from rummy_ops.stack import Stack, StackError


def exit_status(code: int) -> str:
    """``1``, or ``-9 (SIGKILL)`` for a process a signal ended."""
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return str(code)


@dataclass
class _Watched:
    history: ServiceHistory
    restarts: int = 0  # since `rummy up` started, never reset
    last_exit: int | None = None
    restart_at: float | None = None  # a restart is due then (monotonic seconds)


class Supervisor:
    """Watches every service of ``stack`` (started) under ``policy``; ``say`` prints one line
    (``rummy up``: with the time of day in front); ``clock``: monotonic seconds."""

    def __init__(
        self,
        stack: Stack,
        say: Callable[[str], None],
        policy: RestartPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stack = stack
        self._say = say
        self._policy = policy or RestartPolicy()
        self._clock = clock
        now = clock()
        self._watched = {name: _Watched(ServiceHistory(started_at=now)) for name in stack.pids}

    def tick(self) -> None:
        """Restart what is due; notice what exited. Raises StackError when the policy gives
        up on a service."""
        for service, watched in self._watched.items():
            now = self._clock()
            if watched.restart_at is not None:
                if now >= watched.restart_at:
                    pid = self._stack.respawn(service)
                    watched.history = self._policy.restarted(watched.history, at=now)
                    watched.restarts += 1
                    watched.restart_at = None
                    self._say(f"restarted {service} (pid {pid}, restart {watched.restarts})")
                continue
            code = self._stack.exit_code(service)
            if code is None:
                continue
            watched.last_exit = code
            decision = self._policy.on_exit(watched.history, exited_at=now, code=code)
            log = self._stack.log_path(service)
            if isinstance(decision, GiveUp):
                statuses = ", ".join(exit_status(c) for c in decision.exit_codes)
                raise StackError(
                    f"{service} exited {len(decision.exit_codes)} times within "
                    f"{decision.window_s / 60:g} minutes (exit statuses {statuses}): gave up "
                    f"after {decision.restarts} restarts; see {log}"
                )
            watched.history = decision.history
            watched.restart_at = now + decision.delay_s
            self._say(
                f"{service} exited with status {exit_status(code)}; restarting it in "
                f"{decision.delay_s:g} s (restart {decision.attempt} of at most "
                f"{self._policy.max_restarts} within {self._policy.window_s / 60:g} minutes; "
                f"see {log})"
            )

    def status(self) -> str:
        """Every service's address and health, and for one restarted or waiting to be its
        restarts and last exit status: ``table 127.0.0.1:15051 SERVING (restarts 1, last exit
        -9 (SIGKILL))``, ``... exited (-9), restart in 2 s``."""
        now = self._clock()
        parts = []
        for service, health in self._stack.health().items():
            watched = self._watched[service]
            if watched.restart_at is not None:
                health += f", restart in {max(0.0, watched.restart_at - now):.0f} s"
            if watched.restarts:
                last = "" if watched.last_exit is None else exit_status(watched.last_exit)
                health += f" (restarts {watched.restarts}, last exit {last})"
            parts.append(f"{service} {self._stack.address(service)} {health}")
        return "  ".join(parts)
