"""A real Prometheus server for tests: Debian's ``prometheus`` binary (2.42, installed by
``deploy/local/prometheus.sh install``) on loopback, with its configuration and TSDB in a folder
the test gives, and a small client of its HTTP API.

``require_tool("prometheus")`` finds a binary on PATH; when it is missing the test fails (README's
test command installs the package first, so a missing one is a broken install, never a skip).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rummy_ops.local_prometheus import prometheus_ready
from rummy_ops.stack import free_port, stop_process
from rummy_testing.tools import required_executable
from rummy_testing.waiting import wait_until  # noqa: F401 - re-exported: older imports name it here

START_TIMEOUT_S = 60.0


def require_tool(name: str) -> str:
    """The path of ``name`` (``prometheus``, ``promtool``) on PATH; fails the test when it is
    missing (:func:`rummy_testing.tools.required_executable`)."""
    return required_executable(name, "bash deploy/local/prometheus.sh install")


@dataclass
class Prometheus:
    """A started Prometheus answering at ``url`` (``http://127.0.0.1:<port>``)."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def api(self, path: str, **params: str | list[str]) -> Any:
        """GET ``/api/v1/<path>`` and return its ``data``; raises AssertionError when the
        answer is not ``status: success``."""
        query = urllib.parse.urlencode(params, doseq=True)
        url = f"{self.url}/api/v1/{path}" + (f"?{query}" if query else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:
                body = json.load(reply)
        except urllib.error.HTTPError as error:
            body = json.load(error)
        assert body.get("status") == "success", f"{url}: {body}"
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector ``expr`` evaluates to now (each item has ``metric`` and
        ``value``)."""
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", data
        return list(data["result"])

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines Prometheus logged."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def running_prometheus(
    binary: str, config: str, folder: Path, files: Mapping[str, Path] | None = None
) -> Iterator[Prometheus]:
    """Prometheus with configuration text ``config`` (written to ``folder/prometheus.yml``; the
    ``files`` it names, e.g. rule files, copied beside it under their keys) and its TSDB in
    ``folder/data``, on a free loopback port. Yields once ``/-/ready`` answers; raises
    AssertionError with its log when it exits or is not ready within a minute. Stopped (SIGTERM,
    then SIGKILL) afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    config_path = folder / "prometheus.yml"
    config_path.write_text(config)
    for name, source in (files or {}).items():
        shutil.copyfile(source, folder / name)
    port = free_port()
    log_path = folder / "prometheus.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    prometheus = Prometheus(f"http://127.0.0.1:{port}", process, log_path)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not prometheus_ready(prometheus.url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"Prometheus did not start:\n{prometheus.log_tail()}")
            time.sleep(0.2)
        yield prometheus
    finally:
        stop_process(process)
