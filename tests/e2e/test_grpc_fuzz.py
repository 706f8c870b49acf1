"""The gRPC surface under fuzzing, against the five services running as processes.

Hypothesis draws requests of every RPC of every service from the live state of a hand being
played (``rummy_testing.grpc_fuzz``): the valid request, or it with one field made wrong (wrong
turn, another seat, table or hand, a foreign card, an oversized string, an out-of-range number,
empty or duplicated groups), a wrong token, a reused request id, or random fields. Every answer
must be a status the API documents (never INTERNAL or UNKNOWN), and a rejected request must
leave every event topic's end offsets and every ledger balance as they were. The full-size run
(10,000 requests and more, printing the figures) is ``tests/e2e/fuzz_grpc.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rummy_testing.fuzz_requests import rpcs_of_the_protos
from rummy_testing.grpc_fuzz import FuzzWorld, run
from rummy_testing.stacks import RunningStack, running_stack

#: Requests of the CI run (about a minute here).
CI_REQUESTS = 2_000


@pytest.fixture(scope="module")
def fuzz_stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    """A stack of its own: nothing but the fuzz may move its topics while a request is judged;
    the clock at real speed, so no deadline of the fuzz's hour-long turns fires."""
    with running_stack(kafka_bootstrap, database_url, "fuzz", clock_speed=1.0) as running:
        yield running


@pytest.mark.timeout(900)
def test_fuzzed_requests_get_documented_statuses_and_the_rejected_ones_change_nothing(
    fuzz_stack: RunningStack,
) -> None:
    tally = run(FuzzWorld(fuzz_stack), CI_REQUESTS)
    report = tally.report(samples=True)
    print(report)
    assert tally.requests == CI_REQUESTS
    assert not tally.findings, report  # INTERNAL, UNKNOWN or another undocumented status
    assert not tally.changed, report  # a rejected or read-only request appended or moved tokens
    assert not tally.stalls, report  # the hand stopped moving
    # Every RPC of every service was tried, and the fuzz reaches the rules, not only the door.
    assert {rpc for rpc, _ in tally.by_rpc} == rpcs_of_the_protos()
    assert tally.reached_decide >= tally.requests // 3, report
    assert tally.hands_played >= 2, report
