"""Snapshots of the tables of one partition of the table stream, and a start from snapshot + tail.

A snapshot is one canonical JSON document (keys sorted, no spaces, UTF-8) per partition of the
table stream, kept on a compacted topic (:data:`SNAPSHOT_TOPIC`, keyed by the partition number,
so the broker keeps the latest of each)::

    {"format": "bb-table-snapshot", "shape": 1, "topic": "table-events", "partition": 3,
     "tail_from": 1234, "tables": [{"table_id": ..., "covered": 1240, ...}, ...]}

``shape`` is :data:`SHAPE_VERSION`: the shape of a table's state as written here. It must be
bumped whenever the fields of :class:`~rummy_table.application.held_table.HeldTable` (the
domain's table and its answer window) or this encoding change; a snapshot of a shape not in
:data:`READ_SHAPES`, or one that does not decode (its hand state included: a rules library whose
``HandState`` changed shape fails to decode it), is ignored, logged and counted, and its partition
replayed in full. ``tail_from``: the tail of the partition to fold after loading starts there
(every table not in the snapshot has all its events at or past it); ``covered`` (per table): every
event of that table before this offset is in its state, so the tail's events of that table below
it are skipped. Each table is one object: its options (TableOpened, protobuf bytes in base64), its
seats, counters, the current hand's HandStarted and hand state (``rummy_rules.json_form`` JSON),
when its last fact was folded and which other services' answers it recorded, at a
match table the current match's payloads (folded again on load), the last results and answers
(protobuf payloads in base64, :data:`rummy_table.application.answers.ANSWER_WINDOW`), and per
hand played its HandStarted offset and whether its reveal and settlement are recorded, packed
(:class:`~rummy_table.domain.played_hands.PlayedHands`: base64 of 16 + 8 + 1 bytes a hand).

Taking a snapshot (:func:`take`) never holds a lock across I/O and never stops another table:
each table is encoded under its own command lock (so no command of it is in flight: every event
of it in the log is in its state), waiting for a command in flight to finish. The bytes are then
produced off the command path (``rummy_table.adapters.table_log.SnapshotLoop``). A table
unchanged since the partition's last snapshot (same object, same version) is not encoded again:
its JSON is kept (:class:`EncodedTables`), so a snapshot's cost follows the tables played at, not
the tables open.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as pb
from rummy_platform.envelope import PayloadRegistry, event_payloads, type_name
from rummy_platform.eventlog import Record
from rummy_platform.logging import get_logger
from rummy_platform.topics import TopicSpec
from rummy_rules import json_form
from rummy_table.application import stream_facts
from rummy_table.application.held_table import HeldTable
from rummy_table.application.projection import Projection
from rummy_table.domain.facts import MatchRecord
from rummy_table.domain.played_hands import PlayedHands
from rummy_table.domain.seating import SeatInfo
from rummy_table.domain.table import DecisionObserver

_log = get_logger(__name__)

FORMAT = "bb-table-snapshot"
#: The shape of a table's state in a snapshot; bump it when Table's fields or the encoding change.
#: (4: the hands played packed, :class:`~rummy_table.domain.played_hands.PlayedHands`.)
SHAPE_VERSION = 4
#: The shapes read: this one, and 3 (the hands played as lists), so the first start after an
#: upgrade loads the snapshots the previous version wrote instead of replaying in full.
READ_SHAPES = (3, SHAPE_VERSION)
#: The compacted topic of the snapshots (prefixed like the event topics).
SNAPSHOT_TOPIC = "table-snapshots"
#: The largest snapshot record (bytes, after compression) the topic and the producer accept.
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024


def snapshot_topic_spec(prefix: str = "") -> TopicSpec:
    """The snapshot topic: one partition, compacted (the latest snapshot of each partition of
    the table stream is kept), records up to :data:`MAX_SNAPSHOT_BYTES`."""
    return TopicSpec(
        prefix + SNAPSHOT_TOPIC,
        1,
        config={"cleanup.policy": "compact", "max.message.bytes": str(MAX_SNAPSHOT_BYTES)},
    )


class SnapshotError(ValueError):
    """Bytes that are not a usable snapshot of the partition asked for."""

    #: The ``reason`` label of ``rummy_table_snapshots_ignored_total``.
    reason = "undecodable"


class SnapshotShapeError(SnapshotError):
    """A snapshot of a shape version not in :data:`READ_SHAPES`."""

    reason = "shape"


@dataclass(frozen=True)
class PartitionSnapshot:
    """A decoded snapshot: each table with the offset its state covers, and where the tail
    starts."""

    topic: str
    partition: int
    tail_from: int
    tables: tuple[tuple[HeldTable, int], ...]


# -- encoding ------------------------------------------------------------------------------------


def _b64(message: Message) -> str:
    return base64.b64encode(message.SerializeToString(deterministic=True)).decode("ascii")


def _payload(message: Message) -> list[str]:
    return [type_name(message), _b64(message)]


def encode_table(table: HeldTable) -> dict[str, Any]:
    """``table``'s state as a JSON-able dict (see the module doc)."""
    return {
        "table_id": table.table_id,
        "opened": _b64(table.opened),
        "opened_by": table.opened_by,
        "seats": [[s, i.account_id, i.sitting_out_reason] for s, i in sorted(table.seats.items())],
        "version": table.version,
        "last_change_ms": table.last_change_ms,
        "hand_no": table.hand_no,
        "dealer_seat": table.dealer_seat,
        "started": _b64(table.started) if table.started is not None else None,
        "hand": json_form.to_dict(table.hand) if table.hand is not None else None,
        "hand_since_ms": table.hand_since_ms,
        "hand_inputs": sorted(table.hand_inputs),
        "results": [_b64(r) for r in table.results.values()],
        "answers": [
            [key, table.answers.digests.get(key, ""), [_payload(p) for p in payloads]]
            for key, payloads in table.answers.payloads.items()
        ],
        "hands": _encode_hands(table.hands),
        "voided": sorted([h, why] for h, why in table.voided.items()),
        "closing": table.closing,
        "closed": table.closed,
        "match": _encode_match(table),
    }


