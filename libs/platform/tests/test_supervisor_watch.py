"""A service started by a supervisor (``RUMMY_SUPERVISOR_PID``) shuts down gracefully when that
supervisor is SIGKILLed; a service started by hand (no variable) keeps running as before.

Real processes: a small supervisor starts ``python -m probe_service`` (a ServiceHost service) in
its own session, as ``rummy demo`` does, and the test SIGKILLs the supervisor.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rummy_platform.service_main import SupervisorWatch
from rummy_testing.token_keys import token_environment

TESTS_DIR = Path(__file__).resolve().parent
#: The watch looks every 0.5 s; the probe's drain and hooks take well under a second.
EXIT_WITHIN_SECONDS = 10.0

SUPERVISOR = """
import os, subprocess, sys, time
env = dict(os.environ)
if sys.argv[2] == "supervised":
    env["RUMMY_SUPERVISOR_PID"] = str(os.getpid())
else:
    env.pop("RUMMY_SUPERVISOR_PID", None)
with open(sys.argv[1], "ab") as log:
    child = subprocess.Popen(
        [sys.executable, "-m", "probe_service"], env=env, stdin=subprocess.DEVNULL,
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
print(child.pid, flush=True)
time.sleep(600)
"""


def gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (absent, or a zombie nobody has reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return state in ("Z", "X")


def wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.1)
    return gone(pid)


def log_events(path: Path) -> list[str]:
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            events.append(json.loads(line).get("event", ""))
        except json.JSONDecodeError:
            events.append(line)
    return events


def start_supervisor(log: Path, mode: str) -> tuple[subprocess.Popen[str], int]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]),
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
    }
    supervisor = subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, str(log), mode],
        cwd=TESTS_DIR,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert supervisor.stdout is not None
    child = int(supervisor.stdout.readline())
    deadline = time.monotonic() + 20
    while "service started" not in log_events(log):
        assert time.monotonic() < deadline, f"probe did not start: {log.read_text()}"
        assert not gone(child), f"probe exited: {log.read_text()}"
        time.sleep(0.1)
    return supervisor, child


@pytest.fixture
def children() -> Iterator[list[int]]:
    started: list[int] = []
    yield started
    for pid in started:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


def orphaned(log: Path, mode: str, children: list[int]) -> int:
    """The pid of a service started by a supervisor (``start_supervisor(log, mode)``) that was
    then killed; the pid is added to ``children``."""
    supervisor, child = start_supervisor(log, mode)
    children.append(child)
    supervisor.kill()
    supervisor.wait(5)
    return child


@pytest.mark.integration
def test_a_supervised_service_shuts_down_gracefully_when_its_supervisor_is_killed(
    tmp_path: Path, children: list[int]
) -> None:
    log = tmp_path / "probe.log"
    child = orphaned(log, "supervised", children)
    assert wait_gone(child, EXIT_WITHIN_SECONDS), "the service outlived its supervisor"
    events = log_events(log)
    assert "supervisor gone; shutting down" in events
    assert events.index("supervisor gone; shutting down") < events.index("service stopped")
    assert "probe shutdown hook ran" in events


@pytest.mark.integration
def test_a_service_started_without_a_supervisor_pid_outlives_its_parent(
    tmp_path: Path, children: list[int]
) -> None:
    log = tmp_path / "probe.log"
    child = orphaned(log, "by hand", children)
    time.sleep(2.0)  # four watch periods: a supervised service would be stopping by now
    assert not gone(child)
    assert "service stopping" not in log_events(log)


def test_the_watch_acts_at_once_when_the_supervisor_died_before_it_started() -> None:
    called: list[str] = []
    not_my_parent = os.getppid() + 1_000_000
    watch = SupervisorWatch(not_my_parent, lambda: called.append("gone"), period_s=60)
    watch.start()
    deadline = time.monotonic() + 5
    while not called and time.monotonic() < deadline:
        time.sleep(0.01)
    watch.stop()
    assert called == ["gone"]


def test_the_watch_stays_quiet_while_the_parent_is_the_supervisor() -> None:
    called: list[str] = []
    watch = SupervisorWatch(os.getppid(), lambda: called.append("gone"), period_s=0.01)
    watch.start()
    time.sleep(0.3)
    watch.stop()
    assert watch.supervisor_alive() and called == []
