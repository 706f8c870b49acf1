"""Helpers shared by the ledger tests (not fixtures: plain functions)."""

from __future__ import annotations

import uuid

from psycopg_pool import ConnectionPool

from rummy_ledger.application import get_balance, grant
from rummy_ledger.domain import Grant


def new_id(prefix: str) -> str:
    """A unique id, so tests sharing a module's database never see each other's rows."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def funded_player(pool: ConnectionPool, amount_hundredths: int) -> str:
    """A new player account granted ``amount_hundredths`` by an operator."""
    account = new_id("player")
    grant(pool, Grant("operator-1", account, amount_hundredths, new_id("grant")))
    return account


def balance_of(pool: ConnectionPool, account: str) -> tuple[int, int, int]:
    """``(balance, reserved, available)`` in hundredths."""
    b = get_balance(pool, account)
    return b.balance_hundredths, b.reserved_hundredths, b.available_hundredths