def _encode_hands(hands: PlayedHands) -> dict[str, Any]:
    """Every hand played: its packed parts (:meth:`PlayedHands.packed`) in base64, the ids that
    are not UUIDs by index."""
    ids, offsets, flags, named = hands.packed()
    return {
        "ids": base64.b64encode(ids).decode("ascii"),
        "offsets": base64.b64encode(offsets).decode("ascii"),
        "flags": base64.b64encode(flags).decode("ascii"),
        "named": sorted([h, i] for h, i in named.items()),
    }


def _decode_hands(data: dict[str, Any], shape: int) -> PlayedHands:
    """The hands of a table's snapshot: shape 3 listed them ([id, offset] pairs, and the ids
    revealed and settled), shape 4 packs them (:func:`_encode_hands`)."""
    if shape == 3:
        hands = PlayedHands()
        for h, offset in data["hands"]:
            hands[str(h)] = int(offset)
        for h in data["revealed"]:
            hands.revealed.add(str(h))
        for h in data["settled"]:
            hands.settled.add(str(h))
        return hands
    packed = data["hands"]
    return PlayedHands.from_packed(
        base64.b64decode(packed["ids"], validate=True),
        base64.b64decode(packed["offsets"], validate=True),
        base64.b64decode(packed["flags"], validate=True),
        {str(h): int(i) for h, i in packed["named"]},
    )


def _encode_match(table: HeldTable) -> dict[str, Any] | None:
    """A match table's match: the current match's payloads (with their times), folded again on
    load, how many matches started, and whether the current deal's hand started."""
    match = table.match
    if match is None:
        return None
    return {
        "matches": match.matches,
        "deal_hand_started": match.deal_hand_started,
        "log": [[*_payload(stream_facts.to_payload(f)), at_ms] for f, at_ms in match.log],
    }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def encode(topic: str, partition: int, tail_from: int, tables: Iterable[dict[str, Any]]) -> bytes:
    """The snapshot document of ``partition`` of ``topic`` as canonical JSON bytes."""
    return _document(topic, partition, tail_from, map(_canonical, tables))


def _document(topic: str, partition: int, tail_from: int, tables: Iterable[str]) -> bytes:
    """:func:`encode`'s bytes, from each table's canonical JSON (its keys sort between
    ``shape`` and ``tail_from``)."""
    head = _canonical({"format": FORMAT, "partition": partition, "shape": SHAPE_VERSION})
    tail = _canonical({"tail_from": tail_from, "topic": topic})
    return f'{head[:-1]},"tables":[{",".join(tables)}],{tail[1:]}'.encode()


#: The per-snapshot key of each table's entry (the rest is its :func:`encode_table` dict).
_COVERED = "covered"


