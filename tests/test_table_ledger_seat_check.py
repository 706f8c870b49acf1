"""The table's port to the ledger's CheckSeat (``rummy_table.adapters.ledger_limits``) against the
ledger's real servicer in-process (its in-memory unit of work): a player's break reaches the
table's answer, and a ledger that does not answer is LimitsUnavailable (TakeSeat's UNAVAILABLE)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from prometheus_client import CollectorRegistry

from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.domain.limits import StartBreak
from rummy_ledger.entrypoints import grpc as ledger_grpc
from rummy_platform.auth import Role
from rummy_platform.config import Settings
from rummy_platform.server import ServiceHost
from rummy_table.adapters.ledger_limits import LedgerSeatLimits
from rummy_table.application.seat_limits import LimitsUnavailable
from rummy_testing.token_keys import issuer_authority, token_settings

NOON = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def test_the_table_hears_the_ledgers_answer_and_fails_closed_when_it_is_gone() -> None:
    uow = InMemoryUnitOfWork(clock=lambda: NOON)
    ledger = Ledger(clock=lambda: NOON)
    ledger.change_limits(uow, "bob", StartBreak(86_400))
    host = ServiceHost(
        "ledger",
        Settings(**token_settings(), grpc_port=0, metrics_port=0),
        registry=CollectorRegistry(),
    )
    host.add_servicer(
        ledger_grpc.add_to_server,
        ledger_grpc.LedgerServicer(ledger, uow),
        ledger_grpc.SERVICE_NAME,
    )
    host.start()
    authority = issuer_authority()
    limits = LedgerSeatLimits(host.address, lambda: authority.issue("table", Role.SERVICE, 600))
    try:
        assert limits.check("alice", 13_000).allowed
        answer = limits.check("bob", 0)
        assert (answer.allowed, answer.reason) == (False, "break")
        assert answer.until == datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
        assert "a break" in answer.detail
    finally:
        host.stop(grace_seconds=1)
    with pytest.raises(LimitsUnavailable):
        limits.check("alice", 0)
    limits.close()
