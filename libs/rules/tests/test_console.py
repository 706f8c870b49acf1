"""The console scripts' entry wrapper (``rummy_rules.console.run_console``, behind ``rummy`` and
``rummy-rules``): the entry's own exit status passes through; a reader that closes the pipe
ends the run quietly, whichever thread met it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from rummy_rules.console import CLOSED_PIPE_STATUS, run_console

#: A console script whose second thread prints until its reader goes away while the main thread
#: would wait two minutes: the closed pipe must end the whole run, quietly.
_THREAD_WRITER = """
import threading, time
from rummy_rules.console import run_console

def chatter():
    while True:
        print("a hand line " * 20)

def main():
    threading.Thread(target=chatter, daemon=True).start()
    time.sleep(120)
    return 0

run_console(main)
"""


@pytest.mark.parametrize(("body", "status"), [(lambda: 3, 3), (lambda: None, None)])
def test_the_entrys_exit_status_passes_through(
    body: object, status: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    with pytest.raises(SystemExit) as exited:
        run_console(body)  # type: ignore[arg-type]
    assert exited.value.code == status


def test_an_entry_that_exits_keeps_its_status(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)

    def refuses() -> int:
        raise SystemExit(2)

    with pytest.raises(SystemExit) as exited:
        run_console(refuses)
    assert exited.value.code == 2


@pytest.mark.integration  # starts a process
@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint", "no-sigint"])
def test_a_thread_that_meets_the_closed_pipe_ends_the_run_quietly(
    sigint: signal.Handlers,
) -> None:
    # `rummy demo | head -1`: the demo's tables print their hands from their own threads; also
    # where SIGINT is ignored (a command a non-interactive shell started in the background)
    process = subprocess.Popen(
        [sys.executable, "-c", _THREAD_WRITER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),  # noqa: PLW1509
    )
    assert process.stdout is not None and process.stderr is not None
    started = time.monotonic()
    assert process.stdout.readline().startswith("a hand line")
    process.stdout.close()  # the reader goes away
    stderr = process.stderr.read()
    process.wait(timeout=100)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert process.returncode == CLOSED_PIPE_STATUS
    assert time.monotonic() - started < 100  # ended by the pipe, not by its two-minute sleep
