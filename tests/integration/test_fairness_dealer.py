"""Fairness and dealer as separate processes on real Kafka and real PostgreSQL.

The test plays the table service: it appends table-events (built with the table protos) and reads
fairness-events and dealer-events. Each module run has its own topic prefix and database, so runs
never see each other's events.

Held here (docs/rules/promises.md#deal-fixed-before-seen, docs/rules/promises.md#nothing-lost,
docs/rules/promises.md#identity): the commitment is published before the deal and the seed
revealed after it hashes to it; the deal published is ``rummy_rules.shuffle.deal`` of the
revealed seed; ``GetProof`` shows nothing secret before the reveal; a player cannot read a seed; a
redelivered HandStarted gives one commitment; a fairness process killed between its commit and its
publish publishes the commitment once (after dropping repeats by event id); no seed or deck order
reaches the logs.
"""

from __future__ import annotations

import hashlib
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace

import grpc
import psycopg
import pytest
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.fairness.v1 import fairness_service_pb2 as fairness_pb
from rummy.fairness.v1 import fairness_service_pb2_grpc as fairness_grpc
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import drop_redelivered
from rummy_platform.topics import (
    DEALER_EVENTS,
    FAIRNESS_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_rules.deck import Shoe
from rummy_rules.shuffle import SHUFFLE_VERSION, ShuffleInputs, deal, reshuffle
from rummy_testing import events
from rummy_testing.service_process import (
    EVENT_TIMEOUT_S,
    START_TIMEOUT_S,
    IsolatedRun,
    ServiceProcess,
    fresh_database,
    isolated_run,
    start_service,
)
from rummy_testing.token_keys import issuer_authority
from rummy_testing.waiting import wait_for_count

#: slow: fairness and dealer processes (docs/testing.md#tests).
pytestmark = pytest.mark.slow

RULES_VERSION = "indian13-points/1"


# -- processes ------------------------------------------------------------------------------------


@dataclass
class Stack(IsolatedRun):
    """The run of this module's fairness and dealer processes."""


@pytest.fixture(scope="module")
def stack(kafka_bootstrap: str, database_url: str) -> Iterator[Stack]:
    with isolated_run(kafka_bootstrap, database_url, "fairness_dealer", Stack) as run:
        yield run


@pytest.fixture(scope="module")
def fairness(stack: Stack) -> Iterator[ServiceProcess]:
    service = start_service("rummy_fairness", stack.env())
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="module")
def dealer(stack: Stack, fairness: ServiceProcess) -> Iterator[ServiceProcess]:
    service = start_service("rummy_dealer", stack.env(RUMMY_FAIRNESS_ADDRESS=fairness.target))
    try:
        yield service
    finally:
        service.stop()


def fairness_stub(service: ServiceProcess, role: Role) -> fairness_grpc.FairnessServiceStub:
    token = issuer_authority().issue(f"{role.value}-1", role)
    channel = authorized_channel(service.channel_as(role), token)
    return fairness_grpc.FairnessServiceStub(channel)


# -- the table's side -----------------------------------------------------------------------------

SEATS = (0, 1, 2, 3)
DEALER_SEAT = 3
SHOE = cards_pb2.ShoeSpec(decks=2, printed_jokers=2)


def table_event(table_id: str, version: int, payload: Message) -> Envelope:
    """``payload`` on the table's stream, with this hand's rules and shuffle versions."""
    return events.table_event(
        table_id, version, payload, rules_version=RULES_VERSION, shuffle_version=SHUFFLE_VERSION
    )


def hand_started(table_id: str, hand_id: str) -> Envelope:
    return table_event(
        table_id,
        1,
        table_events.HandStarted(
            hand_id=hand_id,
            hand_no=1,
            seats=[cards_pb2.Seat(seat=s, account_id=f"acct-{s}") for s in SEATS],
            dealer_seat=DEALER_SEAT,
            point_value_hundredths=0,
            shoe=SHOE,
        ),
    )


CLIENT_SEEDS = {0: b"seat zero", 1: b"", 2: b"\x00\xff", 3: b"seat three says hi"}


def seeds_locked(table_id: str, hand_id: str, commitment: bytes) -> Envelope:
    return table_event(
        table_id,
        2,
        table_events.SeedsLocked(
            hand_id=hand_id,
            server_commitment_sha256=commitment,
            client_seeds=[
                table_events.ClientSeed(seat=s, client_seed=seed)
                for s, seed in CLIENT_SEEDS.items()
            ],
            dealer_seat=DEALER_SEAT,
            shoe=SHOE,
            hand_size=13,
        ),
    )


