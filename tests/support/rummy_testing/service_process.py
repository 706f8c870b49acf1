"""A service as its own process (``python -m rummy_<service>``) for tests that start, kill and
restart it without a whole :class:`rummy_ops.stack.Stack` (for one over a running stack, see
:mod:`rummy_testing.processes`), a throwaway database for it, and an :class:`IsolatedRun` (topics
under a prefix of their own plus such a database) whose ``env()`` configures the processes.

Every process of an :class:`IsolatedRun` (and of :func:`rummy_testing.stacks.running_stack`) loads
the test suite's variant plug-ins (:func:`variant_plugin_env`: the toy variant); pass
``RUMMY_VARIANT_PLUGINS=""`` to start one without them.

Each of the five services serves mutual TLS with its own certificate of ``.local/certs`` (unless
the test run says ``RUMMY_INSECURE=1``); :meth:`ServiceProcess.channel` dials it as it serves.
The process gets ``os.environ`` plus the given variables; with ``RUMMY_GRPC_PORT=0`` and
``RUMMY_METRICS_PORT=0`` it binds free ports and announces them in its ``service started`` JSON
log line (stderr), which :class:`ServiceProcess` reads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import grpc
import psycopg
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from psycopg import sql

from rummy_ops.certs import cert_files, ensure_certs, local_certs_dir
from rummy_ops.stack import insecure_requested, repository_root
from rummy_platform.auth import Role
from rummy_platform.config import PLUGINS_VARIABLE
from rummy_platform.envelope import Envelope, has_payload
from rummy_platform.eventlog import KafkaEventLog
from rummy_platform.ports import SERVICES
from rummy_platform.tls import dial
from rummy_platform.topics import event_topic_specs
from rummy_testing.client_env import without_stack_clients
from rummy_testing.token_keys import token_environment
from rummy_testing.waiting import wait_for_count

START_TIMEOUT_S = 60.0
#: How long a test waits for a service's event (:meth:`IsolatedRun.wait_for`).
EVENT_TIMEOUT_S = 60.0
#: The payload type a wait is for.
M = TypeVar("M", bound=Message)
#: Where the test suite's importable support packages live (``toy_variant``, ``rummy_testing``).
SUPPORT_DIR = Path(__file__).resolve().parents[1]
#: The variant plug-ins of the test suite: modules under SUPPORT_DIR that register a variant.
TEST_VARIANT_PLUGINS = ("toy_variant.plugin",)


def variant_plugin_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables that make a service process (or ``rummy``) load the test suite's variant
    plug-ins: ``RUMMY_VARIANT_PLUGINS`` naming :data:`TEST_VARIANT_PLUGINS`, and ``PYTHONPATH``
    with :data:`SUPPORT_DIR` first (before ``environ``'s, default ``os.environ``)."""
    env = os.environ if environ is None else environ
    path = [str(SUPPORT_DIR), *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return {
        PLUGINS_VARIABLE: ",".join(TEST_VARIANT_PLUGINS),
        "PYTHONPATH": os.pathsep.join(dict.fromkeys(path)),
    }


@dataclass
class ServiceProcess:
    """A started ``python -m <module>``; its stderr lines are collected in ``lines``, and its
    ports are known once ``started`` is set."""

    module: str
    process: subprocess.Popen[str]
    #: Where its certificates are when it serves mutual TLS (None: plaintext).
    tls_dir: Path | None = None
    grpc_port: int = 0
    metrics_port: int = 0
    lines: list[str] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)

    @property
    def target(self) -> str:
        """``127.0.0.1:<grpc port>``."""
        return f"127.0.0.1:{self.grpc_port}"

    def channel(self, certificate: str = "client") -> grpc.Channel:
        """A channel to it as it serves: over mutual TLS presenting ``certificate``'s
        certificate (``client``; a service's name for a call with a service token, whose role
        only a service's certificate carries), or plaintext."""
        if self.tls_dir is None:
            return grpc.insecure_channel(self.target)
        return dial(self.target, (), cert_files(self.tls_dir).settings(certificate))

    def channel_as(self, role: Role) -> grpc.Channel:
        """:meth:`channel` for calls with a token of ``role``: presenting a service's
        certificate (the table's) for the service role, ``client``'s for any other."""
        return self.channel("table" if role is Role.SERVICE else "client")

    def read(self) -> None:
        """Collect stderr until the process closes it (run in a daemon thread)."""
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "service started":
                self.grpc_port = entry["grpc_port"]
                self.metrics_port = entry["metrics_port"]
                self.started.set()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 20 s. Idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def metric(self, series: str) -> float:
        """The value of ``series`` (``name`` or ``name{label="v"}``) on ``/metrics``; raises
        AssertionError if it is not there."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        body = urllib.request.urlopen(url, timeout=5).read().decode()
        for line in body.splitlines():
            if line.startswith(series + " "):
                return float(line.split()[-1])
        raise AssertionError(f"{series} not in /metrics")


def start_service(
    module: str,
    env: Mapping[str, str],
    *,
    wait: bool = True,
    health_service: str = "",
    timeout_s: float = START_TIMEOUT_S,
) -> ServiceProcess:
    """Start ``python -m module`` with ``os.environ`` (its TLS client variables as before any
    test stack set them), the module's service's certificate of ``.local/certs`` (mutual TLS;
    :func:`service_tls_dir`) and ``env`` (which may override any). With ``wait``, return once it
    logged ``service started`` and its health check of ``health_service`` ("" = the server)
    answers SERVING; raises AssertionError (with its last log lines) if it exits first or takes
    longer than ``timeout_s`` seconds. Without ``wait``, return at once (a process expected to
    die)."""
    with without_stack_clients():  # not the certificate a test stack gives this process
        inherited = dict(os.environ)
    tls_dir = service_tls_dir(module)
    own = {} if tls_dir is None else cert_files(tls_dir).environment(service_of(module))
    process = subprocess.Popen(
        [sys.executable, "-m", module],
        env={**inherited, **own, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    service = ServiceProcess(module, process, tls_dir)
    threading.Thread(target=service.read, daemon=True).start()
    if not wait:
        return service
    deadline = time.monotonic() + timeout_s
    while not service.started.wait(0.2):
        if process.poll() is None and time.monotonic() < deadline:
            continue
        service.stop()
        raise AssertionError(f"{module} did not start:\n{''.join(service.lines[-30:])}")
    with service.channel() as channel:
        health = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest(service=health_service)
        status = health.Check(request, timeout=10)  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
    assert status.status == health_pb2.HealthCheckResponse.SERVING, status
    return service


def service_of(module: str) -> str:
    """The service a module runs (``rummy_ledger`` -> ``ledger``)."""
    return module.removeprefix("rummy_")


def service_tls_dir(module: str) -> Path | None:
    """The certificates' folder a process of ``module`` serves mutual TLS with: the checkout's
    ``.local/certs`` (made on first use) for one of the five services, unless the test run
    asks for plaintext (``RUMMY_INSECURE=1``); None (plaintext) for any other module."""
    if service_of(module) not in SERVICES or insecure_requested():
        return None
    directory = local_certs_dir(repository_root())
    ensure_certs(directory)
    return directory


@contextmanager
def fresh_database(database_url: str, stem: str) -> Iterator[str]:
    """The URL of a new empty database named ``<stem>_<random>`` on the server of
    ``database_url`` (whose role may create databases), dropped afterwards."""
    name = f"{stem}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlsplit(database_url)._replace(path=f"/{name}").geturl()
    finally:
        drop_database(database_url, name)


def drop_database(database_url: str, name: str, timeout_s: float = 30.0) -> None:
    """Drop the database ``name`` (if it exists) on the server of ``database_url``, connected as
    that URL's role: first end that role's sessions on it, then ``DROP DATABASE`` (which stops
    an autovacuum worker running there by itself). Not ``WITH (FORCE)``: on PostgreSQL 15 that
    also tries to end the autovacuum worker as this role and fails, "must be a member of the
    role whose process is being terminated", when one happens to run on the fresh database.
    Raises TimeoutError if a session of the role is still there after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(database_url, autocommit=True) as admin:
        while admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
            " AND usename = current_user AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall():
            if time.monotonic() > deadline:
                raise TimeoutError(f"sessions still open on database {name} after {timeout_s} s")
            time.sleep(0.1)
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))


