"""The Prometheus of ``rummy up --prometheus``: Debian's ``prometheus`` binary (on PATH; ``bash
deploy/local/prometheus.sh install`` installs it) on ``127.0.0.1:<port>`` (15090, or
``RUMMY_PROMETHEUS_PORT``), with the repository's ``deploy/prometheus/prometheus.yml`` (its five
jobs' targets moved to the stack's metrics ports) and ``alerts.yml`` as its rule file. Its
configuration, log and TSDB live in ``.local/prometheus/<port>/`` and the data stays between
runs. It is stopped with the stack (SIGTERM, then SIGKILL), and asked by the kernel to stop
(SIGTERM) should the process that started it die first."""

from __future__ import annotations

import ctypes
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from rummy_ops.stack import HOST, StackError, stop_process
from rummy_platform.ports import DEFAULT_PORTS, PROMETHEUS_PORT, ListeningPort

#: The variable that moves the port (default :data:`~rummy_platform.ports.PROMETHEUS_PORT`).
PROMETHEUS_PORT_VARIABLE = "RUMMY_PROMETHEUS_PORT"
#: Seconds Prometheus gets to answer ``/-/ready``.
READY_TIMEOUT_S = 60.0
_PR_SET_PDEATHSIG = 1


def prometheus_config(template: str, metrics_ports: Mapping[str, int]) -> str:
    """``template`` (the text of ``deploy/prometheus/prometheus.yml``) with each service's target
    ``"127.0.0.1:<default metrics port>"`` replaced by ``metrics_ports[service]``. Raises
    StackError when a service of ``metrics_ports`` has no such target in it."""
    for service, port in metrics_ports.items():
        default = f'"{HOST}:{DEFAULT_PORTS[service][1]}"'
        if default not in template:
            raise StackError(f"deploy/prometheus/prometheus.yml has no target {default}")
        template = template.replace(default, f'"{HOST}:{port}"')
    return template


def listening_port(port: int) -> ListeningPort:
    """The port of :class:`LocalPrometheus` for the check before anything starts."""
    return ListeningPort(port, "rummy up's Prometheus", PROMETHEUS_PORT_VARIABLE)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalPrometheus:
    """One Prometheus scraping the metrics ports ``metrics_ports`` (service -> port) of the
    checkout ``root``, on ``port``."""

    def __init__(
        self, root: Path, metrics_ports: Mapping[str, int], port: int = PROMETHEUS_PORT
    ) -> None:
        self.url = f"http://{HOST}:{port}"
        self.folder = root / ".local" / "prometheus" / str(port)
        self._root = root
        self._port = port
        self._metrics_ports = dict(metrics_ports)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        """Where Prometheus writes its output."""
        return self.folder / "prometheus.log"

    def start(self) -> None:
        """Write the configuration, start Prometheus and return once ``/-/ready`` answers.
        Raises StackError when the binary is missing, or it exits or is not ready within
        :data:`READY_TIMEOUT_S` seconds (stopped first)."""
        binary = shutil.which("prometheus")
        if binary is None:
            raise StackError(
                "--prometheus: no prometheus on PATH; `bash deploy/local/prometheus.sh install`"
            )
        deploy = self._root / "deploy" / "prometheus"
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "prometheus.yml"
        config.write_text(
            prometheus_config((deploy / "prometheus.yml").read_text(), self._metrics_ports)
        )
        shutil.copyfile(deploy / "alerts.yml", self.folder / "alerts.yml")
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={self.folder / 'data'}",
                    f"--web.listen-address={HOST}:{self._port}",
                ],
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches `rummy up` only, which stops it
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - prctl only, before exec
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self.ready():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise StackError(f"Prometheus did not start on {self.url}; see {self.log_path}")
            time.sleep(0.25)

    def ready(self) -> bool:
        """True when ``/-/ready`` answers 200 within 2 s."""
        return prometheus_ready(self.url)

    def stop(self) -> None:
        """SIGTERM, SIGKILL after 20 s; idempotent."""
        process, self._process = self._process, None
        if process is not None:
            stop_process(process)


def prometheus_ready(url: str) -> bool:
    """True when the Prometheus at ``url`` (``http://host:port``) answers ``/-/ready`` with 200
    within 2 s."""
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as reply:
            return bool(reply.status == 200)
    except (OSError, urllib.error.URLError):
        return False
