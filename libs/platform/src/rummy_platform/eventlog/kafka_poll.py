"""Workarounds for kafka-python 3.0's group consumers, each explained where it is made.

- :class:`PollGuard`: ``KafkaConsumer.poll`` raises on a lost broker and busy-loops while a
  request to a broker that stopped answering is in flight; the guard backs off instead.
- :class:`EmptyAssignmentWatch`: a member can hang in a rebalance for good with no partitions;
  the watch says when to leave and join again.
- :func:`wait_for_partitions`: a member that subscribes before its client knows a topic's
  partitions gets an empty assignment; it waits for the metadata first.
- :func:`kafka_consumer_lag`: the lag of a member's partitions (position to last stable offset).
- :class:`FetchPacing`: kafka-python fixes a consumer's fetch settings at its creation; the
  pacing switches an idle member to fetches that wait long but answer at the first byte.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import kafka.errors as kafka_errors
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from rummy_platform.backoff import Backoff
from rummy_platform.logging import get_logger

from .base import EventLogError, TopicPartition

_log = get_logger(__name__)


class FetchPacing:
    """Fetch settings that follow a group member's traffic: ``busy`` (e.g.
    :data:`~.kafka_client.GROUP_FETCH`: batch for up to 100 ms) while records come, ``idle``
    (:data:`~.kafka_client.GROUP_FETCH_IDLE`: answer at the first byte, else after 500 ms) once
    no record was fetched for ``idle_after_s`` seconds (``time.monotonic``).

    Call :meth:`joined` with each new client (it starts on ``busy``, its configuration) and
    :meth:`polled` after each of its polls with whether the poll fetched any record (before
    any filtering by type). A switch applies from the next fetch request the client sends.
    kafka-python 3.0.12 has no public way to change them after creation: the pacing updates
    the settings its ``Fetcher`` reads for each request (``consumer._fetcher.config``); a
    client without that attribute keeps its settings (``busy``), which is only costlier.
    """

    def __init__(
        self, busy: Mapping[str, Any], idle: Mapping[str, Any], idle_after_s: float
    ) -> None:
        self._busy = dict(busy)
        self._idle = dict(idle)
        self._idle_after_s = idle_after_s
        self._last_fetched = time.monotonic()
        self.idle = False

    def joined(self) -> None:
        """A new client (made with the ``busy`` settings) replaced the previous one."""
        self._last_fetched = time.monotonic()
        self.idle = False

    def polled(self, consumer: KafkaConsumer, fetched: bool) -> None:
        now = time.monotonic()
        if fetched:
            self._last_fetched = now
        idle = not fetched and now - self._last_fetched >= self._idle_after_s
        if idle == self.idle:
            return
        config = getattr(getattr(consumer, "_fetcher", None), "config", None)
        if isinstance(config, dict):
            config.update(self._idle if idle else self._busy)
            self.idle = idle


class EmptyAssignmentWatch:
    """Tells a group member when to leave and join its group again because its assignment has
    stayed empty too long (kafka-python 3.0 can hang in a rebalance for good: the leader logs
    "performing partition assignments", then no assignment and no heartbeat ever follow).

    Call :meth:`due` after each poll with whether the member owns any partition; it returns
    True once the assignment has been empty for ``after_s`` seconds, and then waits twice as
    long before the next True (up to ``max_after_s``); any assignment resets it. Seconds are
    measured with ``time.monotonic``.
    """

    def __init__(self, after_s: float = 15.0, max_after_s: float = 120.0) -> None:
        self._base_s = after_s
        self._after_s = after_s
        self._max_after_s = max_after_s
        self._empty_since: float | None = time.monotonic()

    def due(self, assigned: bool) -> bool:
        """True when the member should rejoin now (the caller does; the clock restarts)."""
        now = time.monotonic()
        if assigned:
            self._empty_since = None
            self._after_s = self._base_s
            return False
        if self._empty_since is None:
            self._empty_since = now
            return False
        if now - self._empty_since < self._after_s:
            return False
        self._empty_since = now
        self._after_s = min(self._after_s * 2, self._max_after_s)
        return True


#: An empty poll during which the polling thread was busy for at least this share of the poll's
#: duration was a spin, not a wait. kafka-python 3.0 busy-loops inside ``poll`` while a request to
#: a broker that stopped answering is in flight, and while a member hangs in a rebalance (measured
#: here with the broker SIGSTOPped: ~100% of a core, the polling thread itself busy ~40% of each
#: poll; an idle poll keeps it busy under 1%).
SPIN_CPU_SHARE = 0.15
#: Polls shorter than this (seconds) are too short to judge.
SPIN_MIN_POLL_S = 0.05
#: After a failure, empty polls count as recovery only once this many seconds passed without one.
SETTLE_S = 10.0


class PollGuard:
    """``KafkaConsumer.poll`` for a loop that polls forever, without a lost or hung broker turning
    that loop into a busy loop or killing it.

    - A retriable Kafka error from ``poll`` (connection refused, coordinator unknown, request
      timed out, ...) is not raised: :meth:`poll` waits the :class:`~rummy_platform.backoff.Backoff`
      delay and returns no records. Other Kafka errors are raised.
    - An empty poll that kept the calling thread busy for at least :data:`SPIN_CPU_SHARE` of its
      duration (thread CPU time over wall time) is a spin of the client: :meth:`poll` waits the
      backoff delay before returning, so the spin takes a small share of the time.
    - Records, or :data:`SETTLE_S` seconds of quiet empty polls after the last failure, end the
      failing period (logged once) and reset the delay.

    Waits are at most ``cap_s`` seconds (``first_s`` first, doubling). ``sleep``, ``clock`` and
    ``thread_clock`` are ``time.sleep``, ``time.monotonic`` and ``time.thread_time`` unless a test
    gives others.
    """

    def __init__(
        self,
        group_id: str,
        *,
        first_s: float = 0.2,
        cap_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        thread_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.backoff = Backoff(
            "kafka consumer poll", first_s=first_s, cap_s=cap_s, clock=clock, group_id=group_id
        )
        self._sleep = sleep
        self._clock = clock
        self._thread_clock = thread_clock

    def failed(self, exc: kafka_errors.KafkaError) -> None:
        """Wait out a retriable ``exc`` (from ``poll`` or from joining); raise any other."""
        if not getattr(exc, "retriable", False):
            raise exc
        self._sleep(self.backoff.failed(f"{type(exc).__name__}: {exc}"))

    def poll(
        self, consumer: KafkaConsumer, timeout_ms: int, max_records: int | None = None
    ) -> dict[KafkaTopicPartition, list[Any]]:
        """``consumer.poll(timeout_ms, max_records)``, guarded as the class doc says; ``{}``
        after a failure or a spin."""
        started, started_cpu = self._clock(), self._thread_clock()
        try:
            batches = consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        except kafka_errors.KafkaError as exc:
            self.failed(exc)
            return {}
        if batches:
            self.backoff.succeeded()
            return dict(batches)
        wall = self._clock() - started
        busy = self._thread_clock() - started_cpu
        if wall >= SPIN_MIN_POLL_S and busy >= SPIN_CPU_SHARE * wall:
            reason = f"an empty poll kept the thread busy {busy / wall:.0%} of {wall:.2f} s"
            self._sleep(self.backoff.failed(reason + " (broker not answering?)"))
        elif self.backoff.failing and self.backoff.seconds_since_failure() >= SETTLE_S:
            self.backoff.succeeded()
        return {}


def kafka_consumer_lag(
    consumer: KafkaConsumer, timeout_s: float = 5.0
) -> dict[TopicPartition, int]:
    """Offsets between ``consumer``'s position and the end (last stable offset) of each
    partition assigned to it; partitions without a known position yet are left out. Raises
    EventLogError when the broker does not answer within ``timeout_s`` seconds."""
    assigned = list(consumer.assignment())
    if not assigned:
        return {}
    timeout_ms = int(timeout_s * 1000)
    try:
        ends = consumer.end_offsets(assigned, timeout_ms=timeout_ms)
        lag: dict[TopicPartition, int] = {}
        for tp in assigned:
            with contextlib.suppress(kafka_errors.IllegalStateError):  # revoked meanwhile
                position = consumer.position(tp, timeout_ms=timeout_ms)
                if position is not None and tp in ends:
                    lag[TopicPartition(tp.topic, tp.partition)] = max(0, ends[tp] - position)
    except kafka_errors.KafkaError as exc:
        raise EventLogError(f"consumer lag unknown: {exc}") from exc
    return lag


def wait_for_partitions(
    consumer: KafkaConsumer, topics: Sequence[str], timeout_s: float, group_id: str
) -> None:
    """Return once ``consumer`` sees every topic's partitions, or after ``timeout_s`` seconds
    (logging a warning): a member that joins while a topic it subscribes to is still being
    created gets an empty assignment."""
    deadline = time.monotonic() + timeout_s
    missing = [t for t in topics if not consumer.partitions_for_topic(t)]
    while missing and time.monotonic() < deadline:
        time.sleep(0.1)
        missing = [t for t in missing if not consumer.partitions_for_topic(t)]
    if missing:
        _log.warning(
            "joining consumer group before its topics' partitions are known",
            group_id=group_id,
            missing=missing,
            waited_s=timeout_s,
        )
