"""End-to-end fixtures: the whole backend running as processes, started through rummy_ops.stack.

- ``rummy_stack`` (session): the five services as separate processes over the real brokers of
  ``kafka_bootstrap`` / ``database_url``, on free ports, in a fresh PostgreSQL database and under
  a topic prefix of their own (so they never meet another run's streams or rows), with a fast
  clock. Logs: ``.local/logs/e2e-<id>/<service>.log``. Everything is stopped and the database
  dropped at the end of the session.
- ``short_demo`` (session): the report of a short ``rummy demo`` run (a few hands per table)
  against ``rummy_stack``.

Every test in this folder is marked ``e2e`` (and ``integration``: it needs the brokers).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

from rummy_ops.demo import DemoOptions, DemoReport, Endpoints, play
from rummy_ops.stack import Stack, repository_root, stack_for_tests

#: Deadlines pass this many times faster than real time (a 20 s turn lasts 2 s).
E2E_CLOCK_SPEED = 10.0


@dataclass(frozen=True)
class RunningStack:
    """A started stack and what a test needs to reach it and its log."""

    stack: Stack
    endpoints: Endpoints
    kafka_bootstrap: str
    database_url: str
    topic_prefix: str


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.integration)


def _admin_url(database_url: str, name: str) -> str:
    return urlsplit(database_url)._replace(path=f"/{name}").geturl()


@pytest.fixture(scope="session")
def rummy_stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    run = uuid.uuid4().hex[:8]
    name = f"rummy_e2e_{run}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    own_database = _admin_url(database_url, name)
    root = repository_root()
    prefix = f"e2e-{run}-"
    stack = stack_for_tests(
        root,
        kafka_bootstrap,
        own_database,
        topic_prefix=prefix,
        clock_speed=E2E_CLOCK_SPEED,
        log_dir=root / ".local" / "logs" / f"e2e-{run}",
    )
    try:
        with stack:
            yield RunningStack(
                stack=stack,
                endpoints=Endpoints(
                    table=stack.address("table"),
                    ledger=stack.address("ledger"),
                    jwt_secret=stack.config.jwt_secret,
                    kafka_bootstrap_servers=kafka_bootstrap,
                    database_url=own_database,
                    topic_prefix=prefix,
                ),
                kafka_bootstrap=kafka_bootstrap,
                database_url=own_database,
                topic_prefix=prefix,
            )
    finally:
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


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
