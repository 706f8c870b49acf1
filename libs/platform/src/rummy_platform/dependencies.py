"""Whether a service can reach what it depends on (PostgreSQL, Kafka), checked by probes.

::

    watch = watch_dependencies(
        loops,
        {
            "postgresql": postgres_probe(pool),
            "kafka": kafka_probe(bootstrap_servers, client_id="ledger-probe"),
            "kafka-writer": writer.ready,       # the transactional writer can write
        },
        on_change=host.set_serving,
    )

Every service watches Kafka (a metadata round trip) and, if it has one, its transactional
writer (``kafka-writer``: fails while the writer's producer is broken and being recreated after a
broker stall, see :class:`rummy_platform.eventlog.kafka_writer.KafkaTransactionalWriter`; each check
is also a recovery attempt); the ledger and fairness watch PostgreSQL too.

Every ``interval_s`` seconds each probe runs (a probe is a callable that returns when the
dependency answered and raises when it did not); a probe that has not returned after
``timeout_s`` (a stalled broker keeps the connection open and never answers) counts as failed,
and is not started again until that call returns. While any probe fails,
``on_change(False, reason)`` has been called (the host reports gRPC health NOT_SERVING) and
``rummy_dependency_up{dependency}`` is 0 for each failing one (1 otherwise, every dependency
exported from the start); when all answer again, ``on_change(True, "")``. One log line per change
of a dependency's state, with the probe's error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from prometheus_client import REGISTRY, CollectorRegistry, Gauge
from psycopg_pool import ConnectionPool

from rummy_platform.eventlog import cluster_probe
from rummy_platform.logging import get_logger
from rummy_platform.service_main import BackgroundLoops

_log = get_logger(__name__)

#: Returns when the dependency answered; raises (any exception) when it did not.
Probe = Callable[[], None]
#: ``(serving, reason)``: reason names the failing dependencies and their errors ("" if none).
OnChange = Callable[[bool, str], None]


class DependencyWatch:
    """Runs the probes, keeps ``rummy_dependency_up{dependency}`` and tells ``on_change`` when
    the service as a whole becomes able or unable to serve."""

    def __init__(
        self,
        probes: Mapping[str, Probe],
        *,
        on_change: OnChange,
        interval_s: float = 2.0,
        timeout_s: float = 5.0,
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        if not probes:
            raise ValueError("a dependency watch needs at least one probe")
        self._probes = dict(probes)
        self._on_change = on_change
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._hung: dict[str, threading.Thread] = {}
        self._up = Gauge(
            "rummy_dependency_up",
            "1 while the service's probe of the dependency answers, 0 while it fails",
            ["dependency"],
            registry=registry,
        )
        self._failing: dict[str, str] = {}
        for name in self._probes:
            self._up.labels(name).set(1)

    @property
    def failing(self) -> Mapping[str, str]:
        """``{dependency: error}`` of the probes that failed on the last check."""
        return dict(self._failing)

    def check(self) -> bool:
        """Run every probe once; True when all answered."""
        was_serving = not self._failing
        for name, probe in self._probes.items():
            error = self._probe(name, probe)
            if error is not None:
                if name not in self._failing:
                    _log.warning("dependency unreachable", dependency=name, error=error)
                self._failing[name] = error
                self._up.labels(name).set(0)
            else:
                if self._failing.pop(name, None) is not None:
                    _log.info("dependency reachable again", dependency=name)
                self._up.labels(name).set(1)
        serving = not self._failing
        if serving != was_serving:
            reason = "; ".join(f"{name}: {error}" for name, error in sorted(self._failing.items()))
            self._on_change(serving, reason)
        return serving

    def _probe(self, name: str, probe: Probe) -> str | None:
        """Run ``probe`` in a thread of its own for at most ``timeout_s``; its error or None."""
        hung = self._hung.get(name)
        if hung is not None and hung.is_alive():
            return f"no answer for more than {self._timeout_s:g} s"
        errors: list[str] = []

        def body() -> None:
            try:
                probe()
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")

        thread = threading.Thread(target=body, name=f"probe-{name}", daemon=True)
        thread.start()
        thread.join(self._timeout_s)
        if thread.is_alive():
            self._hung[name] = thread
            return f"no answer within {self._timeout_s:g} s"
        self._hung.pop(name, None)
        return errors[0] if errors else None

    def run(self, stop: threading.Event) -> None:
        """Check every ``interval_s`` seconds until ``stop`` is set (a BackgroundLoops loop)."""
        while not stop.is_set():
            self.check()
            stop.wait(self._interval_s)


def postgres_probe(pool: ConnectionPool, *, timeout_s: float = 3.0) -> Probe:
    """A probe that takes a connection of ``pool`` (waiting at most ``timeout_s``: PoolTimeout
    while the server is down) and runs ``SELECT 1`` on it."""

    def probe() -> None:
        with pool.connection(timeout=timeout_s) as conn:
            conn.execute("SELECT 1")

    return probe


def kafka_probe(
    bootstrap_servers: str, *, client_id: str = "rummy-probe", timeout_s: float = 3.0
) -> Probe:
    """A probe asking the brokers ``host:port[,host:port]`` for the cluster's metadata (see
    :func:`rummy_platform.eventlog.cluster_probe`), each request timing out after ``timeout_s``
    seconds."""
    return cluster_probe(bootstrap_servers, client_id=client_id, timeout_s=timeout_s)


def watch_dependencies(
    loops: BackgroundLoops,
    probes: Mapping[str, Probe],
    *,
    on_change: OnChange,
    interval_s: float = 2.0,
    timeout_s: float = 5.0,
) -> DependencyWatch:
    """A :class:`DependencyWatch` of ``probes`` (in the default registry) checking every
    ``interval_s`` seconds in a loop of ``loops`` named ``dependencies``."""
    watch = DependencyWatch(probes, on_change=on_change, interval_s=interval_s, timeout_s=timeout_s)
    loops.start("dependencies", watch.run)
    return watch
