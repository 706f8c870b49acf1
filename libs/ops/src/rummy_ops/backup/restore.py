"""``rummy restore``'s work: an archive of ``rummy backup`` into an empty broker and database,
every stored offset carried over to where its record landed (``docs/operations.md#backups``)."""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from google.protobuf.message import DecodeError
from psycopg import sql

from rummy.common.v1 import envelope_pb2
from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy_ops.backup import layout
from rummy_ops.backup.offsets import OffsetMap
from rummy_ops.backup.sealed import unseal
from rummy_ops.backup.take import BackupError, pg_tool
from rummy_ops.reach import connect_postgres, require_kafka
from rummy_platform.envelope import type_name
from rummy_platform.eventlog import (
    EVENT_TYPE_HEADER,
    KafkaEventLog,
    PartitionLoader,
    StoredRecord,
    TopicPartition,
    cut_log,
    group_offsets,
    partition_counts,
    set_group_offsets,
)
from rummy_platform.topics import NEVER_EXPIRE, TopicSpec

SEED_COMMITTED = type_name(fairness_events.SeedCommitted)
SEED_REVEALED = type_name(fairness_events.SeedRevealed)


@dataclass
class LogFacts:
    """What restore learns of the copied records: each topic's event ids, the highest stream
    version per (topic, stream), and the hands whose seed was committed / revealed in it."""

    event_ids: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    versions: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    committed: set[str] = field(default_factory=set)
    revealed: set[str] = field(default_factory=set)

    def add(self, topic: str, record: StoredRecord) -> None:
        if record.value is None:
            return
        envelope = envelope_pb2.EventEnvelope()
        try:
            envelope.ParseFromString(record.value)
        except DecodeError:
            return  # not an envelope: nothing of it is stored elsewhere
        self.event_ids[topic].add(envelope.event_id)
        streams = self.versions[topic]
        streams[envelope.stream_id] = max(
            streams.get(envelope.stream_id, 0), envelope.stream_version
        )
        kind = dict(record.headers).get(EVENT_TYPE_HEADER, envelope.type.encode()).decode()
        if kind == SEED_COMMITTED:
            self.committed.add(envelope.correlation_id)
        elif kind == SEED_REVEALED:
            self.revealed.add(envelope.correlation_id)


@dataclass(frozen=True)
class RestoreSummary:
    """What :func:`restore_backup` did: records written, partitions, groups set, stored offsets
    moved, outbox rows whose publication state was set from the log, seeds merged, seconds."""

    records: int
    partitions: int
    groups: int
    offsets_moved: int
    outbox_fixed: int
    seeds_added: int
    reveals_added: int
    seconds: float


def open_archive(archive: Path, key: bytes, into: Path) -> dict[str, Any]:
    """Unseal and unpack ``archive`` into the folder ``into``; its manifest, every file checked
    against it. Raises :class:`~rummy_ops.backup.sealed.SealError`, LayoutError."""
    tar_path = into / "archive.tar.gz"
    try:
        with archive.open("rb") as source, tar_path.open("wb") as target:
            unseal(source, target, key)
    except OSError as error:
        raise BackupError(f"cannot read {archive}: {error.strerror or error}") from None
    root = into / "archive"
    with tarfile.open(tar_path, "r:gz") as tar:
        tar.extractall(root, filter="data")
    tar_path.unlink()
    try:
        manifest: dict[str, Any] = json.loads((root / layout.MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise layout.LayoutError(f"the archive's manifest does not read: {error}") from None
    layout.check_files(root, manifest)
    return manifest


def _check_empty(
    bootstrap: str, conn: psycopg.Connection[Any], manifest: dict[str, Any], replace_database: bool
) -> None:
    topics = list(manifest["topics"])
    existing = partition_counts(bootstrap, topics)
    if existing:
        ends = cut_log(
            bootstrap,
            [TopicPartition(t, p) for t, n in existing.items() for p in range(n)],
            attempts=1,
        ).ends
        held = {t: sum(e for tp, e in ends.items() if tp.topic == t) for t in existing}
        full = {t: n for t, n in held.items() if n}
        if full:
            raise BackupError(
                "the target broker is not empty: "
                + ", ".join(f"{t} holds offsets up to {n}" for t, n in sorted(full.items()))
                + " (a restore writes every partition from offset 0: give it a fresh broker)"
            )
    groups = group_offsets(bootstrap, topics)
    if groups:
        raise BackupError(
            f"the target broker has consumer groups on these topics ({', '.join(sorted(groups))}):"
            " give it a fresh broker"
        )
    present = [
        str(r[0])
        for r in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)", (manifest["schemas"],)
        ).fetchall()
    ]
    if present and not replace_database:
        raise BackupError(
            f"the target database already has the schemas {', '.join(sorted(present))} "
            "(give --replace-database to drop them first)"
        )
    for schema in present:
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    conn.commit()


