"""Prometheus metrics: gRPC request counter and latency histogram, and the ``/metrics`` server.

Series (``service`` is the full gRPC service name, ``method`` the RPC name):

- ``grpc_requests_total{service,method,code}``: calls finished, by status code name (``OK``,
  ``UNAUTHENTICATED``...).
- ``grpc_request_seconds{service,method}``: seconds from the servicer being entered to the
  response (or the last message of a response stream) being produced.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, start_http_server

from rummy_platform.rpc_scope import ScopeInterceptor, final_code, split_method

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
        super().__init__(self._scope)

    @contextmanager
    def _scope(self, method: str, context: grpc.ServicerContext) -> Iterator[None]:
        service, rpc = split_method(method)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            yield
        except BaseException as raised:
            error = raised
            raise
        finally:
            self._metrics.latency.labels(service, rpc).observe(time.perf_counter() - started)
            code = final_code(context, error)
            self._metrics.requests.labels(service, rpc, code.name).inc()


def start_metrics_server(
    port: int, host: str = "127.0.0.1", registry: CollectorRegistry = REGISTRY
) -> WSGIServer:
    """Serve ``registry`` as Prometheus text at ``http://host:port/metrics`` from a daemon
    thread. Port 0 picks a free one (read ``server.server_port``); stop with ``shutdown()``."""
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server
