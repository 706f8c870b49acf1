"""``rummy backup``'s work: the database, then the log, then fairness's seeds, into one sealed
archive (the order and why: ``docs/operations.md#backups``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from rummy_ops.backup import layout
from rummy_ops.backup.sealed import seal
from rummy_ops.reach import connect_postgres, require_kafka
from rummy_platform.eventlog import TopicPartition, cut_log, export_partition, partition_counts
from rummy_platform.topics import EVENT_TOPICS

#: How far before the database's snapshot a seed's commit or reveal may lie and still be taken
#: again with the seeds (a transaction that began before the snapshot and committed after it).
SEEDS_MARGIN = timedelta(minutes=10)


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why."""


def pg_tool(name: str) -> str:
    """The path of a PostgreSQL client program (``pg_dump``, ``pg_restore``): on PATH, else the
    newest ``/usr/lib/postgresql/<version>/bin`` (Debian's packages). Raises BackupError."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: [int(x) for x in p.parent.parent.name.split(".") if x.isdigit()],
    )
    if not candidates:
        raise BackupError(
            f"{name} not found (on PATH or under /usr/lib/postgresql/*/bin): install PostgreSQL's "
            "client programs (`bash deploy/local/postgres.sh install`)"
        )
    return str(candidates[-1])


def service_schemas(conn: psycopg.Connection[Any]) -> list[str]:
    """The schemas of the services that keep state in PostgreSQL: each has its own
    ``consumer_offsets`` table (``rummy_platform/migrations``)."""
    rows = conn.execute(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'consumer_offsets' "
        "ORDER BY table_schema"
    ).fetchall()
    return [str(r[0]) for r in rows]


def seeds_schemas(conn: psycopg.Connection[Any]) -> list[str]:
    """The schemas holding fairness's seeds (a ``server_seeds`` table)."""
    rows = conn.execute(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'server_seeds' "
        "ORDER BY table_schema"
    ).fetchall()
    return [str(r[0]) for r in rows]


@dataclass(frozen=True)
class BackupSummary:
    """What :func:`take_backup` wrote: the archive, its size (bytes), the records and
    partitions copied, the consumer groups and seeds taken, whether the cut was stable, the
    schemas dumped and the seconds it took."""

    path: Path
    archive_bytes: int
    records: int
    partitions: int
    log_bytes: int
    groups: int
    seeds: int
    unrevealed: int
    stable: bool
    schemas: tuple[str, ...]
    seconds: float


def _seed_rows(database_url: str, schemas: list[str], since: datetime) -> dict[str, Any]:
    """Fairness's seeds committed or revealed since ``since``, and every unrevealed one, with
    their locked client seeds, per schema (bytes in hex, times in ISO 8601)."""
    out: dict[str, Any] = {}
    with connect_postgres(database_url) as conn:
        for schema in schemas:
            seeds = conn.execute(
                sql.SQL(
                    "SELECT hand_id, table_id, server_seed, commitment_sha256, rules_version, "
                    "shuffle_version, committed_at, revealed_at FROM {}.server_seeds "
                    "WHERE revealed_at IS NULL OR revealed_at >= %s OR committed_at >= %s "
                    "ORDER BY hand_id"
                ).format(sql.Identifier(schema)),
                (since, since),
            ).fetchall()
            hands = [r[0] for r in seeds]
            locked = conn.execute(
                sql.SQL(
                    "SELECT hand_id, seat, client_seed FROM {}.locked_client_seeds "
                    "WHERE hand_id = ANY(%s) ORDER BY hand_id, seat"
                ).format(sql.Identifier(schema)),
                (hands,),
            ).fetchall()
            out[schema] = {
                "seeds": [
                    {
                        "hand_id": h,
                        "table_id": t,
                        "server_seed": bytes(s).hex(),
                        "commitment_sha256": bytes(c).hex(),
                        "rules_version": rv,
                        "shuffle_version": sv,
                        "committed_at": ca.isoformat(),
                        "revealed_at": ra.isoformat() if ra else None,
                    }
                    for h, t, s, c, rv, sv, ca, ra in seeds
                ],
                "locked": [
                    {"hand_id": h, "seat": seat, "client_seed": bytes(cs).hex()}
                    for h, seat, cs in locked
                ],
            }
    return out


