"""Prometheus metrics: gRPC request counter and latency histogram, and the ``/metrics`` server.

Series (``service`` is the full gRPC service name, ``method`` the RPC name):

- ``grpc_requests_total{service,method,code}``: calls finished, by status code name (``OK``,
  ``UNAUTHENTICATED``...).
- ``grpc_request_seconds{service,method}``: seconds from the servicer being entered to the
  response (or the last message of a response stream) being produced.
- ``rummy_consumer_lag_events{topic,partition,group}``: offsets between a consumer group
  member's position and the end of a partition it owns (0 = caught up), set every 15 s by
  :class:`ConsumerLagReporter` (every group consumer of the event log, and the clock's).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)

from rummy_platform.logging import get_logger
from rummy_platform.rpc_scope import CallContext, ScopeInterceptor, final_code, split_method

if TYPE_CHECKING:
    from rummy_platform.eventlog.base import TopicPartition

_log = get_logger(__name__)

#: Latency buckets in seconds: sub-millisecond in-process calls up to multi-second stalls.
LATENCY_BUCKETS_SECONDS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip


class GrpcMetrics:
    """The two gRPC series, registered once in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "grpc_requests",  # exposed as grpc_requests_total
            "gRPC calls finished, by status code.",
            ["service", "method", "code"],
            registry=registry,
        )
        self.latency = Histogram(
            "grpc_request_seconds",
            "Seconds a gRPC call spent in the server, to its last response message.",
            ["service", "method"],
            buckets=LATENCY_BUCKETS_SECONDS,
            registry=registry,
        )


@functools.cache
def grpc_metrics(registry: CollectorRegistry = REGISTRY) -> GrpcMetrics:
    """The gRPC series of ``registry``, created on first use (a registry refuses duplicates)."""
    return GrpcMetrics(registry)


class MetricsInterceptor(ScopeInterceptor):
    """Counts every call by final status code and times it."""

    def __init__(self, metrics: GrpcMetrics) -> None:
        self._metrics = metrics
        # Each method's series, looked up once: ``labels()`` takes a lock and joins the label
        # values on every call. Bounded by the services' methods and the status codes.
        self._latency: dict[str, Any] = {}
        self._requests: dict[tuple[str, grpc.StatusCode], Any] = {}
        super().__init__(self._scope)

    @contextmanager
    def _scope(self, method: str, context: CallContext) -> Iterator[None]:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            yield
        except BaseException as raised:
            error = raised
            raise
        finally:
            latency = self._latency.get(method)
            if latency is None:
                latency = self._latency[method] = self._metrics.latency.labels(
                    *split_method(method)
                )
            latency.observe(time.perf_counter() - started)
            code = final_code(context, error)
            requests = self._requests.get((method, code))
            if requests is None:
                requests = self._requests[method, code] = self._metrics.requests.labels(
                    *split_method(method), code.name
                )
            requests.inc()


def start_metrics_server(
    port: int, host: str = "127.0.0.1", registry: CollectorRegistry = REGISTRY
) -> WSGIServer:
    """Serve ``registry`` as Prometheus text at ``http://host:port/metrics`` from a daemon
    thread. Port 0 picks a free one (read ``server.server_port``); stop with ``shutdown()``."""
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server


@functools.cache
def consumer_lag_gauge(registry: CollectorRegistry = REGISTRY) -> Gauge:
    """The ``rummy_consumer_lag_events`` gauge of ``registry``, created on first use."""
    return Gauge(
        "rummy_consumer_lag_events",
        "Offsets between a consumer group member's position and the end of a partition it owns.",
        ["topic", "partition", "group"],
        registry=registry,
    )


class ConsumerLagReporter:
    """Sets ``rummy_consumer_lag_events`` for one consumer group at most every ``interval_s``
    seconds, from ``lag()`` (partition -> offsets behind, e.g. :meth:`GroupConsumer.lag`).

    Partitions the member no longer owns are removed from the gauge (another member reports
    them). A ``lag()`` that raises (broker unreachable) leaves the gauge as it was and is
    tried again after the interval; the error is logged at debug level only (the poll loop logs
    the broker's state).
    """

    def __init__(
        self,
        group_id: str,
        *,
        interval_s: float = 15.0,
        registry: CollectorRegistry = REGISTRY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.group_id = group_id
        self._interval_s = interval_s
        self._gauge = consumer_lag_gauge(registry)
        self._clock = clock
        self._next_at = clock()
        self._reported: set[tuple[str, str]] = set()

    def maybe_report(self, lag: Callable[[], Mapping[TopicPartition, int]]) -> bool:
        """Report ``lag()`` if the interval has passed; True if the gauge was updated."""
        now = self._clock()
        if now < self._next_at:
            return False
        self._next_at = now + self._interval_s
        try:
            current = lag()
        except Exception as exc:
            _log.debug("consumer lag unknown", group_id=self.group_id, error=str(exc))
            return False
        labels = {(tp.topic, str(tp.partition)): behind for tp, behind in current.items()}
        for topic, partition in self._reported - labels.keys():
            self._gauge.remove(topic, partition, self.group_id)
        for (topic, partition), behind in labels.items():
            self._gauge.labels(topic, partition, self.group_id).set(behind)
        self._reported = set(labels)
        return True
