"""The whole backend for a test or a script: the five services as processes over real brokers.

:func:`running_stack` starts them through ``rummy_ops.stack`` on free ports, in a fresh
PostgreSQL database and under a topic prefix of their own (so they never meet another run's
streams or rows), with a fast clock and the test suite's variant plug-ins
(``rummy_testing.service_process.variant_plugin_env``), and yields a :class:`RunningStack`.
Logs go to ``.local/logs/<label>-<run>/<service>.log``. On exit everything is stopped and the
database dropped (the topics stay on the broker, as the event log never expires).

The stack serves mutual TLS with the certificates of ``.local/certs`` (made on first use) and,
while it runs, this process's clients present the ``client`` certificate (its ``RUMMY_TLS_*``
variables; restored at the end). Plaintext by choice only: ``insecure=True`` (a test that needs
a plaintext stack, named in docs/testing.md) or ``RUMMY_INSECURE=1`` in the test run's
environment (the whole run plaintext); while such a stack runs this process's ``RUMMY_INSECURE``
is ``1`` (so a ``rummy`` tool a test starts dials plaintext too).

With ``kafka_credentials`` (a secured broker's, ``secure_kafka``) every service connects to Kafka
as its own principal, ``grant`` first makes the ACLs of the stack's topic prefix, and
:meth:`RunningStack.payloads` reads as ``ops``.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import psycopg
from google.protobuf.message import Message
from psycopg import sql

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy_ops.certs import ensure_certs, local_certs_dir
from rummy_ops.demo import Endpoints, stack_endpoints
from rummy_ops.stack import Stack, insecure_requested, repository_root, stack_for_tests
from rummy_platform.config import TlsSettings
from rummy_platform.eventlog import KafkaCredentials, KafkaEventLog, KafkaSecurity
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS
from rummy_testing.client_env import CLIENT_VARIABLES, before_stacks, set_environment
from rummy_testing.service_process import drop_database, variant_plugin_env

M = TypeVar("M", bound=Message)

#: Deadlines pass this many times faster than real time (a 20 s turn lasts 2 s).
E2E_CLOCK_SPEED = 10.0


@dataclass(frozen=True)
class RunningStack:
    """A started stack and what a test needs to reach it and its log."""

    stack: Stack
    endpoints: Endpoints
    kafka_bootstrap: str
    database_url: str
    topic_prefix: str
    #: How this process reads the stack's topics (None: plaintext; ``ops`` on a secured broker).
    kafka_security: KafkaSecurity | None = None

    def metrics_url(self, service: str) -> str:
        """``http://127.0.0.1:<port>/metrics`` of ``service``."""
        return f"http://127.0.0.1:{self.stack.config.ports[service][1]}/metrics"

    def payloads(self, topic: str, stream_id: str) -> list[Any]:
        """The payloads of stream ``stream_id`` (a table id) in ``topic`` (unprefixed:
        ``TABLE_EVENTS``, the table's own; ``LEDGER_EVENTS``, the ledger's about it), in order."""
        log = KafkaEventLog(self.kafka_bootstrap, security=self.kafka_security)
        try:
            return [
                r.envelope.payload for r in log.read_stream(self.topic_prefix + topic, stream_id)
            ]
        finally:
            log.close()

    def replay_options(self) -> list[str]:
        """The options that point ``rummy replay`` at this stack's log and ledger."""
        return [
            "--bootstrap",
            self.kafka_bootstrap,
            "--topic-prefix",
            self.topic_prefix,
            "--database-url",
            self.database_url,
        ]

    def match_settlements(
        self, table_id: str, count: int = 1, timeout: float = 60.0
    ) -> list[ledger_pb.MatchSettled]:
        """Every MatchSettled of the table (each a journal transaction's lines) once the ledger
        published at least ``count``, from its events on Kafka. Raises AssertionError on a
        refused settlement, TimeoutError if fewer come within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            payloads = self.payloads(LEDGER_EVENTS, table_id)
            refused = [p for p in payloads if isinstance(p, ledger_pb.MatchSettlementRefused)]
            assert not refused, f"the ledger refused a settlement: {refused}"
            settled = [p for p in payloads if isinstance(p, ledger_pb.MatchSettled)]
            if len(settled) >= count:
                return settled
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(settled)} of {count} MatchSettled for table {table_id}")
            time.sleep(0.5)

    def log_tails(self, lines: int = 12, width: int = 400, naming: Sequence[str] = ()) -> str:
        """For a failure message: the last ``lines`` lines of every service log of this stack
        (the five services' and any extra process's, ``rummy_testing.processes``), each cut to
        ``width`` characters, and the last ``lines`` lines of each that name any of ``naming``
        (e.g. table ids)."""
        parts: list[str] = []
        for path in sorted(self.stack.config.log_dir.glob("*.log")):
            text = path.read_text(errors="replace").splitlines()
            parts.append(f"--- {path.name}: last {lines} of {len(text)} lines")
            parts.extend(line[:width] for line in text[-lines:])
            named = [line for line in text if any(n in line for n in naming)]
            if named:
                parts.append(f"--- {path.name}: last {lines} of {len(named)} naming {naming}")
                parts.extend(line[:width] for line in named[-lines:])
        return "\n".join(parts)


def once_per_hand(stack: RunningStack, table_id: str, payload_type: type[M]) -> dict[str, M]:
    """The ``payload_type`` events (a message with a ``hand_id``) of the table's stream in
    ``stack``, by hand. Raises AssertionError for a hand that has two."""
    found: dict[str, M] = {}
    for payload in stack.payloads(TABLE_EVENTS, table_id):
        if isinstance(payload, payload_type):
            hand_id = getattr(payload, "hand_id")  # noqa: B009 - any message type
            assert hand_id not in found, f"hand {hand_id}: two {type(payload).__name__}"
            found[hand_id] = payload
    return found


def database_url_named(database_url: str, name: str) -> str:
    """``database_url`` with its database replaced by ``name``."""
    return urlsplit(database_url)._replace(path=f"/{name}").geturl()


@contextmanager
def running_stack(
    kafka_bootstrap: str,
    database_url: str,
    label: str = "e2e",
    clock_speed: float = E2E_CLOCK_SPEED,
    extra_env: Mapping[str, str] | None = None,
    kafka_credentials: KafkaCredentials | None = None,
    grant: Callable[[str], None] | None = None,
    insecure: bool = False,
) -> Iterator[RunningStack]:
    """The five services started and SERVING; stopped (and their database dropped) on exit.
    ``label`` names the database (``rummy_<label>_<run>``), topic prefix and log folder;
    ``extra_env``: more variables for every service (and every extra process of it,
    ``rummy_testing.processes``), e.g. a setting a test needs other than its default;
    ``kafka_credentials`` / ``grant``: a secured broker's; ``insecure``: plaintext gRPC (see
    the module doc)."""
    run = uuid.uuid4().hex[:8]
    name = f"rummy_{label}_{run}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    own_database = database_url_named(database_url, name)
    root = repository_root()
    prefix = f"{label}-{run}-"
    stack = stack_for_tests(
        root,
        kafka_bootstrap,
        own_database,
        topic_prefix=prefix,
        clock_speed=clock_speed,
        log_dir=root / ".local" / "logs" / f"{label}-{run}",
        extra_env={**variant_plugin_env(), **(extra_env or {})},
        tls_dir=None if insecure or not tls_requested() else local_certs_dir(root),
        kafka_credentials=kafka_credentials,
    )
    try:
        if grant is not None:
            grant(prefix)
        with clients_of(stack), stack:
            yield RunningStack(
                stack=stack,
                endpoints=stack_endpoints(stack),
                kafka_bootstrap=kafka_bootstrap,
                database_url=own_database,
                topic_prefix=prefix,
                kafka_security=(
                    kafka_credentials.security("ops") if kafka_credentials is not None else None
                ),
            )
    finally:
        drop_database(database_url, name)


@contextmanager
def clients_of(stack: Stack) -> Iterator[None]:
    """Within the block, this process's clients dial ``stack`` as it serves (its ``client``
    certificate, or ``RUMMY_INSECURE=1`` for a plaintext stack: :data:`CLIENT_VARIABLES`); on
    leaving, the variables as they were before (kept in :data:`before_stacks` meanwhile, for the
    tests outside ``tests/e2e`` that run while a session's stack is up)."""
    saved = {variable: os.environ.get(variable) for variable in CLIENT_VARIABLES}
    before_stacks.append(saved)
    try:
        stack.use_client_certificate()
        if stack.config.tls_dir is None:
            os.environ["RUMMY_INSECURE"] = "1"
        yield
    finally:
        before_stacks.pop()
        set_environment(saved)


def tls_requested() -> bool:
    """True unless the test run asks for plaintext stacks (``RUMMY_INSECURE=1``)."""
    return not insecure_requested()


def tls_options() -> list[str]:
    """``["--insecure"]`` for a ``rummy up``/``rummy demo`` a test starts when the run asks
    for plaintext (``RUMMY_INSECURE=1``), else none (mutual TLS, ``.local/certs``)."""
    return [] if tls_requested() else ["--insecure"]


def tls_client() -> TlsSettings | None:
    """The TLS settings of a test's client of a stack it started with :func:`tls_options`
    (the ``client`` certificate of ``.local/certs``), or None for a plaintext run."""
    if not tls_requested():
        return None
    files, _made = ensure_certs(local_certs_dir(repository_root()))
    return files.settings("client")
