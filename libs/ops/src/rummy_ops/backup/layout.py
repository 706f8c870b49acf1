"""What a backup archive holds once opened (a gzip'd tar, sealed by :mod:`.sealed`):

- ``manifest.json``: :data:`FORMAT`, :data:`VERSION`, when it was taken, the topic prefix, the
  database schemas dumped, every topic's partition count, every partition's cut (``end``), its
  record count, first and last offset and the SHA-256 of its records file, every consumer
  group's committed offsets, whether the cut was stable, and the SHA-256 of every other file;
- ``database.dump``: ``pg_dump --format=custom`` of the services' schemas;
- ``records/<topic>/<partition>.jsonl``: one record a line, in offset order:
  ``{"o": offset, "t": timestamp ms, "k": key, "v": value, "h": [[name, value], ...]}`` with
  the bytes in base64 (``null`` for an absent key or value);
- ``seeds.json``: fairness's seeds as they were after the log was cut (see
  ``docs/operations.md#backups``).

Pure helpers to write and read them; :class:`LayoutError` for what does not match.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rummy_platform.eventlog import StoredRecord

FORMAT = "bb-rummy-backup"
VERSION = 1
MANIFEST = "manifest.json"
DATABASE = "database.dump"
SEEDS = "seeds.json"


class LayoutError(Exception):
    """An opened archive whose files do not match its manifest (the message says which)."""


def records_name(topic: str, partition: int) -> str:
    """The archive path of one partition's records."""
    return f"records/{topic}/{partition}.jsonl"


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def record_line(record: StoredRecord) -> str:
    """One record as its line (no newline)."""
    return json.dumps(
        {
            "o": record.offset,
            "t": record.timestamp_ms,
            "k": _b64(record.key),
            "v": _b64(record.value),
            "h": [[name, _b64(value)] for name, value in record.headers],
        },
        separators=(",", ":"),
    )


def parse_record(line: str) -> StoredRecord:
    """The record of one line. Raises LayoutError for a line that is not one."""
    try:
        doc = json.loads(line)
        return StoredRecord(
            offset=int(doc["o"]),
            key=_unb64(doc["k"]),
            value=_unb64(doc["v"]),
            headers=tuple((str(n), _unb64(v) or b"") for n, v in doc["h"]),
            timestamp_ms=int(doc["t"]),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise LayoutError(f"a record line does not parse: {error}") from None


def read_records(path: Path) -> Iterator[StoredRecord]:
    """The records of a partition's file, in order."""
    with path.open() as lines:
        for line in lines:
            if line.strip():
                yield parse_record(line)


def write_records(path: Path, records: Iterable[StoredRecord]) -> dict[str, Any]:
    """Write ``records`` to ``path``; their count, first and last offset and the file's
    SHA-256 (hex)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    count, first, last = 0, -1, -1
    with path.open("w") as out:
        for record in records:
            line = (record_line(record) + "\n").encode()
            digest.update(line)
            out.write(line.decode())
            count += 1
            first = record.offset if first < 0 else first
            last = record.offset
    return {"count": count, "first": first, "last": last, "sha256": digest.hexdigest()}


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_files(root: Path, manifest: dict[str, Any]) -> None:
    """Check every file the manifest names against its hash. Raises LayoutError."""
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise LayoutError(
            f"the archive is {manifest.get('format')!r} version {manifest.get('version')!r}, "
            f"this build reads {FORMAT!r} version {VERSION}"
        )
    expected = dict(manifest["files"])
    for part in manifest["partitions"]:
        expected[records_name(part["topic"], part["partition"])] = part["sha256"]
    for name, sha in sorted(expected.items()):
        path = root / name
        if not path.is_file():
            raise LayoutError(f"the archive lacks {name}")
        if file_sha256(path) != sha:
            raise LayoutError(f"{name} does not match its hash in the manifest")
