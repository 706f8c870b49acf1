"""What the ledger's gauges cost PostgreSQL as the ledger's history grows.

Usage (PostgreSQL up: `bash deploy/local/stack.sh up`, or DATABASE_URL set):
    .venv/bin/python services/ledger/tests/bench_ledger_gauges.py [grants] [hands]
    # default 100000 grants (200,000 journal entries), 50000 finished hands

Creates a database of its own (dropped at the end), applies the ledger's migrations, and fills it
through the ledger's own triggers with ``grants`` grants to 1,000 players and ``hands`` finished
hands of 4 seats (their reservations made and released, the history a busy ledger keeps), plus
one hand in play (4 reservations held). Then prints, for the queries behind ``/metrics``, the
median and worst of 20 runs: ``db.gauges`` (every scrape), ``ledger_contract.journal_sum`` and
``.invariant_violations`` (the full scans, at most every 60 s).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "support"))

from rummy_ledger import contract as ledger_contract  # noqa: E402
from rummy_ledger.adapters import db  # noqa: E402
from rummy_platform.ports import LOCAL_DATABASE_URL  # noqa: E402
from rummy_testing.service_process import fresh_database  # noqa: E402

PLAYERS = 1000
SEATS = 4
RUNS = 20
BATCH = 2000


def fill(conn: psycopg.Connection, grants: int, hands: int) -> None:
    """Write the history in transactions of ``BATCH`` grants or hands (one transaction moving
    the issuance balance row 100,000 times would walk ever longer chains of its row versions)."""
    for table in (
        "accounts",
        "balances",
        "journal_transactions",
        "journal_entries",
        "reservations",
    ):
        # No autovacuum worker (another role's backend) may hold the database when it is dropped.
        conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
    conn.execute(
        "INSERT INTO accounts (id, kind) SELECT 'player-' || i, 'player' "
        "FROM generate_series(1, %s::int) AS i",
        (PLAYERS,),
    )
    conn.commit()
    for first in range(1, grants + 1, BATCH):
        last = min(first + BATCH - 1, grants)
        conn.execute(
            "INSERT INTO journal_transactions (id, kind) SELECT 'grant-' || i, 'grant' "
            "FROM generate_series(%s::int, %s::int) AS i",
            (first, last),
        )
        conn.execute(
            "INSERT INTO journal_entries (transaction_id, account_id, amount, line_kind) "
            "SELECT 'grant-' || i, x.account, x.amount, x.line "
            "FROM generate_series(%s::int, %s::int) AS i, "
            "LATERAL (VALUES ('house:issuance', -1000, 'issuance'), "
            "('player-' || (i %% %s + 1), 1000, 'grant')) AS x(account, amount, line)",
            (first, last, PLAYERS),
        )
        conn.commit()
    for first in range(0, hands + 1, BATCH):
        last = min(first + BATCH - 1, hands)
        conn.execute(
            "INSERT INTO reservations (hand_id, account_id, table_id, seat, amount) "
            "SELECT 'hand-' || h, 'player-' || ((h * %s + s) %% %s + 1), 'table-1', s, 100 "
            "FROM generate_series(%s::int, %s::int) AS h, generate_series(0, %s::int) AS s",
            (SEATS, PLAYERS, first, last, SEATS - 1),
        )
        conn.execute(
            "UPDATE reservations SET state = 'released', resolved_at = now() "
            "WHERE state = 'held' AND hand_id <> %s",
            (f"hand-{hands}",),
        )
        conn.commit()
    conn.autocommit = True
    conn.execute("VACUUM ANALYZE")
    conn.autocommit = False


def timed(query: Callable[[], object]) -> tuple[float, float]:
    """(median, worst) milliseconds of ``RUNS`` runs of ``query``."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        query()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    grants = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    hands = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000
    url = os.environ.get("DATABASE_URL", LOCAL_DATABASE_URL)
    with fresh_database(url, "ledger_bench_gauges") as bench_url:
        db.apply_migrations(bench_url)
        with psycopg.connect(bench_url, options=f"-c search_path={db.SCHEMA}") as conn:
            start = time.perf_counter()
            fill(conn, grants, hands)
            print(
                f"filled {2 * grants:,} journal entries and {SEATS * (hands + 1):,} reservations "
                f"({SEATS} held) in {time.perf_counter() - start:.1f} s"
            )
            for name, query in (
                ("db.gauges (every scrape)", lambda: db.gauges(conn)),
                (
                    "journal_sum (at most every 60 s)",
                    lambda: ledger_contract.journal_sum(conn),
                ),
                (
                    "invariant_violations (at most every 60 s)",
                    lambda: ledger_contract.invariant_violations(conn),
                ),
            ):
                median, worst = timed(query)
                conn.rollback()
                print(f"{name:48} median {median:8.2f} ms   worst {worst:8.2f} ms")
            assert (
                ledger_contract.journal_sum(conn) == 0
                and ledger_contract.invariant_violations(conn) == []
            )


if __name__ == "__main__":
    main()
