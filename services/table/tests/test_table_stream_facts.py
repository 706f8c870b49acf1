"""The mapping between the table's domain facts and their payloads on the log
(rummy_table.application.stream_facts): every table-level payload reads as its fact and that fact
writes the very same bytes back, a hand's payloads read as its facts (the variant's events), and
another service's answer about a hand passes fact_of untouched."""

from __future__ import annotations

import pytest
import table_calls
from google.protobuf.message import Message
from world import World, replay_all

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_game import match_payloads, stream_payloads
from rummy_game.stream_payloads import StreamPayloadError
from rummy_rules.formats import messages as fm
from rummy_table.application import stream_facts
from rummy_table.domain import closing
from rummy_table.domain import facts as tf

#: One payload of each table-level type, every field set to something other than its default
#: (so a field the mapping dropped would change the bytes), with the fact it records.
CASES: list[tuple[Message, tf.TableFact]] = [
    (pb.TablePlayerSeated(seat=3, account_id="ann"), tf.PlayerSeated(seat=3, account_id="ann")),
    (
        pb.TablePlayerLeft(seat=2, account_id="bob", during_hand=True),
        tf.PlayerLeft(seat=2, account_id="bob", during_hand=True),
    ),
    (pb.TablePlayerLeft(seat=0, account_id="cy"), tf.PlayerLeft(seat=0, account_id="cy")),
    (
        pb.TableClosing(operator_account_id="op", reason="maintenance"),
        tf.TableClosing(operator_account_id="op", reason="maintenance"),
    ),
    (pb.TableClosed(), tf.TableClosed()),
    *[
        (
            ledger_pb.StakeRejected(
                hand_id="h-1",
                seat=4,
                account_id="dee",
                reason=number,
                available_hundredths=150,
                required_hundredths=8000,
            ),
            tf.StakeRejected(
                hand_id="h-1",
                seat=4,
                account_id="dee",
                reason=words,
                available_hundredths=150,
                required_hundredths=8000,
            ),
        )
        for number, words in [
            (ledger_pb.STAKE_REJECTION_REASON_UNSPECIFIED, "unspecified"),
            (ledger_pb.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE, "insufficient balance"),
            (ledger_pb.STAKE_REJECTION_REASON_UNKNOWN_ACCOUNT, "unknown account"),
            (ledger_pb.STAKE_REJECTION_REASON_NOT_DEALT_IN, "not dealt in"),
        ]
    ],
    (
        fairness_pb.SeedRevealed(
            hand_id="h-2", server_seed=b"\x00seed", commitment_sha256=b"c" * 32
        ),
        tf.SeedRevealed(hand_id="h-2", server_seed=b"\x00seed", commitment_sha256=b"c" * 32),
    ),
    (
        ledger_pb.HandSettled(
            hand_id="h-3",
            journal_transaction_id="j-1",
            lines=[
                ledger_pb.JournalLine(account_id="ann", amount_hundredths=-400, memo="loss"),
                ledger_pb.JournalLine(account_id="bob", amount_hundredths=380),
            ],
            commission_hundredths=20,
        ),
        tf.HandSettled(
            hand_id="h-3",
            journal_transaction_id="j-1",
            lines=(tf.JournalLine("ann", -400, "loss"), tf.JournalLine("bob", 380)),
            commission_hundredths=20,
        ),
    ),
    (
        ledger_pb.SettlementRefused(
            hand_id="h-4",
            reason="the lines do not sum to zero",
            released=[
                ledger_pb.Reservation(seat=0, account_id="ann", amount_hundredths=800),
                ledger_pb.Reservation(seat=5, account_id="eve", amount_hundredths=1),
            ],
        ),
        tf.SettlementRefused(
            hand_id="h-4",
            reason="the lines do not sum to zero",
            released=(tf.Reservation(0, "ann", 800), tf.Reservation(5, "eve", 1)),
        ),
    ),
    (
        ledger_pb.MatchSettled(
            match_id="t/1",
            game_no=2,
            journal_transaction_id="j-2",
            lines=[ledger_pb.JournalLine(account_id="cy", amount_hundredths=-7, memo="m")],
            commission_hundredths=3,
        ),
        tf.MatchSettled(
            match_id="t/1",
            game_no=2,
            journal_transaction_id="j-2",
            lines=(tf.JournalLine("cy", -7, "m"),),
            commission_hundredths=3,
        ),
    ),
    (
        ledger_pb.MatchMoneyHeld(
            match_id="t/2",
            purpose="stake",
            game_no=3,
            reservations=[ledger_pb.Reservation(seat=1, account_id="bob", amount_hundredths=500)],
        ),
        tf.MatchMoneyHeld(
            match_id="t/2",
            purpose="stake",
            game_no=3,
            reservations=(tf.Reservation(1, "bob", 500),),
        ),
    ),
    (
        ledger_pb.MatchMoneyRejected(
            match_id="t/3",
            purpose="rejoin",
            game_no=4,
            seat=2,
            account_id="cy",
            reason=ledger_pb.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE,
            available_hundredths=10,
            required_hundredths=2000,
        ),
        tf.MatchMoneyRejected(
            match_id="t/3",
            purpose="rejoin",
            game_no=4,
            seat=2,
            account_id="cy",
            reason="insufficient balance",
            available_hundredths=10,
            required_hundredths=2000,
        ),
    ),
    (
        mpb.DealVoided(deal_no=2, reason="the dealer failed", hand_id="h-5"),
        tf.MatchFact(fm.DealVoided(deal_no=2, reason="the dealer failed"), hand_id="h-5"),
    ),
]

