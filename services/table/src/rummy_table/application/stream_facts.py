"""The one mapping between the table's domain facts (``rummy_table.domain.facts``) and their
payloads on the table's stream: :func:`to_payload` writes what the domain decided, :func:`fact_of`
reads what the log holds, for the domain to fold. Only the table reads and writes these facts
(ops replays the table's stream from the payloads themselves).

A match's payload (``rummy.match.v1``) is a :class:`~rummy_table.domain.facts.MatchFact`: the
format's event (``rummy_game.match_payloads``, at the envelope's time) with the hand and the game
its record names, written back to the same bytes. A payload this module does not map (a hand's,
the other services' answers about a hand the domain still takes as payloads) passes through both
ways unchanged: the same object.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from google.protobuf.message import Message

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_payloads
from rummy_game.stream_payloads import StreamPayloadError
from rummy_rules.formats import MatchState
from rummy_rules.formats import messages as fm
from rummy_table.domain import facts as tf
from rummy_table.domain import seating

if TYPE_CHECKING:
    from rummy_table.domain.table import Fact


def _reason_words(reason: ledger_pb.StakeRejectionReason.ValueType) -> str:
    """The ledger's StakeRejectionReason as words (``insufficient balance``). Raises
    StreamPayloadError for a number the enum does not name."""
    try:
        name = ledger_pb.StakeRejectionReason.Name(reason)
    except ValueError:
        raise StreamPayloadError(f"no stake rejection reason {reason}") from None
    return seating.reason_words(name)


def _reason_number(words: str) -> ledger_pb.StakeRejectionReason.ValueType:
    return ledger_pb.StakeRejectionReason.Value(seating.reason_name(words))


def _lines_pb(lines: Iterable[tf.JournalLine]) -> list[ledger_pb.JournalLine]:
    return [
        ledger_pb.JournalLine(
            account_id=line.account_id, amount_hundredths=line.amount_hundredths, memo=line.memo
        )
        for line in lines
    ]


def _lines(lines: Iterable[ledger_pb.JournalLine]) -> tuple[tf.JournalLine, ...]:
    return tuple(
        tf.JournalLine(line.account_id, line.amount_hundredths, line.memo) for line in lines
    )


def _reservations_pb(holds: Iterable[tf.Reservation]) -> list[ledger_pb.Reservation]:
    return [
        ledger_pb.Reservation(
            seat=hold.seat, account_id=hold.account_id, amount_hundredths=hold.amount_hundredths
        )
        for hold in holds
    ]


def _reservations(holds: Iterable[ledger_pb.Reservation]) -> tuple[tf.Reservation, ...]:
    return tuple(tf.Reservation(h.seat, h.account_id, h.amount_hundredths) for h in holds)


#: The match payloads that name the hand playing their deal.
_OF_A_DEAL = (mpb.DealStarted, mpb.DealScored, mpb.DealVoided)


def _match_payload(fact: tf.MatchFact) -> Message:
    """The payload of a match fact: the format's event with the hand and game its record names
    (``rummy_game.match_payloads``)."""
    before = replace(MatchState(), game_no=fact.game_no)
    payload = match_payloads.event_to_pb(fact.event, before, fact.hand_id)
    if isinstance(payload, mpb.MoneyReserved):
        payload.game_no = fact.game_no  # as recorded, whatever the purpose
    return payload


def _match_fact(payload: Message, at_ms: int) -> tf.MatchFact:
    event = match_payloads.event_from_pb(payload, at_ms)
    assert isinstance(event, fm.MatchEvent)
    return tf.MatchFact(
        event,
        hand_id=payload.hand_id if isinstance(payload, _OF_A_DEAL) else "",
        game_no=payload.game_no if isinstance(payload, mpb.MoneyReserved) else 0,
    )


def to_payload(fact: Fact) -> Message:  # noqa: C901 - one case per fact
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
        case tf.SeedRevealed():
            return fairness_pb.SeedRevealed(
                hand_id=fact.hand_id,
                server_seed=fact.server_seed,
                commitment_sha256=fact.commitment_sha256,
            )
        case tf.HandSettled():
            return ledger_pb.HandSettled(
                hand_id=fact.hand_id,
                journal_transaction_id=fact.journal_transaction_id,
                lines=_lines_pb(fact.lines),
                commission_hundredths=fact.commission_hundredths,
            )
        case tf.SettlementRefused():
            return ledger_pb.SettlementRefused(
                hand_id=fact.hand_id, reason=fact.reason, released=_reservations_pb(fact.released)
            )
        case tf.MatchSettled():
            return ledger_pb.MatchSettled(
                match_id=fact.match_id,
                game_no=fact.game_no,
                journal_transaction_id=fact.journal_transaction_id,
                lines=_lines_pb(fact.lines),
                commission_hundredths=fact.commission_hundredths,
            )
        case tf.MatchFact():
            return _match_payload(fact)
        case tf.MatchMoneyHeld():
            return ledger_pb.MatchMoneyHeld(
                match_id=fact.match_id,
                purpose=fact.purpose,
                game_no=fact.game_no,
                reservations=_reservations_pb(fact.reservations),
            )
        case tf.MatchMoneyRejected():
            return ledger_pb.MatchMoneyRejected(
                match_id=fact.match_id,
                purpose=fact.purpose,
                game_no=fact.game_no,
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


def fact_of(payload: Message, at_ms: int) -> Fact:  # noqa: C901 - one case per fact
    """The domain fact ``payload`` records, of an envelope that occurred at ``at_ms`` (ms since
    the epoch; a payload it does not map passes through). Raises StreamPayloadError (a
    ValueError) for a rejection whose reason number the ledger's enum does not name, or a match
    payload the format does not know (an input of it is ignored:
    ``rummy_table.application.inputs``)."""
    if match_payloads.is_match_payload(payload):
        return _match_fact(payload, at_ms)
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
        case fairness_pb.SeedRevealed():
            return tf.SeedRevealed(
                hand_id=payload.hand_id,
                server_seed=payload.server_seed,
                commitment_sha256=payload.commitment_sha256,
            )
        case ledger_pb.HandSettled():
            return tf.HandSettled(
                hand_id=payload.hand_id,
                journal_transaction_id=payload.journal_transaction_id,
                lines=_lines(payload.lines),
                commission_hundredths=payload.commission_hundredths,
            )
        case ledger_pb.SettlementRefused():
            return tf.SettlementRefused(
                hand_id=payload.hand_id,
                reason=payload.reason,
                released=_reservations(payload.released),
            )
        case ledger_pb.MatchSettled():
            return tf.MatchSettled(
                match_id=payload.match_id,
                game_no=payload.game_no,
                journal_transaction_id=payload.journal_transaction_id,
                lines=_lines(payload.lines),
                commission_hundredths=payload.commission_hundredths,
            )
        case ledger_pb.MatchMoneyHeld():
            return tf.MatchMoneyHeld(
                match_id=payload.match_id,
                purpose=payload.purpose,
                game_no=payload.game_no,
                reservations=_reservations(payload.reservations),
            )
        case ledger_pb.MatchMoneyRejected():
            return tf.MatchMoneyRejected(
                match_id=payload.match_id,
                purpose=payload.purpose,
                game_no=payload.game_no,
                seat=payload.seat,
                account_id=payload.account_id,
                reason=_reason_words(payload.reason),
                available_hundredths=payload.available_hundredths,
                required_hundredths=payload.required_hundredths,
            )
    return payload
