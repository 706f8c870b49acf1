"""Closing a table mid-hand with ``rummy close-table`` and reading the operator audit trail with
``rummy audit``, against the five services on the real brokers.

Table: 2 players, point value 10 hundredths per point, commission 500 bps; each granted 5000.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from click.testing import CliRunner

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.cli import main
from rummy_platform.auth import Role
from rummy_testing.players import Operator, Table, on_turn, seed_and_wait_for_play
from rummy_testing.stacks import RunningStack


def rummy(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def audited(
    rummy_stack: RunningStack, targets: set[str], count: int, timeout: float = 60.0
) -> list[dict[str, Any]]:
    """The ``rummy audit --json`` entries on ``targets``, once there are ``count`` of them (the
    grants come through the ledger's outbox) or ``timeout`` seconds passed."""
    deadline = time.monotonic() + timeout
    while True:
        out = rummy(
            "audit", "--json", "--bootstrap", rummy_stack.kafka_bootstrap,
            "--topic-prefix", rummy_stack.topic_prefix,
        )  # fmt: skip
        entries = [e for e in map(json.loads, out.splitlines()) if e["target"] in targets]
        if len(entries) >= count or time.monotonic() > deadline:
            return entries
        time.sleep(0.5)


def test_a_table_closed_mid_hand_plays_the_hand_out_stands_everyone_up_and_is_audited(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    address = rummy_stack.endpoints.table
    table = Table(operator, address, 4, 10, 500)
    closer = f"ops-closer-{uuid.uuid4().hex[:6]}"
    token = operator.authority.issue(closer, Role.OPERATOR, 600)
    close_id = str(uuid.uuid4())
    close = ("close-table", table.table_id, "--address", address, "--token", token,
             "--request-id", close_id, "--reason", "end of the e2e session")  # fmt: skip
    try:
        players = table.seated("close", 2, grant=5000)
        view = seed_and_wait_for_play(players)
        hand_id = view.hand_id

        assert "closing: the current hand plays out" in rummy(*close, "--no-wait")
        listed = {
            t.table_id: t.state
            for t in players[0].call("ListTables", api.ListTablesRequest()).tables
        }
        assert listed[table.table_id] == api.TABLE_STATE_CLOSING

        # The hand plays on: the seat on turn drops; the other wins and the ledger settles.
        loser = on_turn(players, view)
        loser.drop(turn_no=view.turn_no)
        # A watch sends the latest state: the hand's ENDED view may be passed over by the
        # table's next changes (settled, everyone stood up, closed: a closed table's view names
        # no hand), so wait for any view past the hand; its result is asked for below.
        players[0].wait(
            lambda v: (
                v.table_state == api.TABLE_STATE_CLOSED
                or (
                    v.hand_id == hand_id
                    and v.phase in (api.HAND_PHASE_ENDED, api.HAND_PHASE_WAITING)
                )
            ),
            timeout=30,
            what="the hand over",
        )
        result = (
            players[0]
            .call(
                "GetHandResult", api.GetHandResultRequest(table_id=table.table_id, hand_id=hand_id)
            )
            .result
        )
        assert result.hand_id == hand_id and result.winner_seat != view.turn_seat  # not the dropper
        # The same request id again follows the table until it is closed.
        assert f"table {table.table_id} closed" in rummy(*close, "--timeout", "60")
        closed = players[0].wait(lambda v: v.table_state == api.TABLE_STATE_CLOSED)
        assert not closed.HasField("my_seat")  # stood up
        balances = operator.settled_balances([p.account_id for p in players])
        assert balances[loser.account_id] == 5000 - 20 * 10
        tables = players[0].call("ListTables", api.ListTablesRequest()).tables
        assert table.table_id not in {t.table_id for t in tables}
        # No hand starts again, long after the start delay (20 s at a tenfold clock: 2 s).
        time.sleep(4)
        assert players[0].view.hand_id in ("", hand_id)  # no new hand ("": closed, none)
    finally:
        table.close()

    accounts = {p.account_id for p in players}
    entries = audited(rummy_stack, {table.table_id, *accounts}, 4)
    actions = sorted((e["action"], e["target"]) for e in entries)
    assert actions == sorted(
        [("open-table", table.table_id), ("close-table", table.table_id)]
        + [("grant", a) for a in accounts]
    )
    by_action = {e["action"]: e for e in entries}
    opener = by_action["open-table"]["operator"]
    assert opener.startswith("ops-")
    assert all(e["operator"] == opener for e in entries if e["action"] == "grant")
    assert by_action["close-table"]["operator"] == closer
    assert by_action["close-table"]["details"] == {"reason": "end of the e2e session"}
    # The plain listing: one line per action with time, operator, action and target.
    plain = rummy(
        "audit", "--operator", closer, "--bootstrap", rummy_stack.kafka_bootstrap,
        "--topic-prefix", rummy_stack.topic_prefix,
    )  # fmt: skip
    (line,) = plain.splitlines()
    assert line.split("  ")[1:4] == [closer, "close-table", table.table_id]
