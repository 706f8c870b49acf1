"""The longest lifetime of a token of each role (``RUMMY_<ROLE>_TOKEN_MAX_SECONDS``), in
seconds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rummy_platform.config.base import EnvSettings, setting

#: The roles of a token (``rummy_platform.auth.Role`` values), in the order settings list them.
ROLES = ("player", "operator", "service")

#: The longest lifetime of a token of each role, in seconds (players play sessions of hours,
#: operators work a day; a service mints its own short tokens and renews them).
DEFAULT_TOKEN_MAX_LIFETIME_SECONDS: Mapping[str, int] = {
    "player": 12 * 3600,
    "operator": 24 * 3600,
    "service": 3600,
}


def token_max_lifetime_variable(role: str) -> str:
    """The variable that sets the longest token lifetime of ``role``."""
    return f"RUMMY_{role.upper()}_TOKEN_MAX_SECONDS"


def _lifetime(role: str, meaning: str) -> Any:
    return setting(
        token_max_lifetime_variable(role),
        DEFAULT_TOKEN_MAX_LIFETIME_SECONDS[role],
        meaning,
        unit="seconds",
        ge=1,
    )


class TokenLifetimeSettings(EnvSettings):
    """The longest lifetime (``exp`` − ``iat``) of a token of each role, whatever its ``exp``
    says; a longer-lived token is UNAUTHENTICATED and ``rummy token --ttl`` refuses to mint one."""

    player_token_max_seconds: int = _lifetime("player", "the longest a player token may live")
    operator_token_max_seconds: int = _lifetime(
        "operator", "the longest an operator token may live"
    )
    service_token_max_seconds: int = _lifetime("service", "the longest a service token may live")

    @property
    def token_max_lifetime_seconds(self) -> dict[str, int]:
        """Role name -> the longest lifetime of its tokens, in seconds."""
        return {
            "player": self.player_token_max_seconds,
            "operator": self.operator_token_max_seconds,
            "service": self.service_token_max_seconds,
        }


def token_max_lifetimes_from_env() -> dict[str, int]:
    """Role name -> the longest token lifetime in seconds, from the
    ``RUMMY_<ROLE>_TOKEN_MAX_SECONDS`` variables (for ``rummy token``). Raises
    :class:`ConfigError` for a value that is not a positive integer."""
    return TokenLifetimeSettings.load().token_max_lifetime_seconds
