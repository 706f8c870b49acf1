"""The counter of the rules' decisions: what reached ``decide``, by command and outcome."""

from __future__ import annotations

import pytest
from test_table_service import draw, on_turn, playing_table
from world import World, metrics_of

from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import FailedPrecondition, NotFound, PermissionDenied


def decisions(world: World) -> dict[tuple[str, str], float]:
    """(command, outcome) -> count, from the app's counter."""
    found: dict[tuple[str, str], float] = {}
    for metric in metrics_of(world.app).decisions.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                key = (sample.labels["command"], sample.labels["outcome"])
                found[key] = sample.value
    return found


def test_every_command_the_rules_judge_is_counted_by_outcome_and_nothing_refused_before() -> None:
    world = World()
    table_id, _ = playing_table(world)
    started = decisions(world)
    # The hand's start and the inputs of the other services were judged too.
    assert started[("StartHand", "accepted")] == 1
    assert started[("Deal", "accepted")] == 1
    account, view = on_turn(world, table_id)
    other = "bob" if account == "alice" else "alice"

    with pytest.raises(FailedPrecondition):
        draw(world, table_id, other, view)  # the rules refuse it: not that seat's turn
    stale = api.PlayerView()
    stale.CopyFrom(view)
    stale.turn_no = view.turn_no + 7
    with pytest.raises(FailedPrecondition):
        draw(world, table_id, account, stale)  # the rules refuse it: a turn not on
    draw(world, table_id, account, view)  # accepted

    # Refused before the rules: a stranger, another hand, an unknown table.
    with pytest.raises(PermissionDenied):
        draw(world, table_id, "mallory", view)
    elsewhere = api.PlayerView()
    elsewhere.CopyFrom(view)
    elsewhere.hand_id = "no-such-hand"
    with pytest.raises(FailedPrecondition, match="not the current hand"):
        draw(world, table_id, account, elsewhere)
    with pytest.raises(NotFound):
        draw(world, "no-such-table", account, view)

    counted = decisions(world)
    new = {k: v - started.get(k, 0) for k, v in counted.items() if v != started.get(k, 0)}
    assert new == {
        ("DrawFromStock", "not_your_turn"): 1,
        ("DrawFromStock", "stale_turn"): 1,
        ("DrawFromStock", "accepted"): 1,
    }


def test_replaying_the_table_stream_counts_no_decision() -> None:
    world = World()
    playing_table(world)
    world.app = world.new_app()  # a restarted instance: replay only
    assert decisions(world) == {}
