"""The tests' token keys: one key set per test process, made on first use in a temporary
directory (``rummy_platform.token_keys``), and the issuer that mints the tests' tokens (it
stands for ``rummy token``, the only holder of the issuer's private key)."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import tempfile
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from rummy_platform.auth import ALGORITHM, TokenAuthority
from rummy_platform.token_keys import KeyFiles, ensure_key_files, key_id, read_signing_key


@functools.cache
def suite_key_files() -> KeyFiles:
    """This process's key files (made once, removed with the temporary directory's cleanup)."""
    directory = Path(tempfile.mkdtemp(prefix="rummy-test-token-keys-"))
    return ensure_key_files(directory)


def token_settings() -> dict[str, Any]:
    """Keyword arguments of a service's settings naming the test keys' public key files:
    ``Settings(**token_settings(), grpc_port=0, metrics_port=0)``."""
    files = suite_key_files()
    return {
        "token_public_keys_file": files.issuer_public_keys,
        "service_token_public_keys_file": files.service_public_keys,
    }


def token_environment() -> dict[str, str]:
    """The variables a service process of the tests reads for its token keys (the issuer's
    private key is not among them)."""
    return suite_key_files().service_environment()


def issuer_authority(files: KeyFiles | None = None, **options: Any) -> TokenAuthority:
    """The issuer of ``files`` (default: the test keys): mints tokens of any role and verifies
    them as a service does. ``options`` go to :meth:`TokenAuthority.of_issuer`."""
    return TokenAuthority.of_issuer(files or suite_key_files(), **options)


def hs256_token(
    claims: dict[str, Any], secret: bytes, headers: dict[str, Any] | None = None
) -> str:
    """An HS256 JWT of ``claims`` keyed with ``secret``, built by hand: PyJWT refuses to take a
    PEM public key as an HMAC secret, and taking one is the alg-confusion attack a verifier
    must refuse (a token "signed" with a public key anyone has)."""

    def part(value: object) -> bytes:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=")

    signed = part({"alg": "HS256", "typ": "JWT", **(headers or {})}) + b"." + part(claims)
    mac = hmac.new(secret, signed, hashlib.sha256).digest()
    return (signed + b"." + base64.urlsafe_b64encode(mac).rstrip(b"=")).decode()


def stranger_authority() -> TokenAuthority:
    """An issuer of a fresh key pair no service knows (its tokens name an unknown ``kid``)."""
    return TokenAuthority(signing_key=Ed25519PrivateKey.generate())


def issuer_signed(claims: dict[str, Any]) -> str:
    """``claims`` as they are (no check of them) signed with the test issuer's private key
    under its ``kid``: a validly signed token whose claims a service must judge."""
    key = read_signing_key(suite_key_files().issuer_key, "the test issuer's key")
    headers = {"kid": key_id(key.public_key())}
    return jwt.encode(claims, key, algorithm=ALGORITHM, headers=headers)
