"""One more process of a service of a running :class:`rummy_ops.stack.Stack`, for tests that kill,
restart or duplicate a service (the stack itself starts each service once).

The process runs with the stack's environment for that service (same brokers, database, topic
prefix, token secret and clock speed), on the stack's ports or on others, and logs to
``<stack log dir>/<service>-<label>.log``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from rummy_ops.stack import Stack, check_health, free_port


class ExtraService:
    """``python -m rummy_<service>`` started from ``stack``'s configuration. ``same_ports``: on
    the stack's gRPC and metrics ports for the service (to replace it), else on free ones;
    ``ports`` (gRPC, metrics): on those (to replace another extra process)."""

    def __init__(
        self,
        stack: Stack,
        service: str,
        label: str,
        same_ports: bool = True,
        ports: tuple[int, int] | None = None,
    ) -> None:
        self.service = service
        self.log_path = stack.config.log_dir / f"{service}-{label}.log"
        grpc_port, metrics_port = ports or (
            stack.config.ports[service] if same_ports else (free_port(), free_port())
        )
        self.address = f"127.0.0.1:{grpc_port}"
        self.metrics_port = metrics_port
        self._env = stack.config.service_env(
            service, stack.kafka_bootstrap_servers, stack.database_url, os.environ
        )
        self._env.update(RUMMY_GRPC_PORT=str(grpc_port), RUMMY_METRICS_PORT=str(metrics_port))
        self._root = stack.config.root
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> ExtraService:
        """Start the process; return once it answers SERVING. Raises RuntimeError when it exits
        or is not serving within ``timeout`` seconds."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", f"rummy_{self.service}"],
                cwd=self._root,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while check_health(self.address, timeout=1.0) != "SERVING":
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.service} exited ({self.process.returncode}); see {self.log_path}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.service} not SERVING in {timeout:.0f} s")
            time.sleep(0.2)
        return self

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds. Idempotent."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def kill_stack_service(
    stack: Stack, service: str, timeout: float = 15.0, sig: signal.Signals = signal.SIGKILL
) -> None:
    """Send ``sig`` (default SIGKILL) to ``service``'s process group as the stack started it;
    wait until it is gone. Raises RuntimeError if it still runs after ``timeout`` seconds."""
    os.killpg(stack.pids[service], sig)
    deadline = time.monotonic() + timeout
    while stack.health()[service].startswith("exited") is False:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{service} still running after {sig.name}")
        time.sleep(0.1)


def stop_stack_service(stack: Stack, service: str) -> None:
    """SIGTERM ``service`` as the stack started it (a graceful stop); wait until it is gone."""
    kill_stack_service(stack, service, sig=signal.SIGTERM)