def new_ids() -> tuple[str, str]:
    return f"table-{uuid.uuid4().hex[:8]}", str(uuid.uuid4())


# -- tests ----------------------------------------------------------------------------------------


def test_commitment_comes_before_the_deal_and_the_revealed_seed_recomputes_the_published_deal(
    stack: Stack, fairness: ServiceProcess, dealer: ServiceProcess
) -> None:
    table_id, hand_id = new_ids()
    stack.log.append(stack.prefix + TABLE_EVENTS, hand_started(table_id, hand_id))
    [committed] = stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted)
    commitment = committed.payload.commitment_sha256
    assert committed.payload.hand_id == hand_id and len(commitment) == 32
    assert (committed.rules_version, committed.shuffle_version) == (RULES_VERSION, SHUFFLE_VERSION)
    assert committed.correlation_id == hand_id

    locked = seeds_locked(table_id, hand_id, commitment)
    stack.log.append(stack.prefix + TABLE_EVENTS, locked)
    [dealt] = stack.wait_for(DEALER_EVENTS, table_id, dealer_events.HandDealt)
    assert dealt.causation_id == locked.event_id
    assert dealt.occurred_at >= committed.occurred_at
    assert dealt.shuffle_version == SHUFFLE_VERSION and dealt.rules_version == RULES_VERSION

    ended = table_event(table_id, 3, table_events.HandAborted(hand_id=hand_id, reason="test over"))
    stack.log.append(stack.prefix + TABLE_EVENTS, ended)
    [revealed] = stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedRevealed)
    seed = revealed.payload.server_seed
    assert hashlib.sha256(seed).digest() == commitment == revealed.payload.commitment_sha256
    assert [e.stream_version for e in (committed, revealed)] == [1, 2]

    expected = deal(
        ShuffleInputs.of(seed, hand_id, CLIENT_SEEDS),
        Shoe(decks=2, printed_jokers=2),
        SEATS,
        DEALER_SEAT,
        13,
    )
    shoe = Shoe(decks=2, printed_jokers=2)
    assert expected.wild_cut is not None and expected.first_open is not None
    published = dealt.payload
    assert {h.seat: [c.index for c in h.cards] for h in published.hands} == {
        h.seat: [shoe.card_to_index(c) for c in h.cards] for h in expected.hands
    }
    assert published.wild_cut.index == shoe.card_to_index(expected.wild_cut)
    assert published.first_open.index == shoe.card_to_index(expected.first_open)
    assert [c.index for c in published.stock] == [shoe.card_to_index(c) for c in expected.stock]

    proof = fairness_stub(fairness, Role.PLAYER).GetProof(
        fairness_pb.GetProofRequest(hand_id=hand_id), timeout=10
    )
    assert proof.revealed and proof.server_seed == seed and proof.commitment_sha256 == commitment
    assert {s.seat: s.client_seed for s in proof.client_seeds} == CLIENT_SEEDS
    assert proof.shuffle_version == SHUFFLE_VERSION

    for service in (fairness, dealer):
        logs = "".join(service.lines)
        assert seed.hex() not in logs
        assert ",".join(str(c.index) for c in published.stock[:8]) not in logs.replace(" ", "")
    assert fairness.metric("rummy_fairness_seeds_committed_total") >= 1
    assert fairness.metric("rummy_fairness_seeds_revealed_total") >= 1
    assert dealer.metric("rummy_dealer_deals_total") >= 1


