"""Typed event envelopes and their wire form (``rummy.common.v1.EventEnvelope`` bytes).

An :class:`Envelope` carries one payload message (a generated protobuf message of an
``events.proto``) with the stream bookkeeping of ``docs/rules/promises.md#table-stream``: event
id, stream id (table or account id, also the Kafka key), stream version, occurred-at, correlation
(hand id), causation, the rules and shuffle versions, and the digest of the client request that
caused it. On the wire the payload travels as bytes next to its full protobuf name;
:class:`PayloadRegistry` turns the name back into the message class.

Nothing here reads a clock or draws ids on its own except :meth:`Envelope.new`, which draws a
random UUID for ``event_id`` when none is given; ``occurred_at`` always comes from the caller.
:func:`reaction_event_id` derives the ids of the events an input causes from the input's.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Generic

from google.protobuf.message import DecodeError, Message
from google.protobuf.timestamp_pb2 import Timestamp
from typing_extensions import TypeIs, TypeVar

from rummy.clock.v1 import events_pb2 as clock_events
from rummy.common.v1 import envelope_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.match.v1 import match_pb2 as match_events
from rummy.table.v1 import events_pb2 as table_events

from . import variant_payloads


class EnvelopeError(ValueError):
    """Bytes that are not a valid envelope, or an envelope whose payload cannot be decoded."""


class UnknownEventType(EnvelopeError):
    """The envelope names a payload type the registry does not know (a newer writer's).

    ``type_name`` is the name it gives; :func:`from_proto` also sets ``stream_id`` and
    ``correlation_id`` (the table / account id and the hand id) from the envelope, so a consumer
    that skips the event can say whose it was."""

    def __init__(
        self, message: str, type_name: str = "", stream_id: str = "", correlation_id: str = ""
    ) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.stream_id = stream_id
        self.correlation_id = correlation_id


#: The payload type of an Envelope: ``Envelope`` alone is ``Envelope[Message]`` (any payload);
#: ``Envelope[SeedCommitted]`` is one whose payload is known to be that message (and is an
#: ``Envelope[Message]`` too: an envelope is immutable).
P = TypeVar("P", bound=Message, default=Message, covariant=True)
M = TypeVar("M", bound=Message)


@dataclass(frozen=True, slots=True)
class Envelope(Generic[P]):
    """One event of one stream, with its payload as a typed protobuf message.

    ``stream_version`` is 1-based; ``occurred_at`` must be timezone-aware (it is stored as UTC,
    microsecond precision). Raises ValueError on construction if either rule is broken or an id is
    empty.
    """

    event_id: str
    stream_id: str
    stream_version: int
    occurred_at: datetime
    payload: P
    correlation_id: str = ""
    causation_id: str = ""
    rules_version: str = ""
    shuffle_version: str = ""
    request_digest: str = ""

    def __post_init__(self) -> None:
        if not self.event_id:
            raise ValueError("event_id must not be empty")
        if not self.stream_id:
            raise ValueError("stream_id must not be empty")
        if self.stream_version < 1:
            raise ValueError(f"stream_version is 1-based, got {self.stream_version}")
        if self.occurred_at.tzinfo is None or self.occurred_at.utcoffset() is None:
            raise ValueError("occurred_at must be timezone-aware")

    @classmethod
    def new(
        cls,
        payload: M,
        *,
        stream_id: str,
        stream_version: int,
        occurred_at: datetime,
        correlation_id: str = "",
        causation_id: str = "",
        rules_version: str = "",
        shuffle_version: str = "",
        request_digest: str = "",
        event_id: str | None = None,
    ) -> Envelope[M]:
        """An envelope for ``payload``, with a fresh random UUID as event id unless one is given."""
        return Envelope(
            event_id=event_id or str(uuid.uuid4()),
            stream_id=stream_id,
            stream_version=stream_version,
            occurred_at=occurred_at,
            payload=payload,
            correlation_id=correlation_id,
            causation_id=causation_id,
            rules_version=rules_version,
            shuffle_version=shuffle_version,
            request_digest=request_digest,
        )

    @property
    def type(self) -> str:
        """Full protobuf name of the payload, e.g. ``rummy.table.v1.CardDrawn``."""
        return type_name(self.payload)

    @property
    def key(self) -> bytes:
        """The Kafka message key: the stream id in UTF-8."""
        return self.stream_id.encode()


def has_payload(envelope: Envelope, kind: type[M]) -> TypeIs[Envelope[M]]:
    """Whether ``envelope``'s payload is a ``kind`` (to a type checker: an ``Envelope[kind]``)."""
    return isinstance(envelope.payload, kind)


def type_name(message: Message | type[Message]) -> str:
    """Full protobuf name of a message or message class."""
    return message.DESCRIPTOR.full_name


def request_digest(request: Message, id_field: str = "client_request_id") -> str:
    """The ``request_digest`` of the events a client's ``request`` causes: SHA-256 (hex) of its
    full type name and its deterministic serialization with ``id_field`` cleared. Two requests
    have the same digest exactly when they are the same RPC with the same body."""
    body = type(request)()
    body.CopyFrom(request)
    body.ClearField(id_field)
    digest = hashlib.sha256(type_name(request).encode())
    digest.update(b"\0")
    digest.update(body.SerializeToString(deterministic=True))
    return digest.hexdigest()


_REACTION_NAMESPACE = uuid.UUID("6f1d3b0e-8c55-4d0b-9a57-2f3c5e1d7a90")


def reaction_event_id(source: Envelope, payload_type: str, index: int = 0) -> str:
    """A stable UUID (text) for the ``index``-th event of type ``payload_type`` (a full protobuf
    name, :func:`type_name`) caused by ``source``: the same input always yields the same id, so a
    consumer drops a repeated reaction (the reactors', :mod:`rummy_platform.reactor`)."""
    return str(uuid.uuid5(_REACTION_NAMESPACE, f"{source.event_id}/{payload_type}/{index}"))


class PayloadRegistry:
    """Maps payload type names to generated message classes, to unpack envelopes."""

    def __init__(self, classes: Iterable[type[Message]] = ()) -> None:
        self._classes: dict[str, type[Message]] = {}
        self.register(*classes)

    def register(self, *classes: type[Message]) -> None:
        """Make ``classes`` known by their full protobuf names (re-registering is harmless)."""
        for cls in classes:
            self._classes[type_name(cls)] = cls

    def register_module(self, module: ModuleType) -> None:
        """Register every top-level message of a generated ``*_pb2`` module."""
        descriptor = module.DESCRIPTOR
        self.register(*(getattr(module, name) for name in sorted(descriptor.message_types_by_name)))

    def alias(self, old: str, new: str) -> None:
        """Read payloads of type ``old`` as the registered message ``new`` (same field numbers).
        Raises UnknownEventType if ``new`` is not registered."""
        self._classes[old] = self.class_for(new)

    def __contains__(self, name: object) -> bool:
        return name in self._classes

    def class_for(self, name: str) -> type[Message]:
        """The message class of type ``name``. Raises UnknownEventType if it is not registered."""
        try:
            return self._classes[name]
        except KeyError:
            raise UnknownEventType(f"unknown event payload type {name!r}", name) from None

    def unpack(self, name: str, payload: bytes) -> Message:
        """Parse ``payload`` as a message of type ``name``.

        Raises UnknownEventType for an unregistered name, EnvelopeError for undecodable bytes.
        """
        message = self.class_for(name)()
        try:
            message.ParseFromString(payload)
        except DecodeError as exc:
            raise EnvelopeError(f"payload is not a valid {name}: {exc}") from exc
        return message


def event_payloads() -> PayloadRegistry:
    """A registry of every event payload of the five services (``rummy.<area>.v1.events``), of a
    match (``rummy.match.v1``, on the table stream) and of
    every variant (``rummy_platform.variant_payloads``), with the type names a variant's events
    were recorded under before they had their own package read as their new messages
    (``variant_payloads.aliases``)."""
    registry = PayloadRegistry()
    for module in (
        table_events,
        match_events,
        ledger_events,
        fairness_events,
        dealer_events,
        clock_events,
    ):
        registry.register_module(module)
    for module in variant_payloads.modules():
        registry.register_module(module)
    for old, new in variant_payloads.aliases().items():
        registry.alias(old, new)
    return registry


def to_proto(envelope: Envelope) -> envelope_pb2.EventEnvelope:
    """The ``EventEnvelope`` message of ``envelope`` (payload serialized deterministically)."""
    occurred_at = Timestamp()
    occurred_at.FromDatetime(envelope.occurred_at.astimezone(UTC))
    return envelope_pb2.EventEnvelope(
        event_id=envelope.event_id,
        stream_id=envelope.stream_id,
        stream_version=envelope.stream_version,
        occurred_at=occurred_at,
        correlation_id=envelope.correlation_id,
        causation_id=envelope.causation_id,
        type=envelope.type,
        payload=envelope.payload.SerializeToString(deterministic=True),
        rules_version=envelope.rules_version,
        shuffle_version=envelope.shuffle_version,
        request_digest=envelope.request_digest,
    )


def from_proto(message: envelope_pb2.EventEnvelope, registry: PayloadRegistry) -> Envelope:
    """The typed envelope of an ``EventEnvelope`` message.

    Raises UnknownEventType / EnvelopeError as :meth:`PayloadRegistry.unpack`, and EnvelopeError
    if a required field is missing.
    """
    try:
        return Envelope(
            event_id=message.event_id,
            stream_id=message.stream_id,
            stream_version=message.stream_version,
            occurred_at=message.occurred_at.ToDatetime(tzinfo=UTC),
            payload=registry.unpack(message.type, message.payload),
            correlation_id=message.correlation_id,
            causation_id=message.causation_id,
            rules_version=message.rules_version,
            shuffle_version=message.shuffle_version,
            request_digest=message.request_digest,
        )
    except UnknownEventType as exc:
        raise UnknownEventType(
            str(exc), message.type, message.stream_id, message.correlation_id
        ) from None
    except ValueError as exc:
        if isinstance(exc, EnvelopeError):
            raise
        raise EnvelopeError(f"invalid envelope: {exc}") from exc


def encode(envelope: Envelope) -> bytes:
    """The envelope as ``rummy.common.v1.EventEnvelope`` bytes (the Kafka message value)."""
    return to_proto(envelope).SerializeToString(deterministic=True)


def decode(data: bytes, registry: PayloadRegistry) -> Envelope:
    """The typed envelope of ``EventEnvelope`` bytes. Raises EnvelopeError / UnknownEventType."""
    message = envelope_pb2.EventEnvelope()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise EnvelopeError(f"not an EventEnvelope: {exc}") from exc
    return from_proto(message, registry)
