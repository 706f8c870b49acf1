"""Helpers shared by the fairness tests (plain functions and constants, not fixtures)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope
from rummy_rules.shuffle import SHUFFLE_VERSION

VECTOR = json.loads(
    (Path(__file__).resolve().parents[3] / "libs/rules/vectors/shuffle-v1.json").read_text()
)["deals"][0]
#: The shuffle vector's server seed, injected in place of the OS CSPRNG (``os_seed``).
FIXED_SEED = bytes.fromhex(VECTOR["server_seed_hex"])


#: The table events fairness reads (each names its hand).
HandEvent = (
    table_events.HandStarted
    | table_events.SeedsLocked
    | table_events.HandEnded
    | table_events.HandAborted
)


def table_event(table_id: str, version: int, payload: HandEvent) -> Envelope:
    """A table-events envelope carrying ``payload`` (its hand's id is the correlation id)."""
    return Envelope.new(
        payload,
        stream_id=table_id,
        stream_version=version,
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        correlation_id=payload.hand_id,
        rules_version="indian13-points/1",
        shuffle_version=SHUFFLE_VERSION,
    )
