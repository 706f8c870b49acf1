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
    ``timeout_seconds``."""
    games_settle_later = any(m.view.sheets for m in report.matches)
    deadline = time.monotonic() + timeout_seconds
    while True:
        got = _balances(stub, metadata, accounts)
        report.balances = {a: b.balance_hundredths for a, b in got.items()}
        report.reserved = {a: b.reserved_hundredths for a, b in got.items()}
        settled = not any(report.reserved.values()) and (report.conserved or games_settle_later)
        if settled or time.monotonic() > deadline:
            return
        time.sleep(0.5)


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
