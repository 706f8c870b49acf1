"""Bounded exponential backoff for a loop that keeps trying something that keeps failing, with one
log line per change of state instead of one per try.

::

    backoff = Backoff("kafka poll", group_id="table")
    while not stop.is_set():
        try:
            records = consumer.poll(0.5)
        except RetriableError as exc:
            stop.wait(backoff.failed(str(exc)))    # 0.2 s, 0.4 s, ... at most 5 s
            continue
        backoff.succeeded()                        # logs "... recovered" once, resets the delay

No retry helper is needed here (the loop is the retry); only the delay and the state are kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rummy_platform.logging import get_logger

_log = get_logger(__name__)


class Backoff:
    """The delay before the next try of ``what`` and whether it is currently failing.

    :meth:`failed` returns ``first_s`` seconds the first time, then twice the previous delay, at
    most ``cap_s``. The first failure after a healthy period logs one warning (``what``, the
    reason, the delay); later failures log nothing. :meth:`succeeded` ends a failing period with
    one info line (how many failures, over how many seconds) and resets the delay. ``context`` is
    added to both lines (e.g. ``group_id``). Seconds come from ``clock`` (``time.monotonic``).
    """

    def __init__(
        self,
        what: str,
        *,
        first_s: float = 0.2,
        cap_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        **context: object,
    ) -> None:
        if not 0 < first_s <= cap_s:
            raise ValueError(f"need 0 < first_s <= cap_s, got {first_s} and {cap_s}")
        self.what = what
        self._first_s = first_s
        self._cap_s = cap_s
        self._clock = clock
        self._context = context
        self._failures = 0
        self._failing_since = 0.0
        self._last_failure = 0.0

    @property
    def failing(self) -> bool:
        """True from a failure until the next :meth:`succeeded`."""
        return self._failures > 0

    @property
    def failures(self) -> int:
        """Failures since the last success."""
        return self._failures

    def seconds_since_failure(self) -> float:
        """Seconds since the last failure (0 while healthy)."""
        return self._clock() - self._last_failure if self.failing else 0.0

    def failed(self, reason: str) -> float:
        """Record a failure; return the seconds to wait before the next try."""
        now = self._clock()
        delay = min(self._cap_s, self._first_s * 2.0 ** min(self._failures, 62))
        if self._failures == 0:
            self._failing_since = now
            _log.warning(
                f"{self.what} failing; backing off",
                reason=reason,
                delay_s=round(delay, 3),
                max_delay_s=self._cap_s,
                **self._context,
            )
        self._failures += 1
        self._last_failure = now
        return delay

    def succeeded(self) -> None:
        """Record a success: if failing, log the recovery once and reset the delay."""
        if self._failures == 0:
            return
        _log.info(
            f"{self.what} recovered",
            failures=self._failures,
            failing_s=round(self._clock() - self._failing_since, 3),
            **self._context,
        )
        self._failures = 0


class KeyedBackoff:
    """A :class:`Backoff` for each key that is failing (e.g. each table), and when each may be
    tried again: one failing table waits, the others are tried as usual.

    ``first_s`` is the first delay in seconds (0: retry at the next round), doubled per failure
    of the same key up to ``cap_s``. The context given to :meth:`failed` on a key's first
    failure (e.g. ``table_id``, ``hand_id``) goes on its warning and its recovery line.
    """

    def __init__(
        self,
        what: str,
        *,
        first_s: float = 0.5,
        cap_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        **context: object,
    ) -> None:
        if not 0 <= first_s <= cap_s:
            raise ValueError(f"need 0 <= first_s <= cap_s, got {first_s} and {cap_s}")
        self.what = what
        self._first_s = first_s
        self._cap_s = cap_s
        self._clock = clock
        self._context = context
        self._failing: dict[str, tuple[Backoff, float]] = {}

    @property
    def failing(self) -> frozenset[str]:
        """The keys failing now (from a failure until their next success)."""
        return frozenset(self._failing)

    def ready(self, key: str) -> bool:
        """True unless ``key`` failed and its delay has not passed yet."""
        entry = self._failing.get(key)
        return entry is None or entry[1] <= self._clock()

    def failed(self, key: str, reason: str, **context: object) -> float:
        """Record a failure of ``key``; return the seconds before it is tried again."""
        entry = self._failing.get(key)
        backoff = entry[0] if entry is not None else None
        if backoff is None:
            backoff = Backoff(
                self.what,
                first_s=max(self._first_s, 1e-9),
                cap_s=max(self._cap_s, 1e-9),
                clock=self._clock,
                **{**self._context, **context},
            )
        delay = backoff.failed(reason) if self._first_s > 0 else 0.0 * backoff.failed(reason)
        self._failing[key] = (backoff, self._clock() + delay)
        return delay

    def succeeded(self, key: str) -> None:
        """Record a success of ``key``: if it was failing, log the recovery and forget it."""
        entry = self._failing.pop(key, None)
        if entry is not None:
            entry[0].succeeded()

    def forget(self, key: str) -> None:
        """Forget ``key``'s failures without a recovery line (its work was handed elsewhere)."""
        self._failing.pop(key, None)

    def clear(self) -> None:
        """Forget every key's failures."""
        self._failing.clear()
