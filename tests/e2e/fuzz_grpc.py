"""The gRPC fuzz at full size: every RPC of the five services, fuzzed from live hand states.

Usage (brokers: KAFKA_BOOTSTRAP_SERVERS + DATABASE_URL when set, else the local ones, started and
then stopped if not running: rummy_ops.stack.brokers):
    .venv/bin/python tests/e2e/fuzz_grpc.py [--requests 10000] [--seed N]

Starts the five services as processes (own database and topic prefix, the clock at real speed),
then sends ``--requests`` requests drawn by hypothesis from the live state of a hand being
played (``rummy_testing.grpc_fuzz``): valid requests with one field made wrong, wrong tokens,
reused request ids, random requests. Prints the requests by status, how many reached the rules'
``decide`` (the table service's counter, read from /metrics before and after), the
INTERNAL/UNKNOWN count and every finding with its repro. Exit status 1 when anything was found
(an undocumented status, a state changed by a rejected request, a stall).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from rummy_ops.stack import brokers  # noqa: E402
from rummy_testing.grpc_fuzz import FuzzWorld, run  # noqa: E402
from rummy_testing.stacks import running_stack  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default random)")
    parser.add_argument(
        "--samples", action="store_true", help="also print the first refusal of each RPC/status"
    )
    args = parser.parse_args()
    with (
        brokers() as (kafka, database),
        running_stack(kafka, database, "fuzz", clock_speed=1.0) as running,
    ):
        tally = run(FuzzWorld(running), args.requests, seed=args.seed)
    print(tally.report(samples=args.samples))
    sys.exit(1 if tally.findings or tally.changed or tally.stalls else 0)


if __name__ == "__main__":
    main()