#: When the envelopes of the cases occurred (ms since the epoch): a match event carries it.
AT_MS = 1_700_000_000_123

#: One payload of each match event type (``rummy.match.v1``), every field set.
MATCH_PAYLOADS: list[Message] = [
    mpb.MatchStarted(
        match_id="t/1",
        match_format="pool-101",
        seats=[cards_pb2.Seat(seat=0, account_id="ann"), cards_pb2.Seat(seat=2, account_id="bob")],
    ),
    mpb.MoneyReserved(seat=1, amount_hundredths=700, purpose="entry"),
    mpb.MoneyReserved(seat=1, amount_hundredths=700, purpose="stake", game_no=3),
    mpb.MoneyReserved(seat=2, amount_hundredths=90, purpose="rejoin"),
    mpb.GameStarted(game_no=2, seats=[0, 2]),
    mpb.DealStarted(deal_no=3, seats=[0, 2], tie_break=True, hand_id="h-1"),
    mpb.DealScored(
        deal_no=3,
        points=[mpb.SeatPoints(seat=0, points=20)],
        winners=[2],
        totals=[mpb.SeatPoints(seat=0, points=60)],
        chips=[mpb.SeatPoints(seat=2, points=5)],
        timed_out=[0],
        hand_id="h-1",
    ),
    mpb.TieBreakDue(seats=[0, 2]),
    mpb.DealVoided(deal_no=4, reason="aborted", hand_id="h-2"),
    mpb.SeatEliminated(seat=0, total=102),
    mpb.SeatLeft(seat=2, mid_deal=True),
    mpb.SeatForfeitedGame(seat=2),
    mpb.RejoinOffered(seat=0, total=80, entry_fee_hundredths=300),
    mpb.Rejoined(seat=0, total=80),
    mpb.RejoinDeclined(seat=0),
    mpb.RejoinRefused(seat=0, total=80, entry_fee_hundredths=300),
    mpb.SplitRequested(seat=2),
    mpb.GameEnded(
        game_no=2,
        winner=2,
        totals=[mpb.SeatPoints(seat=2, points=500)],
        settlement=mpb.MatchSettlement(
            pool_hundredths=1000,
            commission_bps=500,
            commission_hundredths=50,
            lines=[mpb.MoneyLine(seat=2, held_hundredths=500, amount_hundredths=450)],
            winners=[2],
        ),
    ),
    mpb.MatchEnded(winners=[2], reason="won"),
    mpb.MatchEnded(
        winners=[0],
        reason="lowest_total",
        settlement=mpb.MatchSettlement(
            pool_hundredths=600,
            lines=[mpb.MoneyLine(seat=0, held_hundredths=300, amount_hundredths=300)],
            winners=[0],
        ),
    ),
    mpb.MatchAborted(reason="closed", released=[mpb.SeatPoints(seat=0, points=700)]),
]


@pytest.mark.parametrize(("payload", "fact"), CASES, ids=lambda c: type(c).__name__)
def test_a_table_payload_reads_as_its_fact_and_writes_back_the_same_bytes(
    payload: Message, fact: tf.TableFact
) -> None:
    assert stream_facts.fact_of(payload, AT_MS) == fact
    written = stream_facts.to_payload(fact)
    assert type(written) is type(payload)
    assert written.SerializeToString(deterministic=True) == payload.SerializeToString(
        deterministic=True
    )


def test_every_table_level_payload_type_is_mapped() -> None:
    mapped = {type(payload) for payload, _ in CASES}
    facts = {type(fact) for _, fact in CASES}
    assert facts == set(tf.TableFact.__args__)
    assert mapped == {
        pb.TablePlayerSeated,
        pb.TablePlayerLeft,
        pb.TableClosing,
        pb.TableClosed,
        ledger_pb.StakeRejected,
        fairness_pb.SeedRevealed,
        ledger_pb.HandSettled,
        ledger_pb.SettlementRefused,
        ledger_pb.MatchSettled,
        ledger_pb.MatchMoneyHeld,
        ledger_pb.MatchMoneyRejected,
        mpb.DealVoided,
    }


