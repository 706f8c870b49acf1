"""CPU of the table service per view its ``WatchTable`` streams send spectators: the real aio
host (its interceptors: auth, metrics, logging context, rate limits, errors) over a table of
the tests' in-memory world, N spectators' streams from a client process.

Usage::

    .venv/bin/python services/table/bench/spectator_views.py [--spectators 0,2000] \
        [--changes 40] [--rounds 3] [--channels 8] [--python-gc]

A table of three players (``services/table/tests/world.py``), a hand dealt; per round and
spectator count, the client process opens that many ``WatchTable`` streams (each its own
account, with a player's token, over ``--channels`` channels) and reads them; then the players
make ``--changes`` changes (a draw, a discard, in turn), and after each this process waits
until every stream has seen it. Prints this (the server's) process's CPU per change and, for
each count above 0, per view sent (its CPU per change less the one with no spectator, divided
by the spectators) and the CPU of it in the garbage collector (the collecting thread's), medians
over ``--rounds``; with the collector's thresholds the service sets
(``rummy_table.bootstrap.GC_THRESHOLDS``) or, ``--python-gc``, Python's defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing
import os
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "support"))  # rummy_testing

import grpc  # noqa: E402
import grpc.aio  # noqa: E402
from served_table import served_table_and_servicer  # noqa: E402
from test_table_service import discard_last, draw, on_turn, playing_table  # noqa: E402
from world import World  # noqa: E402

from rummy.table.v1 import table_service_pb2 as api  # noqa: E402
from rummy.table.v1 import table_service_pb2_grpc as api_grpc  # noqa: E402
from rummy_platform.auth import Role, bearer_metadata  # noqa: E402
from rummy_platform.logging import configure_logging  # noqa: E402
from rummy_table.bootstrap import GC_THRESHOLDS  # noqa: E402
from rummy_testing.token_keys import issuer_authority  # noqa: E402

PLAYERS = ("alice", "bob", "carol")


def _spectate(
    address: str, table_id: str, tokens: list[str], channels: int, conn: Connection
) -> None:
    """The client process: a stream with each token; on each version received on ``conn``,
    answers once every stream has seen it; ends at None."""
    count = len(tokens)

    async def main() -> None:
        opened = [grpc.aio.insecure_channel(address) for _ in range(channels)]
        latest = [0] * count

        async def read(i: int) -> None:
            stub = api_grpc.TableServiceStub(opened[i % channels])
            call = stub.WatchTable(
                api.WatchTableRequest(table_id=table_id), metadata=bearer_metadata(tokens[i])
            )
            async for response in call:
                latest[i] = response.view.stream_version

        tasks = [asyncio.create_task(read(i)) for i in range(count)]
        loop = asyncio.get_running_loop()
        while True:
            version = await loop.run_in_executor(None, conn.recv)
            if version is None:
                break
            while min(latest, default=version) < version:
                await asyncio.sleep(0.001)
            conn.send(True)
        for task in tasks:
            task.cancel()
        for channel in opened:
            await channel.close()

    asyncio.run(main())


def _round(
    world: World, address: str, tokens: list[str], changes: int, channels: int
) -> tuple[float, float]:
    """CPU seconds of this process, and seconds in the garbage collector, per change of a new
    table with a stream for each of ``tokens``."""
    table_id, _ = playing_table(world, PLAYERS)
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    client = multiprocessing.get_context("spawn").Process(
        target=_spectate, args=(address, table_id, tokens, channels, theirs)
    )
    client.start()

    def seen() -> None:
        ours.send(world.app.projection.tables[table_id].version)
        ours.recv()

    seen()  # every stream open, its first view read
    spent = 0.0
    collecting[:] = [0.0, 0.0]
    for _ in range(changes // 2):
        account, view = on_turn(world, table_id)
        started = time.process_time()
        draw(world, table_id, account, view)
        seen()
        discard_last(world, table_id, account)
        seen()
        spent += time.process_time() - started
    ours.send(None)
    client.join(30)
    return spent / (changes // 2 * 2), collecting[1] / (changes // 2 * 2)


#: CPU seconds in the garbage collector since the round began (of the thread collecting),
#: and the thread's CPU time when the running collection began.
collecting = [0.0, 0.0]


def _timed_gc(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        collecting[0] = time.thread_time()
    else:
        collecting[1] += time.thread_time() - collecting[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spectators", default="0,2000")
    parser.add_argument("--changes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument(
        "--python-gc", action="store_true", help="Python's collector thresholds, not the service's"
    )
    args = parser.parse_args()
    if not args.python_gc:
        gc.set_threshold(*GC_THRESHOLDS)  # as rummy_table.bootstrap.main sets them
    counts = [int(n) for n in args.spectators.split(",")]
    with open(os.devnull, "w") as quiet:
        configure_logging("info", quiet)  # as a service logs, not printed
        authority = issuer_authority()
        tokens = [authority.issue(f"spectator-{i}", Role.PLAYER) for i in range(max(counts))]
        figures: dict[int, list[tuple[float, float]]] = {n: [] for n in counts}
        gc.callbacks.append(_timed_gc)
        with served_table_and_servicer(World()) as (world, host, _):
            for _ in range(args.rounds):
                for count in counts:
                    got = _round(world, host.address, tokens[:count], args.changes, args.channels)
                    figures[count].append(got)
    idle = statistics.median(f[0] for f in figures[0]) * 1e6 if 0 in figures else 0.0
    for count, values in figures.items():
        per_change = statistics.median(v[0] for v in values) * 1e6
        line = f"{count} spectators: {per_change:.0f} us CPU per change"
        if count and 0 in figures:
            line += f", {(per_change - idle) / count:.1f} us per view sent"
        in_gc = statistics.median(v[1] for v in values) * 1e6
        low, high = min(v[0] for v in values) * 1e6, max(v[0] for v in values) * 1e6
        print(f"{line}; in gc {in_gc:.0f} us (median of {args.rounds}: {low:.0f}-{high:.0f})")


if __name__ == "__main__":
    main()
