"""The gRPC server every service runs in: auth, metrics, logs, health, reflection, shutdown.

A service's bootstrap::

    settings = TableSettings.load_or_exit()   # the service's Settings, read once
    host = ServiceHost("table", settings)
    host.add_servicer(
        table_pb2_grpc.add_TableServiceServicer_to_server, servicer, "rummy.table.v1.TableService"
    )
    host.on_stopping(watch_hub.close_all)   # end long-lived streams so the drain is quick
    host.on_shutdown(consumer.close)
    host.serve_forever()          # returns after SIGTERM/SIGINT once drained

What it sets up: a thread-pool ``grpc.server`` (or, with ``aio=True``, a ``grpc.aio`` server on
an event loop of its own thread: see :class:`ServiceHost`) with the interceptors (metrics,
logging context, auth, rate limits, error mapping, request limits, outermost first; message
size limits from
:mod:`rummy_platform.limits`); ``grpc.health.v1.Health`` (SERVING for ``""`` and every
added service once started, NOT_SERVING while :meth:`ServiceHost.set_serving` says a dependency
is unreachable and from the moment shutdown begins); server reflection v1 and v1alpha
listing every service (``grpcurl -plaintext host:port list``; :mod:`rummy_platform.reflection`);
Prometheus ``/metrics`` on its own port; JSON logs. On SIGTERM or SIGINT it reports
NOT_SERVING, ends health Watch streams, runs the ``on_stopping`` hooks, stops accepting calls,
lets in-flight ones finish for ``settings.shutdown_grace_seconds`` (a second signal cancels
them at once), runs the ``on_shutdown`` hooks newest first, and returns. With
``RUMMY_SUPERVISOR_PID`` set (by ``rummy demo``/``rummy up``) the same shutdown starts when that
supervisor is gone (:class:`rummy_platform.service_main.SupervisorWatch`).
"""

from __future__ import annotations

import asyncio
import errno
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY, CollectorRegistry

from rummy_platform.auth import AuthInterceptor, TokenAuthority
from rummy_platform.config import Settings
from rummy_platform.errors import ErrorMappingInterceptor
from rummy_platform.limits import SERVER_OPTIONS, RequestLimitsInterceptor
from rummy_platform.logging import LoggingContextInterceptor, configure_logging, get_logger
from rummy_platform.metrics import MetricsInterceptor, grpc_metrics, start_metrics_server
from rummy_platform.port_check import PortInUse, exit_port_in_use, in_use, taken
from rummy_platform.ports import GRPC, METRICS
from rummy_platform.rate_limit import RateLimits
from rummy_platform.reflection import enable_server_reflection
from rummy_platform.rpc_scope import AioScopes, ScopeInterceptor
from rummy_platform.service_main import SupervisorWatch
from rummy_platform.tls import bind_grpc

AddServicerFn = Callable[[Any, grpc.Server], None]

#: Options of every host: a port another process listens on is never shared (gRPC's default
#: ``SO_REUSEPORT`` would let a second service on the same port take half its calls, silently).
BIND_OPTIONS: tuple[tuple[str, int], ...] = (("grpc.so_reuseport", 0),)

#: Options of an aio host besides the message limits. gRPC core cancels a call that arrives
#: while more than ``max_pending_requests`` (default 1000) calls wait for the application to
#: take them; the aio server takes them one at a time on its loop, so a burst of streams (10,000
#: spectators reconnecting at once: measured with ``bench/throughput.py --watchers 10000``, where
#: two thirds were CANCELLED) overflows it. The queue stays bounded, only deeper. Core also
#: cancels a call the application has not taken within ``server_max_unrequested_time_in_server``
#: (default 30 s): 10,000 spectators of 16 played tables (``--watchers 10000 --watch-played``)
#: arrive faster than a loop busy sending views takes them, and 5,336-6,650 of them ended
#: CANCELLED that way, unasked (2026-12-04; with 300 s none did). A caller's own deadline, not
#: the server, decides how long it waits for its stream.
AIO_SERVER_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.server.max_pending_requests", 20_000),
    ("grpc.server.max_pending_requests_hard_limit", 40_000),
    ("grpc.server_max_unrequested_time_in_server", 300),
)

