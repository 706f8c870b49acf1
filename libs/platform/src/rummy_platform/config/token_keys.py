"""The token keys' files: the public keys every service verifies with, and the private key the
dealer and the table sign their service-role tokens with (``rummy_platform.token_keys``). Each
setting names a file; no key is ever the value of a variable."""

from __future__ import annotations

from pathlib import Path

from pydantic import field_validator

from rummy_platform.config.base import EnvSettings, setting

PUBLIC_KEYS_VARIABLE = "RUMMY_TOKEN_PUBLIC_KEYS_FILE"
SERVICE_PUBLIC_KEYS_VARIABLE = "RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE"
SERVICE_KEY_VARIABLE = "RUMMY_SERVICE_TOKEN_KEY_FILE"
#: The issuer's private key: read by `rummy token` (and the ops commands minting an operator's
#: token) only, never by a service.
SIGNING_KEY_VARIABLE = "RUMMY_TOKEN_SIGNING_KEY_FILE"


class TokenKeySettings(EnvSettings):
    """The public keys that verify tokens: the issuer's (any role) and the services' (only
    service-role tokens)."""

    token_public_keys_file: Path = setting(
        PUBLIC_KEYS_VARIABLE,
        None,
        "a PEM file of the issuer's Ed25519 public keys, the newest first: verify tokens of any "
        "role (EdDSA; a token's `kid` names its key; see [Rotating the token keys]"
        "(operations.md#rotating-the-token-keys)); `rummy demo`/`rummy up` give their services "
        "the keys of `.local/token-keys/`, made on first use",
        shown_default="required",
        validate_default=True,
    )
    service_token_public_keys_file: Path | None = setting(
        SERVICE_PUBLIC_KEYS_VARIABLE,
        None,
        "a PEM file of the services' Ed25519 public keys: verify service-role tokens only "
        "(those the dealer and the table mint); unset: no service-role token of theirs verifies",
    )

    @field_validator("token_public_keys_file", mode="before")
    @classmethod
    def _public_keys_readable(cls, path: str | Path | None) -> Path:
        required = _required(
            path,
            PUBLIC_KEYS_VARIABLE,
            "every service needs the file of the token issuer's public keys (`rummy token "
            "--new-key` makes a key pair)",
        )
        return _checked(required, PUBLIC_KEYS_VARIABLE, private=False)

    @field_validator("service_token_public_keys_file", mode="before")
    @classmethod
    def _service_keys_readable(cls, path: str | Path | None) -> Path | None:
        return _checked(Path(path), SERVICE_PUBLIC_KEYS_VARIABLE, private=False) if path else None


class ServiceTokenSigningSettings(EnvSettings):
    """The private key of a service that calls other services (the dealer, the table)."""

    service_token_key_file: Path = setting(
        SERVICE_KEY_VARIABLE,
        None,
        "a PEM file of the services' Ed25519 private key: signs the service-role tokens this "
        "service sends to the others (verified by `RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE`)",
        shown_default="required",
        validate_default=True,
    )

    @field_validator("service_token_key_file", mode="before")
    @classmethod
    def _signing_key_readable(cls, path: str | Path | None) -> Path:
        required = _required(
            path,
            SERVICE_KEY_VARIABLE,
            "this service signs the service-role tokens it sends with the services' private key",
        )
        return _checked(required, SERVICE_KEY_VARIABLE, private=True)


def _required(path: str | Path | None, variable: str, why: str) -> Path:
    """``path`` as a Path; raises ValueError saying ``variable`` is not set, and ``why``."""
    if not path:
        raise ValueError(f"{variable} is not set: {why}")
    return Path(path)


def _checked(path: Path, variable: str, *, private: bool) -> Path:
    """``path`` once its key(s) read; raises ConfigError (a ValueError) saying why not."""
    from rummy_platform.token_keys import read_public_keys, read_signing_key  # imports us

    if private:
        read_signing_key(path, variable)
    else:
        read_public_keys(path, variable)
    return path
