"""Envelopes as the services append them, for tests that play another service's part.

:func:`table_event` -> an ``Envelope`` on a table's stream (``table-events``), correlated with the
hand its payload names, as the table service writes it.
:func:`stream_payloads` -> the payloads of one stream of a running stack's topic, in order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message

from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import KafkaEventLog

if TYPE_CHECKING:
    from rummy_testing.stacks import RunningStack

#: The time of a test event whose time does not matter (2026-01-01 00:00 UTC).
FIXED_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def table_event(
    table_id: str,
    version: int,
    payload: Message,
    *,
    occurred_at: datetime | None = None,
    rules_version: str = "",
    shuffle_version: str = "",
) -> Envelope:
    """``payload`` at ``stream_version`` ``version`` of table ``table_id``'s stream, its
    correlation id the payload's ``hand_id`` (every hand event names its hand), at
    ``occurred_at`` (default: now, UTC) with the given rules and shuffle versions."""
    return Envelope.new(
        payload,
        stream_id=table_id,
        stream_version=version,
        occurred_at=occurred_at or datetime.now(UTC),
        correlation_id=str(getattr(payload, "hand_id", "")),
        rules_version=rules_version,
        shuffle_version=shuffle_version,
    )


def stream_payloads(stack: RunningStack, topic: str, stream_id: str) -> list[Any]:
    """The payloads of stream ``stream_id`` (a table id, an account id) in ``topic`` (e.g.
    ``TABLE_EVENTS``, ``LEDGER_EVENTS``) of ``stack``'s brokers, under its topic prefix, in
    order."""
    log = KafkaEventLog(stack.kafka_bootstrap)
    try:
        return [r.envelope.payload for r in log.read_stream(stack.topic_prefix + topic, stream_id)]
    finally:
        log.close()