def _halves(entry: dict[str, Any]) -> tuple[str, str]:
    """The canonical JSON of a table's :func:`encode_table` dict, cut where ``covered`` sorts
    in: the keys before it (``{...``, no closing brace) and after it (``...}``)."""
    before = _canonical({k: v for k, v in entry.items() if k < _COVERED})
    after = _canonical({k: v for k, v in entry.items() if k > _COVERED})
    return before[:-1], after[1:]


class EncodedTables:
    """The encoded state of each table of the last snapshot taken of each partition, so the
    next :func:`take` encodes again only the tables that changed since (a table holds the
    version of the last event folded into it, and every change of its state is such a fold; a
    table rebuilt or loaded is another object). Holds only the tables of each partition's last
    snapshot (a table gone from it is dropped at the next); :meth:`keep` drops the partitions no
    longer written. For one thread (the snapshot writer's)."""

    def __init__(self) -> None:
        self._by_partition: dict[int, dict[str, tuple[HeldTable, int, tuple[str, str]]]] = {}

    def of(self, partition: int) -> Mapping[str, tuple[HeldTable, int, tuple[str, str]]]:
        """The tables of ``partition``'s last snapshot: each with the version it was encoded at
        and its encoding (:func:`_halves`)."""
        return self._by_partition.get(partition, {})

    def put(
        self, partition: int, tables: dict[str, tuple[HeldTable, int, tuple[str, str]]]
    ) -> None:
        """Hold ``tables`` (as :meth:`of`) as those of ``partition``'s last snapshot."""
        self._by_partition[partition] = tables

    def keep(self, partitions: Iterable[int]) -> None:
        """Forget the tables of every partition not in ``partitions``."""
        wanted = set(partitions)
        for partition in [p for p in self._by_partition if p not in wanted]:
            del self._by_partition[partition]


# -- decoding ------------------------------------------------------------------------------------


def _parse(message: Message, text: str) -> Any:
    message.ParseFromString(base64.b64decode(text, validate=True))
    return message


def decode_table(
    data: dict[str, Any],
    on_decision: DecisionObserver | None,
    registry: PayloadRegistry,
    shape: int = SHAPE_VERSION,
) -> HeldTable:
    """The table a :func:`encode_table` dict of ``shape`` (one of :data:`READ_SHAPES`) stands
    for. Raises (KeyError, ValueError, ...)
    on anything malformed; :func:`decode` turns that into SnapshotError."""
    table = HeldTable.of_opened(_parse(pb.TableOpened(), data["opened"]), on_decision)
    if table.table_id != data["table_id"]:
        raise ValueError(f"table {data['table_id']!r} holds the options of {table.table_id!r}")
    table.opened_by = str(data["opened_by"])
    table.seats = {int(s): SeatInfo(str(a), str(why)) for s, a, why in data["seats"]}
    table.version = int(data["version"])
    table.last_change_ms = int(data["last_change_ms"])
    table.hand_no = int(data["hand_no"])
    dealer = data["dealer_seat"]
    table.dealer_seat = None if dealer is None else int(dealer)
    if data["started"] is not None:
        table.restore_hand(_parse(pb.HandStarted(), data["started"]))
    if data["hand"] is not None:
        table.hand = json_form.from_dict(data["hand"])
    table.hand_since_ms = int(data["hand_since_ms"])
    table.hand_inputs = {str(name) for name in data["hand_inputs"]}
    for text in data["results"]:
        ended = _parse(pb.HandEnded(), text)
        table.results[ended.hand_id] = ended
    for key, digest, payloads in data["answers"]:
        table.answers.payloads[str(key)] = [
            registry.unpack(name, base64.b64decode(b)) for name, b in payloads
        ]
        if digest:
            table.answers.digests[str(key)] = str(digest)
    table.hands = _decode_hands(data, shape)
    table.voided = {str(h): str(why) for h, why in data["voided"]}
    table.closing = bool(data["closing"])
    table.closed = bool(data["closed"])
    match = data["match"]
    if (match is None) != (table.match is None):
        raise ValueError("a match table's snapshot without its match, or the other way round")
    if table.match is not None:
        log: list[tuple[MatchRecord, int]] = []
        for name, b, at in match["log"]:
            fact = stream_facts.fact_of(registry.unpack(name, base64.b64decode(b)), int(at))
            if not table.match.owns(fact):
                raise ValueError(f"{name} is not a match's fact")
            log.append((fact, int(at)))
        table.match.restore(log, int(match["matches"]))
        table.match.deal_hand_started = bool(match["deal_hand_started"])
    return table


