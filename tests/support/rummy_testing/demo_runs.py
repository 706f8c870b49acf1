"""What the end-to-end tests of one variant's demo run share: the run itself, the hands that
ended, the books it must leave, and ``rummy replay`` over its table.

The tests import it with a :class:`~rummy_testing.stacks.RunningStack` (the e2e ``rummy_stack``
fixture's); amounts are hundredths of a House Token.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as table_events
from rummy_ops.demo import DemoOptions, DemoReport, TablePlan, play
from rummy_testing.stacks import RunningStack

#: The ``rummy`` command of this environment.
RUMMY = Path(sys.executable).parent / "rummy"


def variant_demo(
    stack: RunningStack,
    plan: TablePlan,
    rule_set: cards_pb2.RuleSet,
    *,
    hands: int,
    seed: int,
    grant: int,
    timeout_seconds: float,
) -> DemoReport:
    """``hands`` hands of the demo's bots at the one table ``plan``, under ``rule_set``, each
    account granted ``grant``: 20 s turns, a 3 s seed window, no mischief (no timeouts)."""
    options = DemoOptions(
        hands=hands,
        seed=seed,
        tables=(plan,),
        turn_seconds=20,
        seed_window_seconds=3,
        start_delay_seconds=1,
        grant_hundredths=grant,
        mischief=0.0,
        timeout_seconds=timeout_seconds,
        rule_set=rule_set,
    )
    return play(stack.endpoints, options, echo=lambda _line: None, progress=False)


def ended_match(
    stack: RunningStack, options: DemoOptions, table: str
) -> tuple[DemoReport, match_pb.MatchView]:
    """A demo run of ``options`` whose one table ``table`` (a plan's name) plays a match: the
    run finished without a bot's error and the match ended. Returns the report and the match's
    last view."""
    report = play(stack.endpoints, options, echo=lambda _line: None, progress=False)
    table_id = report.tables.get(table, "")
    assert report.finished, report.stopped_because + "\n" + stack.log_tails(naming=[table_id])
    assert not report.bot_errors, report.bot_errors[:3]
    (record,) = report.matches
    assert record.view.WhichOneof("result") == "ended", record.view
    return report, record.view


def hands_ended(report: DemoReport) -> list[table_events.HandEnded]:
    """The HandEnded of every hand of a demo run that ended, in the order they were played."""
    return [h.result for h in report.hands if h.result is not None]


def assert_books_follow_the_settlements(report: DemoReport, grant: int) -> None:
    """Every account's balance is ``grant`` moved by its lines of the hands' settlements, none
    is still reserved, tokens are conserved and the house took every hand's commission."""
    results = hands_ended(report)
    moved: Counter[str] = Counter()
    for result in results:
        for line in result.settlement:
            moved[line.account_id] += line.amount_hundredths
    assert report.balances == {a: grant + moved[a] for a in report.balances}
    assert not any(report.reserved.values())
    assert report.conserved
    assert report.house_commission_delta == sum(r.commission_hundredths for r in results)


def rummy_replay(
    stack: RunningStack, table_id: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``rummy replay --table <table_id> --json`` over the stack's log and ledger, as a process
    with ``env`` (this process's environment when None)."""
    return subprocess.run(
        [str(RUMMY), "replay", "--table", table_id, *stack.replay_options(), "--json"],
        env=dict(os.environ if env is None else env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def replay_once_settled(
    stack: RunningStack,
    table_id: str,
    env: Mapping[str, str] | None = None,
    wait_s: float = 30,
    *,
    until_clean: bool = False,
) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """:func:`rummy_replay`, again each second for up to ``wait_s`` seconds while an ended hand
    has notes (its seed is revealed and its settlement journaled just after the hand), or, with
    ``until_clean``, while the replay fails: its exit status, its JSON document and the
    document's hands that are not running."""
    deadline = time.monotonic() + wait_s
    while True:
        done = rummy_replay(stack, table_id, env)
        assert done.stdout, done.stderr
        code, doc = done.returncode, json.loads(done.stdout)
        ended = [h for h in doc["hands"] if h["outcome"] != "running"]
        settled = all(not h["notes"] for h in ended) and (code == 0 or not until_clean)
        if settled or time.monotonic() > deadline:
            return code, doc, ended
        time.sleep(1)
