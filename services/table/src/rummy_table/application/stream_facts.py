"""The one mapping between the table's domain facts (``rummy_table.domain.facts``) and their
payloads on the table's stream: :func:`to_payload` writes what the domain decided, :func:`fact_of`
reads what the log holds, for the domain to fold. Only the table reads and writes these facts
(ops replays the table's stream from the payloads themselves).

A match's payload (``rummy.match.v1``) is a :class:`~rummy_table.domain.facts.MatchFact`: the
format's event (``rummy_game.match_payloads``, at the envelope's time) with the hand and the game
its record names, written back to the same bytes. A payload this module does not map (a hand's,
the other services' answers about a hand the domain still takes as payloads) passes through both
ways unchanged: the same object.

The table-level facts map by one table (:data:`_PAYLOAD_OF`): a fact's fields are named as its
payload's, a nested line or hold is mapped the same way, and the ledger's StakeRejectionReason
reads as words (``insufficient balance``: ``rummy_table.domain.seating.reason_words``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

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


#: Each table-level fact's payload type (their fields are named alike).
_PAYLOAD_OF: dict[type, type[Message]] = {
    tf.PlayerSeated: pb.TablePlayerSeated,
    tf.PlayerLeft: pb.TablePlayerLeft,
    tf.TableClosing: pb.TableClosing,
    tf.TableClosed: pb.TableClosed,
    tf.StakeRejected: ledger_pb.StakeRejected,
    tf.SeedRevealed: fairness_pb.SeedRevealed,
    tf.HandSettled: ledger_pb.HandSettled,
    tf.SettlementRefused: ledger_pb.SettlementRefused,
    tf.MatchSettled: ledger_pb.MatchSettled,
    tf.MatchMoneyHeld: ledger_pb.MatchMoneyHeld,
    tf.MatchMoneyRejected: ledger_pb.MatchMoneyRejected,
}
#: Each payload type's fact type.
_FACT_OF: dict[type[Message], type] = {v: k for k, v in _PAYLOAD_OF.items()}
#: The lines and holds inside them (their fields named alike too), and the other way round.
_NESTED: dict[type, type[Message]] = {
    tf.JournalLine: ledger_pb.JournalLine,
    tf.Reservation: ledger_pb.Reservation,
}
_NESTED_OF: dict[type[Message], type] = {v: k for k, v in _NESTED.items()}
#: The ledger's enum of rejection reasons, read as words.
_REASONS = ledger_pb.StakeRejectionReason.DESCRIPTOR


def _reason_words(reason: ledger_pb.StakeRejectionReason.ValueType) -> str:
    """The ledger's StakeRejectionReason as words (``insufficient balance``). Raises
    StreamPayloadError for a number the enum does not name."""
    try:
        name = ledger_pb.StakeRejectionReason.Name(reason)
    except ValueError:
        raise StreamPayloadError(f"no stake rejection reason {reason}") from None
    return seating.reason_words(name)


def _plain_to_pb(value: Any) -> Message:
    """The payload of a table-level fact, line or hold (:data:`_PAYLOAD_OF`, :data:`_NESTED`)."""
    kind = _PAYLOAD_OF.get(type(value)) or _NESTED[type(value)]
    by_name = kind.DESCRIPTOR.fields_by_name
    kwargs: dict[str, Any] = {}
    for f in fields(value):
        field_value = getattr(value, f.name)
        if by_name[f.name].enum_type is _REASONS:
            field_value = ledger_pb.StakeRejectionReason.Value(seating.reason_name(field_value))
        elif isinstance(field_value, tuple):
            field_value = [_plain_to_pb(item) for item in field_value]
        kwargs[f.name] = field_value
    return kind(**kwargs)


def _plain_of(payload: Message) -> Any:
    """The fact, line or hold ``payload`` records (:data:`_FACT_OF`, :data:`_NESTED_OF`). Raises
    StreamPayloadError for a rejection reason number the ledger's enum does not name."""
    kind = _FACT_OF.get(type(payload)) or _NESTED_OF[type(payload)]
    by_name = payload.DESCRIPTOR.fields_by_name
    kwargs: dict[str, Any] = {}
    for f in fields(kind):
        field_value = getattr(payload, f.name)
        if by_name[f.name].enum_type is _REASONS:
            field_value = _reason_words(field_value)
        elif by_name[f.name].message_type is not None:  # a repeated line or hold
            field_value = tuple(_plain_of(item) for item in field_value)
        kwargs[f.name] = field_value
    return kind(**kwargs)


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


def to_payload(fact: Fact) -> Message:
    """The payload ``fact`` is written as (a payload given passes through). Raises ValueError
    for a StakeRejected or MatchMoneyRejected whose reason the ledger's enum does not name."""
    if isinstance(fact, tf.MatchFact):
        return _match_payload(fact)
    if isinstance(fact, Message):
        return fact
    return _plain_to_pb(fact)


def to_payloads(facts: Iterable[Fact]) -> list[Message]:
    """:func:`to_payload` of each of ``facts``, in order."""
    return [to_payload(fact) for fact in facts]


def fact_of(payload: Message, at_ms: int) -> Fact:
    """The domain fact ``payload`` records, of an envelope that occurred at ``at_ms`` (ms since
    the epoch; a payload it does not map passes through). Raises StreamPayloadError (a
    ValueError) for a rejection whose reason number the ledger's enum does not name, or a match
    payload the format does not know (an input of it is ignored:
    ``rummy_table.application.inputs``)."""
    if match_payloads.is_match_payload(payload):
        return _match_fact(payload, at_ms)
    if type(payload) in _FACT_OF:
        fact: Fact = _plain_of(payload)
        return fact
    return payload
