"""The mapping between the table's domain facts and their payloads on the log
(rummy_table.application.stream_facts): every table-level payload reads as its fact and that fact
writes the very same bytes back; what it does not map passes through untouched."""

from __future__ import annotations

import pytest
from google.protobuf.message import Message

from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game.stream_payloads import StreamPayloadError
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
]


@pytest.mark.parametrize(("payload", "fact"), CASES, ids=lambda c: type(c).__name__)
def test_a_table_payload_reads_as_its_fact_and_writes_back_the_same_bytes(
    payload: Message, fact: tf.TableFact
) -> None:
    assert stream_facts.fact_of(payload) == fact
    written = stream_facts.to_payload(stream_facts.fact_of(payload))
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
    }


def test_a_payload_it_does_not_map_passes_through_as_the_same_object() -> None:
    for payload in (pb.HandAborted(hand_id="h", reason="r"), pb.TableOpened(table_id="t")):
        assert stream_facts.fact_of(payload) is payload
        assert stream_facts.to_payload(payload) is payload
    assert stream_facts.to_payloads([tf.TableClosed(), pb.HandAborted()]) == [
        pb.TableClosed(),
        pb.HandAborted(),
    ]


def test_a_rejection_reason_the_ledger_does_not_name_is_refused() -> None:
    unknown = ledger_pb.StakeRejected(hand_id="h", seat=1, account_id="a", reason=99)  # type: ignore[arg-type]
    with pytest.raises(StreamPayloadError):
        stream_facts.fact_of(unknown)
    with pytest.raises(ValueError):
        stream_facts.to_payload(
            tf.StakeRejected("h", 1, "a", "bored", available_hundredths=0, required_hundredths=1)
        )


def test_the_service_answers_a_hand_waits_for_are_named_as_their_payloads() -> None:
    assert ledger_pb.StakesReserved.DESCRIPTOR.full_name == closing.STAKES_RESERVED
    assert fairness_pb.SeedCommitted.DESCRIPTOR.full_name == closing.SEED_COMMITTED
    assert pb.SeedsLocked.DESCRIPTOR.full_name == closing.SEEDS_LOCKED
    assert dealer_pb.HandDealt.DESCRIPTOR.full_name == closing.HAND_DEALT