_log = get_logger(__name__)


class ServiceHost:
    """One service process's gRPC server and ``/metrics`` endpoint.

    Creating it configures JSON logging at ``settings.log_level``. ``registry`` is the
    Prometheus registry served on the metrics port (the process-wide default unless a test
    needs its own).

    ``aio=True`` serves on ``grpc.aio`` instead, on an event loop in a thread of its own (the
    host's methods stay synchronous and thread-safe): the same interceptors (each scope is one
    piece of code for both servers, see :mod:`rummy_platform.rpc_scope`), health and reflection
    in their aio versions; a synchronous handler runs in a pool of ``settings.grpc_max_workers``
    threads, an ``async`` one (an async generator for a response stream) on the loop, so a
    long-lived stream costs memory, not a thread.
    """

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        registry: CollectorRegistry = REGISTRY,
        aio: bool = False,
    ) -> None:
        configure_logging(settings.log_level)
        self.name = name
        self.settings = settings
        self._registry = registry
        self._executor = ThreadPoolExecutor(
            max_workers=settings.grpc_max_workers, thread_name_prefix=f"{name}-grpc"
        )
        scopes, request_limits = service_interceptors(name, settings, registry)
        self._aio = _AioServer(name) if aio else None
        self._health: _HealthServicer | _AioHealthServicer
        if self._aio is not None:
            # One aio interceptor doing the work of all of them (rpc_scope.AioScopes).
            fused = AioScopes(
                [s.scope for s in scopes], self._executor, request_check=request_limits
            )
            self._server: Any = self._aio.create([fused], (*SERVER_OPTIONS, *BIND_OPTIONS))
            self._health = _AioHealthServicer()
        else:
            self._server = grpc.server(
                self._executor,
                interceptors=[*scopes, request_limits],
                options=[*SERVER_OPTIONS, *BIND_OPTIONS],
            )
            self._health = _HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        self._service_names: list[str] = []
        self._stopping_hooks: list[Callable[[], None]] = []
        self._shutdown_hooks: list[Callable[[], None]] = []
        self._metrics_server: Any = None
        self._stop_lock = threading.Lock()
        self._started = False
        self._stopped = False
        self._serving = True
        self.grpc_port: int | None = None
        self.metrics_port: int | None = None

    def add_servicer(
        self, add_fn: AddServicerFn, servicer: Any, service_full_name: str
    ) -> ServiceHost:
        """Register ``servicer`` with the generated ``add_<Service>Servicer_to_server``
        function ``add_fn``; ``service_full_name`` (``"rummy.table.v1.TableService"``) is the
        name health and reflection report. Call before :meth:`start`. Returns ``self``."""
        if self._started:
            raise RuntimeError("add_servicer must be called before the host starts")
        add_fn(servicer, self._server)
        self._service_names.append(service_full_name)
        return self

    def on_stopping(self, hook: Callable[[], None]) -> ServiceHost:
        """Run ``hook`` as soon as shutdown begins, before in-flight calls are awaited: the
        place to end long-lived response streams (a table watch) so the drain need not wait
        out the grace period. Hooks run in the order added. Returns ``self``."""
        self._stopping_hooks.append(hook)
        return self

    def on_shutdown(self, hook: Callable[[], None]) -> ServiceHost:
        """Run ``hook`` after the server has drained (close consumers, pools); hooks run
        newest first. Returns ``self``."""
        self._shutdown_hooks.append(hook)
        return self

    @property
    def address(self) -> str:
        """``host:port`` clients dial; valid after :meth:`start`."""
        if self.grpc_port is None:
            raise RuntimeError("the host has not started")
        return f"{_host_for_url(self.settings.bind_host)}:{self.grpc_port}"

    def start(self) -> None:
        """Bind both ports (0 = a free one; read :attr:`grpc_port`, :attr:`metrics_port`),
        start serving and report SERVING. Raises :class:`~rummy_platform.port_check.PortInUse`
        when another process holds a port (the host is then stopped: it never serves), and
        RuntimeError/OSError when a port cannot be bound for another reason."""
        if self._started:
            raise RuntimeError("the host has already started")
        self._started = True
        enable_server_reflection((*self._service_names, health.SERVICE_NAME), self._server)
        try:
            self._bind()
        except PortInUse:
            self._release()
            raise
        if self._aio is not None:
            self._aio.run(self._server.start())
        else:
            self._server.start()
        with self._stop_lock:
            self._report_health()
        _log.info(
            "service started",
            service=self.name,
            grpc_port=self.grpc_port,
            metrics_port=self.metrics_port,
            services=self._service_names,
            tls=self.settings.tls_enabled,
        )
        if self.settings.insecure:
            _log.warning(
                "INSECURE: RUMMY_INSECURE=1, gRPC is plaintext and no certificate is checked",
                service=self.name,
            )

    def _bind(self) -> None:
        """Bind the gRPC port, then the metrics port; one another process holds (taken since
        the settings checked it) raises :class:`PortInUse` naming it and its holder."""
        grpc_wanted, metrics_wanted = map(self.settings.listening_port, (GRPC, METRICS))
        host = _host_for_url(self.settings.bind_host)
        failure: RuntimeError | None = None
        try:
            port = bind_grpc(self._server, f"{host}:{self.settings.grpc_port}", self.settings)
        except RuntimeError as error:  # grpc's "Failed to bind to address"
            port, failure = 0, error
        if port == 0:
            if grpc_wanted is not None and in_use(self.settings.bind_host, grpc_wanted.port):
                raise taken(grpc_wanted) from None
            address = f"{host}:{self.settings.grpc_port}"
            raise failure or RuntimeError(f"could not bind gRPC to {address}")
        self.grpc_port = port
        try:
            self._metrics_server = start_metrics_server(
                self.settings.metrics_port, self.settings.bind_host, self._registry
            )
        except OSError as error:
            if metrics_wanted is not None and error.errno == errno.EADDRINUSE:
                raise taken(metrics_wanted) from None
            raise
        self.metrics_port = int(self._metrics_server.server_port)

    def _release(self) -> None:
        """After a failed bind: never serve, run the ``on_shutdown`` hooks (the consumers and
        loops that ``build`` started), end the aio loop; :meth:`stop` does nothing after it."""
        with self._stop_lock:
            self._stopped = True
        if self._aio is not None:
            self._aio.close()
        self._executor.shutdown(wait=False)
        _run_hooks(reversed(self._shutdown_hooks))

    def set_serving(self, serving: bool, reason: str = "") -> None:
        """Report gRPC health SERVING (``serving``) or NOT_SERVING for ``""`` and every added
        service: the service lost or regained what it needs (``reason`` is logged; see
        :class:`rummy_platform.dependencies.DependencyWatch`). Before :meth:`start` the choice is
        kept for it; once shutdown has begun, health stays NOT_SERVING."""
        with self._stop_lock:
            changed = serving != self._serving
            self._serving = serving
            if self._started and not self._stopped:
                self._report_health()
        if changed and serving:
            _log.info("health: serving again", service=self.name)
        elif changed:
            _log.warning("health: not serving", service=self.name, reason=reason)

    def _report_health(self) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if self._serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        services = ("", *self._service_names)
        if isinstance(self._health, _AioHealthServicer):
            assert self._aio is not None
            self._aio.submit(self._health.set_all(services, status))
            return
        for service in services:
            self._health.set(service, status)

    def stop(
        self, grace_seconds: float | None = None, hurry: threading.Event | None = None
    ) -> None:
        """Report NOT_SERVING, end health watches, run the ``on_stopping`` hooks, refuse new
        calls, give in-flight ones ``grace_seconds`` (default
        ``settings.shutdown_grace_seconds``) or until ``hurry`` is set, then run the
        ``on_shutdown`` hooks newest first and close ``/metrics``. Idempotent.

        Raises RuntimeError naming the hooks that failed (each is still attempted).
        """
        with self._stop_lock:
            if self._stopped or not self._started:
                self._stopped = True
                return
            self._stopped = True
        grace = self.settings.shutdown_grace_seconds if grace_seconds is None else grace_seconds
        _log.info("service stopping", service=self.name, grace_seconds=grace)
        if isinstance(self._health, _AioHealthServicer):
            assert self._aio is not None
            self._aio.run(self._health.shut_down())
        else:
            self._health.enter_graceful_shutdown()
            self._health.end_watches()
        failed = _run_hooks(self._stopping_hooks)
        done: Callable[[], bool]
        if self._aio is not None:
            drained: Any = self._aio.submit(self._server.stop(grace))
            done = lambda: bool(drained.done())  # noqa: E731
        else:
            event = self._server.stop(grace)
            done = event.is_set
        hurried = False
        while not done():
            time.sleep(0.05)
            if hurry is not None and hurry.is_set() and not hurried:
                _log.warning("second signal: cancelling in-flight calls", service=self.name)
                if self._aio is not None:
                    self._aio.submit(self._server.stop(0))
                else:
                    self._server.stop(0)
                hurried = True
        if self._aio is not None:
            self._aio.close()
        self._executor.shutdown(wait=False)
        failed += _run_hooks(reversed(self._shutdown_hooks))
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        _log.info("service stopped", service=self.name)
        if failed:
            raise RuntimeError(f"shutdown hooks failed: {', '.join(failed)}")

    def serve_forever(self) -> None:
        """Start, serve until SIGTERM or SIGINT (or, with ``settings.supervisor_pid``, until
        this process's parent is no longer that supervisor), then :meth:`stop` and return (so
        the process exits 0). A second signal during the drain cancels in-flight calls. A port
        in use ends it with ``Error: port ... is in use ...`` on stderr and status 2
        (:func:`rummy_platform.port_check.exit_port_in_use`), never a traceback. Must run in
        the main thread (Python delivers signals there)."""
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("serve_forever must run in the main thread to receive signals")
        stop_requested = threading.Event()
        hurry = threading.Event()

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            if stop_requested.is_set():
                hurry.set()
            else:
                _log.info("signal received", signal=signal.Signals(signum).name)
                stop_requested.set()

        watch = self._supervisor_watch(stop_requested)
        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        refused: PortInUse | None = None
        try:
            if watch is not None:
                watch.start()
            self.start()
            while not stop_requested.wait(0.5):
                pass
        except PortInUse as error:
            refused = error
        finally:
            try:
                self.stop(hurry=hurry)
            finally:
                if watch is not None:
                    watch.stop()
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        if refused is not None:
            exit_port_in_use(refused)

    def _supervisor_watch(self, stop_requested: threading.Event) -> SupervisorWatch | None:
        """With ``settings.supervisor_pid``: a watch that requests the shutdown when the
        supervisor is gone, and exits the process if it takes longer than the grace period
        plus 30 s."""
        if self.settings.supervisor_pid is None:
            return None
        return SupervisorWatch(
            self.settings.supervisor_pid,
            stop_requested.set,
            exit_after_s=self.settings.shutdown_grace_seconds + 30.0,
        )


