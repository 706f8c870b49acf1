"""The ledger's side of the demo's books: the bots' balances once every hand is settled, and
the house's commission account."""

from __future__ import annotations

import time
from collections.abc import Sequence

import grpc

from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy_ops.demo.report import DemoReport

HOUSE_COMMISSION_ACCOUNT = "house:commission"
#: The balance reads a second the books' wait makes at most: well under what the ledger grants
#: an operator account (``RUMMY_RATE_LIMIT_OPERATOR``, 50 calls a second by default), which the
#: demo's other calls share; a demo of 46 bots read every 0.5 s was refused RESOURCE_EXHAUSTED.
READS_PER_SECOND = 20.0


def _balances(
    stub: ledger_grpc.LedgerServiceStub, metadata: tuple[tuple[str, str]], accounts: Sequence[str]
) -> dict[str, ledger_api.GetBalanceResponse]:
    return {
        a: stub.GetBalance(
            ledger_api.GetBalanceRequest(account_id=a), metadata=metadata, timeout=10
        )
        for a in accounts
    }


def settle_wait(
    stub: ledger_grpc.LedgerServiceStub,
    metadata: tuple[tuple[str, str]],
    accounts: Sequence[str],
    report: DemoReport,
    timeout_seconds: float = 60.0,
) -> None:
    """Read the bots' balances once the ledger has settled every hand (no reservation left and
    the books balance; a match that settles each game, with score sheets, balances once its
    games' commission is counted at the replay step: no reservation left is enough), or after
    ``timeout_seconds``. Reads at most :data:`READS_PER_SECOND` balances a second; a pass refused
    RESOURCE_EXHAUSTED is read again after a pause. Raises grpc.RpcError for any other refusal
    (or RESOURCE_EXHAUSTED after the timeout)."""
    games_settle_later = any(m.view.sheets for m in report.matches)
    deadline = time.monotonic() + timeout_seconds
    pause = max(0.5, len(accounts) / READS_PER_SECOND)  # seconds between two passes
    while True:
        try:
            got = _balances(stub, metadata, accounts)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or time.monotonic() > deadline:
                raise
            time.sleep(pause)  # the operator's calls share the limit: the next pass reads all
            continue
        report.balances = {a: b.balance_hundredths for a, b in got.items()}
        report.reserved = {a: b.reserved_hundredths for a, b in got.items()}
        settled = not any(report.reserved.values()) and (report.conserved or games_settle_later)
        if settled or time.monotonic() > deadline:
            return
        time.sleep(pause)


def house_commission(
    stub: ledger_grpc.LedgerServiceStub, metadata: tuple[tuple[str, str]]
) -> int | None:
    """The balance of the house's commission account (hundredths; 0 before any commission was
    taken), or None when the ledger does not answer."""
    try:
        reply = stub.GetBalance(
            ledger_api.GetBalanceRequest(account_id=HOUSE_COMMISSION_ACCOUNT),
            metadata=metadata,
            timeout=10,
        )
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.NOT_FOUND:
            return 0  # no commission taken yet
        return None
    return int(reply.balance_hundredths)
