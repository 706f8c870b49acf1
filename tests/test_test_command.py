"""README's test command, ``bash deploy/local/test.sh``, run with nothing exported (no
``KAFKA_BOOTSTRAP_SERVERS``, ``DATABASE_URL`` or ``CI``): the brokers its run started are stopped
when it ends, passed, failed or interrupted (Ctrl-C); brokers it found running stay up; the unit
tier starts and installs nothing.

Each run is on a one-file suite whose test asks for ``kafka_bootstrap``, with a state folder and
ports of its own (``RUMMY_STATE_DIR``, ``RUMMY_KAFKA_PORT``...), so the broker the fixture starts
is this test's, never the shared one.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rummy_ops.stack import free_port

ROOT = Path(__file__).resolve().parents[1]
TEST_SH = ROOT / "deploy" / "local" / "test.sh"
KAFKA_SH = ROOT / "deploy" / "local" / "kafka.sh"


def answering(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


#: slow and integration: the test command run as a process, and a Kafka broker of its own
#: (docs/testing.md#tests).
pytestmark = [pytest.mark.slow, pytest.mark.integration]

SUITE = """
import os, pathlib, time

def test_has_a_broker(kafka_bootstrap):
    assert kafka_bootstrap
    pathlib.Path(os.environ["RUNNING_MARK"]).write_text(kafka_bootstrap)
    time.sleep(float(os.environ.get("HOLD_S", "0")))

def test_fails():
    assert os.environ.get("FAIL") != "1"
"""


@dataclass
class Checkout:
    """The environment of a test command run with a state folder and ports of its own."""

    env: dict[str, str]
    suite: Path
    mark: Path
    kafka_port: int

    def run_test_sh(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        """``bash deploy/local/test.sh`` on the one-file suite, in a process group of its own
        (as a terminal runs a foreground command), output to ``out.log`` beside the suite."""
        command = ["bash", str(TEST_SH), "-c", str(ROOT / "pyproject.toml")]
        command += ["--rootdir", str(ROOT), "-p", "no:cacheprovider", "-q", *args, str(self.suite)]
        log = open(self.suite.parent / "out.log", "w")  # noqa: SIM115 - the process owns it
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env, **extra},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            # A terminal's foreground command gets SIGINT's default action, even when this suite
            # itself was started in the background (where SIGINT is ignored, and an ignored
            # signal stays ignored across exec).
            preexec_fn=_default_sigint,
        )

    def output(self) -> str:
        return (self.suite.parent / "out.log").read_text()

    def kafka(self, command: str) -> subprocess.CompletedProcess[str]:
        """``deploy/local/kafka.sh <command>`` in this checkout's state folder and ports."""
        return subprocess.run(
            ["bash", str(KAFKA_SH), command],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def broker_running(self) -> bool:
        """True when a broker started from this state folder runs (``kafka.sh pid``), or
        anything answers on its port."""
        return self.kafka("pid").returncode == 0 or answering(self.kafka_port)


@pytest.fixture
def checkout(tmp_path: Path) -> Iterator[Checkout]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL", "CI", "HYPOTHESIS_PROFILE")
        and not k.startswith("PYTEST_")
    }
    kafka_port = free_port()
    env |= {
        "RUMMY_STATE_DIR": str(tmp_path / "state"),
        "RUMMY_KAFKA_PORT": str(kafka_port),
        "RUMMY_KAFKA_CONTROLLER_PORT": str(free_port()),
        "RUMMY_PG_PORT": str(free_port()),
        "RUNNING_MARK": str(tmp_path / "running"),
    }
    suite = tmp_path / "suite" / "test_with_a_broker.py"
    suite.parent.mkdir()
    suite.write_text(SUITE)
    made = Checkout(env, suite, tmp_path / "running", kafka_port)
    try:
        yield made
    finally:
        made.kafka("stop")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def finished(process: subprocess.Popen[str], checkout: Checkout) -> int:
    try:
        return process.wait(240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError(f"test.sh did not end:\n{checkout.output()}") from None


def test_a_failed_run_stops_the_broker_it_started(checkout: Checkout) -> None:
    assert not checkout.broker_running()
    status = finished(checkout.run_test_sh(FAIL="1"), checkout)
    output = checkout.output()
    assert status == 1, output
    assert "1 failed, 1 passed" in output, output
    assert checkout.mark.exists(), output  # the broker was started, and answered
    assert "test.sh: stopping kafka (started by this test run" in output, output
    assert not checkout.broker_running(), output


def test_an_interrupted_run_stops_the_broker_it_started(checkout: Checkout) -> None:
    process = checkout.run_test_sh(HOLD_S="120")
    deadline = time.monotonic() + 180
    while not checkout.mark.exists():
        assert process.poll() is None, checkout.output()
        assert time.monotonic() < deadline, checkout.output()
        time.sleep(0.2)
    assert checkout.kafka("pid").returncode == 0, checkout.output()
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the foreground group
    status = finished(process, checkout)
    output = checkout.output()
    assert status != 0, output
    assert "test.sh: stopping kafka (started by this test run" in output, output
    assert not checkout.broker_running(), output


def test_a_broker_running_before_the_run_is_reused_and_left_running(checkout: Checkout) -> None:
    started = checkout.kafka("start")
    assert started.returncode == 0, started.stdout + started.stderr
    pid = checkout.kafka("pid").stdout.strip()
    status = finished(checkout.run_test_sh(), checkout)
    output = checkout.output()
    assert status == 0, output
    assert "2 passed" in output and "stopping kafka" not in output, output
    assert checkout.kafka("pid").stdout.strip() == pid, output


def test_the_unit_tier_installs_nothing_and_starts_no_broker(checkout: Checkout) -> None:
    status = finished(checkout.run_test_sh("-m", "not integration", "-n", "0"), checkout)
    output = checkout.output()
    assert status == 0, output  # test_fails passes (FAIL unset); the broker test is deselected
    assert "1 passed, 1 deselected" in output, output
    assert "test.sh: tools ready" not in output and "kafka:" not in output, output
    assert not checkout.mark.exists() and not checkout.broker_running(), output
