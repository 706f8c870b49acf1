"""The token secrets: ``RUMMY_JWT_SECRET`` signs and verifies, ``RUMMY_JWT_PREVIOUS_SECRET``
(during a rotation) only verifies."""

from __future__ import annotations

from typing import Self

from pydantic import field_validator, model_validator

from rummy_platform.config.base import EnvSettings, setting

#: The shortest shared secret accepted for HS256 (the hash output size, RFC 7518 section 3.2).
MIN_JWT_SECRET_BYTES = 32


class SecretSettings(EnvSettings):
    """The token secrets: ``jwt_secret`` signs and verifies, ``jwt_previous_secret`` (during a
    rotation) only verifies."""

    jwt_secret: str = setting(
        "RUMMY_JWT_SECRET",
        "",
        "shared HS256 secret, at least 32 bytes: signs the tokens minted (their `kid` header "
        "names it) and verifies; `rummy demo`/`rummy up` generate `.local/jwt-secret` when "
        "it is unset",
        shown_default="required",
        secret=True,
        validate_default=True,
    )
    jwt_previous_secret: str | None = setting(
        "RUMMY_JWT_PREVIOUS_SECRET",
        None,
        "the secret before the last rotation: still verifies tokens whose `kid` names it, never "
        "signs; unset outside a rotation (see [Rotating the token secret]"
        "(operations.md#rotating-the-token-secret))",
        secret=True,
    )

    @field_validator("jwt_secret")
    @classmethod
    def _secret_long_enough(cls, secret: str) -> str:
        if not secret:
            raise ValueError(
                "RUMMY_JWT_SECRET is not set: every service and `rummy token` need the shared "
                f"token secret (at least {MIN_JWT_SECRET_BYTES} bytes, e.g. `openssl rand -hex "
                "32`)"
            )
        if len(secret.encode()) < MIN_JWT_SECRET_BYTES:
            raise ValueError(
                f"RUMMY_JWT_SECRET is {len(secret.encode())} bytes; HS256 needs at least "
                f"{MIN_JWT_SECRET_BYTES} (e.g. `openssl rand -hex 32`)"
            )
        return secret

    @field_validator("jwt_previous_secret")
    @classmethod
    def _previous_long_enough(cls, previous: str | None) -> str | None:
        if previous is not None and len(previous.encode()) < MIN_JWT_SECRET_BYTES:
            raise ValueError(
                f"RUMMY_JWT_PREVIOUS_SECRET is {len(previous.encode())} bytes; HS256 needs at "
                f"least {MIN_JWT_SECRET_BYTES}"
            )
        return previous

    @model_validator(mode="after")
    def _previous_differs(self) -> Self:
        if self.jwt_previous_secret is not None and self.jwt_previous_secret == self.jwt_secret:
            raise ValueError(
                "RUMMY_JWT_PREVIOUS_SECRET equals RUMMY_JWT_SECRET: set it to the secret before "
                "the rotation, or unset it"
            )
        return self


def jwt_secret_from_env() -> str:
    """``RUMMY_JWT_SECRET`` (for ``rummy token``); raises :class:`ConfigError` if it is unset
    or too short (or the previous secret is malformed)."""
    return SecretSettings.load().jwt_secret
