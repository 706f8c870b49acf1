"""The demo's wait for the ledger's books (``rummy_ops.demo.books.settle_wait``): it paces its
balance reads under the operator's rate limit and reads again after a refusal of it."""

from __future__ import annotations

import grpc
import pytest

from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy_ops.demo import books
from rummy_ops.demo.report import DemoReport
from rummy_testing.refusals import Refused


class _Ledger:
    """GetBalance: refused ``refusals`` times with ``code``, then each account holds 500.00."""

    def __init__(self, refusals: int, code: grpc.StatusCode) -> None:
        self.refusals, self.code, self.calls = refusals, code, 0

    def GetBalance(  # noqa: N802
        self, request: ledger_api.GetBalanceRequest, **_: object
    ) -> ledger_api.GetBalanceResponse:
        self.calls += 1
        if self.refusals > 0:
            self.refusals -= 1
            raise Refused(self.code)
        return ledger_api.GetBalanceResponse(balance_hundredths=500_00)


def _report(accounts: int = 2) -> DemoReport:
    report = DemoReport("r")
    report.granted_hundredths = accounts * 500_00
    return report


def test_a_read_refused_by_the_rate_limit_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr("rummy_ops.demo.books.time.sleep", pauses.append)
    ledger = _Ledger(3, grpc.StatusCode.RESOURCE_EXHAUSTED)
    report = _report()
    books.settle_wait(ledger, (), ["a", "b"], report)  # type: ignore[arg-type]
    assert report.balances == {"a": 500_00, "b": 500_00} and report.conserved
    assert len(pauses) == 3


def test_the_reads_are_paced_under_the_operators_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr("rummy_ops.demo.books.time.sleep", pauses.append)
    accounts = [f"bot-{i}" for i in range(46)]
    ledger = _Ledger(1, grpc.StatusCode.RESOURCE_EXHAUSTED)
    books.settle_wait(ledger, (), accounts, _report(len(accounts)))  # type: ignore[arg-type]
    assert pauses and all(len(accounts) / p <= books.READS_PER_SECOND for p in pauses)


def test_any_other_refusal_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rummy_ops.demo.books.time.sleep", lambda _s: None)
    with pytest.raises(grpc.RpcError):
        books.settle_wait(_Ledger(1, grpc.StatusCode.UNAVAILABLE), (), ["a"], _report())  # type: ignore[arg-type]
