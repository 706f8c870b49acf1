"""End-to-end fixtures: the whole backend running as processes, started through rummy_ops.stack.

- ``rummy_stack`` (session): the five services as separate processes over the real brokers of
  ``kafka_bootstrap`` / ``database_url`` (``rummy_testing.stacks.running_stack``: free ports, a
  fresh PostgreSQL database, a topic prefix of their own, a fast clock). Logs:
  ``.local/logs/e2e-<id>/<service>.log``. Everything is stopped and the database dropped at the
  end of the session.
- ``short_demo`` (session): the report of a short ``rummy demo`` run (a few hands per table)
  against ``rummy_stack``.
- ``operator`` (function): a ``rummy_testing.players.Operator`` of ``rummy_stack`` (creates
  tables, grants tokens, reads settled balances), closed afterwards.

Every test in this folder is marked ``e2e``, ``integration`` (it needs the brokers) and ``slow``
(it runs the stack as processes: ``-m "not slow"`` leaves it out).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rummy_ops.demo import DemoOptions, DemoReport, play
from rummy_testing.players import Operator, operator_for
from rummy_testing.stacks import RunningStack, running_stack


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def rummy_stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    with running_stack(kafka_bootstrap, database_url, "e2e") as running:
        yield running


@pytest.fixture
def operator(rummy_stack: RunningStack) -> Iterator[Operator]:
    op = operator_for(rummy_stack)
    yield op
    op.close()


@pytest.fixture(scope="session")
def demo_records_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the short demo's bots keep their own records (``<account>.jsonl``)."""
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="session")
def short_demo(rummy_stack: RunningStack, demo_records_dir: Path) -> DemoReport:
    """Four hands per table, bots misbehaving twice as often as in the demo (so stalls, timeout
    drops and wrong declares show up in few hands); each bot keeps its own record."""
    options = DemoOptions(
        hands=12, seed=11, mischief=2.0, timeout_seconds=240, records_dir=demo_records_dir
    )
    return play(rummy_stack.endpoints, options, echo=lambda _line: None, progress=False)
