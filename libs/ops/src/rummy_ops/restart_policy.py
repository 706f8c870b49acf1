"""When ``rummy up`` restarts a service that exited, and when it gives up: a pure policy (no
process, no clock, no sleep; every time is a number of seconds the caller passes in, from one
monotonic clock).

A service that exits is restarted after a delay that starts at ``first_delay_s`` (1 s) and doubles
with each restart counted, up to ``max_delay_s`` (30 s). A restart is counted for
``window_s`` (600 s, ten minutes) after it happened; an exit that finds ``max_restarts`` (5)
restarts counted is not restarted: the caller gives up. A service that stayed up ``window_s``
before it exited starts afresh: no restart counted, the delay back at ``first_delay_s``.

::

    policy = RestartPolicy()
    history = ServiceHistory(started_at=0.0)
    decision = policy.on_exit(history, exited_at=30.0, code=-9)   # Restart(delay_s=1.0, ...)
    history = policy.restarted(decision.history, at=31.0)          # the process started again
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ServiceHistory:
    """What the policy knows of one service: when its current process started
    (``started_at``, seconds), the times of the restarts still counted (``restarts``, oldest
    first) and the (time, exit status) of the exits within the window (``exits``, oldest first;
    a negative status is the signal that ended it, as ``subprocess`` reports it)."""

    started_at: float
    restarts: tuple[float, ...] = ()
    exits: tuple[tuple[float, int], ...] = ()


@dataclass(frozen=True)
class Restart:
    """Start the service again ``delay_s`` seconds after its exit; ``history`` is the history
    to pass to :meth:`RestartPolicy.restarted` then; ``attempt`` is 1 for the first restart
    counted, up to ``max_restarts``."""

    delay_s: float
    attempt: int
    history: ServiceHistory


@dataclass(frozen=True)
class GiveUp:
    """Do not restart: ``restarts`` restarts happened within ``window_s`` seconds and the
    service exited again; ``exit_codes`` are its exit statuses within that window, oldest
    first, the last one included."""

    restarts: int
    window_s: float
    exit_codes: tuple[int, ...]


@dataclass(frozen=True)
class RestartPolicy:
    """Backoff and limit of the restarts (module doc); every field in seconds but
    ``max_restarts``. Raises ValueError for a delay that is not positive, a maximum below the
    first delay, a negative ``max_restarts`` or a window that is not positive."""

    first_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_restarts: int = 5
    window_s: float = 600.0

    def __post_init__(self) -> None:
        if not 0 < self.first_delay_s <= self.max_delay_s:
            raise ValueError("need 0 < first_delay_s <= max_delay_s")
        if self.max_restarts < 0 or self.window_s <= 0:
            raise ValueError("need max_restarts >= 0 and window_s > 0")

    def on_exit(self, history: ServiceHistory, exited_at: float, code: int) -> Restart | GiveUp:
        """The decision for a service of ``history`` whose process exited with status ``code``
        at ``exited_at`` (not before ``history.started_at``)."""
        if exited_at - history.started_at >= self.window_s:
            history = ServiceHistory(started_at=history.started_at)  # up long enough: afresh
        counted = tuple(t for t in history.restarts if exited_at - t < self.window_s)
        exits = (
            *((t, c) for t, c in history.exits if exited_at - t < self.window_s),
            (exited_at, code),
        )
        if len(counted) >= self.max_restarts:
            codes = tuple(c for _t, c in exits)
            return GiveUp(restarts=len(counted), window_s=self.window_s, exit_codes=codes)
        delay = min(self.max_delay_s, self.first_delay_s * 2 ** len(counted))
        return Restart(
            delay_s=delay,
            attempt=len(counted) + 1,
            history=replace(history, restarts=counted, exits=exits),
        )

    def restarted(self, history: ServiceHistory, at: float) -> ServiceHistory:
        """``history`` (a :class:`Restart`'s) once the service's process started again at
        ``at``: that restart counted, ``started_at`` = ``at``."""
        return replace(history, started_at=at, restarts=(*history.restarts, at))