def test_a_stock_exhausted_is_reshuffled_from_the_numbered_sub_stream_of_the_revealed_seed(
    stack: Stack, fairness: ServiceProcess, dealer: ServiceProcess
) -> None:
    table_id, hand_id = new_ids()
    stack.log.append(stack.prefix + TABLE_EVENTS, hand_started(table_id, hand_id))
    [committed] = stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted)
    lock = seeds_locked(table_id, hand_id, committed.payload.commitment_sha256)
    stack.log.append(stack.prefix + TABLE_EVENTS, lock)
    [dealt] = stack.wait_for(DEALER_EVENTS, table_id, dealer_events.HandDealt)

    # Pretend the stock ran out twice: the pile is some dealt-out stock cards, its top kept.
    stock = list(dealt.payload.stock)
    piles = [stock[:20], stock[20:45]]
    for number, pile in enumerate(piles, start=1):
        exhausted = table_events.StockExhausted(
            hand_id=hand_id,
            turn_no=10 * number,
            reshuffle_no=number,
            cards=pile[:-1],
            top_discard=pile[-1],
            shoe=SHOE,
        )
        stack.log.append(stack.prefix + TABLE_EVENTS, table_event(table_id, 2 + number, exhausted))
    reshuffles = stack.wait_for(DEALER_EVENTS, table_id, dealer_events.StockReshuffled, count=2)

    stack.log.append(
        stack.prefix + TABLE_EVENTS,
        table_event(table_id, 5, table_events.HandAborted(hand_id=hand_id, reason="x")),
    )
    [revealed] = stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedRevealed)
    inputs = ShuffleInputs.of(revealed.payload.server_seed, hand_id, CLIENT_SEEDS)
    shoe = Shoe(decks=2, printed_jokers=2)
    for event, (number, pile) in zip(reshuffles, enumerate(piles, start=1), strict=True):
        expected = reshuffle(inputs, shoe, [shoe.index_to_card(c.index) for c in pile[:-1]], number)
        assert event.payload.reshuffle_no == number
        assert [c.index for c in event.payload.stock] == [shoe.card_to_index(c) for c in expected]
        assert event.payload.kept_top_discard.index == pile[-1].index
    assert [e.stream_version for e in (dealt, *reshuffles)] == [1, 2, 3]
    assert dealer.metric("rummy_dealer_reshuffles_total") >= 2


def test_before_the_reveal_the_proof_holds_only_the_commitment_and_a_player_cannot_read_the_seed(
    stack: Stack, fairness: ServiceProcess
) -> None:
    table_id, hand_id = new_ids()
    stack.log.append(stack.prefix + TABLE_EVENTS, hand_started(table_id, hand_id))
    [committed] = stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted)

    proof = fairness_stub(fairness, Role.PLAYER).GetProof(
        fairness_pb.GetProofRequest(hand_id=hand_id), timeout=10
    )
    assert proof.commitment_sha256 == committed.payload.commitment_sha256
    assert not proof.revealed and proof.server_seed == b""

    for role in (Role.PLAYER, Role.OPERATOR):
        with pytest.raises(grpc.RpcError) as denied:
            fairness_stub(fairness, role).GetServerSeed(
                fairness_pb.GetServerSeedRequest(hand_id=hand_id), timeout=10
            )
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED

    seed = fairness_stub(fairness, Role.SERVICE).GetServerSeed(
        fairness_pb.GetServerSeedRequest(hand_id=hand_id), timeout=10
    )
    assert hashlib.sha256(seed.server_seed).digest() == committed.payload.commitment_sha256

    with pytest.raises(grpc.RpcError) as missing:
        fairness_stub(fairness, Role.PLAYER).GetProof(
            fairness_pb.GetProofRequest(hand_id="no-such-hand"), timeout=10
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_redelivered_hand_started_gives_one_commitment(
    stack: Stack, fairness: ServiceProcess
) -> None:
    table_id, hand_id = new_ids()
    started = hand_started(table_id, hand_id)
    stack.log.append(stack.prefix + TABLE_EVENTS, started)  # the same event twice
    stack.log.append(stack.prefix + TABLE_EVENTS, started)
    again = hand_started(table_id, hand_id)  # re-recorded under a new event id
    stack.log.append(stack.prefix + TABLE_EVENTS, again)
    _, marker_hand = new_ids()  # a later hand on the same table shows the three were handled
    stack.log.append(stack.prefix + TABLE_EVENTS, hand_started(table_id, marker_hand))

    stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted, count=2)
    time.sleep(1.0)  # room for a wrongly repeated commitment to be published
    commitments = stack.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted)
    assert sorted(e.payload.hand_id for e in commitments) == sorted([hand_id, marker_hand])


