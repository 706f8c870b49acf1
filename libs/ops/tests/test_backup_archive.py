"""The backup archive's seal, its files and the offset map, without brokers: a wrong key, a
changed or cut archive, a changed file are each refused with a clear message, and a stored offset
moves to where its record landed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rummy_ops.backup import layout
from rummy_ops.backup.offsets import OffsetMap
from rummy_ops.backup.sealed import CHUNK_BYTES, SealError, read_key, seal, unseal, write_new_key
from rummy_ops.cli import main
from rummy_platform.eventlog import StoredRecord


def _sealed(tmp_path: Path, data: bytes, name: str = "key") -> tuple[bytes, bytes]:
    key_path = tmp_path / name
    write_new_key(key_path)
    key = read_key(key_path)
    out = io.BytesIO()
    seal(io.BytesIO(data), out, key)
    return key, out.getvalue()


def _open(sealed: bytes, key: bytes) -> bytes:
    out = io.BytesIO()
    unseal(io.BytesIO(sealed), out, key)
    return out.getvalue()


@pytest.mark.parametrize("size", [0, 1, CHUNK_BYTES, CHUNK_BYTES * 2 + 5])
def test_a_sealed_archive_opens_with_its_key_to_the_same_bytes(tmp_path: Path, size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    key, sealed = _sealed(tmp_path, data)
    assert size < 64 or data[:64] not in sealed
    assert _open(sealed, key) == data


def test_another_key_is_refused_naming_the_key(tmp_path: Path) -> None:
    _, sealed = _sealed(tmp_path, b"unrevealed seeds" * 100)
    write_new_key(tmp_path / "other")
    with pytest.raises(SealError, match="the key is not the one it was sealed with"):
        _open(sealed, read_key(tmp_path / "other"))


def test_a_changed_byte_is_refused(tmp_path: Path) -> None:
    key, sealed = _sealed(tmp_path, b"x" * 5000)
    changed = bytearray(sealed)
    changed[len(changed) // 2] ^= 1
    with pytest.raises(SealError, match="changed"):
        _open(bytes(changed), key)


def test_an_archive_cut_at_a_chunk_boundary_is_refused(tmp_path: Path) -> None:
    key, sealed = _sealed(tmp_path, b"y" * (CHUNK_BYTES + 10))
    first_chunk_end = 15 + 4 + CHUNK_BYTES + 16
    with pytest.raises(SealError):
        _open(sealed[:first_chunk_end], key)
    with pytest.raises(SealError, match="cut short"):
        _open(sealed[:-3], key)


def test_a_file_that_is_no_archive_is_refused(tmp_path: Path) -> None:
    key, _ = _sealed(tmp_path, b"")
    with pytest.raises(SealError, match="not a rummy backup archive"):
        _open(b"PGDMP\x01\x0e" + b"\x00" * 40, key)


def test_a_key_file_is_never_overwritten_and_a_bad_one_is_named(tmp_path: Path) -> None:
    path = tmp_path / "key"
    write_new_key(path)
    assert path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(SealError, match="never overwritten"):
        write_new_key(path)
    bad = tmp_path / "bad"
    bad.write_text("not base64 of 32 bytes\n")
    with pytest.raises(SealError, match="is not a backup key"):
        read_key(bad)


def test_restore_with_the_wrong_key_says_so_and_exits_1(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["backup", "--new-key", str(tmp_path / "k1")]).exit_code == 0
    assert runner.invoke(main, ["backup", "--new-key", str(tmp_path / "k2")]).exit_code == 0
    archive = tmp_path / "a.backup"
    with archive.open("wb") as out:
        seal(io.BytesIO(b"anything"), out, read_key(tmp_path / "k1"))
    done = runner.invoke(
        main,
        ["restore", str(archive), "--key-file", str(tmp_path / "k2"), "--bootstrap", "127.0.0.1:1"],
    )
    assert done.exit_code == 1
    assert "the key is not the one it was sealed with" in done.output


def test_a_file_changed_after_its_manifest_is_named(tmp_path: Path) -> None:
    record = StoredRecord(3, b"k", b"v", (("event-type", b"x.Y"),), 1_700_000_000_000)
    info = layout.write_records(tmp_path / layout.records_name("t", 0), [record])
    (tmp_path / layout.DATABASE).write_bytes(b"dump")
    (tmp_path / layout.SEEDS).write_text("{}")
    manifest = {
        "format": layout.FORMAT,
        "version": layout.VERSION,
        "partitions": [{"topic": "t", "partition": 0, **info}],
        "files": {n: layout.file_sha256(tmp_path / n) for n in (layout.DATABASE, layout.SEEDS)},
    }
    layout.check_files(tmp_path, json.loads(json.dumps(manifest)))
    assert list(layout.read_records(tmp_path / layout.records_name("t", 0))) == [record]
    (tmp_path / layout.DATABASE).write_bytes(b"dump!")
    with pytest.raises(layout.LayoutError, match=r"database\.dump does not match"):
        layout.check_files(tmp_path, manifest)


def test_a_stored_next_offset_moves_to_its_next_records_new_place() -> None:
    # Records at 0, 1, 3 (2 a commit marker), 7 (4-6 an aborted transaction and markers).
    offsets = OffsetMap(old=[0, 1, 3, 7], new=[0, 1, 2, 3], new_end=4)
    assert [offsets.next_offset(o) for o in range(10)] == [0, 1, 2, 2, 3, 3, 3, 3, 4, 4]
    assert OffsetMap([], [], 0).next_offset(5) == 0
    with pytest.raises(ValueError, match="negative"):
        offsets.next_offset(-1)
    with pytest.raises(ValueError, match="old offsets"):
        OffsetMap(old=[0], new=[0, 1], new_end=2)


def test_a_backup_given_an_unreachable_kafka_says_so_and_writes_nothing(tmp_path: Path) -> None:
    write_new_key(tmp_path / "k")
    done = CliRunner().invoke(
        main,
        [
            "backup",
            "--key-file",
            str(tmp_path / "k"),
            "-o",
            str(tmp_path / "a.backup"),
            "--bootstrap",
            "127.0.0.1:1",
        ],
    )
    assert done.exit_code == 1
    assert "cannot reach Kafka at 127.0.0.1:1" in done.output
    assert not (tmp_path / "a.backup").exists()


def test_a_backup_without_a_key_file_is_a_usage_error(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["backup", "-o", str(tmp_path / "a.backup")])
    assert done.exit_code == 2
    assert "--new-key FILE" in done.output
