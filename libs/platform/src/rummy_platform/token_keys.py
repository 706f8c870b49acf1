"""The Ed25519 keys of bearer tokens (EdDSA JWTs), read from and written to PEM files.

Two kinds of key pair sign tokens:

- the **issuer's** (``rummy token``): its private key (``RUMMY_TOKEN_SIGNING_KEY_FILE``) is held
  by the issuer alone; its public keys (``RUMMY_TOKEN_PUBLIC_KEYS_FILE``) verify a token of any
  role in every service;
- the **services'** (the dealer and the table, which call other services): their private key
  (``RUMMY_SERVICE_TOKEN_KEY_FILE``) signs only service-role tokens, and its public keys
  (``RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE``) verify only service-role tokens, so a service that
  is taken over cannot mint a player's or an operator's token.

A public keys file holds one or more PEM ``PUBLIC KEY`` blocks, the newest first; a key's id
(a token's ``kid`` header) is :func:`key_id`. Rotation: put the new public key first in the
file, keep the old one while its tokens live, then sign with the new private key
(docs/operations.md, "Rotating the token keys"). :func:`ensure_key_files` makes the local
stack's keys on first use.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from rummy_platform.config.base import ConfigError

_PEM_BLOCK = re.compile(rb"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.DOTALL)


def key_id(public_key: Ed25519PublicKey) -> str:
    """The ``kid`` of tokens a key pair signs: 16 hex digits of the SHA-256 of the public key's
    32 raw bytes (names the key, reveals nothing the public key does not)."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """The PEM ``PUBLIC KEY`` block (SubjectPublicKeyInfo) of a key or of a private key's pair."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def read_signing_key(path: Path, variable: str) -> Ed25519PrivateKey:
    """The Ed25519 private key in the PEM (PKCS#8) file ``path``; raises
    :class:`~rummy_platform.config.ConfigError` naming ``variable`` if it cannot be read or is
    not an unencrypted Ed25519 private key."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{variable}: cannot read {path}: {error.strerror}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ConfigError(
            f"{variable}: {path} holds no unencrypted PEM private key (make one with "
            "`rummy token --new-key`)"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{variable}: the key in {path} is not an Ed25519 key")
    return key


def read_public_keys(path: Path, variable: str) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 public keys of the PEM file ``path`` by key id, in the file's order (the
    newest first); raises :class:`~rummy_platform.config.ConfigError` naming ``variable`` if
    the file cannot be read, holds no public key, or holds one that is not Ed25519."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{variable}: cannot read {path}: {error.strerror}") from None
    blocks = _PEM_BLOCK.findall(data)
    if not blocks:
        raise ConfigError(f"{variable}: {path} holds no PEM public key ('BEGIN PUBLIC KEY')")
    keys: dict[str, Ed25519PublicKey] = {}
    for number, block in enumerate(blocks, start=1):
        try:
            key = serialization.load_pem_public_key(block)
        except ValueError:
            raise ConfigError(f"{variable}: public key {number} of {path} is malformed") from None
        if not isinstance(key, Ed25519PublicKey):
            raise ConfigError(f"{variable}: public key {number} of {path} is not an Ed25519 key")
        keys[key_id(key)] = key
    return keys


def write_private_key(path: Path, key: Ed25519PrivateKey) -> None:
    """Write ``key`` to ``path`` as unencrypted PKCS#8 PEM, readable by its owner only (mode
    600; the directory is made, mode 700, if missing)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
    path.chmod(0o600)


def rotate_key(private_path: Path, public_path: Path, *, keep: int = 2) -> str:
    """Make a new key pair: write its private key to ``private_path`` and put its public key
    first in ``public_path``, keeping the ``keep`` − 1 newest keys already there (so tokens of
    the key before still verify). Returns the new key's id."""
    key = Ed25519PrivateKey.generate()
    old: list[bytes] = []
    if public_path.is_file():
        old = _PEM_BLOCK.findall(public_path.read_bytes())[: max(keep - 1, 0)]
    public_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    public_path.write_bytes(b"".join(block.strip() + b"\n" for block in [public_pem(key), *old]))
    write_private_key(private_path, key)
    return key_id(key.public_key())


@dataclass(frozen=True)
class KeyFiles:
    """The four files of a stack's token keys (see the module docstring)."""

    issuer_key: Path
    issuer_public_keys: Path
    service_key: Path
    service_public_keys: Path

    def service_environment(self) -> dict[str, str]:
        """The variables naming the files every service reads (the service private key too:
        only the dealer and the table read it). Never the issuer's private key."""
        return {
            "RUMMY_TOKEN_PUBLIC_KEYS_FILE": str(self.issuer_public_keys),
            "RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE": str(self.service_public_keys),
            "RUMMY_SERVICE_TOKEN_KEY_FILE": str(self.service_key),
        }

    def issuer_environment(self) -> dict[str, str]:
        """The variable naming the issuer's private key (for ``rummy token`` alone)."""
        return {"RUMMY_TOKEN_SIGNING_KEY_FILE": str(self.issuer_key)}


def key_files(directory: Path) -> KeyFiles:
    """The key files' paths under ``directory`` (made or not)."""
    return KeyFiles(
        issuer_key=directory / "issuer.key.pem",
        issuer_public_keys=directory / "issuer.pub.pem",
        service_key=directory / "service.key.pem",
        service_public_keys=directory / "service.pub.pem",
    )


def ensure_key_files(directory: Path) -> KeyFiles:
    """The key files under ``directory``, each pair made (private mode 600) if either file of
    it is missing."""
    files = key_files(directory)
    for private, public in (
        (files.issuer_key, files.issuer_public_keys),
        (files.service_key, files.service_public_keys),
    ):
        if not (private.is_file() and public.is_file()):
            rotate_key(private, public, keep=1)
    return files
