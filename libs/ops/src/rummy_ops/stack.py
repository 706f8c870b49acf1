"""A process supervisor for the whole backend: infrastructure, five services, health, shutdown.

::

    with Stack(StackConfig.from_env(root)) as stack:     # starts everything, waits for SERVING
        channel = open_channel(stack.address("table"))
        ...
    # on leaving the block (normally, on Ctrl-C or on an error) every service is stopped, then the
    # local brokers if this stack started them

Infrastructure: when ``KAFKA_BOOTSTRAP_SERVERS`` and ``DATABASE_URL`` are both set, those servers
are used and never started or stopped; otherwise ``deploy/local/stack.sh up`` starts the local
Kafka and PostgreSQL (reusing running ones) and ``stack.sh down`` stops them at the end, but only
if they were not already running before.

Topics: with ``create_topics`` the five event topics (under ``RUMMY_TOPIC_PREFIX`` of
``extra_env``, if any) are created once before any service starts, so the services never race to
create them.

Services: each runs as ``python -m rummy_<name>`` in its own process group with the environment
``KAFKA_BOOTSTRAP_SERVERS``, ``DATABASE_URL``, the token keys' files (the public keys and the
services' private key, :meth:`~rummy_platform.token_keys.KeyFiles.service_environment`; never
the issuer's private key), ``RUMMY_GRPC_PORT``, ``RUMMY_METRICS_PORT``, ``RUMMY_CLOCK_SPEED``
and ``RUMMY_<SERVICE>_ADDRESS`` (host:port of every service, for the ones that call each other),
plus ``StackConfig.extra_env`` (e.g. ``RUMMY_TOPIC_PREFIX`` in tests). With ``StackConfig.tls_dir``
(:meth:`StackConfig.from_env`'s default: ``.local/certs``, unless ``RUMMY_INSECURE=1``) each also
gets ``RUMMY_TLS_CA_FILE``, ``RUMMY_TLS_CERT_FILE`` and ``RUMMY_TLS_KEY_FILE`` of its own
certificate (made there on first use, :mod:`rummy_ops.certs`), so every port serves mutual TLS;
without it the ``RUMMY_TLS_*`` variables are removed and gRPC is plaintext. With
``StackConfig.kafka_credentials`` (a secured broker's password files and CA) each connects to
Kafka over SASL_SSL as its own principal (``RUMMY_KAFKA_*`` of
:meth:`~rummy_platform.eventlog.KafkaCredentials.environment`), and the topics are created as the
table's; without it those variables are removed (plaintext). Their output goes to
``<log_dir>/<service>.log``. A service is up when its gRPC health check answers SERVING for the
whole server (service name ``""``).

PostgreSQL security (issue 32, opt-in): with ``RUMMY_PG_TLS=1`` in this process's environment
the local cluster serves TLS only (``deploy/local/postgres.sh``), and each service that keeps
state there (ledger, fairness) gets its own runtime role as ``DATABASE_URL`` and its schema's
owner as ``RUMMY_DATABASE_OWNER_URL`` (``postgres.sh roles``; passwords in a pgpass file, never
in a URL), both with ``sslmode=verify-full``; the tools' ``DATABASE_URL`` is role rummy's over
TLS. External servers are used as given.

Kafka security (issue 32, opt-in): with ``RUMMY_KAFKA_SECURE=1`` the local broker is the secured
one (``deploy/local/kafka.sh``: SASL_SSL/SCRAM, ACLs), :meth:`StackConfig.from_env` gives the
stack its credentials (:func:`local_kafka_credentials`), so each service connects as its own
principal, and the ACLs of the stack's topic prefix are made once the broker answers
(``kafka.sh acls``).

Supervision: unless ``StackConfig.supervised`` is off, every service also gets
``RUMMY_SUPERVISOR_PID``, the pid of the process running this stack. A service shuts down
gracefully (as on SIGTERM) within about half a second of its parent no longer being that process,
so services never outlive a supervisor that was SIGKILLed or crashed (no orphans holding the
ports). A stack meant to be left running after this process exits (``rummy demo
--keep-running``, :meth:`Stack.detach`) must be built with ``supervised=False``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType, TracebackType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rummy_ops.certs import TLS_VARIABLES, cert_files, ensure_certs, local_certs_dir
from rummy_platform.config import (
    SIGNING_KEY_VARIABLE,
    SUPERVISOR_PID_VARIABLE,
    ConfigError,
    TlsSettings,
)
from rummy_platform.eventlog import (
    KAFKA_SECURITY_VARIABLES,
    EventLogError,
    KafkaCredentials,
    KafkaEventLog,
)
from rummy_platform.limits import open_channel
from rummy_platform.port_check import ensure_free
from rummy_platform.ports import (
    DEFAULT_PORTS,
    GRPC,
    KAFKA_CONTROLLER_PORT,
    KAFKA_CONTROLLER_PORT_VARIABLE,
    KAFKA_PORT,
    KAFKA_PORT_VARIABLE,
    METRICS,
    POSTGRES_PORT,
    POSTGRES_PORT_VARIABLE,
    ListeningPort,
    service_listener,
    stack_port_variable,
)
from rummy_platform.token_keys import KeyFiles, ensure_key_files
from rummy_platform.topics import event_topic_specs

#: The five services, in the order they are started (stopped in reverse).
SERVICES: tuple[str, ...] = ("ledger", "fairness", "dealer", "clock", "table")
HOST = "127.0.0.1"
#: ``1``: the local PostgreSQL serves TLS only and each service gets its own roles (opt-in).
PG_TLS_VARIABLE = "RUMMY_PG_TLS"
#: ``1``: the local Kafka broker is the secured one, each service its own principal (opt-in).
KAFKA_SECURE_VARIABLE = "RUMMY_KAFKA_SECURE"


class StackError(RuntimeError):
    """The stack could not be started; the message names the part and where its log is."""


def repository_root() -> Path:
    """The checkout this package runs from (the directory holding ``deploy/local/stack.sh``).

    Raises StackError when this package is not installed from a checkout.
    """
    for parent in Path(__file__).resolve().parents:
        if (parent / "deploy" / "local" / "stack.sh").is_file():
            return parent
    raise StackError("cannot find the repository root (deploy/local/stack.sh) above rummy_ops")


#: Listening ports for a second stack are drawn below the kernel's ephemeral range, so an
#: outgoing connection (a Kafka client's, say) cannot take one between the draw and the bind.
_LISTEN_PORTS = (10_000, 32_767)
_handed_out: set[int] = set()
_rng = random.SystemRandom()  # not the seeded module state: two processes draw differently


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


#: ``low-high``: the ports :func:`free_port` draws from instead (both included), e.g. a block
#: of a machine shared by several checkouts' test runs.
FREE_PORTS_VARIABLE = "RUMMY_FREE_PORTS"


def _listen_ports() -> tuple[int, int]:
    raw = os.environ.get(FREE_PORTS_VARIABLE, "").strip()
    if not raw:
        return _LISTEN_PORTS[0], min(_LISTEN_PORTS[1], _ephemeral_low() - 1)
    low, _, high = raw.partition("-")
    try:
        bounds = int(low), int(high)
    except ValueError:
        bounds = (0, 0)
    if not 1 <= bounds[0] <= bounds[1] <= 65_535:
        raise StackError(f"{FREE_PORTS_VARIABLE}={raw!r}: expected low-high, 1 <= low <= high")
    return bounds


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for tests running a second stack):
    below the ephemeral range (or in ``RUMMY_FREE_PORTS``' range), and never one this process
    handed out before (two services of one stack never get the same one). Raises StackError
    for a malformed ``RUMMY_FREE_PORTS``, or one with no port free."""
    low, high = _listen_ports()
    for _ in range(200):
        port = _rng.randint(low, high)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind((HOST, port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    if os.environ.get(FREE_PORTS_VARIABLE, "").strip():
        raise StackError(f"no free port found in {FREE_PORTS_VARIABLE}={low}-{high}")
    with socket.socket() as sock:  # a crowded range: let the kernel choose
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_setting(environ: Mapping[str, str], variable: str, default: int) -> int:
    """The port ``variable`` of ``environ`` names (``default`` when unset or empty). Raises
    StackError naming the variable for anything but 1..65535."""
    raw = environ.get(variable, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise StackError(f"{variable}={raw[:40]!r}: a TCP port 1..65535")
    return int(raw)


def environment_port(variable: str, default: int) -> int:
    """:func:`port_setting` of this process's environment (``rummy up``'s
    ``RUMMY_PROMETHEUS_PORT``)."""
    return port_setting(os.environ, variable, default)


def stack_ports(environ: Mapping[str, str]) -> dict[str, tuple[int, int]]:
    """Service -> (gRPC port, metrics port) of ``rummy demo``/``rummy up``: the table's
    (``rummy_platform.ports.DEFAULT_PORTS``), each moved by ``RUMMY_<SERVICE>_GRPC_PORT`` /
    ``RUMMY_<SERVICE>_METRICS_PORT`` of ``environ``. Raises StackError for a malformed one."""
    return {
        service: (
            port_setting(environ, stack_port_variable(service, GRPC), grpc_port),
            port_setting(environ, stack_port_variable(service, METRICS), metrics_port),
        )
        for service, (grpc_port, metrics_port) in DEFAULT_PORTS.items()
    }


def broker_ports(environ: Mapping[str, str]) -> dict[str, tuple[ListeningPort, ...]]:
    """``kafka`` / ``postgres`` -> the ports ``deploy/local`` starts that broker on, as
    ``deploy/local/lib.sh`` reads them (``RUMMY_KAFKA_PORT``, ``RUMMY_KAFKA_CONTROLLER_PORT``,
    ``RUMMY_PG_PORT``, else the table's). Raises StackError for a malformed one."""

    def port(variable: str, default: int, listener: str) -> ListeningPort:
        return ListeningPort(port_setting(environ, variable, default), listener, variable)

    return {
        "kafka": (
            port(KAFKA_PORT_VARIABLE, KAFKA_PORT, "the local Kafka broker"),
            port(
                KAFKA_CONTROLLER_PORT_VARIABLE,
                KAFKA_CONTROLLER_PORT,
                "the local Kafka broker's controller",
            ),
        ),
        "postgres": (port(POSTGRES_PORT_VARIABLE, POSTGRES_PORT, "the local PostgreSQL server"),),
    }


def insecure_requested() -> bool:
    """True when this process's ``RUMMY_INSECURE`` asks for plaintext gRPC (read as the
    services read it, :class:`~rummy_platform.config.TlsSettings`): a stack of
    :meth:`StackConfig.from_env` then serves no TLS. Raises StackError for a malformed value."""
    try:
        settings = TlsSettings.load(tls_ca_file=None, tls_cert_file=None, tls_key_file=None)
    except ConfigError as error:
        raise StackError(str(error)) from None
    return settings.insecure


def local_token_keys(root: Path) -> KeyFiles:
    """The token keys in ``<root>/.local/token-keys/``, each key pair made (private key mode
    600) if missing; shared by every ``rummy demo`` / ``rummy up`` run and ``rummy token``."""
    return ensure_key_files(root / ".local" / "token-keys")


@dataclass(frozen=True)
class StackConfig:
    """What to start and how.

    ``ports``: service -> (gRPC port, metrics port); default the table's
    (``rummy_platform.ports``), moved by ``RUMMY_<SERVICE>_GRPC_PORT`` / ``_METRICS_PORT``
    in :meth:`from_env`.
    ``clock_speed``: how many times faster than real time turn deadlines pass
    (``RUMMY_CLOCK_SPEED``).
    ``kafka_bootstrap_servers`` / ``database_url``: external infrastructure; both None = the local
    brokers of ``deploy/local/stack.sh``. ``health_timeout_seconds``: how long each service gets to
    answer SERVING. ``stop_grace_seconds``: how long a service gets to exit after SIGTERM before
    SIGKILL. ``create_topics``: create the event topics once before starting the services (set
    by :meth:`from_env` and :func:`stack_for_tests`; off for supervisor tests without brokers).
    ``token_keys``: the token key files (None: for a stack that starts no service).
    ``supervised``: give the services ``RUMMY_SUPERVISOR_PID`` (this process's pid) so they end
    when this process is gone; off only for a stack to be detached and left running.
    ``tls_dir``: the certificates' folder (``.local/certs``; made on first use): gRPC over
    mutual TLS; None: plaintext (:meth:`from_env` sets it unless ``RUMMY_INSECURE=1``).
    ``kafka_credentials``: a secured broker's (``RUMMY_KAFKA_SECURE=1``) password files and CA:
    each service connects as its own principal; None: plaintext Kafka.
    """

    root: Path
    token_keys: KeyFiles | None
    log_dir: Path
    services: tuple[str, ...] = SERVICES
    ports: Mapping[str, tuple[int, int]] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    clock_speed: float = 1.0
    kafka_bootstrap_servers: str | None = None
    database_url: str | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    health_timeout_seconds: float = 90.0
    stop_grace_seconds: float = 15.0
    log_level: str = "info"
    create_topics: bool = False
    supervised: bool = True
    tls_dir: Path | None = None
    kafka_credentials: KafkaCredentials | None = None

    @classmethod
    def from_env(cls, root: Path | None = None, **overrides: object) -> StackConfig:
        """A config for the checkout ``root`` (default: this one) from the environment:
        ``KAFKA_BOOTSTRAP_SERVERS`` + ``DATABASE_URL`` (external when both are set),
        the token keys of ``.local/token-keys/`` (made on first use), the services' ports
        (:func:`stack_ports`), logs in ``.local/logs``, gRPC over mutual TLS with the
        certificates of ``.local/certs`` (``tls_dir``; None, plaintext, with ``RUMMY_INSECURE=1``:
        :func:`insecure_requested`), and with ``RUMMY_KAFKA_SECURE=1`` and the local brokers
        the secured broker's :func:`local_kafka_credentials`. ``overrides`` replace any field.
        Raises StackError for a malformed port variable or ``RUMMY_INSECURE``."""
        root = root or repository_root()
        kafka = os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or None
        database = os.environ.get("DATABASE_URL") or None
        external = kafka is not None and database is not None
        config = cls(
            root=root,
            token_keys=local_token_keys(root),
            log_dir=root / ".local" / "logs",
            ports=stack_ports(os.environ),
            kafka_bootstrap_servers=kafka if external else None,
            database_url=database if external else None,
            create_topics=True,
            tls_dir=None if insecure_requested() else local_certs_dir(root),
            kafka_credentials=(
                local_kafka_credentials(root)
                if os.environ.get(KAFKA_SECURE_VARIABLE) == "1" and not external
                else None
            ),
        )
        return replace(config, **overrides)  # type: ignore[arg-type]

    @property
    def keys(self) -> KeyFiles:
        """:attr:`token_keys`; raises StackError if the config has none."""
        if self.token_keys is None:
            raise StackError("this stack has no token keys: it can start no service")
        return self.token_keys

    @property
    def external_infrastructure(self) -> bool:
        """True when Kafka and PostgreSQL are given (never started or stopped here)."""
        return self.kafka_bootstrap_servers is not None and self.database_url is not None

    def address(self, service: str) -> str:
        """``127.0.0.1:<gRPC port>`` of ``service``."""
        return f"{HOST}:{self.ports[service][0]}"

    def service_env(
        self, service: str, kafka: str, database_url: str, base: Mapping[str, str]
    ) -> dict[str, str]:
        """The environment ``service`` runs with: ``base`` plus the variables of the module doc
        (``RUMMY_SUPERVISOR_PID`` is the pid of the calling process when ``supervised``, and
        removed otherwise). The issuer's private key is never among them, even if ``base``
        names it. Raises StackError if the config has no token keys."""
        keys = self.keys
        grpc_port, metrics_port = self.ports[service]
        env = dict(base)
        env.pop(SIGNING_KEY_VARIABLE, None)
        env.update(keys.service_environment())
        env.update(
            KAFKA_BOOTSTRAP_SERVERS=kafka,
            DATABASE_URL=database_url,
            RUMMY_GRPC_PORT=str(grpc_port),
            RUMMY_METRICS_PORT=str(metrics_port),
            RUMMY_CLOCK_SPEED=repr(float(self.clock_speed)),
            RUMMY_LOG_LEVEL=self.log_level,
            PYTHONUNBUFFERED="1",
        )
        for other in self.ports:
            env[f"RUMMY_{other.upper()}_ADDRESS"] = self.address(other)
        for variable in TLS_VARIABLES:
            env.pop(variable, None)
        if self.tls_dir is not None:
            env.update(cert_files(self.tls_dir).environment(service))
        for variable in KAFKA_SECURITY_VARIABLES:
            env.pop(variable, None)
        if self.kafka_credentials is not None:
            env.update(self.kafka_credentials.environment(service))
        env.update(self.extra_env)
        if self.supervised:
            env[SUPERVISOR_PID_VARIABLE] = str(os.getpid())
        else:
            env.pop(SUPERVISOR_PID_VARIABLE, None)
        return env


@dataclass
class _Running:
    service: str
    process: subprocess.Popen[bytes]
    log_path: Path


class Stack:
    """Starts the infrastructure and the services of a :class:`StackConfig`; stops them again.

    Use as a context manager, or call :meth:`start` and :meth:`stop` (idempotent; also safe after
    a failed start). :meth:`start` raises :class:`~rummy_platform.port_check.PortInUse`, before
    it starts anything, when a port it would listen on is taken (a service's; a local broker's
    when it would start that broker rather than reuse one that answers), and :class:`StackError`
    when the local brokers fail to start or a service exits or is not SERVING within the timeout
    (what it did start is stopped first).
    """

    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.kafka_bootstrap_servers = config.kafka_bootstrap_servers or ""
        self.database_url = config.database_url or ""
        self._running: list[_Running] = []
        self._started_infrastructure = False
        #: service -> its DATABASE_URL and RUMMY_DATABASE_OWNER_URL (the local cluster with TLS)
        self._database_roles: dict[str, dict[str, str]] = {}

    # -- public API ---------------------------------------------------------------------------

    def address(self, service: str) -> str:
        """``127.0.0.1:<gRPC port>`` of a service."""
        return self.config.address(service)

    def log_path(self, service: str) -> Path:
        """Where ``service`` writes its output."""
        return self.config.log_dir / f"{service}.log"

    def client_tls(self, certificate: str = "client") -> TlsSettings | None:
        """The TLS settings of a client of this stack presenting ``certificate`` (``client``, or
        a service's to act as that service), or None when its gRPC is plaintext:
        ``open_channel(stack.address("table"), stack.client_tls())``."""
        if self.config.tls_dir is None:
            return None
        return cert_files(self.config.tls_dir).settings(certificate)

    def use_client_certificate(self) -> None:
        """Make this process's own clients (:func:`~rummy_platform.limits.open_channel` without
        settings, the bots) dial this stack as it serves: its ``RUMMY_TLS_*`` variables set to the
        ``client`` certificate with ``tls_dir``, removed without. For a command's process
        (``rummy up``, ``rummy demo``), not a test session's."""
        for variable in (*TLS_VARIABLES, "RUMMY_INSECURE"):
            os.environ.pop(variable, None)
        if self.config.tls_dir is not None:
            ensure_certs(self.config.tls_dir)
            os.environ.update(cert_files(self.config.tls_dir).environment("client"))

    def start(self) -> None:
        """Infrastructure, then every service; returns when all answer SERVING."""
        try:
            ensure_free(self.listening_ports())
            if self.config.tls_dir is not None:
                ensure_certs(self.config.tls_dir)
            self._start_infrastructure()
            if self.config.create_topics:
                self._create_topics()
            self.config.log_dir.mkdir(parents=True, exist_ok=True)
            for service in self.config.services:
                self._spawn(service)
            deadline = time.monotonic() + self.config.health_timeout_seconds
            for running in self._running:
                self._wait_serving(running, deadline)
        except BaseException:
            self.stop()
            raise

    def health(self) -> dict[str, str]:
        """Service -> its health status name (``SERVING``, ``NOT_SERVING``, or ``exited (N)`` /
        ``no answer`` when the process is gone or silent)."""
        out: dict[str, str] = {}
        for running in self._running:
            code = running.process.poll()
            out[running.service] = (
                f"exited ({code})"
                if code is not None
                else check_health(self.address(running.service), tls=self.client_tls())
            )
        return out

    @property
    def pids(self) -> dict[str, int]:
        """Service -> process id of every service started (and not yet stopped)."""
        return {r.service: r.process.pid for r in self._running}

    def broken(self) -> str | None:
        """None while every service started is running; else which exited, with its status and
        where its log is."""
        for running in self._running:
            code = running.process.poll()
            if code is not None:
                return f"{running.service} exited with status {code} (see {running.log_path})"
        return None

    def kill(self, service: str) -> None:
        """SIGKILL ``service`` (its process group) and wait for it to be gone; :meth:`restart`
        starts it again. Raises KeyError when it was not started."""
        running = self._find(service)
        _signal_group(running.process, signal.SIGKILL)
        running.process.wait()

    def exit_code(self, service: str) -> int | None:
        """The exit status of ``service``'s process (negative: the signal that ended it), None
        while it runs. Raises KeyError when it was not started."""
        return self._find(service).process.poll()

    def respawn(self, service: str) -> int:
        """Start ``service`` again, on the same ports, once its process has exited (as
        :meth:`exit_code` says); returns the new pid at once, without waiting for SERVING
        (:meth:`health` tells). Raises KeyError when it was not started, StackError while it
        still runs."""
        running = self._find(service)
        if running.process.poll() is None:
            raise StackError(f"{service} is still running (pid {running.process.pid})")
        index = self._running.index(running)
        self._spawn(service)
        self._running[index] = self._running.pop()
        return self._running[index].process.pid

    def restart(self, service: str) -> None:
        """Start ``service`` again (after :meth:`kill`, or SIGTERM and wait first if it still
        runs) on the same ports; returns once it answers SERVING. Raises StackError as
        :meth:`start`."""
        running = self._find(service)
        if running.process.poll() is None:
            _signal_group(running.process, signal.SIGTERM)
            try:
                running.process.wait(self.config.stop_grace_seconds)
            except subprocess.TimeoutExpired:
                _signal_group(running.process, signal.SIGKILL)
                running.process.wait()
        self.respawn(service)
        deadline = time.monotonic() + self.config.health_timeout_seconds
        self._wait_serving(self._find(service), deadline)

    def _find(self, service: str) -> _Running:
        for running in self._running:
            if running.service == service:
                return running
        raise KeyError(f"{service} was not started by this stack")

    @property
    def owns_brokers(self) -> bool:
        """True when this stack started the local brokers (and :meth:`stop` stops them)."""
        return self._started_infrastructure

    def detach(self) -> dict[str, int]:
        """Leave everything running: forget the processes (so :meth:`stop` does nothing) and
        return service -> pid. Raises StackError for a ``supervised`` stack (its services end
        when this process exits)."""
        if self.config.supervised and self._running:
            raise StackError(
                "a supervised stack cannot be left running: build it with supervised=False"
            )
        pids = self.pids
        self._running.clear()
        self._started_infrastructure = False
        return pids

    def stop(self) -> None:
        """SIGTERM every service (reverse order), SIGKILL any still running after the grace
        period, then stop the local brokers if this stack started them. Idempotent."""
        for running in reversed(self._running):
            _signal_group(running.process, signal.SIGTERM)
        deadline = time.monotonic() + self.config.stop_grace_seconds
        for running in reversed(self._running):
            try:
                running.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(running.process, signal.SIGKILL)
                running.process.wait()
        self._running.clear()
        if self._started_infrastructure:
            self._started_infrastructure = False
            self._stack_sh("down")

    def __enter__(self) -> Stack:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- parts ---------------------------------------------------------------------------------

    def listening_ports(self) -> list[ListeningPort]:
        """Every service's gRPC and metrics port, with who listens and the variable that moves
        it (``RUMMY_<SERVICE>_GRPC_PORT``, ``..._METRICS_PORT``)."""
        return [
            ListeningPort(port, service_listener(service, kind), stack_port_variable(service, kind))
            for service in self.config.services
            for kind, port in zip((GRPC, METRICS), self.config.ports[service], strict=True)
        ]

    def _stack_sh(
        self, command: str, *arguments: str, capture: bool = False, script_name: str = "stack"
    ) -> subprocess.CompletedProcess[str]:
        """Run ``deploy/local/<script_name>.sh <command> [arguments]`` for the local brokers
        (never with external servers in its environment); raise StackError when a command other
        than ``status`` fails."""
        script = self.config.root / "deploy" / "local" / f"{script_name}.sh"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL")
        }
        result = subprocess.run(
            ["bash", str(script), command, *arguments],
            cwd=self.config.root,
            env=env,
            stdout=subprocess.PIPE if capture else None,
            stderr=subprocess.STDOUT if capture else None,
            text=True,
            check=False,
        )
        if result.returncode != 0 and command != "status":
            raise StackError(
                f"`bash deploy/local/{script_name}.sh {command}` failed (status "
                f"{result.returncode}); "
                "see .local/kafka/broker.log and .local/pg/postgres.log"
            )
        return result

    def _start_infrastructure(self) -> None:
        if self.config.external_infrastructure:
            return
        ports = broker_ports(os.environ)
        answering = {
            kind: self._stack_sh("status", capture=True, script_name=kind).returncode == 0
            for kind in ports
        }
        # A broker that answers is reused; one that does not is started, on ports that are free.
        ensure_free(port for kind, up in answering.items() if not up for port in ports[kind])
        self._started_infrastructure = not all(answering.values())  # stopped even if `up` fails
        self._stack_sh("up")
        exports = _parse_exports(self._stack_sh("env", capture=True).stdout)
        self.kafka_bootstrap_servers = exports["KAFKA_BOOTSTRAP_SERVERS"]
        self.database_url = exports["DATABASE_URL"]
        if os.environ.get(PG_TLS_VARIABLE) == "1":
            printed = self._stack_sh("roles", capture=True, script_name="postgres").stdout
            self._database_roles = json.loads(printed[printed.index("{") :])
        if self.config.kafka_credentials is not None:
            # the secured broker's grants for this stack's prefix (kafka.sh made the default's)
            self._stack_sh("acls", self.topic_prefix, capture=True, script_name="kafka")

    @property
    def topic_prefix(self) -> str:
        """The services' ``RUMMY_TOPIC_PREFIX``: ``extra_env``'s, else the one they inherit from
        this process (``""``: none)."""
        return self.config.extra_env.get(
            "RUMMY_TOPIC_PREFIX", os.environ.get("RUMMY_TOPIC_PREFIX", "")
        )

    def _create_topics(self) -> None:
        """Create the event topics (under ``RUMMY_TOPIC_PREFIX``) once, before any service
        starts: the services then find them in place instead of racing to create them while
        their consumers join their groups."""
        credentials = self.config.kafka_credentials
        # On a secured broker as the table (every service may create its deployment's topics).
        security = credentials.security("table") if credentials is not None else None
        try:
            with KafkaEventLog(
                self.kafka_bootstrap_servers, client_id="rummy-stack", security=security
            ) as log:
                log.ensure_topics(event_topic_specs(prefix=self.topic_prefix))
        except EventLogError as exc:
            raise StackError(
                f"could not create the event topics on {self.kafka_bootstrap_servers}: {exc}"
            ) from exc

    def _spawn(self, service: str) -> None:
        log_path = self.log_path(service)
        env = self.config.service_env(
            service, self.kafka_bootstrap_servers, self.database_url, os.environ
        )
        env.update(self._database_roles.get(service, {}))
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", f"rummy_{service}"],
                cwd=self.config.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches us only; we stop the services in order
            )
        self._running.append(_Running(service, process, log_path))

    def _wait_serving(self, running: _Running, deadline: float) -> None:
        address = self.address(running.service)
        while True:
            code = running.process.poll()
            if code is not None:
                raise StackError(
                    f"{running.service} exited with status {code} while starting; "
                    f"last lines of {running.log_path}:\n{_tail(running.log_path)}"
                )
            if check_health(address, timeout=1.0, tls=self.client_tls()) == "SERVING":
                return
            if time.monotonic() > deadline:
                raise StackError(
                    f"{running.service} did not report SERVING on {address} within "
                    f"{self.config.health_timeout_seconds:.0f} s; see {running.log_path}"
                )
            time.sleep(0.25)


@contextlib.contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt like Ctrl-C does, so the same cleanup
    (stopping what was started) runs for both; SIGINT gets Python's default handler even if the
    parent ignored it. The previous handlers are restored afterwards."""

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous_term = signal.signal(signal.SIGTERM, interrupt)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGINT, previous_int)


@contextlib.contextmanager
def shielded_from_interrupts() -> Iterator[None]:
    """Within the block (main thread only), SIGINT and SIGTERM are ignored: a second Ctrl-C
    cannot cut short the stopping of what was started. The previous handlers are restored."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def check_health(address: str, timeout: float = 2.0, tls: TlsSettings | None = None) -> str:
    """The overall gRPC health status name at ``address`` (``SERVING``, ``NOT_SERVING``, ...),
    or ``no answer`` when nothing answers within ``timeout`` seconds. ``tls``: as
    :func:`~rummy_platform.limits.open_channel` (default: this process's environment)."""
    with open_channel(address, tls) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
                health_pb2.HealthCheckRequest(service=""), timeout=timeout
            )
        except grpc.RpcError:
            return "no answer"
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def stop_process(
    process: subprocess.Popen[bytes] | subprocess.Popen[str],
    sig: signal.Signals = signal.SIGTERM,
    grace_s: float = 20.0,
) -> None:
    """Send ``sig`` to ``process`` (only it, not its group) unless it has exited; SIGKILL it
    when it is still running ``grace_s`` seconds later; return once it is gone."""
    if process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)  # the service and anything it started, nothing else