@pytest.mark.parametrize("payload", MATCH_PAYLOADS, ids=lambda p: type(p).__name__)
def test_a_match_payload_reads_as_its_event_with_the_hand_and_game_and_writes_the_same_bytes(
    payload: Message,
) -> None:
    fact = stream_facts.fact_of(payload, AT_MS)
    assert isinstance(fact, tf.MatchFact)
    assert fact.event == match_payloads.event_from_pb(payload, AT_MS)
    assert fact.hand_id == getattr(payload, "hand_id", "")
    assert fact.game_no == (payload.game_no if isinstance(payload, mpb.MoneyReserved) else 0)
    written = stream_facts.to_payload(fact)
    assert type(written) is type(payload)
    assert written.SerializeToString(deterministic=True) == payload.SerializeToString(
        deterministic=True
    )


def test_every_match_payload_type_is_mapped() -> None:
    assert {type(payload) for payload in MATCH_PAYLOADS} == set(match_payloads.EVENT_TYPES)


def test_another_services_answer_about_a_hand_passes_through_fact_of_as_the_same_object() -> None:
    for payload in (ledger_pb.StakesReserved(hand_id="h"), dealer_pb.HandDealt(hand_id="h")):
        assert stream_facts.fact_of(payload, AT_MS) is payload


def test_a_payload_of_no_table_fact_reads_as_none_and_a_hand_event_needs_its_hand() -> None:
    assert stream_facts.record_of(clock_pb.TurnDeadlinePassed(hand_id="h"), AT_MS, None) is None
    with pytest.raises(StreamPayloadError):
        stream_facts.record_of(pb.HandAborted(hand_id="h", reason="r"), AT_MS, None)


def test_a_played_hands_records_read_as_the_domains_facts() -> None:
    world = World()
    table_id, hand_id, account, view = world.playing("ann", "bob")
    request = api.DropRequest(
        table_id=table_id, hand_id=hand_id, turn_no=view.turn_no, client_request_id="r-1"
    )
    table_calls.drop(world.app, account, request)
    log = [e for e in replay_all(world.log) if e.stream_id == table_id]
    opened, seated = log[0].payload, log[1].payload
    assert isinstance(opened, pb.TableOpened)
    fact = stream_facts.record_of(opened, AT_MS, None)
    assert isinstance(fact, tf.TableOpened)
    assert (fact.table_id, fact.seat_count, fact.fmt) == (table_id, opened.seat_count, None)
    assert (
        fact.start_delay_ms == stream_payloads.start_delay_seconds_from_pb(opened.rule_set) * 1000
    )
    assert stream_facts.record_of(seated, AT_MS, None) == stream_facts.fact_of(seated, AT_MS)
    ctx = None
    for envelope in log[2:]:
        payload = envelope.payload
        fact = stream_facts.record_of(payload, AT_MS, ctx)
        if isinstance(payload, pb.HandStarted):
            assert isinstance(fact, tf.HandStarted) and fact.hand_id == hand_id
            assert fact.accounts == {s.seat: s.account_id for s in payload.seats}
            assert stream_facts.to_payload(fact) == payload  # the very same bytes
            ctx = stream_payloads.hand_context(payload)
        elif stream_payloads.is_hand_payload(payload):
            assert ctx is not None and isinstance(fact, tf.HandEvents)
            assert fact.hand_id == hand_id
            assert fact.events == stream_payloads.from_payload(payload, ctx, AT_MS)
    ended = log[-1].payload
    assert isinstance(ended, pb.HandEnded)
    table = world.app.projection.tables[table_id]
    fact = stream_facts.record_of(ended, AT_MS, ctx)
    assert fact is not None and table.ends_hand(fact)
    assert table.results[hand_id] == ended  # the application keeps the payload as recorded


def test_a_rejection_reason_the_ledger_does_not_name_is_refused() -> None:
    unknown = ledger_pb.StakeRejected(hand_id="h", seat=1, account_id="a", reason=99)  # type: ignore[arg-type]
    with pytest.raises(StreamPayloadError):
        stream_facts.fact_of(unknown, AT_MS)
    with pytest.raises(ValueError):
        stream_facts.to_payload(
            tf.StakeRejected("h", 1, "a", "bored", available_hundredths=0, required_hundredths=1)
        )
    unknown_match = ledger_pb.MatchMoneyRejected(match_id="t/1", purpose="entry", reason=99)  # type: ignore[arg-type]
    with pytest.raises(StreamPayloadError):
        stream_facts.fact_of(unknown_match, AT_MS)
    with pytest.raises(ValueError):
        stream_facts.to_payload(tf.MatchMoneyRejected("t/1", "entry", 0, 1, "a", "bored", 0, 1))


def test_the_service_answers_a_hand_waits_for_are_named_as_their_payloads() -> None:
    assert ledger_pb.StakesReserved.DESCRIPTOR.full_name == closing.STAKES_RESERVED
    assert fairness_pb.SeedCommitted.DESCRIPTOR.full_name == closing.SEED_COMMITTED
    assert pb.SeedsLocked.DESCRIPTOR.full_name == closing.SEEDS_LOCKED
    assert dealer_pb.HandDealt.DESCRIPTOR.full_name == closing.HAND_DEALT
