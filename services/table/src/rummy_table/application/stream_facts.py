"""The one mapping between the table's domain facts (``rummy_table.domain.facts``) and their
payloads on the table's stream: :func:`to_payloads` writes what the domain decided,
:func:`record_of` reads what the log holds, for the domain to fold. Only the table reads and
writes these facts (ops replays the table's stream from the payloads themselves).

A match's payload (``rummy.match.v1``) is a :class:`~rummy_table.domain.facts.MatchFact`: the
format's event (``rummy_game.match_payloads``, at the envelope's time) with the hand and the game
its record names, written back to the same bytes. A hand's payloads are its
:class:`~rummy_table.domain.facts.HandStarted` and
:class:`~rummy_table.domain.facts.HandEvents` (the variant's events, ``rummy_game.stream_payloads``
under the hand's context, ``stream_payloads.hand_context``); TableOpened is read as the domain's
:class:`~rummy_table.domain.facts.TableOpened` (the application keeps the payload itself:
``rummy_table.application.held_table``). :func:`fact_of` maps the table-level and match
payloads only (another service's answer about a hand passes through it unchanged: the same
object), what the table's handling of another service's event starts from.

The table-level facts map by one table (:data:`_PAYLOAD_OF`): a fact's fields are named as its
payload's, a nested line or hold is mapped the same way, and the ledger's StakeRejectionReason
reads as words (``insufficient balance``: ``rummy_table.domain.seating.reason_words``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, cast

from google.protobuf.message import Message

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_payloads, stream_payloads
from rummy_game.hand_decisions import Decided
from rummy_game.hand_payloads import payload_of
from rummy_game.stream_payloads import HandContext, StreamPayloadError
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


def opened_fact(opened: pb.TableOpened) -> tf.TableOpened:
    """The domain's TableOpened of the payload ``opened`` (its rule set as recorded, its start
    delay, the format it hosts). Raises RuleSetError for options out of bounds."""
    rules = stream_payloads.recorded_rule_set_from_pb(
        opened.rule_set, opened.seat_count, opened.point_value_hundredths, opened.commission_bps
    )
    fmt = None
    if opened.HasField("match") and match_payloads.is_match(opened.match):
        fmt = match_payloads.format_from_pb(opened.match, opened.commission_bps)
    return tf.TableOpened(
        opened.table_id,
        opened.seat_count,
        stream_payloads.start_delay_seconds_from_pb(opened.rule_set) * 1000,
        rules,
        fmt,
    )


def _hand_payload(fact: tf.HandStarted | tf.HandEvents, ctx: HandContext | None) -> Message:
    if isinstance(fact, tf.HandStarted):
        return stream_payloads.hand_started_to_pb(fact.event(0), fact.hand_no)
    assert ctx is not None and ctx.hand_id == fact.hand_id, "a hand's event under another hand"
    (event,) = fact.events  # a decided record holds one event
    return payload_of(Decided(event, None, fact.top_discard, fact.automatic, fact.wild_cut), ctx)


def hand_started_fact(started: pb.HandStarted) -> tf.HandStarted:
    """The domain's HandStarted of the payload ``started``. Raises ValueError for refused
    options."""
    return tf.HandStarted.of(stream_payloads.hand_started_from_pb(started, 0), started.hand_no)


def to_payload(fact: Fact, ctx: HandContext | None = None) -> Message:
    """The payload ``fact`` is written as; a hand's event under ``ctx``, the context of its
    hand. Raises ValueError for a StakeRejected or MatchMoneyRejected whose reason the
    ledger's enum does not name, StreamPayloadError for an event without a payload."""
    if isinstance(fact, tf.MatchFact):
        return _match_payload(fact)
    if isinstance(fact, tf.HandStarted | tf.HandEvents):
        return _hand_payload(fact, ctx)
    if isinstance(fact, tf.TableOpened):
        raise TypeError("a TableOpened is written from the request (OpenTable), not decided")
    return _plain_to_pb(fact)


def to_payloads(facts: Iterable[Fact], ctx: HandContext | None = None) -> list[Message]:
    """:func:`to_payload` of each of ``facts``, in order: a hand's events under ``ctx`` (the
    current hand's), or under the HandStarted before them."""
    out: list[Message] = []
    for fact in facts:
        payload = to_payload(fact, ctx)
        if isinstance(payload, pb.HandStarted):
            ctx = stream_payloads.hand_context(payload)
        out.append(payload)
    return out


def fact_of(payload: Message, at_ms: int) -> tf.TableFact | Message:
    """The table-level or match fact ``payload`` records, of an envelope that occurred at
    ``at_ms`` (ms since the epoch; a payload it does not map passes through). Raises
    StreamPayloadError (a ValueError) for a rejection whose reason number the ledger's enum does
    not name, or a match payload the format does not know (an input of it is ignored:
    ``rummy_table.application.inputs``)."""
    if match_payloads.is_match_payload(payload):
        return _match_fact(payload, at_ms)
    if type(payload) in _FACT_OF:
        return cast(tf.TableFact, _plain_of(payload))
    return payload


def record_of(payload: Message, at_ms: int, ctx: HandContext | None) -> Fact | None:
    """The domain fact a payload of the table's stream records (as :func:`fact_of`; a hand's
    under ``ctx``, the context of the current hand), None for a payload the table's state does
    not hold (it counts in the stream's version only). Raises StreamPayloadError for a hand's
    event with no hand started, ValueError as :func:`fact_of` and for refused options."""
    if isinstance(payload, pb.TableOpened):
        return opened_fact(payload)
    if isinstance(payload, pb.HandStarted):
        return hand_started_fact(payload)
    if stream_payloads.is_hand_payload(payload):
        if ctx is None:
            raise StreamPayloadError(f"{type(payload).__name__} before any HandStarted")
        return tf.HandEvents(ctx.hand_id, stream_payloads.from_payload(payload, ctx, at_ms))
    fact = fact_of(payload, at_ms)
    return None if isinstance(fact, Message) else fact
