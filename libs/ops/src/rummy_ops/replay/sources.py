"""Where replayed events come from: the table stream in Kafka, or an exported JSONL file.

Both give envelopes; :func:`select` cuts them down to the hands asked for. Events of one table
are one stream (Kafka key = table id), ordered by stream version.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from rummy_game import match_payloads
from rummy_platform.envelope import Envelope, event_payloads
from rummy_platform.eventlog import EventLogError, KafkaEventLog, PartitionReader, decode_known
from rummy_platform.topics import TABLE_EVENTS


class SourceError(RuntimeError):
    """The events asked for cannot be read (no such topic, hand or table)."""


def table_topic(prefix: str = "") -> str:
    """The table stream's topic name under ``prefix`` (the services' ``RUMMY_TOPIC_PREFIX``)."""
    return prefix + TABLE_EVENTS


def hand_id_of(envelope: Envelope) -> str:
    """The hand an event belongs to: its payload's ``hand_id``, else the envelope's correlation id
    when the payload has a ``hand_id`` field; ``""`` for table events (seating, opening)."""
    payload = envelope.payload
    if "hand_id" in payload.DESCRIPTOR.fields_by_name:
        return getattr(payload, "hand_id") or envelope.correlation_id  # noqa: B009
    return ""


def read_kafka(
    bootstrap: str, topic_prefix: str = "", table_id: str | None = None, timeout_s: float = 30.0
) -> list[Envelope]:
    """Every event of the table stream in Kafka (committed transactions only), or of one table
    (``table_id``: only its partition is read). Raises SourceError if the topic does not exist
    or Kafka cannot be reached (within ``timeout_s`` seconds)."""
    try:
        return _read_kafka(bootstrap, table_topic(topic_prefix), table_id, timeout_s)
    except EventLogError as exc:
        raise SourceError(f"cannot read the table stream from Kafka at {bootstrap}: {exc}") from exc


def _read_kafka(
    bootstrap: str, topic: str, table_id: str | None, timeout_s: float
) -> list[Envelope]:
    if table_id is not None:
        with KafkaEventLog(
            bootstrap, client_id="rummy-replay", timeout_s=timeout_s, log_skips=False
        ) as log:
            try:
                return [r.envelope for r in log.read_stream(topic, table_id)]
            except Exception as exc:  # UnknownTopic, EventLogError
                raise SourceError(f"cannot read {topic} for table {table_id}: {exc}") from exc
    return read_topic(bootstrap, topic, timeout_s)


def read_topic(bootstrap: str, topic: str, timeout_s: float = 30.0) -> list[Envelope]:
    """Every committed event of ``topic``, all partitions, each partition in offset order (so
    each stream in order). Raises SourceError if the topic does not exist; EventLogError if Kafka
    cannot be reached, or ``timeout_s`` seconds pass without a record."""
    registry = event_payloads()
    with PartitionReader(bootstrap, client_id="rummy-replay") as reader:
        partitions = reader.partitions(topic)
        if not partitions:
            raise SourceError(f"topic {topic!r} does not exist")
        out: list[Envelope] = []
        starts = dict.fromkeys(partitions, 0)
        for record in reader.read(topic, starts, idle_timeout_s=timeout_s):
            if record.value is None:
                continue
            # a type this build does not know (a newer writer's) is skipped and counted; the
            # report says so (command.py), no log line on stdout
            envelope = decode_known(
                record.value, registry, "replay", log=False, topic=topic, offset=record.offset
            )
            if envelope is not None:
                out.append(envelope)
        return out


@dataclass(frozen=True)
class Selection:
    """What to replay: ``hand_id``, every hand of ``table_id``, or (both empty) every hand."""

    hand_id: str = ""
    table_id: str = ""


def streams(envelopes: Iterable[Envelope]) -> dict[str, list[Envelope]]:
    """Events grouped by table (stream id), each stream ordered by stream version."""
    by_table: dict[str, list[Envelope]] = defaultdict(list)
    for envelope in envelopes:
        by_table[envelope.stream_id].append(envelope)
    return {t: sorted(es, key=lambda e: e.stream_version) for t, es in sorted(by_table.items())}


def hands_of(stream: list[Envelope]) -> dict[str, list[Envelope]]:
    """A table stream's hand events by hand id, in stream order (hands in order of first event).

    A hand id that only match events name (a ``DealStarted`` whose hand never started: its game's
    stakes not held yet, or refused so that the match was aborted) is no hand: the match's
    replay checks that deal. A hand with any event of its own is one, with or without its
    ``HandStarted`` (whose absence the hand's replay reports)."""
    hands: dict[str, list[Envelope]] = {}
    for envelope in stream:
        hand = hand_id_of(envelope)
        if hand:
            hands.setdefault(hand, []).append(envelope)
    return {
        hand: events
        for hand, events in hands.items()
        if not all(match_payloads.is_match_payload(e.payload) for e in events)
    }


def select(
    envelopes: Iterable[Envelope], selection: Selection
) -> list[tuple[str, str, list[Envelope]]]:
    """``(table id, hand id, the hand's events)`` for each hand selected, by table then stream
    order. Raises SourceError if a named hand or table has no events."""
    out = []
    for table_id, stream in streams(envelopes).items():
        if selection.table_id and table_id != selection.table_id:
            continue
        for hand_id, events in hands_of(stream).items():
            if selection.hand_id and hand_id != selection.hand_id:
                continue
            out.append((table_id, hand_id, events))
    if not out and (selection.hand_id or selection.table_id):
        what = f"hand {selection.hand_id}" if selection.hand_id else f"table {selection.table_id}"
        raise SourceError(f"no events of {what} in the table stream")
    return out