def _load_log(
    bootstrap: str, root: Path, manifest: dict[str, Any], facts: LogFacts
) -> dict[TopicPartition, OffsetMap]:
    specs = [
        TopicSpec(name, count, config=dict(NEVER_EXPIRE))
        for name, count in manifest["topics"].items()
    ]
    log = KafkaEventLog(bootstrap)
    try:
        log.ensure_topics(specs)
    finally:
        log.close()
    old: dict[TopicPartition, list[int]] = {}
    with PartitionLoader(bootstrap) as loader:
        for part in manifest["partitions"]:
            tp = TopicPartition(part["topic"], part["partition"])
            offsets = old.setdefault(tp, [])
            for record in layout.read_records(root / layout.records_name(tp.topic, tp.partition)):
                loader.write(tp, record)
                offsets.append(record.offset)
                facts.add(tp.topic, record)
        landed = loader.finish()
    maps: dict[TopicPartition, OffsetMap] = {}
    for tp, offsets in old.items():
        new = landed.get(tp, [])
        maps[tp] = OffsetMap(offsets, new, new[-1] + 1 if new else 0)
    return maps


def fix_schema(
    conn: psycopg.Connection[Any],
    schema: str,
    maps: dict[TopicPartition, OffsetMap],
    facts: LogFacts,
) -> tuple[int, int]:
    """Move the schema's stored offsets through ``maps``; set each outbox row's publication from
    the log (published iff its event is in the copy) and its stream versions to at least the
    copy's. Returns (offsets moved, outbox rows changed)."""
    ident = sql.Identifier(schema)
    moved = 0
    rows = conn.execute(
        sql.SQL(
            "SELECT consumer_group, topic, partition, next_offset FROM {}.consumer_offsets"
        ).format(ident)
    ).fetchall()
    for group, topic, partition, next_offset in rows:
        offset_map = maps.get(TopicPartition(topic, partition))
        if offset_map is None:
            raise BackupError(
                f"{schema}.consumer_offsets names {topic}[{partition}], not in the archive"
            )
        new = offset_map.next_offset(next_offset)
        if new != next_offset:
            conn.execute(
                sql.SQL(
                    "UPDATE {}.consumer_offsets SET next_offset = %s WHERE consumer_group = %s "
                    "AND topic = %s AND partition = %s"
                ).format(ident),
                (new, group, topic, partition),
            )
            moved += 1
    outbox = conn.execute(
        sql.SQL("SELECT id, topic, published_at IS NOT NULL FROM {}.outbox").format(ident)
    ).fetchall()
    publish = [i for i, t, done in outbox if not done and i in facts.event_ids.get(t, ())]
    unpublish = [i for i, t, done in outbox if done and i not in facts.event_ids.get(t, ())]
    conn.execute(
        sql.SQL("UPDATE {}.outbox SET published_at = now() WHERE id = ANY(%s)").format(ident),
        (publish,),
    )
    conn.execute(
        sql.SQL("UPDATE {}.outbox SET published_at = NULL WHERE id = ANY(%s)").format(ident),
        (unpublish,),
    )
    for (topic,) in conn.execute(
        sql.SQL("SELECT DISTINCT topic FROM {}.outbox").format(ident)
    ).fetchall():
        for stream, version in facts.versions.get(topic, {}).items():
            conn.execute(
                sql.SQL(
                    "INSERT INTO {}.stream_versions (stream_id, version) VALUES (%s, %s) "
                    "ON CONFLICT (stream_id) DO UPDATE SET version = "
                    "GREATEST({}.stream_versions.version, EXCLUDED.version)"
                ).format(ident, ident),
                (stream, version),
            )
    return moved, len(publish) + len(unpublish)


