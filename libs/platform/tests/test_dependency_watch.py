"""A service's health follows its dependencies: NOT_SERVING while a probe fails, and a metric
naming the dependency that failed (``rummy_platform.dependencies``)."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from host_support import in_process_settings
from prometheus_client import CollectorRegistry
from psycopg_pool import ConnectionPool

from rummy_platform.dependencies import DependencyWatch, postgres_probe
from rummy_platform.server import ServiceHost

SERVICE = "rummy.ledger.v1.LedgerService"


class Switch:
    """A probe that fails while ``down`` is set."""

    def __init__(self) -> None:
        self.down = False

    def __call__(self) -> None:
        if self.down:
            raise ConnectionError("connection refused")


def health_of(host: ServiceHost, service: str = "") -> int:
    with grpc.insecure_channel(host.address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
    return int(reply.status)


def up(registry: CollectorRegistry, dependency: str) -> float | None:
    return registry.get_sample_value("rummy_dependency_up", {"dependency": dependency})


def test_health_is_not_serving_while_a_dependency_fails_and_the_metric_names_which() -> None:
    registry = CollectorRegistry()
    host = ServiceHost("probe", in_process_settings(), registry=registry)
    host.add_servicer(lambda _servicer, _server: None, None, SERVICE)
    postgresql, kafka = Switch(), Switch()
    watch = DependencyWatch(
        {"postgresql": postgresql, "kafka": kafka}, on_change=host.set_serving, registry=registry
    )
    host.start()
    try:
        assert (up(registry, "postgresql"), up(registry, "kafka")) == (1.0, 1.0)
        assert watch.check()
        assert health_of(host) == health_of(host, SERVICE) == health_pb2.HealthCheckResponse.SERVING

        kafka.down = True
        assert not watch.check()
        assert (
            health_of(host)
            == health_of(host, SERVICE)
            == health_pb2.HealthCheckResponse.NOT_SERVING
        )
        assert (up(registry, "postgresql"), up(registry, "kafka")) == (1.0, 0.0)
        assert watch.failing == {"kafka": "ConnectionError: connection refused"}

        postgresql.down = True
        kafka.down = False
        assert not watch.check()
        assert health_of(host) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert (up(registry, "postgresql"), up(registry, "kafka")) == (0.0, 1.0)

        postgresql.down = False
        assert watch.check()
        assert health_of(host) == health_of(host, SERVICE) == health_pb2.HealthCheckResponse.SERVING
        assert (up(registry, "postgresql"), up(registry, "kafka")) == (1.0, 1.0)
    finally:
        host.stop()


def test_a_dependency_lost_before_the_host_starts_keeps_it_not_serving_from_the_start() -> None:
    host = ServiceHost("probe", in_process_settings(), registry=CollectorRegistry())
    host.set_serving(False, "postgresql: connection refused")
    host.start()
    try:
        assert health_of(host) == health_pb2.HealthCheckResponse.NOT_SERVING
        host.set_serving(True)
        assert health_of(host) == health_pb2.HealthCheckResponse.SERVING
    finally:
        host.stop()


def test_a_probe_that_never_answers_fails_after_its_timeout_and_is_not_started_twice() -> None:
    release = threading.Event()
    calls: list[float] = []

    def stalled() -> None:  # a broker stopped with SIGSTOP: connected, never answering
        calls.append(time.monotonic())
        release.wait(30)

    changes: list[tuple[bool, str]] = []
    watch = DependencyWatch(
        {"kafka": stalled},
        on_change=lambda serving, reason: changes.append((serving, reason)),
        timeout_s=0.2,
        registry=CollectorRegistry(),
    )
    started = time.monotonic()
    assert not watch.check()
    assert time.monotonic() - started < 5
    assert changes == [(False, "kafka: no answer within 0.2 s")]
    assert not watch.check()  # still hung: failed at once, no second call piles up
    assert len(calls) == 1
    release.set()
    time.sleep(0.1)
    assert watch.check()
    assert changes[-1] == (True, "")
    assert len(calls) == 2


@pytest.mark.integration
def test_the_postgres_probe_answers_on_a_live_server_and_fails_within_its_timeout_on_a_dead_one(
    database_url: str,
) -> None:
    live = ConnectionPool(database_url, min_size=1, max_size=1, open=True)
    # Port 9 (discard) has nothing listening on loopback: every connection is refused.
    dead = ConnectionPool("postgresql://rummy:rummy@127.0.0.1:9/rummy", min_size=1, open=True)
    try:
        postgres_probe(live, timeout_s=3.0)()
        started = time.monotonic()
        with pytest.raises(Exception, match="couldn't get a connection"):
            postgres_probe(dead, timeout_s=0.5)()
        assert time.monotonic() - started < 3
    finally:
        live.close()
        dead.close(timeout=0)