def take_backup(
    bootstrap: str,
    database_url: str,
    topic_prefix: str,
    out: Path,
    key: bytes,
    *,
    echo: Callable[[str], None] = lambda _line: None,
) -> BackupSummary:
    """Write a sealed archive of the event topics under ``topic_prefix`` on ``bootstrap``, the
    services' schemas of ``database_url`` and fairness's seeds to ``out`` (replaced only when
    complete). Raises BackupError, :class:`~rummy_ops.reach.Unreachable`, EventLogError."""
    started = time.monotonic()
    require_kafka(bootstrap)
    topics = [topic_prefix + t for t in EVENT_TOPICS]
    counts = partition_counts(bootstrap, topics)
    missing = [t for t in topics if t not in counts]
    if missing:
        raise BackupError(f"no such topics on {bootstrap}: {', '.join(missing)}")
    pg_dump = pg_tool("pg_dump")
    with tempfile.TemporaryDirectory(prefix="rummy-backup-") as tmp_name:
        root = Path(tmp_name) / "archive"
        root.mkdir()
        # 1. The database: a snapshot exported from an open REPEATABLE READ transaction, so the
        # dump shows the database as at that instant however long pg_dump takes.
        snapshot_conn = connect_postgres(database_url)
        try:
            snapshot_conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            snapshot_conn.read_only = True
            snapshot, db_now = snapshot_conn.execute(
                "SELECT pg_export_snapshot(), now()"
            ).fetchone() or ("", datetime.now(UTC))
            schemas = service_schemas(snapshot_conn)
            seed_schemas = [s for s in seeds_schemas(snapshot_conn) if s in schemas]
            if not schemas:
                raise BackupError("the database holds no service's schema (no consumer_offsets)")
            # 2. The log's cut, after the snapshot: every offset the database holds is below it.
            log_cut = cut_log(
                bootstrap,
                [TopicPartition(t, p) for t in topics for p in range(counts[t])],
            )
            echo(
                f"database snapshot {snapshot} taken; log cut "
                f"({'stable' if log_cut.stable else 'groups still moving'})"
            )
            dump_path = root / layout.DATABASE
            command = [
                pg_dump,
                "--format=custom",
                f"--snapshot={snapshot}",
                "--no-owner",
                "--no-privileges",
                f"--file={dump_path}",
                *[f"--schema={s}" for s in schemas],
                f"--dbname={database_url}",
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise BackupError(
                    f"pg_dump failed (status {done.returncode}): {done.stderr.strip()}"
                )
        finally:
            snapshot_conn.close()
        echo(f"database: schemas {', '.join(schemas)} dumped ({dump_path.stat().st_size:,} bytes)")
        # 3. The log, up to the cut.
        partitions: list[dict[str, Any]] = []
        records = log_bytes = 0
        for tp, end in sorted(log_cut.ends.items()):
            path = root / layout.records_name(tp.topic, tp.partition)
            info = layout.write_records(path, export_partition(bootstrap, tp, end))
            partitions.append({"topic": tp.topic, "partition": tp.partition, "end": end, **info})
            records += info["count"]
            log_bytes += path.stat().st_size
        echo(f"log: {records:,} records of {len(partitions)} partitions copied")
        # 4. Fairness's seeds as they are now, after the cut (see docs/operations.md#backups).
        seeds = _seed_rows(database_url, seed_schemas, db_now - SEEDS_MARGIN)
        (root / layout.SEEDS).write_text(json.dumps(seeds, sort_keys=True))
        seed_count = sum(len(s["seeds"]) for s in seeds.values())
        unrevealed = sum(1 for s in seeds.values() for r in s["seeds"] if not r["revealed_at"])
        manifest = {
            "format": layout.FORMAT,
            "version": layout.VERSION,
            "taken_at": datetime.now(UTC).isoformat(),
            "topic_prefix": topic_prefix,
            "schemas": schemas,
            "seed_schemas": seed_schemas,
            "topics": {t: counts[t] for t in topics},
            "partitions": partitions,
            "groups": {
                group: [
                    {"topic": tp.topic, "partition": tp.partition, "offset": offset}
                    for tp, offset in sorted(offsets.items())
                ]
                for group, offsets in sorted(log_cut.groups.items())
            },
            "cut_stable": log_cut.stable,
            "files": {
                name: layout.file_sha256(root / name) for name in (layout.DATABASE, layout.SEEDS)
            },
        }
        (root / layout.MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
        tar_path = Path(tmp_name) / "archive.tar.gz"
        with tarfile.open(tar_path, "w:gz") as tar:
            tar.add(root, arcname=".")
        partial = out.with_name(out.name + ".partial")
        with tar_path.open("rb") as source, partial.open("wb") as target:
            seal(source, target, key)
        os.replace(partial, out)
    return BackupSummary(
        path=out,
        archive_bytes=out.stat().st_size,
        records=records,
        partitions=len(partitions),
        log_bytes=log_bytes,
        groups=len(log_cut.groups),
        seeds=seed_count,
        unrevealed=unrevealed,
        stable=log_cut.stable,
        schemas=tuple(schemas),
        seconds=time.monotonic() - started,
    )
