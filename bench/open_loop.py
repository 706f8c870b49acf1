"""The open-loop capacity benchmark's pure parts (``bench/capacity.py``): no I/O, no clock; every
time is given, in seconds of one monotonic clock.

- :func:`think_time`: a bot's pause before an action, drawn from an exponential distribution and
  capped below the turn clock.
- :class:`TableWatch`: one table's watchers (its seated bots, each on its own ``WatchTable``),
  and for each action the time from its sending (the latest its commit can be known to have
  begun, as a client sees it) to the view that shows it arriving at the last of them.
- :func:`verdict` and :func:`capacity_tables`: whether a step's line meets the limits, and the
  largest step that did.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


def think_time(rng: random.Random, mean_s: float, cap_s: float) -> float:
    """Seconds a bot thinks before an action: exponential with mean ``mean_s``, at most
    ``cap_s``; 0.0 when ``mean_s`` is 0 or less. Raises ValueError for a negative cap."""
    if cap_s < 0:
        raise ValueError(f"the cap must be at least 0 s, got {cap_s}")
    if mean_s <= 0:
        return 0.0
    return min(rng.expovariate(1.0 / mean_s), cap_s)


def capped_mean(mean_s: float, cap_s: float) -> float:
    """The mean of :func:`think_time` (an exponential of mean ``mean_s`` capped at ``cap_s``):
    ``mean_s * (1 - exp(-cap_s / mean_s))``; 0.0 for ``mean_s`` <= 0."""
    if mean_s <= 0:
        return 0.0
    return mean_s * (1.0 - math.exp(-cap_s / mean_s))


@dataclass
class _Change:
    """An action in flight or answered: made on the view of ``version``, sent at ``sent_at``;
    each watcher's arrival time of its first later view; when its answer came (None: not yet)."""

    version: int
    sent_at: float
    seen: dict[Hashable, float] = field(default_factory=dict)
    answered_at: float | None = None


class TableWatch:
    """One table's watchers and the watch lag of its actions.

    A watcher (any hashable key: a bot) joins with :meth:`join`; every view it receives is given
    to :meth:`seen` (its ``stream_version`` and arrival time). An action made on the view of
    version ``v`` (:meth:`acted`) is shown by each watcher's first view of a later version (at a
    table nothing else changes while a seat's action is in flight). Once the action is answered
    (:meth:`answered`) and every watcher has such a view, :attr:`lags` gets ``(answered_at,
    lag_s, after_answer_s)``: the last watcher's arrival less the action's sending, and less its
    answer (negative when every view came before the answer). An action refused
    (:meth:`abandoned`) counts nothing. At most ``max_pending`` actions wait; older ones are
    dropped (a watcher that left never sees them)."""

    def __init__(self, max_pending: int = 64) -> None:
        self._latest: dict[Hashable, tuple[int, float]] = {}
        self._pending: list[_Change] = []
        self._max_pending = max_pending
        #: ``(answered_at, lag_s, after_answer_s)`` of every action all watchers saw.
        self.lags: list[tuple[float, float, float]] = []
        #: The hands this table's watchers saw end.
        self.hands_ended: set[str] = set()

    @property
    def watchers(self) -> int:
        return len(self._latest)

    def join(self, watcher: Hashable) -> None:
        """``watcher`` watches the table from now on (it has seen nothing yet)."""
        self._latest.setdefault(watcher, (-1, 0.0))

    def leave(self, watcher: Hashable) -> None:
        """``watcher`` stopped watching: no action waits for it any more."""
        self._latest.pop(watcher, None)
        self._settle()

    def seen(self, watcher: Hashable, version: int, at: float) -> None:
        """``watcher`` received the view of ``version`` at ``at``."""
        if watcher not in self._latest:
            return
        self._latest[watcher] = (version, at)
        for change in self._pending:
            if version > change.version and watcher not in change.seen:
                change.seen[watcher] = at
        self._settle()

    def acted(self, version: int, sent_at: float) -> _Change:
        """An action made on the view of ``version``, sent at ``sent_at``: its handle for
        :meth:`answered`. A watcher whose latest view is already later shows it with that view."""
        change = _Change(version, sent_at)
        for watcher, (latest, at) in self._latest.items():
            if latest > version:
                change.seen[watcher] = at
        self._pending.append(change)
        del self._pending[: -self._max_pending]
        return change

    def answered(self, change: _Change, at: float) -> None:
        """``change``'s action was answered OK at ``at``."""
        change.answered_at = at
        self._settle()

    def abandoned(self, change: _Change) -> None:
        """``change``'s action was not answered OK: it changed nothing to watch."""
        if change in self._pending:
            self._pending.remove(change)

    def _settle(self) -> None:
        waiting = []
        for change in self._pending:
            if change.answered_at is not None and all(w in change.seen for w in self._latest):
                if self._latest:
                    last = max(change.seen[w] for w in self._latest)
                    self.lags.append(
                        (change.answered_at, last - change.sent_at, last - change.answered_at)
                    )
            else:
                waiting.append(change)
        self._pending = waiting


@dataclass(frozen=True)
class Limits:
    """What a step must meet to count towards ``capacity_tables`` (milliseconds)."""

    p99_ms: float = 150.0
    watch_p99_ms: float = 250.0
    driver_slip_p99_ms: float = 20.0


Verdict = Literal["pass", "fail", "unmeasured"]


def verdict(row: Mapping[str, Any], limits: Limits = Limits()) -> Verdict:
    """A step's line judged: ``unmeasured`` when the driver fired its actions later than
    ``driver_slip_p99_ms`` (p99) or no action was answered (the figures do not measure the
    server), ``pass`` when ``p99_ms`` and ``watch_p99_ms`` are within the limits, no error
    (``errors``: count by gRPC code) and no turn deadline fired (``deadlines_fired``), else
    ``fail``. Raises KeyError for a line without those keys."""
    if row["driver_slip_p99_ms"] > limits.driver_slip_p99_ms or row["actions"] == 0:
        return "unmeasured"
    if (
        row["p99_ms"] <= limits.p99_ms
        and row["watch_p99_ms"] <= limits.watch_p99_ms
        and sum(row["errors"].values()) == 0
        and row["deadlines_fired"] == 0
    ):
        return "pass"
    return "fail"


def capacity_tables(rows: Iterable[Mapping[str, Any]], limits: Limits = Limits()) -> int:
    """The most ``tables`` of a step that passes (:func:`verdict`); 0 when none does."""
    return max((row["tables"] for row in rows if verdict(row, limits) == "pass"), default=0)
