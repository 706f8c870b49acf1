"""Fairness's unit of work in memory: the fake the application tests run on.

Same semantics as ``PostgresUnitOfWork`` (``tests/test_fairness_storage_contract.py`` runs one
suite against both): one seed per hand (a second insert changes nothing), a reveal once, client
seeds stored once per seat, the outbox in order with dense stream versions, and a
``transaction()`` that undoes everything on an exception. It raises :class:`ConstraintViolation`
where the schema refuses a write: a seed not of 32 bytes or whose commitment is not its SHA-256,
client seeds for a hand without a seed or at a negative seat, a repeated outbox event id. What
only PostgreSQL shows: two writers at once (the fake serialises transactions under one lock).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from rummy_fairness.application.ports import FairnessUnitOfWork, Outbox, SeedRow, Seeds
from rummy_platform.envelope import Envelope
from rummy_platform.unit_of_work import SnapshotTransactions

Clock = Callable[[], datetime]


class ConstraintViolation(Exception):
    """A write fairness's schema would refuse (PostgreSQL raises an IntegrityError there)."""


@dataclass
class FairnessState:
    """Everything the fake stores (its tables)."""

    seeds: dict[str, SeedRow] = field(default_factory=dict)
    client_seeds: dict[tuple[str, int], bytes] = field(default_factory=dict)
    outbox: list[tuple[str, Envelope]] = field(default_factory=list)
    published: set[str] = field(default_factory=set)
    stream_versions: dict[str, int] = field(default_factory=dict)


class _Seeds(Seeds):
    def __init__(self, uow: InMemoryUnitOfWork) -> None:
        self._uow = uow

    def insert(self, seed: SeedRow) -> bool:
        server_seed = seed.server_seed
        if len(server_seed) != 32 or hashlib.sha256(server_seed).digest() != seed.commitment_sha256:
            raise ConstraintViolation("a seed is 32 bytes and its commitment is its SHA-256")
        seeds = self._uow.state.seeds
        if seed.hand_id in seeds:
            return False
        seeds[seed.hand_id] = replace(seed, revealed_at=None)
        return True

    def get(self, hand_id: str) -> SeedRow | None:
        return self._uow.state.seeds.get(hand_id)

    def mark_revealed(self, hand_id: str) -> SeedRow | None:
        row = self._uow.state.seeds.get(hand_id)
        if row is None or row.revealed_at is not None:
            return None
        revealed = replace(row, revealed_at=self._uow.clock())
        self._uow.state.seeds[hand_id] = revealed
        return revealed

    def insert_locked_client_seeds(self, hand_id: str, seeds: Sequence[tuple[int, bytes]]) -> None:
        state = self._uow.state
        for seat, seed in seeds:
            if hand_id not in state.seeds or seat < 0:
                raise ConstraintViolation("client seeds need a hand with a seed and seat >= 0")
            state.client_seeds.setdefault((hand_id, seat), seed)

    def locked_client_seeds(self, hand_id: str) -> list[tuple[int, bytes]]:
        mine = ((s, seed) for (h, s), seed in self._uow.state.client_seeds.items() if h == hand_id)
        return sorted(mine)


class _Outbox(Outbox):
    def __init__(self, uow: InMemoryUnitOfWork) -> None:
        self._uow = uow

    def next_stream_version(self, stream_id: str) -> int:
        versions = self._uow.state.stream_versions
        versions[stream_id] = versions.get(stream_id, 0) + 1
        return versions[stream_id]

    def write(self, events: Sequence[tuple[str, Envelope]]) -> None:
        outbox = self._uow.state.outbox
        for topic, envelope in events:
            if any(e.event_id == envelope.event_id for _, e in outbox):
                raise ConstraintViolation(f"outbox event {envelope.event_id!r} exists")
            outbox.append((topic, envelope))

    def unpublished(self) -> list[tuple[str, str, str]]:
        state = self._uow.state
        return [
            (t, e.event_id, e.type) for t, e in state.outbox if e.event_id not in state.published
        ]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class InMemoryUnitOfWork(FairnessUnitOfWork):
    """Fairness's storage in one :class:`FairnessState`; ``clock`` stamps reveals. Repositories
    may also be used outside a transaction (each call then stands alone)."""

    def __init__(self, *, clock: Clock = _utc_now) -> None:
        self._transactions = SnapshotTransactions(FairnessState())
        self.clock = clock
        self.seeds = _Seeds(self)
        self.outbox = _Outbox(self)

    @property
    def state(self) -> FairnessState:
        return self._transactions.state

    def transaction(self) -> AbstractContextManager[None]:
        return self._transactions.transaction()
