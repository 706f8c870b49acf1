"""The one mapping between the table's domain facts (``rummy_table.domain.facts``) and their
payloads on the table's stream: :func:`to_payload` writes what the domain decided, :func:`fact_of`
reads what the log holds, for the domain to fold. Only the table reads and writes these facts
(ops replays the table's stream from the payloads themselves).

A payload this module does not map (a hand's or a match's, the other services' answers the
domain still takes as payloads) passes through both ways unchanged: the same object.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from google.protobuf.message import Message

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_table.domain import facts as tf
from rummy_table.domain import seating

if TYPE_CHECKING:
    from rummy_table.domain.table import Fact


def _reason_words(reason: ledger_pb.StakeRejectionReason.ValueType) -> str:
    """The ledger's StakeRejectionReason as words (``insufficient balance``). Raises ValueError
    for a number the enum does not name."""
    return seating.reason_words(ledger_pb.StakeRejectionReason.Name(reason))


def _reason_number(words: str) -> ledger_pb.StakeRejectionReason.ValueType:
    return ledger_pb.StakeRejectionReason.Value(seating.reason_name(words))


def to_payload(fact: Fact) -> Message:
    """The payload ``fact`` is written as (a payload given passes through). Raises ValueError
    for a StakeRejected whose reason the ledger's enum does not name."""
    match fact:
        case tf.PlayerSeated():
            return pb.TablePlayerSeated(seat=fact.seat, account_id=fact.account_id)
        case tf.PlayerLeft():
            return pb.TablePlayerLeft(
                seat=fact.seat, account_id=fact.account_id, during_hand=fact.during_hand
            )
        case tf.TableClosing():
            return pb.TableClosing(operator_account_id=fact.operator_account_id, reason=fact.reason)
        case tf.TableClosed():
            return pb.TableClosed()
        case tf.StakeRejected():
            return ledger_pb.StakeRejected(
                hand_id=fact.hand_id,
                seat=fact.seat,
                account_id=fact.account_id,
                reason=_reason_number(fact.reason),
                available_hundredths=fact.available_hundredths,
                required_hundredths=fact.required_hundredths,
            )
    return fact


def to_payloads(facts: Iterable[Fact]) -> list[Message]:
    """:func:`to_payload` of each of ``facts``, in order."""
    return [to_payload(fact) for fact in facts]


def fact_of(payload: Message) -> Fact:
    """The domain fact ``payload`` records (a payload it does not map passes through). Raises
    ValueError for a StakeRejected whose reason number the ledger's enum does not name."""
    match payload:
        case pb.TablePlayerSeated():
            return tf.PlayerSeated(seat=payload.seat, account_id=payload.account_id)
        case pb.TablePlayerLeft():
            return tf.PlayerLeft(
                seat=payload.seat, account_id=payload.account_id, during_hand=payload.during_hand
            )
        case pb.TableClosing():
            return tf.TableClosing(
                operator_account_id=payload.operator_account_id, reason=payload.reason
            )
        case pb.TableClosed():
            return tf.TableClosed()
        case ledger_pb.StakeRejected():
            return tf.StakeRejected(
                hand_id=payload.hand_id,
                seat=payload.seat,
                account_id=payload.account_id,
                reason=_reason_words(payload.reason),
                available_hundredths=payload.available_hundredths,
                required_hundredths=payload.required_hundredths,
            )
    return payload