@dataclass
class IsolatedRun:
    """Where one test module's service processes run: topics under ``prefix`` on the brokers
    ``kafka`` (read and written through ``log``), the database ``database_url``,
    tokens verified with the test keys (:mod:`rummy_testing.token_keys`).
    ``dataclasses.replace(run, prefix=..., database_url=...)`` gives a run of its own to a
    test (create its topics with ``run.log.ensure_topics``)."""

    prefix: str
    database_url: str
    kafka: str
    log: KafkaEventLog

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a service process of this run (free ports, info logs, the test
        suite's variant plug-ins), with ``extra`` variables added or overriding."""
        return {
            **variant_plugin_env(),
            **token_environment(),
            "RUMMY_GRPC_PORT": "0",
            "RUMMY_METRICS_PORT": "0",
            "RUMMY_LOG_LEVEL": "info",
            "RUMMY_TOPIC_PREFIX": self.prefix,
            "DATABASE_URL": self.database_url,
            "KAFKA_BOOTSTRAP_SERVERS": self.kafka,
            **extra,
        }

    def events(self, topic: str, stream_id: str, payload_type: type[M]) -> list[Envelope[M]]:
        """The ``payload_type`` events of ``stream_id`` on this run's ``topic`` (unprefixed), in
        stream order."""
        return [
            r.envelope
            for r in self.log.read_stream(self.prefix + topic, stream_id)
            if has_payload(r.envelope, payload_type)
        ]

    def wait_for(
        self, topic: str, stream_id: str, payload_type: type[M], count: int = 1
    ) -> list[Envelope[M]]:
        """:meth:`events`, once there are at least ``count`` of them (AssertionError after
        EVENT_TIMEOUT_S)."""
        return wait_for_count(
            f"{payload_type.__name__} on {topic} for {stream_id}",
            lambda: self.events(topic, stream_id, payload_type),
            count,
            EVENT_TIMEOUT_S,
        )


Run = TypeVar("Run", bound=IsolatedRun)


@contextmanager
def isolated_run(kafka: str, database_url: str, stem: str, kind: type[Run]) -> Iterator[Run]:
    """A ``kind`` run with a new random topic prefix (its event topics created) and a fresh
    database named after ``stem``; the database is dropped and the log closed afterwards."""
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    log = KafkaEventLog(kafka, client_id=f"{stem}-test")
    log.ensure_topics(event_topic_specs(prefix=prefix))
    try:
        with fresh_database(database_url, stem) as url:
            yield kind(prefix, url, kafka, log)
    finally:
        log.close()