def service_interceptors(
    name: str, settings: Settings, registry: CollectorRegistry = REGISTRY
) -> tuple[list[ScopeInterceptor], RequestLimitsInterceptor]:
    """The scopes of every call of a host, outermost first (metrics, logging context, auth,
    rate limits, error mapping), and the request limits checked inside them."""
    rate_limits = RateLimits(settings.rate_limits, registry=registry)
    scopes: list[ScopeInterceptor] = [
        MetricsInterceptor(grpc_metrics(registry)),
        LoggingContextInterceptor(name),
        AuthInterceptor(
            TokenAuthority.from_settings(settings),
            on_refused=rate_limits.refuse_unauthenticated,
            tls=settings.tls_enabled,
        ),
        rate_limits.interceptor(),
        ErrorMappingInterceptor(),
    ]
    return scopes, RequestLimitsInterceptor()


class _HealthServicer(health.HealthServicer):
    """grpcio-health-checking's servicer, plus ending every Watch stream at shutdown (a
    client watching health would otherwise hold the drain open for the whole grace period)."""

    def end_watches(self) -> None:
        # The library keeps one send-response callback per watch; None ends that stream.
        with self._lock:  # type: ignore[attr-defined]  # the library's private state, not in its stubs
            for callbacks in self._send_response_callbacks.values():  # type: ignore[attr-defined]  # same
                for send_response in list(callbacks):
                    send_response(None)