def merge_seeds(
    conn: psycopg.Connection[Any], schema: str, rows: dict[str, Any], facts: LogFacts
) -> tuple[int, int]:
    """Add the seeds taken after the cut whose commitment is in the copied log and the database
    lacks, and the reveals the log holds that the database has not recorded. Returns (seeds
    added, reveals added)."""
    ident = sql.Identifier(schema)
    have = {
        str(r[0]): r[1]
        for r in conn.execute(
            sql.SQL("SELECT hand_id, revealed_at FROM {}.server_seeds").format(ident)
        )
    }
    added = revealed = 0
    for seed in rows.get("seeds", []):
        hand = seed["hand_id"]
        if hand in facts.committed and hand not in have:
            conn.execute(
                sql.SQL(
                    "INSERT INTO {}.server_seeds (hand_id, table_id, server_seed, "
                    "commitment_sha256, rules_version, shuffle_version, committed_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)"
                ).format(ident),
                (
                    hand,
                    seed["table_id"],
                    bytes.fromhex(seed["server_seed"]),
                    bytes.fromhex(seed["commitment_sha256"]),
                    seed["rules_version"],
                    seed["shuffle_version"],
                    datetime.fromisoformat(seed["committed_at"]),
                ),
            )
            have[hand] = None
            added += 1
        if hand in facts.revealed and hand in have and have[hand] is None and seed["revealed_at"]:
            conn.execute(
                sql.SQL("UPDATE {}.server_seeds SET revealed_at = %s WHERE hand_id = %s").format(
                    ident
                ),
                (datetime.fromisoformat(seed["revealed_at"]), hand),
            )
            have[hand] = seed["revealed_at"]
            revealed += 1
    for locked in rows.get("locked", []):
        if locked["hand_id"] in have:
            conn.execute(
                sql.SQL(
                    "INSERT INTO {}.locked_client_seeds (hand_id, seat, client_seed) "
                    "VALUES (%s, %s, %s) ON CONFLICT (hand_id, seat) DO NOTHING"
                ).format(ident),
                (locked["hand_id"], locked["seat"], bytes.fromhex(locked["client_seed"])),
            )
    return added, revealed


def restore_backup(
    archive: Path,
    key: bytes,
    bootstrap: str,
    database_url: str,
    *,
    replace_database: bool = False,
    echo: Callable[[str], None] = lambda _line: None,
) -> RestoreSummary:
    """Restore ``archive`` (sealed under ``key``) into the empty broker ``bootstrap`` and the
    database ``database_url``, under the topic names it was taken with. Raises SealError,
    LayoutError, BackupError (a target that is not empty, a failed pg_restore),
    :class:`~rummy_ops.reach.Unreachable`, EventLogError."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rummy-restore-") as tmp_name:
        manifest = open_archive(archive, key, Path(tmp_name))
        root = Path(tmp_name) / "archive"
        echo(f"archive of {manifest['taken_at']} opened and checked")
        require_kafka(bootstrap)
        pg_restore = pg_tool("pg_restore")
        with connect_postgres(database_url) as conn:
            _check_empty(bootstrap, conn, manifest, replace_database)
        facts = LogFacts()
        maps = _load_log(bootstrap, root, manifest, facts)
        records = sum(len(m.new) for m in maps.values())
        for part in manifest["partitions"]:
            tp = TopicPartition(part["topic"], part["partition"])
            if len(maps[tp].new) != part["count"]:
                raise BackupError(
                    f"{tp.topic}[{tp.partition}]: {len(maps[tp].new)} of {part['count']} "
                    "records written"
                )
        echo(f"log: {records:,} records written into {len(maps)} partitions")
        done = subprocess.run(
            [
                pg_restore,
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                "--single-transaction",
                f"--dbname={database_url}",
                str(root / layout.DATABASE),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise BackupError(
                f"pg_restore failed (status {done.returncode}): {done.stderr.strip()}"
            )
        seeds = json.loads((root / layout.SEEDS).read_text())
        moved = fixed = added = reveals = 0
        with connect_postgres(database_url) as conn:
            for schema in manifest["schemas"]:
                m, f = fix_schema(conn, schema, maps, facts)
                moved, fixed = moved + m, fixed + f
            for schema in manifest["seed_schemas"]:
                a, r = merge_seeds(conn, schema, seeds.get(schema, {}), facts)
                added, reveals = added + a, reveals + r
            conn.commit()
        echo(f"database: schemas {', '.join(manifest['schemas'])} restored")
        for group, entries in manifest["groups"].items():
            offsets = {}
            for entry in entries:
                tp = TopicPartition(entry["topic"], entry["partition"])
                offsets[tp] = maps[tp].next_offset(entry["offset"])
                moved += offsets[tp] != entry["offset"]
            set_group_offsets(bootstrap, group, offsets)
        echo(f"consumer groups: {len(manifest['groups'])} set")
    return RestoreSummary(
        records=records,
        partitions=len(maps),
        groups=len(manifest["groups"]),
        offsets_moved=moved,
        outbox_fixed=fixed,
        seeds_added=added,
        reveals_added=reveals,
        seconds=time.monotonic() - started,
    )
