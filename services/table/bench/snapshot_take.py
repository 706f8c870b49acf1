"""CPU of one partition's snapshot (:func:`rummy_table.adapters.snapshot.take`) when few of its
tables changed since the last one: every table encoded ("uncached", as before the snapshot
writer kept each table's encoding) against only the tables changed encoded again ("cached", with
:class:`~rummy_table.adapters.snapshot.EncodedTables`, as ``SnapshotLoop`` takes them).

Usage::

    .venv/bin/python services/table/bench/snapshot_take.py [--tables 500] [--changed 20] \
        [--rounds 9]

Tables of the tests' in-memory world (``services/table/tests/world.py``) opened until
``--tables`` of them are in one partition, each with four players and a hand dealt and a few
turns played. Per round: a draw and a discard at ``--changed`` of them, then that partition's
snapshot taken both ways (alternating which goes first; the cached one after the changes, its
cache holding the previous round's). Prints milliseconds of CPU per snapshot, medians over
``--rounds`` rounds, and checks both give the same bytes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from medians import print_medians  # noqa: E402
from test_table_service import discard_last, draw, on_turn, playing_table  # noqa: E402
from world import World  # noqa: E402

from rummy_platform.eventlog import partition_for  # noqa: E402
from rummy_platform.logging import configure_logging  # noqa: E402
from rummy_platform.topics import TABLE_EVENTS  # noqa: E402
from rummy_table.adapters import snapshot  # noqa: E402

PLAYERS = ("alice", "bob", "carol", "dave")
PARTITIONS = 2  # the world's topics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument("--changed", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    configure_logging("warning")  # not a line per table opened
    world = World()
    tables: list[str] = []
    while len(tables) < args.tables:
        table_id, _hand_id = playing_table(world, PLAYERS)
        if partition_for(table_id, PARTITIONS) == 0:
            tables.append(table_id)
    for table_id in tables:
        for _ in range(3):
            account, view = on_turn(world, table_id)
            draw(world, table_id, account, view)
            discard_last(world, table_id, account)
    cache = snapshot.EncodedTables()

    def take(with_cache: bool) -> bytes:
        taken = snapshot.take(
            world.app.projection,
            TABLE_EVENTS,
            0,
            lambda t: partition_for(t, PARTITIONS),
            cache=cache if with_cache else None,
        )
        assert taken is not None and taken.tables == args.tables
        return taken.data

    take(True)
    figures: dict[str, list[float]] = {"uncached": [], "cached": []}
    for n in range(args.rounds):
        for i in range(args.changed):
            table_id = tables[(n * args.changed + i) % len(tables)]
            account, view = on_turn(world, table_id)
            draw(world, table_id, account, view)
            discard_last(world, table_id, account)
        data: dict[str, bytes] = {}
        for name in ("uncached", "cached") if n % 2 == 0 else ("cached", "uncached"):
            started = time.process_time()
            data[name] = take(name == "cached")
            figures[name].append((time.process_time() - started) * 1e3)
        assert data["cached"] == data["uncached"]
    size = len(data["cached"])
    print(f"{args.tables} tables in the partition, {args.changed} changed, {size:,} bytes")
    print_medians(figures, "ms CPU per snapshot")


if __name__ == "__main__":
    main()
