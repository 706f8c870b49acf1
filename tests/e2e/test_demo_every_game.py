"""``rummy demo`` with no ``--game`` (README's main command) plays every game side by side: more
tables than one account may watch at once (the table service's
RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT, 8). Every table must play its part to the end by itself: each
points table its share of hands, each format table one match, and the books balance. (Ten tables
with one operator account for every watch hung here: two tables were never watched, and a
finished table's watch was never cancelled.)"""

from __future__ import annotations

from typing import Any

from rummy_ops.demo import DemoOptions, play
from rummy_ops.demo.plans import default_games, tables_of
from rummy_ops.demo.verify import replay_verdict
from rummy_table.config import DEFAULT_MAX_WATCHES_PER_ACCOUNT

#: tests/e2e/conftest.py's RunningStack (conftest modules are not importable by name)
RunningStack = Any


def test_the_default_demo_plays_every_table_to_its_end(rummy_stack: RunningStack) -> None:
    tables = tables_of(default_games())
    assert len(tables) > DEFAULT_MAX_WATCHES_PER_ACCOUNT  # what this test is about
    options = DemoOptions(
        hands=12,
        seed=5,
        tables=tables,
        turn_seconds=10,
        seed_window_seconds=2,
        start_delay_seconds=1,
        timeout_seconds=240,
    )
    report = play(rummy_stack.endpoints, options, echo=lambda _line: None, progress=False)
    logs = rummy_stack.log_tails(naming=list(report.tables.values()))
    assert report.finished, report.stopped_because + "\n" + logs
    assert not report.bot_errors, report.bot_errors[:3]
    matched = {record.table for record in report.matches}
    assert matched == {plan.name for plan in tables if plan.plays_match}
    points_tables = {plan.name for plan in tables if not plan.plays_match}
    assert points_tables <= {hand.table for hand in report.ended}
    assert not any(report.reserved.values())
    ok, text = replay_verdict(report)  # the demo's replay step (it also reads the games' money)
    assert ok, text
    assert report.conserved
