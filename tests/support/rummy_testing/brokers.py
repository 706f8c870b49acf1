"""Find a real Kafka broker and a real PostgreSQL for the integration tests.

Order of preference, for each broker separately:

1. ``KAFKA_BOOTSTRAP_SERVERS`` / ``DATABASE_URL`` from the environment (checked, never started);
2. testcontainers, only when a Docker engine really answers (``docker info`` within a few seconds);
3. the repository's own scripts, ``deploy/local/kafka.sh start`` and
   ``deploy/local/postgres.sh start`` (idempotent: brokers already running are reused). This
   process leaves them running for the next tests; README's test command
   (``deploy/local/test.sh``) stops them when its run ends if they were not running when it began.

Every path ends with the same readiness probe as the scripts (``deploy/local/readiness.py``): a
metadata round trip for Kafka, ``SELECT 1`` for PostgreSQL. Failures raise ``BrokerUnavailable``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
LOCAL = REPO_ROOT / "deploy" / "local"

DOCKER_INFO_TIMEOUT_S = 3.0
# Seconds a given or started broker gets to answer its first round trip.
READY_TIMEOUT_S = float(os.environ.get("RUMMY_BROKER_READY_TIMEOUT", "30"))
# Images used only where a Docker engine exists (none does on this project's machines).
KAFKA_IMAGE = os.environ.get("RUMMY_TEST_KAFKA_IMAGE", "confluentinc/cp-kafka:8.1.0")
POSTGRES_IMAGE = os.environ.get("RUMMY_TEST_POSTGRES_IMAGE", "postgres:15")


class BrokerUnavailable(RuntimeError):
    """No broker could be found or started; the message says what was tried and why it failed."""


def docker_engine_answers(timeout_s: float = DOCKER_INFO_TIMEOUT_S) -> bool:
    """True when ``docker info`` succeeds within ``timeout_s`` seconds (a client alone is not)."""
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(
            ["docker", "info"], capture_output=True, timeout=timeout_s, check=False
        )
    except (subprocess.TimeoutExpired, OSError):
        return False
    return done.returncode == 0


def check_ready(kind: str, address: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Probe ``address`` with ``deploy/local/readiness.py`` (kind ``kafka`` or ``postgres``).

    Raises ``BrokerUnavailable`` with the probe's last error after ``timeout_s`` seconds.
    """
    done = subprocess.run(
        [sys.executable, str(LOCAL / "readiness.py"), kind, address, "--timeout", str(timeout_s)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise BrokerUnavailable(done.stderr.strip() or done.stdout.strip())


def local_addresses() -> dict[str, str]:
    """The local brokers' addresses, as ``deploy/local/stack.sh env`` prints them."""
    out = _run_script("stack.sh", "env")
    pairs = (shlex.split(line.removeprefix("export "))[0] for line in out.splitlines() if line)
    return dict(pair.split("=", 1) for pair in pairs)


def _run_script(script: str, *args: str, env: dict[str, str] | None = None) -> str:
    env = dict(os.environ if env is None else env)
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        ["bash", str(LOCAL / script), *args], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise BrokerUnavailable(
            f"deploy/local/{script} {' '.join(args)} failed:\n{done.stdout}{done.stderr}".rstrip()
        )
    return done.stdout


def kafka_bootstrap_servers(resources: ExitStack) -> str:
    """Bootstrap servers (``host:port[,host:port]``) of a Kafka broker that answers.

    A container, if one is started, is stopped when ``resources`` closes.
    """
    given = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if given:
        check_ready("kafka", given)
        return given
    if docker_engine_answers():
        from testcontainers.community.kafka import KafkaContainer

        container = resources.enter_context(KafkaContainer(KAFKA_IMAGE).with_kraft())
        address = container.get_bootstrap_server()
    else:
        _run_script("kafka.sh", "start")
        address = local_addresses()["KAFKA_BOOTSTRAP_SERVERS"]
    check_ready("kafka", address)
    return address


def postgres_database_url(resources: ExitStack) -> str:
    """A ``postgresql://`` URL whose role may create databases, of a server that answers.

    A container, if one is started, is stopped when ``resources`` closes.
    """
    given = os.environ.get("DATABASE_URL")
    if given:
        check_ready("postgres", given)
        return given
    if docker_engine_answers():
        from testcontainers.community.postgres import PostgresContainer

        container = resources.enter_context(
            PostgresContainer(
                POSTGRES_IMAGE, username="rummy", password="rummy", dbname="rummy", driver=None
            )
        )
        address = container.get_connection_url()
    else:
        _run_script("postgres.sh", "start")
        address = local_addresses()["DATABASE_URL"]
    check_ready("postgres", address)
    return address