def local_kafka_credentials(root: Path) -> KafkaCredentials:
    """Where the secured local broker (``RUMMY_KAFKA_SECURE=1 deploy/local/kafka.sh start``) of
    the checkout ``root`` keeps its users' passwords and its CA: ``<state>/kafka/credentials``
    (``RUMMY_STATE_DIR``, default ``.local``) and ``<certs>/ca.pem`` (``RUMMY_CERTS_DIR``,
    default ``.local/certs``), relative paths taken from ``root`` as the scripts run there."""
    state = os.environ.get("RUMMY_STATE_DIR", "").strip()
    certs = os.environ.get("RUMMY_CERTS_DIR", "").strip()
    return KafkaCredentials(
        (root / state if state else root / ".local") / "kafka" / "credentials",
        (root / certs if certs else local_certs_dir(root)) / "ca.pem",
    )


def _parse_exports(text: str) -> dict[str, str]:
    """``export NAME=value`` lines (as ``stack.sh env`` prints them, shell-quoted) to a dict."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        words = shlex.split(line)
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            name, value = words[1].split("=", 1)
            out[name] = value
    return out


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stack_for_tests(
    root: Path,
    kafka: str,
    database_url: str,
    *,
    topic_prefix: str,
    clock_speed: float,
    log_dir: Path,
    services: Sequence[str] = SERVICES,
    extra_env: Mapping[str, str] | None = None,
    tls_dir: Path | None = None,
    kafka_credentials: KafkaCredentials | None = None,
) -> Stack:
    """A stack on free ports over the given brokers, with topics under ``topic_prefix`` (so it
    never meets another run's streams) and fresh token keys (in a temporary directory);
    ``extra_env``: more variables of every service (the test suite's variant plug-ins);
    ``tls_dir``: as :attr:`StackConfig.tls_dir` (None: plaintext); ``kafka_credentials``: as
    :attr:`StackConfig.kafka_credentials` (None: plaintext Kafka)."""
    ports = {name: (free_port(), free_port()) for name in services}
    return Stack(
        StackConfig(
            root=root,
            token_keys=ensure_key_files(Path(tempfile.mkdtemp(prefix="rummy-token-keys-"))),
            log_dir=log_dir,
            services=tuple(services),
            ports=ports,
            clock_speed=clock_speed,
            kafka_bootstrap_servers=kafka,
            database_url=database_url,
            extra_env={**(extra_env or {}), "RUMMY_TOPIC_PREFIX": topic_prefix},
            create_topics=True,
            tls_dir=tls_dir,
            kafka_credentials=kafka_credentials,
        )
    )


@contextlib.contextmanager
def brokers(root: Path | None = None) -> Iterator[tuple[str, str]]:
    """``(Kafka bootstrap servers, PostgreSQL URL)`` for a harness that brings its own brokers
    (the benchmarks, ``bench/``): ``KAFKA_BOOTSTRAP_SERVERS`` + ``DATABASE_URL`` when both are
    set (only used: never started or stopped); otherwise the local brokers of the checkout
    ``root`` (default: this one), through a :class:`Stack` of no service: ``deploy/local/stack.sh
    up`` (running ones are reused), and ``stack.sh down`` when the block ends (normally, on an
    error or on Ctrl-C) only if they were not running before. The scripts' progress goes to
    stderr, so that stdout stays the harness's own (e.g. a ``--json`` report). Raises StackError
    when they cannot be started."""
    root = root or repository_root()
    kafka = os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or None
    database = os.environ.get("DATABASE_URL") or None
    if kafka is not None and database is not None:
        yield kafka, database
        return
    infrastructure = Stack(
        StackConfig(
            root=root,
            token_keys=None,  # no service is started
            log_dir=root / ".local" / "logs",
            services=(),
        )
    )
    with _stdout_to_stderr():
        infrastructure.start()  # stops what it started when it fails
    try:
        yield infrastructure.kafka_bootstrap_servers, infrastructure.database_url
    finally:
        with _stdout_to_stderr():
            infrastructure.stop()


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 is 2 inside the block (for child processes too), then restored."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
