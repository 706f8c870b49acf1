"""The table service killed mid-hand and restarted.

The hand continues from the state replayed from the table stream and ends with the result the
same commands give in a clean run. (A second instance no longer fences the first: instances
share the tables by partition, see tests/e2e/test_table_takeover.py and the zombie test in
services/table/tests/test_table_zombie_fencing.py.) Tables: point value 10 hundredths,
commission 500 bps; players granted 5000 hundredths; turns of 600 s (60 s at the session's
clock speed), so no deadline passes while a process restarts.

The replacement table processes stay up until the end of the session on the stack's own table
port, so the tests that run later still reach a table service.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.stack import Stack
from rummy_testing.players import (
    Operator,
    Player,
    Table,
    next_turn,
    on_turn,
    rule_set,
    seed_and_wait_for_play,
)
from rummy_testing.processes import ExtraService, kill_stack_service, stop_stack_service
from rummy_testing.stacks import RunningStack


class _TableProcesses:
    """The table process serving the stack's table port (the stack's own until replaced)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.started: list[ExtraService] = []

    def kill_current(self) -> None:
        """SIGKILL the table process now serving the stack's table port."""
        if self.started:
            current = self.started[-1]
            assert current.process is not None
            current.process.kill()
            current.process.wait()
        else:
            kill_stack_service(self.stack, "table")

    def stop_current(self) -> None:
        """SIGTERM the table process now serving the stack's table port (it leaves its consumer
        group at once, so the next instance gets the inputs without a session timeout)."""
        if self.started:
            self.started[-1].stop()
        else:
            stop_stack_service(self.stack, "table")

    def replace(self, label: str) -> ExtraService:
        return self.start(label, same_ports=True)

    def start(self, label: str, same_ports: bool) -> ExtraService:
        extra = ExtraService(self.stack, "table", label, same_ports=same_ports).start()
        if same_ports:
            self.started.append(extra)
        return extra


@pytest.fixture(scope="session")
def table_processes(rummy_stack: RunningStack) -> Iterator[_TableProcesses]:
    processes = _TableProcesses(rummy_stack.stack)
    yield processes
    for extra in processes.started:
        extra.stop()


def _seated_hand(
    operator: Operator, rummy_stack: RunningStack
) -> tuple[Table, Player, Player, api.PlayerView]:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500, rule_set(turn_seconds=600))
    players = table.seated("restart", 2, grant=5000)
    view = seed_and_wait_for_play(players)
    first = on_turn(players, view)
    second = next(p for p in players if p is not first)
    return table, first, second, view


def _same_state(before: api.PlayerView, after: api.PlayerView) -> None:
    for field in (
        "hand_id",
        "stream_version",
        "turn_no",
        "turn_seat",
        "my_cards",
        "discard_pile",
        "stock_count",
        "wild_cut",
        "phase",
    ):
        assert getattr(after, field) == getattr(before, field), field


def _middle_drop_ends_it(operator: Operator, dropper: Player, winner: Player, turn: int) -> None:
    """``dropper`` drops on its second turn (a middle drop, 40 points): 40 x 10 = 400; commission
    floor(400 x 500 / 10000) = 20; the winner gets 380."""
    assert dropper.drop(turn).points == 40
    result = winner.wait_phase(api.HAND_PHASE_ENDED).result
    assert {r.account_id: (r.outcome, r.points) for r in result.results} == {
        dropper.account_id: ("middle_drop", 40),
        winner.account_id: ("won", 0),
    }
    money = {line.account_id: line.amount_hundredths for line in result.settlement}
    assert money == {dropper.account_id: -400, winner.account_id: 380}
    assert result.commission_hundredths == 20
    assert operator.settled_balances([dropper.account_id, winner.account_id]) == {
        dropper.account_id: 4600,
        winner.account_id: 5380,
    }


def test_a_hand_continues_after_the_table_service_is_killed_and_restarted(
    operator: Operator, rummy_stack: RunningStack, table_processes: _TableProcesses
) -> None:
    table, first, second, view = _seated_hand(operator, rummy_stack)
    try:
        first.draw_and_discard_drawn()
        turn = next_turn([first, second], view.turn_no)
        assert turn is not None
        turn_no = turn.turn_no
        before = {p: p.wait(lambda v: v.turn_no == turn_no) for p in (first, second)}
        seen = {p: len(p.views) for p in (first, second)}

        table_processes.kill_current()  # SIGKILL: no goodbye, no flush
        table_processes.replace("restarted")

        # Each player's stream reconnects and opens with a snapshot rebuilt from the log.
        for p in (first, second):

            def reconnected(_v: api.PlayerView, p: Player = p) -> bool:
                return len(p.views) > seen[p]

            after = p.wait(reconnected, 60)
            _same_state(before[p], after)
        # The hand goes on: the second seat plays its turn, the first drops in its second turn.
        second.draw_and_discard_drawn()
        turn = next_turn([first, second], turn.turn_no)
        assert turn is not None and on_turn([first, second], turn) is first
        _middle_drop_ends_it(operator, first, second, turn.turn_no)
    finally:
        table.close()
