"""CPU of the views one change of a 4-seat table sends its seated watchers: each seat's view
built by ``player_view`` ("built") against the public part built once and shared, each seat's
view that copied plus its own cards (``TableWatches``, "shared").

Usage::

    .venv/bin/python services/table/bench/seat_views.py [--rounds 15] [--changes 2000]

A table of the tests' in-memory world (``services/table/tests/world.py``), four players, a hand
dealt and a few turns played (a discard pile of several cards, 13-14 cards a hand). Per round,
``--changes`` times: "built" makes the four seats' views with ``player_view``; "shared" forgets
the cached public part (as a new version does) and makes the four through the watches' own
code. Prints microseconds of CPU per change (four views), medians over ``--rounds`` rounds that
alternate which goes first, and checks that both give the same messages.
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

from rummy.table.v1 import table_service_pb2 as api  # noqa: E402
from rummy_table.entrypoints.views import player_view  # noqa: E402
from rummy_table.entrypoints.watches import TableWatches  # noqa: E402

PLAYERS = ("alice", "bob", "carol", "dave")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--changes", type=int, default=2000)
    args = parser.parse_args()
    world = World()
    table_id, hand_id = playing_table(world, PLAYERS)
    for _ in range(6):
        account, view = on_turn(world, table_id)
        draw(world, table_id, account, view)
        discard_last(world, table_id, account)
    watches = TableWatches(world.app)
    table = world.app.projection.tables[table_id]

    def built() -> list[api.PlayerView]:
        return [player_view(table, account) for account in PLAYERS]

    def shared() -> list[api.PlayerView | None]:  # None: no version after 0 (never here)
        watches._public.clear()  # a new version: the public part is built again, once
        after = [watches._response_after(a, table_id, 0, True) for a in PLAYERS]
        return [None if got is None else got.view for got in after]

    assert built() == shared()
    ways = {"built": built, "shared": shared}
    figures: dict[str, list[float]] = {name: [] for name in ways}
    for n in range(args.rounds):
        for name in ("built", "shared") if n % 2 == 0 else ("shared", "built"):
            way = ways[name]
            started = time.process_time()
            for _ in range(args.changes):
                way()
            figures[name].append((time.process_time() - started) / args.changes * 1e6)
    print_medians(figures, "us CPU per change (4 seats' views)")


if __name__ == "__main__":
    main()
