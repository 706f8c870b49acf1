"""Helpers shared by the ledger tests (not fixtures: plain functions)."""

from __future__ import annotations

import uuid

from psycopg_pool import ConnectionPool

from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.application import get_balance, grant
from rummy_ledger.domain import Grant
from rummy_ledger.unit_of_work import LedgerUnitOfWork
from rummy_rules.registry import lookup
from rummy_rules.rules import RuleSet

#: The variant whose settlements these tests post (the ledger itself knows no variant).
VARIANT = "indian-points"


def house_rule_set(seats: int, point_value_cents: int, commission_bps: int) -> RuleSet:
    """The house rule set of :data:`VARIANT` for ``seats`` seats, found as a host finds it."""
    return lookup(VARIANT).house_rule_set(seats, point_value_cents, commission_bps)


def new_id(prefix: str) -> str:
    """A unique id, so tests sharing a module's database never see each other's rows."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def storage(where: LedgerUnitOfWork | ConnectionPool) -> LedgerUnitOfWork:
    """The unit of work itself, or the PostgreSQL one on a pool."""
    return PostgresUnitOfWork(where) if isinstance(where, ConnectionPool) else where


def funded_player(where: LedgerUnitOfWork | ConnectionPool, amount_hundredths: int) -> str:
    """A new player account granted ``amount_hundredths`` by an operator."""
    account = new_id("player")
    grant(storage(where), Grant("operator-1", account, amount_hundredths, new_id("grant")))
    return account


def balance_of(where: LedgerUnitOfWork | ConnectionPool, account: str) -> tuple[int, int, int]:
    """``(balance, reserved, available)`` in hundredths."""
    b = get_balance(storage(where), account)
    return b.balance_hundredths, b.reserved_hundredths, b.available_hundredths