def decode(
    data: bytes, topic: str, partition: int, on_decision: DecisionObserver | None = None
) -> PartitionSnapshot:
    """The snapshot of ``partition`` of ``topic`` in ``data``. Raises SnapshotShapeError for
    another shape version, SnapshotError for anything else that does not decode or is not a
    snapshot of that partition."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SnapshotError(f"not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise SnapshotError(f"not a {FORMAT} document")
    shape = document.get("shape")
    if shape not in READ_SHAPES:
        raise SnapshotShapeError(
            f"shape {shape!r}, this service reads shapes {', '.join(map(str, READ_SHAPES))}"
        )
    if document.get("topic") != topic or document.get("partition") != partition:
        raise SnapshotError(
            f"a snapshot of {document.get('topic')!r}[{document.get('partition')!r}], "
            f"not of {topic}[{partition}]"
        )
    registry = event_payloads()
    try:
        tables = tuple(
            (decode_table(t, on_decision, registry, shape), int(t["covered"]))
            for t in document["tables"]
        )
        tail_from = int(document["tail_from"])
    except Exception as exc:  # any malformed part: the partition is replayed in full
        raise SnapshotError(f"does not decode: {type(exc).__name__}: {exc}") from None
    return PartitionSnapshot(topic, partition, tail_from, tables)


# -- taking and loading --------------------------------------------------------------------------


@dataclass(frozen=True)
class Taken:
    """A snapshot taken: its bytes, the tables in it, and how many envelopes of the partition
    had been folded since the previous one when it was begun."""

    data: bytes
    tables: int
    folded_since: int


def take(
    projection: Projection,
    topic: str,
    partition: int,
    partition_of: Callable[[str], int],
    unsure: Callable[[str], bool] = lambda _table_id: False,
    cache: EncodedTables | None = None,
) -> Taken | None:
    """A snapshot of the tables of ``partition`` (``partition_of``: a table id's partition),
    or None when a table of it must first be re-read from the log (``unsure``: its last commit's
    outcome is unknown). Waits for each table's command in flight (if any); holds no lock across
    I/O. With ``cache``, a table unchanged since the last snapshot of ``partition`` taken with it
    is not encoded again (the bytes are the same)."""
    with projection.lock:
        # Every append begun from now on lands at or past tail_from (everything folded is in the
        # log); a table whose first command had begun before has its command lock already, and
        # every table folded is in ``tables``.
        tail_from = projection.folded.get(partition, -1) + 1
        folded_since = projection.since_snapshot.get(partition, 0)
        known = {*projection.tables, *projection.command_locks()}
        ids = sorted(t for t in known if partition_of(t) == partition)
    before = cache.of(partition) if cache is not None else {}
    encoded: dict[str, tuple[HeldTable, int, tuple[str, str]]] = {}
    tables = []
    for table_id in ids:
        with projection.command_lock(table_id), projection.lock:
            if unsure(table_id):
                return None
            table = projection.tables.get(table_id)
            if table is None:
                continue
            covered = projection.folded.get(partition, -1) + 1
            version = table.version
            kept = before.get(table_id)
            if kept is not None and kept[0] is table and kept[1] == version:
                halves, fresh = kept[2], None
            else:
                halves, fresh = ("", ""), encode_table(table)  # its JSON is made off the lock
        if fresh is not None:
            halves = _halves(fresh)
        encoded[table_id] = (table, version, halves)
        tables.append(f'{halves[0]},"{_COVERED}":{covered},{halves[1]}')
    if cache is not None:
        cache.put(partition, encoded)
    return Taken(_document(topic, partition, tail_from, tables), len(tables), folded_since)


def load(
    projection: Projection,
    snapshots: Mapping[int, PartitionSnapshot | None],
    tail: Iterable[Record],
) -> int:
    """Install the tables of ``snapshots`` (by partition; None: that partition has none) into
    ``projection`` and fold ``tail``: the records of those partitions, each partition in offset
    order, from its snapshot's ``tail_from`` on (from its start when it has none), skipping each
    table's records its snapshot covers. Returns the records folded."""
    covered: dict[str, int] = {}
    for partition, snapshot in snapshots.items():
        if snapshot is None:
            continue
        for table, upto in snapshot.tables:
            projection.install(table)
            covered[table.table_id] = upto
        with projection.lock:
            upto = max([snapshot.tail_from, *(c for _t, c in snapshot.tables)])
            if upto > projection.folded.get(partition, 0):
                projection.folded[partition] = upto - 1
    n = 0
    for record in tail:
        if record.offset < covered.get(record.envelope.stream_id, 0):
            continue
        projection.apply(record.envelope, record.partition, record.offset)
        n += 1
    return n
