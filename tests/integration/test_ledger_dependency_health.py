"""The ledger process loses PostgreSQL: its gRPC health turns NOT_SERVING, ``/metrics`` says
which dependency is down, and both recover by themselves once the database answers again.

The ledger reaches the real PostgreSQL through a TCP relay in the test (the shared server is
never stopped): cutting the relay closes every connection and refuses new ones, as a database
restart does; reopening it on the same port is the database coming back.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rummy_testing.service_process import IsolatedRun, ServiceProcess, isolated_run, start_service
from rummy_testing.waiting import wait_until

#: slow: a ledger process behind a relay that cuts PostgreSQL (docs/testing.md#tests).
pytestmark = [pytest.mark.integration, pytest.mark.slow]

LEDGER = "rummy.ledger.v1.LedgerService"
TIMEOUT_S = 40.0


class Relay:
    """Forwards ``127.0.0.1:<port>`` to ``target`` until :meth:`cut`; :meth:`restore` listens
    on the same port again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._serve(self._server)

    def _serve(self, server: socket.socket) -> None:
        def accept() -> None:
            while True:
                try:
                    client, _ = server.accept()
                except OSError:
                    return
                try:
                    upstream = socket.create_connection(self._target, timeout=5)
                except OSError:
                    client.close()
                    continue
                upstream.settimeout(None)
                with self._lock:
                    self._sockets += [client, upstream]
                for source, sink in ((client, upstream), (upstream, client)):
                    threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                end.close()

    def cut(self) -> None:
        # shutdown() wakes the thread blocked in accept() (close() alone leaves it accepting).
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with self._lock:
            for end in self._sockets:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
            self._sockets.clear()

    def restore(self) -> None:
        self._server = socket.create_server(("127.0.0.1", self.port), reuse_port=False)
        self._serve(self._server)


def through(relay: Relay, database_url: str) -> str:
    parts = urlsplit(database_url)
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{relay.port}"
    return parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host).geturl()


@pytest.fixture()
def run(kafka_bootstrap: str, database_url: str) -> Iterator[IsolatedRun]:
    with isolated_run(kafka_bootstrap, database_url, "ledger_health", IsolatedRun) as r:
        yield r


@pytest.fixture()
def relay(run: IsolatedRun) -> Iterator[Relay]:
    parts = urlsplit(run.database_url)
    relay = Relay((parts.hostname or "127.0.0.1", parts.port or 5432))
    yield relay
    relay.cut()


def health(ledger: ServiceProcess, service: str = "") -> int:
    with ledger.channel() as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
    return int(reply.status)


def wait_for(what: str, condition: Callable[[], bool]) -> float:
    """Seconds until ``condition()`` held (polled every 0.2 s); fails after TIMEOUT_S."""
    started = time.monotonic()
    wait_until(what, condition, TIMEOUT_S, every_s=0.2)
    return time.monotonic() - started


def test_the_ledger_is_not_serving_while_postgresql_is_unreachable_and_serves_again_after(
    run: IsolatedRun, relay: Relay
) -> None:
    ledger = start_service(
        "rummy_ledger",
        run.env(DATABASE_URL=through(relay, run.database_url)),
        health_service=LEDGER,
    )
    postgresql = 'rummy_dependency_up{dependency="postgresql"}'
    kafka = 'rummy_dependency_up{dependency="kafka"}'
    try:
        assert (ledger.metric(postgresql), ledger.metric(kafka)) == (1.0, 1.0)
        assert ledger.metric("rummy_ledger_journal_sum_hundredths") == 0.0

        relay.cut()
        down_s = wait_for(
            "NOT_SERVING", lambda: health(ledger) == health_pb2.HealthCheckResponse.NOT_SERVING
        )
        assert health(ledger, LEDGER) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert (ledger.metric(postgresql), ledger.metric(kafka)) == (0.0, 1.0)
        with pytest.raises(AssertionError, match="not in /metrics"):
            ledger.metric("rummy_ledger_journal_sum_hundredths")  # RummyLedgerGaugesMissing

        relay.restore()
        up_s = wait_for(
            "SERVING again", lambda: health(ledger) == health_pb2.HealthCheckResponse.SERVING
        )
        assert ledger.metric(postgresql) == 1.0
        assert ledger.metric("rummy_ledger_journal_sum_hundredths") == 0.0
        print(f"NOT_SERVING {down_s:.1f} s after the cut, SERVING {up_s:.1f} s after the restore")
    except AssertionError:
        print("".join(line for line in ledger.lines if "dependency" in line or "health" in line))
        raise
    finally:
        ledger.stop()
