"""``rummy up``'s supervisor (``rummy_ops.supervisor``) over a stand-in stack and clock: what it
says when a service exits and when it is started again, its status line, and the sixth exit
within ten minutes ending it with the service and every exit status named."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from rummy_ops.stack import Stack, StackError
from rummy_ops.supervisor import Supervisor, exit_status


class FakeStack:
    """Two services whose exits a test sets; ``respawn`` gives the next pid."""

    def __init__(self) -> None:
        self.codes: dict[str, int | None] = {"ledger": None, "table": None}
        self.pids = {"ledger": 100, "table": 101}

    def exit_code(self, service: str) -> int | None:
        return self.codes[service]

    def respawn(self, service: str) -> int:
        assert self.codes[service] is not None, "respawned while running"
        self.codes[service] = None
        self.pids[service] += 10
        return self.pids[service]

    def log_path(self, service: str) -> Path:
        return Path(f"logs/{service}.log")

    def health(self) -> dict[str, str]:
        return {s: "SERVING" if c is None else f"exited ({c})" for s, c in self.codes.items()}

    def address(self, service: str) -> str:
        return f"127.0.0.1:{15050 + len(service)}"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def supervised() -> tuple[FakeStack, Clock, list[str], Supervisor]:
    stack, clock, said = FakeStack(), Clock(), list[str]()
    return stack, clock, said, Supervisor(cast(Stack, stack), said.append, clock=clock)


def test_an_exited_service_is_started_again_after_its_delay_and_its_status_shows_it() -> None:
    stack, clock, said, supervisor = supervised()
    stack.codes["table"] = -9
    clock.now += 5.0
    supervisor.tick()
    assert said == [
        "table exited with status -9 (SIGKILL); restarting it in 1 s (restart 1 of at most 5 "
        "within 10 minutes; see logs/table.log)"
    ]
    assert "table 127.0.0.1:15055 exited (-9), restart in 1 s" in supervisor.status()
    clock.now += 0.5
    supervisor.tick()
    assert stack.pids["table"] == 101 and len(said) == 1  # not yet
    clock.now += 0.5
    supervisor.tick()
    assert said[1:] == ["restarted table (pid 111, restart 1)"]
    assert supervisor.status() == (
        "ledger 127.0.0.1:15056 SERVING  "
        "table 127.0.0.1:15055 SERVING (restarts 1, last exit -9 (SIGKILL))"
    )


def test_the_sixth_exit_within_ten_minutes_gives_up_naming_the_service_and_its_statuses() -> None:
    stack, clock, said, supervisor = supervised()
    for code in (1, 1, 2, -9, 1):
        stack.codes["ledger"] = code
        supervisor.tick()
        clock.now += 60.0  # past any delay (at most 16 s here)
        supervisor.tick()
        assert stack.codes["ledger"] is None
    stack.codes["ledger"] = 3
    with pytest.raises(StackError) as raised:
        supervisor.tick()
    assert str(raised.value) == (
        "ledger exited 6 times within 10 minutes (exit statuses 1, 1, 2, -9 (SIGKILL), 1, 3): "
        "gave up after 5 restarts; see logs/ledger.log"
    )


def test_an_exit_status_names_the_signal_that_ended_the_process() -> None:
    assert [exit_status(c) for c in (0, 1, -15, -9, -99)] == [
        "0",
        "1",
        "-15 (SIGTERM)",
        "-9 (SIGKILL)",
        "-99",
    ]
