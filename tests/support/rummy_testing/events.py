"""Envelopes as the services append them, for tests that play another service's part.

:func:`table_event` -> an ``Envelope`` on a table's stream (``table-events``), correlated with the
hand its payload names, as the table service writes it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.message import Message

from rummy_platform.envelope import Envelope

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
