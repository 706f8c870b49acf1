"""One player action's latency through the whole backend: gRPC call to answer, median and p99.

Usage (brokers: KAFKA_BOOTSTRAP_SERVERS + DATABASE_URL when set, else the local ones, started and
then stopped if not running: rummy_ops.stack.brokers):
    .venv/bin/python tests/e2e/bench_action_latency.py [actions]   # default 400

Starts the five services as processes (rummy_ops.stack, own database and topic prefix), opens a
heads-up table (point value 10 hundredths, 3000 s turns so no deadline interferes), seats two
players and plays turns of DrawCard (stock) + DiscardCard (the card drawn) through the public API,
timing each call from the client (the service validates, appends with its fenced transactional
producer, applies, then answers). Prints the median and p99 in ms, per call and overall.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from rummy.table.v1 import table_service_pb2 as api  # noqa: E402
from rummy_ops.demo import Endpoints  # noqa: E402
from rummy_ops.stack import brokers  # noqa: E402
from rummy_testing.players import (  # noqa: E402
    STOCK,
    Operator,
    Table,
    on_turn,
    operator_for,
    rule_set,
    seed_and_wait_for_play,
)
from rummy_testing.stacks import running_stack  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def measure(operator: Operator, table_address: str, actions: int) -> dict[str, list[float]]:
    """Seconds per DrawCard and DiscardCard call over ``actions`` calls."""
    table = Table(operator, table_address, 4, 10, 500, rule_set(turn_seconds=3000))
    timings: dict[str, list[float]] = {"DrawCard": [], "DiscardCard": []}
    try:
        players = table.seated("bench", 2, grant=100_000)
        seed_and_wait_for_play(players)
        while sum(map(len, timings.values())) < actions:
            view = players[0].wait(lambda v: not v.has_drawn and v.turn_no > 0)
            player = on_turn(players, view)
            view = player.wait_to_draw()
            started = time.perf_counter()
            drawn = player.draw(STOCK, view.turn_no)
            timings["DrawCard"].append(time.perf_counter() - started)
            started = time.perf_counter()
            player.discard(drawn.card, view.turn_no)
            timings["DiscardCard"].append(time.perf_counter() - started)

            def turn_passed(v: api.PlayerView, turn_no: int = view.turn_no) -> bool:
                return v.turn_no > turn_no

            players[0].wait(turn_passed)
    finally:
        table.close()
    return timings


@contextmanager
def bench_stack() -> Iterator[Endpoints]:
    """The five services on the brokers (``rummy_ops.stack.brokers``) (rummy_testing.stacks: own
    database and topic prefix, the clock ten times faster), stopped and their database dropped on
    exit, then the brokers if this run started them."""
    with (
        brokers() as (kafka, database),
        running_stack(kafka, database, "bench", clock_speed=10.0) as running,
    ):
        yield running.endpoints


def operator_of(endpoints: Endpoints) -> Operator:
    """The harness's operator of the stack at ``endpoints``."""

    class _Running:  # what operator_for reads
        pass

    _Running.endpoints = endpoints  # type: ignore[attr-defined]
    return operator_for(_Running)


def main() -> None:
    actions = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    with bench_stack() as endpoints:
        operator = operator_of(endpoints)
        try:
            timings = measure(operator, endpoints.table, actions)
        finally:
            operator.close()
    every = [t for values in timings.values() for t in values]
    for label, values in (*timings.items(), ("all actions", every)):
        print(
            f"{label:<12} n={len(values):>4}  median {statistics.median(values) * 1000:6.1f} ms"
            f"  p99 {percentile(values, 0.99) * 1000:6.1f} ms  max {max(values) * 1000:6.1f} ms"
        )


if __name__ == "__main__":
    main()
