"""One contract for fairness's storage, run on the in-memory fake and on PostgreSQL (``[memory]``,
``[postgresql]``; the latter on a real database, marked integration)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import psycopg
import pytest
from fairness_support import FIXED_SEED

from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy_fairness.adapters.memory import ConstraintViolation, InMemoryUnitOfWork
from rummy_fairness.application.ports import FairnessUnitOfWork, SeedRow
from rummy_platform.envelope import Envelope
from rummy_testing.storage import IMPLEMENTATIONS, Storage


@pytest.fixture(params=IMPLEMENTATIONS)
def storage(request: pytest.FixtureRequest) -> Storage[FairnessUnitOfWork]:
    if request.param == "memory":
        return Storage(InMemoryUnitOfWork(), ConstraintViolation)
    return Storage(request.getfixturevalue("pg_uow"), psycopg.IntegrityError)


def _insert(uow: FairnessUnitOfWork, hand_id: str, seed: bytes = FIXED_SEED) -> bool:
    return uow.seeds.insert(
        SeedRow(
            hand_id=hand_id,
            table_id="table-1",
            server_seed=seed,
            commitment_sha256=hashlib.sha256(seed).digest(),
            rules_version="r/1",
            shuffle_version="s/1",
        )
    )


def test_a_hand_keeps_its_first_seed_and_is_revealed_once(
    storage: Storage[FairnessUnitOfWork],
) -> None:
    uow = storage.uow
    with uow.transaction():
        assert _insert(uow, "h1")
        assert not _insert(uow, "h1", bytes(32))
        row = uow.seeds.get("h1")
        revealed = uow.seeds.mark_revealed("h1")
        again = uow.seeds.mark_revealed("h1")
        unknown = uow.seeds.mark_revealed("nobody")
    assert row is not None and row.server_seed == FIXED_SEED and row.revealed_at is None
    assert revealed is not None and revealed.revealed_at is not None
    assert (again, unknown) == (None, None)
    with uow.transaction():
        assert uow.seeds.get("nobody") is None


def test_a_seed_whose_commitment_is_not_its_sha256_or_not_32_bytes_is_refused(
    storage: Storage[FairnessUnitOfWork],
) -> None:
    uow = storage.uow
    with pytest.raises(storage.violation), uow.transaction():
        uow.seeds.insert(
            SeedRow(
                hand_id="h2",
                table_id="t",
                server_seed=FIXED_SEED,
                commitment_sha256=hashlib.sha256(b"another").digest(),
                rules_version="",
                shuffle_version="",
            )
        )
    with pytest.raises(storage.violation), uow.transaction():
        _insert(uow, "h3", b"short")


def test_client_seeds_are_stored_once_per_seat_and_only_for_a_known_hand(
    storage: Storage[FairnessUnitOfWork],
) -> None:
    uow = storage.uow
    with uow.transaction():
        _insert(uow, "h4")
        uow.seeds.insert_locked_client_seeds("h4", [(2, b""), (0, b"hi")])
        uow.seeds.insert_locked_client_seeds("h4", [(0, b"changed")])
        assert uow.seeds.locked_client_seeds("h4") == [(0, b"hi"), (2, b"")]
    with pytest.raises(storage.violation), uow.transaction():
        uow.seeds.insert_locked_client_seeds("no-seed", [(0, b"x")])


def _event(hand_id: str, version: int) -> Envelope:
    return Envelope.new(
        fairness_events.SeedCommitted(hand_id=hand_id, commitment_sha256=bytes(32)),
        stream_id="table-1",
        stream_version=version,
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_an_exception_undoes_the_transaction_and_the_outbox_stays_in_order(
    storage: Storage[FairnessUnitOfWork],
) -> None:
    uow = storage.uow
    with pytest.raises(RuntimeError), uow.transaction():
        _insert(uow, "h5")
        uow.outbox.write([("fairness-events", _event("h5", uow.outbox.next_stream_version("s")))])
        raise RuntimeError("fails before the end")
    with uow.transaction():
        assert uow.seeds.get("h5") is None and uow.outbox.unpublished() == []
        assert uow.outbox.next_stream_version("s") == 1  # the rolled-back version is taken again
        first, second = _event("h6", 1), _event("h6", 2)
        uow.outbox.write([("fairness-events", first), ("fairness-events", second)])
        assert uow.outbox.unpublished() == [
            ("fairness-events", first.event_id, first.type),
            ("fairness-events", second.event_id, second.type),
        ]
    with pytest.raises(storage.violation), uow.transaction():
        uow.outbox.write([("fairness-events", first)])
