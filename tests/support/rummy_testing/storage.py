"""What a storage contract suite runs on: a service's unit of work, in memory or on PostgreSQL.

A contract suite (``test_ledger_storage_contract.py``, ``test_fairness_storage_contract.py``)
parametrizes one fixture with :data:`IMPLEMENTATIONS`; the PostgreSQL half is marked
``integration`` (it needs the ``database_url`` server), the in-memory half runs anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import pytest

U = TypeVar("U")

#: The ``params`` of a fixture giving each implementation in turn: ``"memory"``, ``"postgresql"``.
IMPLEMENTATIONS = ["memory", pytest.param("postgresql", marks=pytest.mark.integration)]


@dataclass(frozen=True)
class Storage(Generic[U]):
    """A unit of work and what a write its schema refuses raises there (the fake's
    ``ConstraintViolation``, PostgreSQL's ``psycopg.IntegrityError``)."""

    uow: U
    violation: type[Exception]
