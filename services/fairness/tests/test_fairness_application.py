"""Fairness's use cases on the in-memory unit of work (no database): commit a seed on
HandStarted, record the client seeds as locked, reveal once after the hand, answer proofs. A
fixed seed source stands in for the OS CSPRNG (the production default, ``os_seed``)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from fairness_support import FIXED_SEED, VECTOR, table_event

from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_fairness.adapters.memory import InMemoryUnitOfWork
from rummy_fairness.application.seeds import Fairness, keyed_seed, os_seed
from rummy_fairness.bootstrap import seed_source
from rummy_fairness.config import FairnessSettings
from rummy_platform.errors import InvalidArgument, NotFound
from rummy_platform.topics import FAIRNESS_EVENTS


def _outbox(uow: InMemoryUnitOfWork) -> list[object]:
    return [envelope.payload for topic, envelope in uow.state.outbox if topic == FAIRNESS_EVENTS]


def test_a_fixed_seed_is_committed_by_its_sha256_and_revealed_once_after_the_hand(
    uow: InMemoryUnitOfWork,
) -> None:
    fairness = Fairness(seed_source=lambda _hand: FIXED_SEED)
    started = table_event("table-1", 1, table_events.HandStarted(hand_id="hand-1"))
    fairness.on_hand_started(uow, started)
    fairness.on_hand_started(uow, started)  # redelivered: no second seed, no second event
    commitment = bytes.fromhex(VECTOR["expected"]["commitment_hex"])
    assert _outbox(uow) == [
        fairness_events.SeedCommitted(hand_id="hand-1", commitment_sha256=commitment)
    ]
    [(_, committed)] = uow.state.outbox
    assert committed.causation_id == started.event_id and committed.stream_version == 1

    proof = fairness.get_proof(uow, "hand-1")
    assert not proof.revealed and proof.server_seed == b""
    assert proof.commitment_sha256 == commitment

    for version, payload in (
        (2, table_events.HandEnded(hand_id="hand-1")),
        (3, table_events.HandAborted(hand_id="hand-1")),  # a (wrong) second end: one reveal
    ):
        fairness.on_hand_over(uow, table_event("table-1", version, payload))
    revealed = [p for p in _outbox(uow) if isinstance(p, fairness_events.SeedRevealed)]
    assert [p.server_seed for p in revealed] == [FIXED_SEED]
    assert [e.stream_version for _, e in uow.state.outbox] == [1, 2]
    assert fairness.get_proof(uow, "hand-1").server_seed == FIXED_SEED
    assert fairness.get_server_seed(uow, "hand-1") == FIXED_SEED


def test_the_proof_lists_the_client_seeds_exactly_as_locked(uow: InMemoryUnitOfWork) -> None:
    fairness = Fairness(seed_source=lambda _hand: FIXED_SEED)
    fairness.on_hand_started(
        uow, table_event("table-1", 1, table_events.HandStarted(hand_id="hand-2"))
    )
    seeds = [
        table_events.ClientSeed(seat=2, client_seed=b""),
        table_events.ClientSeed(seat=0, client_seed=b"hi"),
    ]
    locked = table_events.SeedsLocked(hand_id="hand-2", client_seeds=seeds)
    fairness.on_seeds_locked(uow, table_event("table-1", 2, locked))
    assert fairness.get_proof(uow, "hand-2").client_seeds == ((0, b"hi"), (2, b""))


def test_client_seeds_locked_for_a_hand_without_a_seed_are_ignored(
    uow: InMemoryUnitOfWork,
) -> None:
    locked = table_events.SeedsLocked(
        hand_id="hand-9", client_seeds=[table_events.ClientSeed(seat=0, client_seed=b"x")]
    )
    Fairness().on_seeds_locked(uow, table_event("table-1", 1, locked))
    assert uow.state.client_seeds == {}


def test_an_unknown_hand_has_no_proof_and_no_seed(uow: InMemoryUnitOfWork) -> None:
    with pytest.raises(NotFound):
        Fairness().get_proof(uow, "never-started")
    with pytest.raises(NotFound):
        Fairness().get_server_seed(uow, "never-started")
    with pytest.raises(InvalidArgument):
        Fairness().get_proof(uow, "")


def test_a_seed_source_giving_the_wrong_length_stores_nothing(uow: InMemoryUnitOfWork) -> None:
    started = table_event("table-1", 1, table_events.HandStarted(hand_id="hand-3"))
    with pytest.raises(ValueError, match="31 bytes"):
        Fairness(seed_source=lambda _hand: b"\x00" * 31).on_hand_started(uow, started)
    assert uow.state.seeds == {} and uow.state.outbox == []


def test_production_seeds_are_32_fresh_bytes_even_for_the_same_hand() -> None:
    seeds = {os_seed("hand-1") for _ in range(8)}
    assert len(seeds) == 8 and all(len(s) == 32 for s in seeds)
    # the service's default source, as the bootstrap wires it without RUMMY_FAIRNESS_SEED_KEY
    fairness = Fairness()
    drawn = []
    for _ in range(2):
        uow = InMemoryUnitOfWork()
        fairness.on_hand_started(
            uow, table_event("table-1", 1, table_events.HandStarted(hand_id="hand-1"))
        )
        row = uow.seeds.get("hand-1")
        assert row is not None
        drawn.append(row.server_seed)
    assert drawn[0] != drawn[1]


def test_a_keyed_seed_source_is_hmac_sha256_of_the_hand_id_under_the_key(
    uow: InMemoryUnitOfWork,
) -> None:
    key = b"gin-e2e-key"
    source = keyed_seed(key)
    assert source("hand-9") == hmac.new(key, b"hand-9", hashlib.sha256).digest()
    assert source("hand-9") == source("hand-9") != source("hand-10")
    assert keyed_seed(b"other")("hand-9") != source("hand-9")
    fairness = Fairness(seed_source=source)
    fairness.on_hand_started(
        uow, table_event("table-1", 1, table_events.HandStarted(hand_id="hand-9"))
    )
    commitment = hashlib.sha256(source("hand-9")).digest()
    assert _outbox(uow) == [
        fairness_events.SeedCommitted(hand_id="hand-9", commitment_sha256=commitment)
    ]
    with pytest.raises(ValueError, match="empty"):
        keyed_seed(b"")


def test_the_service_draws_from_the_os_unless_the_seed_key_is_set() -> None:
    assert seed_source(FairnessSettings.model_construct(seed_key=None)) is os_seed
    keyed = seed_source(FairnessSettings.model_construct(seed_key="k"))
    assert keyed("h") == hmac.new(b"k", b"h", hashlib.sha256).digest()
