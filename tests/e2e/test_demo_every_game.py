"""``rummy demo`` with no ``--game`` (README's main command) plays every game side by side: more
tables than one account may watch at once (the table service's
RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT, 8). Every table must play its part to the end by itself: each
points table its share of hands, each format table one match, and the books balance. (Ten tables
with one operator account for every watch hung here: two tables were never watched, and a
finished table's watch was never cancelled.) A bot at each paid points table sets itself a daily
loss limit (plans.DEFAULT_TABLES): its seat is held back once a lost hand brings it within a
reservation of the limit, the others play on, and the replay re-checks every such refusal
against the limits in force then.

The run lasts as long as its longest match: the 6-seat race to 500 played 6 to 10 deals in
146-205 s of a 2-core machine shared with other test runs (2026-12-03, this test's own runs),
while the bots left every 500 turn with a meld to the clock; since they play each step of a
turn, the whole test took 72 s in one run (load average about 10). The timeouts below are hang
guards at about three times the slower figure."""

from __future__ import annotations

from typing import Any

import pytest

from rummy_ops.demo import DemoOptions, play
from rummy_ops.demo.plans import default_games, tables_of
from rummy_ops.demo.report import summary
from rummy_ops.demo.verify import replay_verdict
from rummy_table.config import DEFAULT_MAX_WATCHES_PER_ACCOUNT

#: tests/e2e/conftest.py's RunningStack (conftest modules are not importable by name)
RunningStack = Any


@pytest.mark.timeout(900)
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
        timeout_seconds=720,
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
    assert report.conserved, "\n".join(summary(report, (ok, text)))
    # The limited bots: each held back at most once (it sits out from then on), at least one
    # was, and each refusal is the day's loss limit, re-checked from the log.
    assert len(report.loss_limits) == sum(plan.loss_limited for plan in tables) == 2
    rechecks = report.limit_rechecks
    assert rechecks is not None and len(rechecks) > 0, text
    assert {c.account_id for c in rechecks} <= set(report.loss_limits)
    assert len({c.account_id for c in rechecks}) == len(rechecks)
    assert all(c.ok and c.reason == "loss_limit" for c in rechecks), [c.line() for c in rechecks]
    assert f"{len(rechecks)} limit refusals re-checked, {len(rechecks)} clean" in text
