"""Fairness's seam to its storage: a unit of work and its repositories (interfaces only).

The application (:mod:`rummy_fairness.application.seeds`) reaches storage only through
:class:`FairnessUnitOfWork`; it imports no psycopg and no adapter (an import contract in the root
``pyproject.toml``). Implementations: ``rummy_fairness.adapters.postgres.PostgresUnitOfWork``
(the service's) and ``rummy_fairness.adapters.memory.InMemoryUnitOfWork`` (the application
tests'); ``tests/test_fairness_storage_contract.py`` runs one suite against both.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from rummy_platform.envelope import Envelope


@dataclass(frozen=True)
class SeedRow:
    """A hand's seed record. ``server_seed`` is secret while ``revealed_at`` is None (a new
    seed's)."""

    hand_id: str
    table_id: str
    server_seed: bytes
    commitment_sha256: bytes
    rules_version: str
    shuffle_version: str
    revealed_at: datetime | None = None


class Seeds(abc.ABC):
    """One secret server seed per hand, and the client seeds as locked."""

    @abc.abstractmethod
    def insert(self, seed: SeedRow) -> bool:
        """Store a hand's new seed (``server_seed`` 32 bytes, ``commitment_sha256`` its SHA-256,
        else refused as the schema's CHECKs refuse it; ``revealed_at`` is not stored: a new seed
        is secret); False (and nothing changes) if the hand has one."""

    @abc.abstractmethod
    def get(self, hand_id: str) -> SeedRow | None:
        """The hand's seed record, or None for an unknown hand."""

    @abc.abstractmethod
    def mark_revealed(self, hand_id: str) -> SeedRow | None:
        """Stamp the hand's seed revealed; returns it, or None if unknown or already revealed."""

    @abc.abstractmethod
    def insert_locked_client_seeds(self, hand_id: str, seeds: Sequence[tuple[int, bytes]]) -> None:
        """Record ``(seat, client seed)`` as locked for a known hand (a repeat changes nothing)."""

    @abc.abstractmethod
    def locked_client_seeds(self, hand_id: str) -> list[tuple[int, bytes]]:
        """``(seat, client seed)`` as locked, by seat; empty before the lock."""


class Outbox(abc.ABC):
    @abc.abstractmethod
    def next_stream_version(self, stream_id: str) -> int:
        """Take the next 1-based stream version of ``stream_id`` (dense)."""

    @abc.abstractmethod
    def write(self, events: Sequence[tuple[str, Envelope]]) -> None:
        """Append ``(topic, envelope)`` pairs, in order (a repeated event id is refused)."""

    @abc.abstractmethod
    def unpublished(self) -> list[tuple[str, str, str]]:
        """``(topic, event id, payload type)`` of the events not yet published, in the order
        written."""


class FairnessUnitOfWork(abc.ABC):
    """Fairness's repositories and the transaction they run in."""

    seeds: Seeds
    outbox: Outbox

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A transaction: the outermost commits at its end (or is the caller's, which commits
        it), a nested one is a savepoint; an exception undoes everything done inside it."""
