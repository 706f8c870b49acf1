"""``rummy up --prometheus`` as an operator runs it (issue 31), over the test brokers, on free
ports, in a database and under a topic prefix of its own: its Prometheus answers ``/-/ready`` and
scrapes every service (each target up); a SIGKILLed table service is started again by ``rummy up``
and answers SERVING on its port within 60 s, the log line and the status line saying so (restarts
1, last exit -9); Ctrl-C stops everything, Prometheus included, and exits 0."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from rummy_ops.local_prometheus import PROMETHEUS_PORT_VARIABLE, prometheus_ready
from rummy_ops.stack import SERVICES, check_health, free_port, stop_process
from rummy_platform.ports import GRPC, METRICS, stack_port_variable
from rummy_testing.service_process import drop_database
from rummy_testing.stacks import database_url_named, tls_client, tls_options
from rummy_testing.token_keys import token_environment

RUMMY = Path(sys.executable).with_name("rummy")
#: Seconds `rummy up` gets to start the brokers' topics, the five services and Prometheus.
START_TIMEOUT_S = 240.0
#: Seconds a killed service gets to be restarted and SERVING again.
RESTART_TIMEOUT_S = 60.0


@dataclass
class Up:
    """A running ``rummy up`` and every line it printed so far."""

    process: subprocess.Popen[str]
    grpc_ports: dict[str, int]
    prometheus_url: str
    lines: list[str] = field(default_factory=list)

    def wait_for(self, pattern: str, timeout: float, after: int = 0) -> re.Match[str]:
        """The first line (from the ``after``-th) matching ``pattern``; AssertionError with the
        output when none comes within ``timeout`` seconds or `rummy up` exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if found := re.search(pattern, line):
                    return found
            if self.process.poll() is not None:
                break
            time.sleep(0.25)
        raise AssertionError(f"no line matching {pattern!r}; output:\n" + "\n".join(self.lines))


@pytest.fixture
def rummy_up(kafka_bootstrap: str, database_url: str) -> Iterator[Up]:
    run = uuid.uuid4().hex[:8]
    name = f"rummy_up_{run}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    grpc_ports = {service: free_port() for service in SERVICES}
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "DATABASE_URL": database_url_named(database_url, name),
        "RUMMY_TOPIC_PREFIX": f"up-{run}-",
        **token_environment(),
        PROMETHEUS_PORT_VARIABLE: str(prometheus_port := free_port()),
    }
    for service in SERVICES:
        env[stack_port_variable(service, GRPC)] = str(grpc_ports[service])
        env[stack_port_variable(service, METRICS)] = str(free_port())
    process = subprocess.Popen(
        [
            str(RUMMY),
            "up",
            "--prometheus",
            "--interval",
            "1",
            "--clock-speed",
            "10",
            *tls_options(),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    up = Up(process, grpc_ports, f"http://127.0.0.1:{prometheus_port}")
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: up.lines.extend(process.stdout or ()), daemon=True)
    reader.start()
    try:
        yield up
    finally:
        stop_process(process, signal.SIGINT, grace_s=60.0)
        drop_database(database_url, name)


def prometheus_api(url: str, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/api/v1/{path}", timeout=10) as reply:
        body = json.load(reply)
    assert body["status"] == "success", body
    data: dict[str, Any] = body["data"]
    return data


@pytest.mark.timeout(600)
def test_rummy_up_restarts_a_killed_service_and_runs_a_prometheus_scraping_them(
    rummy_up: Up,
) -> None:
    started = rummy_up.wait_for(r"started (.*)", START_TIMEOUT_S)
    pids = dict((name, int(pid)) for name, pid in re.findall(r"(\w+) pid (\d+)", started.group(1)))
    assert set(pids) == set(SERVICES), started.group(0)
    rummy_up.wait_for(rf"prometheus {re.escape(rummy_up.prometheus_url)} ", START_TIMEOUT_S)
    assert prometheus_ready(rummy_up.prometheus_url)

    # every service a target of the Prometheus, each scraped and up (15 s scrape interval)
    def health() -> dict[str, str]:
        targets = prometheus_api(rummy_up.prometheus_url, "targets")["activeTargets"]
        return {t["labels"]["job"]: t["health"] for t in targets}

    deadline = time.monotonic() + 90.0
    while set(health().values()) != {"up"} and time.monotonic() < deadline:
        time.sleep(1.0)
    assert health() == {f"rummy-{service}": "up" for service in SERVICES}

    # SIGKILL the table service: rummy up says so, starts it again, and it is SERVING again
    before = len(rummy_up.lines)
    os.kill(pids["table"], signal.SIGKILL)
    killed = time.monotonic()
    rummy_up.wait_for(r"table exited with status -9 \(SIGKILL\); restarting it in 1 s", 30.0)
    restarted = rummy_up.wait_for(r"restarted table \(pid (\d+), restart 1\)", 30.0, before)
    assert int(restarted.group(1)) != pids["table"]
    address = f"127.0.0.1:{rummy_up.grpc_ports['table']}"
    while check_health(address, tls=tls_client()) != "SERVING":
        assert time.monotonic() - killed < RESTART_TIMEOUT_S, "\n".join(rummy_up.lines)
        time.sleep(0.5)
    status = rf"table {re.escape(address)} SERVING \(restarts 1, last exit -9 \(SIGKILL\)\)"
    rummy_up.wait_for(status, RESTART_TIMEOUT_S, before)
    assert rummy_up.process.poll() is None

    # Ctrl-C: everything stops, Prometheus with it, and rummy up exits 0
    rummy_up.process.send_signal(signal.SIGINT)
    assert rummy_up.process.wait(120) == 0, "\n".join(rummy_up.lines)
    assert not prometheus_ready(rummy_up.prometheus_url)
    assert check_health(address, timeout=1.0) == "no answer"
