"""A backup archive's encryption: AES-256-GCM (the ``cryptography`` package) over fixed-size
chunks, under a 32-byte key the operator keeps in a file (``rummy backup --new-key FILE``).

The sealed file is ``MAGIC`` (8 bytes), a 7-byte random nonce prefix, then chunks: each is a
4-byte big-endian length and that many bytes of ciphertext (``CHUNK_BYTES`` of plaintext at most,
plus GCM's 16-byte tag). Chunk ``i`` is sealed with the nonce ``prefix + i (4 bytes) + last (1
byte: 1 for the final chunk)`` and the header (magic and prefix) as associated data, so a
changed, reordered, dropped or truncated chunk, or another key, fails to open: :class:`SealError`.

A key file holds the key as one line of URL-safe base64 (44 characters); written by
:func:`write_new_key` with mode 0600.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
import struct
from pathlib import Path
from typing import BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAGIC = b"BBRBAK01"
KEY_BYTES = 32
PREFIX_BYTES = 7
CHUNK_BYTES = 1024 * 1024
_LENGTH = struct.Struct(">I")


class SealError(Exception):
    """A key file or sealed archive that cannot be used; the message says why."""


def write_new_key(path: Path) -> None:
    """Write a fresh random key to ``path`` (mode 0600). Raises SealError if ``path`` exists
    (a key is never overwritten: the archives sealed with it would be lost)."""
    key = base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SealError(f"{path} exists; a key file is never overwritten") from None
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")


def read_key(path: Path) -> bytes:
    """The 32-byte key in the key file ``path``. Raises SealError for a missing or malformed
    file."""
    try:
        text = path.read_text().strip()
    except OSError as error:
        raise SealError(f"cannot read the key file {path}: {error.strerror or error}") from None
    try:
        key = base64.urlsafe_b64decode(text.encode())
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise SealError(
            f"{path} is not a backup key (one line of base64 holding {KEY_BYTES} bytes; "
            "make one with `rummy backup --new-key FILE`)"
        )
    return key


def _nonce(prefix: bytes, index: int, last: bool) -> bytes:
    return prefix + struct.pack(">I", index) + (b"\x01" if last else b"\x00")


def seal(source: BinaryIO, target: BinaryIO, key: bytes) -> None:
    """Encrypt everything ``source`` holds into ``target`` under ``key``."""
    prefix = secrets.token_bytes(PREFIX_BYTES)
    header = MAGIC + prefix
    target.write(header)
    aead = AESGCM(key)
    index = 0
    chunk = source.read(CHUNK_BYTES)
    while True:
        following = source.read(CHUNK_BYTES)
        last = not following
        sealed = aead.encrypt(_nonce(prefix, index, last), chunk, header)
        target.write(_LENGTH.pack(len(sealed)) + sealed)
        if last:
            return
        chunk, index = following, index + 1


def unseal(source: BinaryIO, target: BinaryIO, key: bytes) -> None:
    """Decrypt a sealed archive from ``source`` into ``target``. Raises SealError when it is not
    one, was sealed under another key, or was changed or cut short (``target`` then holds a
    prefix that must not be used)."""
    header = source.read(len(MAGIC) + PREFIX_BYTES)
    if len(header) < len(MAGIC) + PREFIX_BYTES or not header.startswith(MAGIC):
        raise SealError("not a rummy backup archive (its first bytes are not the archive's mark)")
    prefix = header[len(MAGIC) :]
    aead = AESGCM(key)
    index = 0
    while True:
        length_bytes = source.read(_LENGTH.size)
        if len(length_bytes) < _LENGTH.size:
            raise SealError("the archive is cut short (its final chunk is missing)")
        (length,) = _LENGTH.unpack(length_bytes)
        sealed = source.read(length)
        if len(sealed) < length or length > CHUNK_BYTES + 16:
            raise SealError(f"the archive is cut short or damaged (chunk {index})")
        last = _at_end(source)
        try:
            plain = aead.decrypt(_nonce(prefix, index, last), sealed, header)
        except InvalidTag:
            raise SealError(
                f"chunk {index} does not open: the key is not the one it was sealed with, "
                "or the archive was changed"
            ) from None
        target.write(plain)
        if last:
            return
        index += 1


def _at_end(source: BinaryIO) -> bool:
    here = source.tell()
    more = source.read(1)
    source.seek(here)
    return not more