@pytest.mark.parametrize("fault_point", ["outbox-before-append", "outbox-after-append"])
def test_a_fairness_process_killed_between_commit_and_publish_publishes_the_commitment_once(
    stack: Stack, database_url: str, fault_point: str
) -> None:
    # Its own topics and database: this process must not see the module's other hands.
    with fresh_database(database_url, "fairness_crash") as crash_db:
        own = replace(stack, prefix=f"{stack.prefix}{fault_point}-", database_url=crash_db)
        stack.log.ensure_topics(event_topic_specs(prefix=own.prefix))
        hand_id, commitment = crash_and_restart(own, fault_point)
    assert commitment.payload.hand_id == hand_id  # published once, for the hand it commits to


def unpublished(database_url: str) -> int:
    """How many rows of fairness's outbox are not marked published yet."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM fairness.outbox WHERE published_at IS NULL"
        ).fetchone()
    return int(row[0]) if row else 0


def crash_and_restart(
    own: Stack, fault_point: str
) -> tuple[str, Envelope[fairness_events.SeedCommitted]]:
    """Kill fairness at ``fault_point`` and restart it; returns the hand id and the one
    SeedCommitted envelope left once redeliveries are dropped."""
    schema_db = own.database_url
    table_id, hand_id = new_ids()
    own.log.append(own.prefix + TABLE_EVENTS, hand_started(table_id, hand_id))

    doomed = start_service("rummy_fairness", own.env(RUMMY_FAULT_POINT=fault_point), wait=False)
    assert doomed.process.wait(START_TIMEOUT_S) == -signal.SIGKILL
    with psycopg.connect(schema_db) as conn:
        rows = conn.execute("SELECT count(*) FROM fairness.server_seeds").fetchone()
        pending = conn.execute(
            "SELECT count(*) FROM fairness.outbox WHERE published_at IS NULL"
        ).fetchone()
    assert rows == (1,) and pending == (1,)  # committed, not marked published

    restarted = start_service("rummy_fairness", own.env())
    try:
        # Done once the restarted process marked the outbox row published: it appended its copy
        # first, so every copy there will ever be is in the log then.
        wait_for_count(
            "the outbox row marked published",
            lambda: [] if unpublished(schema_db) else ["marked"],
            1,
            EVENT_TIMEOUT_S,
        )
        published = own.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted)
    finally:
        restarted.stop()
    expected_copies = 2 if fault_point == "outbox-after-append" else 1
    assert len(published) == expected_copies
    [once] = drop_redelivered(published)
    with psycopg.connect(schema_db) as conn:
        assert conn.execute("SELECT count(*) FROM fairness.server_seeds").fetchone() == (1,)
    return hand_id, once


def test_a_dealer_killed_and_restarted_deals_each_locked_hand_exactly_once(
    stack: Stack, database_url: str
) -> None:
    with fresh_database(database_url, "dealer_restart") as own_db:
        own = replace(stack, prefix=f"{stack.prefix}dealer-restart-", database_url=own_db)
        stack.log.ensure_topics(event_topic_specs(prefix=own.prefix))
        own_fairness = start_service("rummy_fairness", own.env())
        try:
            env = own.env(RUMMY_FAIRNESS_ADDRESS=own_fairness.target)
            table_id = f"table-{uuid.uuid4().hex[:8]}"
            hands = [str(uuid.uuid4()) for _ in range(2)]
            for hand_id in hands:
                own.log.append(own.prefix + TABLE_EVENTS, hand_started(table_id, hand_id))
            commitments = {
                e.payload.hand_id: e.payload.commitment_sha256
                for e in own.wait_for(FAIRNESS_EVENTS, table_id, fairness_events.SeedCommitted, 2)
            }

            first = start_service("rummy_dealer", env)
            own.log.append(
                own.prefix + TABLE_EVENTS, seeds_locked(table_id, hands[0], commitments[hands[0]])
            )
            own.wait_for(DEALER_EVENTS, table_id, dealer_events.HandDealt)
            first.process.kill()
            first.process.wait(10)

            own.log.append(
                own.prefix + TABLE_EVENTS, seeds_locked(table_id, hands[1], commitments[hands[1]])
            )
            second = start_service("rummy_dealer", env)
            try:
                own.wait_for(DEALER_EVENTS, table_id, dealer_events.HandDealt, count=2)
                time.sleep(2.0)  # room for a wrong second deal of the first hand
                dealt = own.wait_for(DEALER_EVENTS, table_id, dealer_events.HandDealt)
            finally:
                second.stop()
        finally:
            own_fairness.stop()
    assert [e.payload.hand_id for e in dealt] == hands
    assert [e.stream_version for e in dealt] == [1, 2]