class _WatchEnded(Exception):
    pass


class _EndAfterShutdownWrite:
    """A Watch's context whose ``write`` ends the stream once shutdown has begun (after the
    NOT_SERVING status it was woken for is written)."""

    def __init__(self, context: Any, servicer: _AioHealthServicer) -> None:
        self._context = context
        self._servicer = servicer

    async def write(self, message: Any) -> None:
        await self._context.write(message)
        if self._servicer.shutting_down:
            raise _WatchEnded

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class _AioHealthServicer(health.aio.HealthServicer):
    """grpcio-health-checking's aio servicer, plus ending every Watch stream at shutdown (after
    it sent NOT_SERVING), like the thread-pool host's."""

    def __init__(self) -> None:
        super().__init__()
        self._watches: set[asyncio.Task[Any]] = set()

    @property
    def shutting_down(self) -> bool:
        return bool(self._gracefully_shutting_down)  # type: ignore[attr-defined]  # private, not in its stubs

    async def Watch(self, request: Any, context: Any) -> None:  # noqa: N802 - gRPC's name
        task = asyncio.current_task()
        assert task is not None
        self._watches.add(task)
        try:
            wrapped = _EndAfterShutdownWrite(context, self)
            await super().Watch(request, wrapped)  # type: ignore[arg-type]  # a proxy of the context
        except _WatchEnded:
            return
        finally:
            self._watches.discard(task)

    async def set_all(self, services: Iterable[str], status: Any) -> None:
        for service in services:
            await self.set(service, status)

    async def shut_down(self, wait_s: float = 1.0) -> None:
        """NOT_SERVING for every service from now on; every Watch stream ends once it sent it
        (one still open after ``wait_s``, e.g. of a service never registered, is cancelled)."""
        await self.enter_graceful_shutdown()
        deadline = time.monotonic() + wait_s
        while self._watches and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        for task in list(self._watches):
            task.cancel()


class _AioServer:
    """An event loop in a daemon thread of its own, and the ``grpc.aio`` server on it."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"{name}-aio", daemon=True
        )
        self._thread.start()

    def create(self, interceptors: list[Any], options: Iterable[tuple[str, int]]) -> Any:
        async def make() -> grpc.aio.Server:
            return grpc.aio.server(
                interceptors=interceptors, options=[*options, *AIO_SERVER_OPTIONS]
            )

        return self.run(make())

    def submit(self, coroutine: Any) -> Any:
        """Schedule ``coroutine`` on the loop; returns its concurrent future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def run(self, coroutine: Any) -> Any:
        """Run ``coroutine`` on the loop and return its result (never call from the loop)."""
        return self.submit(coroutine).result()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def _run_hooks(hooks: Iterable[Callable[[], None]]) -> list[str]:
    """Run each hook, logging any that raises; return the names of those that failed."""
    failed = []
    for hook in hooks:
        try:
            hook()
        except Exception:
            name = getattr(hook, "__qualname__", repr(hook))
            _log.exception("shutdown hook failed", hook=name)
            failed.append(name)
    return failed


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
