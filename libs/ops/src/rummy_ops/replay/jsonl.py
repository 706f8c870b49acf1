"""The export format of the table stream: one JSON object per line (JSONL), one line per event.

Each line holds the envelope's fields and the payload as JSON (protobuf's canonical JSON mapping,
``google.protobuf.json_format``, field names as in the .proto), with the payload's full type::

    {"event_id": "...", "stream_id": "<table id>", "stream_version": 17,
     "occurred_at": "2026-11-30T04:31:12.123000+00:00", "correlation_id": "<hand id>",
     "causation_id": "...", "rules_version": "...", "shuffle_version": "...", "request_digest": "",
     "type": "rummy.table.v1.CardDiscarded", "payload": {"hand_id": "...", "seat": 2, ...}}

In the payload, bytes are base64 and 64-bit integers are strings (the canonical mapping).
:func:`read_jsonl` reads exactly this format back into envelopes; a dispute is then replayed
offline with ``rummy replay --from-file``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from google.protobuf import json_format

from rummy_platform.envelope import Envelope, PayloadRegistry, event_payloads
from rummy_platform.skips import SKIPPED


class ExportFormatError(ValueError):
    """A line that is not an exported event (bad JSON, missing field, unknown payload type)."""


def to_json(envelope: Envelope) -> dict[str, Any]:
    """The JSON object of one event (see the module docstring)."""
    return {
        "event_id": envelope.event_id,
        "stream_id": envelope.stream_id,
        "stream_version": envelope.stream_version,
        "occurred_at": envelope.occurred_at.isoformat(),
        "correlation_id": envelope.correlation_id,
        "causation_id": envelope.causation_id,
        "rules_version": envelope.rules_version,
        "shuffle_version": envelope.shuffle_version,
        "request_digest": envelope.request_digest,
        "type": envelope.type,
        "payload": json_format.MessageToDict(envelope.payload, preserving_proto_field_name=True),
    }


def from_json(obj: dict[str, Any], registry: PayloadRegistry | None = None) -> Envelope:
    """The envelope of one exported JSON object. Raises ExportFormatError."""
    registry = registry or event_payloads()
    try:
        message = registry.class_for(obj["type"])()
        json_format.ParseDict(obj["payload"], message)
        return Envelope(
            event_id=obj["event_id"],
            stream_id=obj["stream_id"],
            stream_version=int(obj["stream_version"]),
            occurred_at=datetime.fromisoformat(obj["occurred_at"]),
            payload=message,
            correlation_id=obj.get("correlation_id", ""),
            causation_id=obj.get("causation_id", ""),
            rules_version=obj.get("rules_version", ""),
            shuffle_version=obj.get("shuffle_version", ""),
            request_digest=obj.get("request_digest", ""),
        )
    except (KeyError, TypeError, ValueError, json_format.ParseError) as exc:
        raise ExportFormatError(f"not an exported event: {exc}") from exc


def write_jsonl(envelopes: Iterable[Envelope], out: IO[str]) -> int:
    """Write ``envelopes`` as JSON lines to ``out``; returns how many were written."""
    count = 0
    for envelope in envelopes:
        out.write(json.dumps(to_json(envelope), sort_keys=True, separators=(",", ":")) + "\n")
        count += 1
    return count


def read_jsonl(path: Path | str) -> Iterator[Envelope]:
    """The envelopes of an exported file, in file order; a line of a payload type this build does
    not know is skipped (counted and logged once). Raises ExportFormatError (with the line
    number) for a line that is not an exported event."""
    registry = event_payloads()
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                known = not isinstance(obj, dict) or obj.get("type") in registry
                if not known and isinstance(obj.get("type"), str):
                    _skip_unknown(obj, f"{path}:{number}")
                    continue
                yield from_json(obj, registry)
            except (json.JSONDecodeError, ExportFormatError) as exc:
                raise ExportFormatError(f"{path}:{number}: {exc}") from exc


def _skip_unknown(obj: dict[str, Any], where: str) -> None:
    """Skip an exported event whose payload type this build does not know (a newer writer's):
    counted (``rummy_platform.skips``); the replay report lists it (no log line)."""
    SKIPPED.skipped(
        "unknown_type",
        type_name=obj["type"],
        table_id=str(obj.get("stream_id", "")),
        hand_id=str(obj.get("correlation_id", "")),
        consumer="replay",
        log=False,
        line=where,
    )
