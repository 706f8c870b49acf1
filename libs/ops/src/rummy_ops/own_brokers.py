"""A Kafka broker and a PostgreSQL server of one's own, for fault injection (``rummy soak``, the
broker-stall tests): started with the repository's scripts (``deploy/local/kafka.sh``,
``deploy/local/postgres.sh``) on free ports, with their data, pid files and logs in a folder of
their own (``RUMMY_STATE_DIR``), so they can be stalled, killed and restarted without touching the
brokers other people use (19092 / 15432).

::

    with OwnBrokers(Path(tempfile.mkdtemp())) as brokers:
        brokers.start_kafka()                 # 127.0.0.1:<free port>, ready (metadata round trip)
        brokers.kafka.pause()                 # SIGSTOP: sockets stay open, nothing answers
        brokers.kafka.resume()                # SIGCONT
        brokers.kafka.restart()               # stop (SIGTERM), start, wait until ready
    # leaving the block stops what was started (and resumes a paused broker first)

``OwnBrokers(state_dir, secure_kafka=True)``: the broker is the secured one
(``RUMMY_KAFKA_SECURE=1``: SASL_SSL with SCRAM, ACLs; its CA and passwords under ``state_dir``);
:meth:`OwnBrokers.kafka_security` gives a principal's client security and
:meth:`OwnBrokers.grant_kafka` makes the ACLs of another topic prefix.

Raises :class:`~rummy_ops.stack.StackError` when a script fails (its output in the message).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from rummy_ops.stack import HOST, StackError, free_port, repository_root
from rummy_platform.eventlog import KafkaCredentials, KafkaSecurity


@dataclass
class OwnServer:
    """One server (``kind`` ``kafka`` or ``postgres``) run by its ``deploy/local`` script."""

    kind: str
    root: Path
    env: dict[str, str]
    address: str
    started: bool = False
    paused: bool = field(default=False)

    def _script(self, command: str, *arguments: str) -> str:
        script = self.root / "deploy" / "local" / f"{self.kind}.sh"
        done = subprocess.run(
            ["bash", str(script), command, *arguments],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise StackError(
                f"`{self.kind}.sh {command}` failed (status {done.returncode}):\n"
                f"{done.stdout}{done.stderr}".rstrip()
            )
        return done.stdout

    def start(self) -> None:
        """Start the server and return once it answers a real round trip."""
        self._script("start")
        self.started = True

    def stop(self) -> None:
        """Stop the server (resumed first if paused). Idempotent."""
        if self.paused:
            self.resume()
        if self.started:
            self._script("stop")
            self.started = False

    def restart(self) -> None:
        """Stop, start again and wait until it answers."""
        self.stop()
        self.start()

    def pid(self) -> int:
        """The server's process id (``<script> pid``). Raises StackError when not running."""
        return int(self._script("pid").split()[0])

    def pause(self) -> None:
        """SIGSTOP the server: connections stay open and nothing is answered."""
        os.kill(self.pid(), signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT a paused server."""
        os.kill(self.pid(), signal.SIGCONT)
        self.paused = False


class OwnBrokers:
    """Kafka and PostgreSQL under ``state_dir``, on free ports; each started on demand."""

    def __init__(
        self, state_dir: Path, root: Path | None = None, *, secure_kafka: bool = False
    ) -> None:
        self.root = root or repository_root()
        self.state_dir = state_dir
        self.certs_dir = state_dir / "certs"
        #: The secured broker's password files and CA (made when it starts).
        self.kafka_credentials = KafkaCredentials(
            state_dir / "kafka" / "credentials", self.certs_dir / "ca.pem"
        )
        state_dir.mkdir(parents=True, exist_ok=True)
        kafka_port, controller_port, pg_port = free_port(), free_port(), free_port()
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL")
        }
        env.update(
            RUMMY_STATE_DIR=str(state_dir),
            RUMMY_KAFKA_PORT=str(kafka_port),
            RUMMY_KAFKA_CONTROLLER_PORT=str(controller_port),
            RUMMY_PG_PORT=str(pg_port),
        )
        env.pop("RUMMY_KAFKA_SECURE", None)
        if secure_kafka:
            env.update(RUMMY_KAFKA_SECURE="1", RUMMY_CERTS_DIR=str(self.certs_dir))
        self.kafka = OwnServer("kafka", self.root, env, f"{HOST}:{kafka_port}")
        self.postgres = OwnServer(
            "postgres", self.root, env, f"postgresql://rummy:rummy@{HOST}:{pg_port}/rummy"
        )

    def start_kafka(self) -> str:
        """Start the broker; its bootstrap address ``127.0.0.1:<port>``."""
        self.kafka.start()
        return self.kafka.address

    def kafka_security(self, user: str, password: str | None = None) -> KafkaSecurity:
        """How a client connects to the secured broker as ``User:<user>`` (``password``: another
        than the one it was formatted with)."""
        return self.kafka_credentials.security(user, password)

    def grant_kafka(self, prefix: str) -> None:
        """Make the secured broker's ACLs (rummy_platform.eventlog.kafka_acls) for ``prefix``."""
        self.kafka._script("acls", prefix)

    def start_postgres(self) -> str:
        """Start the server; its ``postgresql://`` URL (role rummy may create databases)."""
        self.postgres.start()
        return self.postgres.address

    def stop(self) -> None:
        """Stop whatever was started (errors of one do not keep the other running)."""
        for server in (self.kafka, self.postgres):
            with contextlib.suppress(StackError, OSError):
                server.stop()

    def __enter__(self) -> OwnBrokers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
