"""Typed settings of a service process, read from environment variables when it starts.

Nothing here runs at import time: a service calls :meth:`Settings.from_env` (or
:func:`load_settings_or_exit`) once, in its bootstrap, and passes the result down.

Variables (all optional except ``RUMMY_JWT_SECRET``):

==============================  ===========================================================
``RUMMY_JWT_SECRET``            shared HS256 secret, at least 32 bytes (required): signs the
                                tokens this process mints, and verifies tokens
``RUMMY_JWT_PREVIOUS_SECRET``   the secret before the last rotation, at least 32 bytes: still
                                verifies tokens (never signs); default unset
``RUMMY_*_TOKEN_MAX_SECONDS``   the longest lifetime (``exp`` − ``iat``) a token of the
                                role may have, whatever its ``exp``, for ROLE ``PLAYER``
                                (default 43200 = 12 h), ``OPERATOR`` (86400 = a day),
                                ``SERVICE`` (3600)
``RUMMY_RATE_LIMIT_<WHO>``      the token bucket of each account (or peer host) of a kind:
                                ``<calls per second>,<burst>`` or ``off``; WHO ``PLAYER``,
                                ``OPERATOR``, ``SERVICE`` (per account) or ``UNAUTHENTICATED``
                                (per peer host, calls whose token is refused); defaults in
                                :data:`DEFAULT_RATE_LIMITS`
``RUMMY_GRPC_PORT``             gRPC port; default from :data:`DEFAULT_PORTS`; 0 = any free
``RUMMY_METRICS_PORT``          Prometheus ``/metrics`` port; default from :data:`DEFAULT_PORTS`
``RUMMY_BIND_HOST``             address both servers bind; default ``127.0.0.1``
``RUMMY_LOG_LEVEL``             ``debug``/``info``/``warning``/``error``; default ``info``
``RUMMY_GRPC_MAX_WORKERS``      gRPC thread-pool size; default 32
``RUMMY_SHUTDOWN_GRACE_SECONDS`` seconds in-flight calls get to finish on SIGTERM; default 10
``KAFKA_BOOTSTRAP_SERVERS``     Kafka brokers, ``host:port[,host:port]``; default unset
``DATABASE_URL``                PostgreSQL URL; default unset
``RUMMY_VARIANT_PLUGINS``       comma-separated module names of variants not in the product,
                                imported once at start (:mod:`rummy_platform.plugins`, not read
                                here); default unset
``RUMMY_SUPERVISOR_PID``        pid of the supervisor (``rummy demo``/``rummy up``) that
                                started this process; when set, the service shuts down
                                gracefully as soon as its parent is no longer that process
                                (see :class:`rummy_platform.service_main.SupervisorWatch`);
                                default unset (a service started by hand runs until SIGTERM)
==============================  ===========================================================
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

#: The local (gRPC port, metrics port) of each service, as CONVENTIONS.md fixes them.
DEFAULT_PORTS: Mapping[str, tuple[int, int]] = {
    "table": (50051, 9101),
    "dealer": (50052, 9102),
    "ledger": (50053, 9103),
    "fairness": (50054, 9104),
    "clock": (50055, 9105),
}

#: The shortest shared secret accepted for HS256 (the hash output size, RFC 7518 section 3.2).
MIN_JWT_SECRET_BYTES = 32

LOG_LEVELS = ("debug", "info", "warning", "error")

#: ``RUMMY_SUPERVISOR_PID``: set by the stack supervisor; the service ends when it is gone.
SUPERVISOR_PID_VARIABLE = "RUMMY_SUPERVISOR_PID"


#: The roles of a token (``rummy_platform.auth.Role`` values), in the order settings list them.
ROLES = ("player", "operator", "service")

#: The longest lifetime of a token of each role, in seconds (players play sessions of hours,
#: operators work a day; a service mints its own short tokens and renews them).
DEFAULT_TOKEN_MAX_LIFETIME_SECONDS: Mapping[str, int] = {
    "player": 12 * 3600,
    "operator": 24 * 3600,
    "service": 3600,
}

#: Who has a rate limit: each role's accounts, and peer hosts whose token is refused.
RATE_LIMITED = (*ROLES, "unauthenticated")


@dataclass(frozen=True)
class BucketSpec:
    """A token bucket: ``burst`` calls at once, refilled at ``rate_per_second`` calls a second."""

    rate_per_second: float
    burst: int

    def __str__(self) -> str:
        return f"{self.rate_per_second:g} calls a second (bursts of {self.burst})"


#: The default bucket of each rate-limited kind of caller (README.md, "Rate limits": a bot's
#: measured peak is far below the player bucket; ``None`` would mean unlimited).
DEFAULT_RATE_LIMITS: Mapping[str, BucketSpec | None] = {
    "player": BucketSpec(50.0, 200),
    "operator": BucketSpec(50.0, 500),
    "service": BucketSpec(500.0, 2000),
    "unauthenticated": BucketSpec(10.0, 100),
}


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable and the fix."""


@dataclass(frozen=True)
class Settings:
    """Everything a service process reads from its environment.

    Ports are TCP ports (0 asks the OS for a free one); ``shutdown_grace_seconds`` is seconds.
    """

    service: str
    jwt_secret: str
    grpc_port: int
    metrics_port: int
    bind_host: str = "127.0.0.1"
    log_level: str = "info"
    grpc_max_workers: int = 32
    shutdown_grace_seconds: float = 10.0
    kafka_bootstrap_servers: str | None = None
    database_url: str | None = None
    supervisor_pid: int | None = None
    jwt_previous_secret: str | None = None
    token_max_lifetime_seconds: Mapping[str, int] = field(
        default_factory=lambda: dict(DEFAULT_TOKEN_MAX_LIFETIME_SECONDS)
    )
    rate_limits: Mapping[str, BucketSpec | None] = field(
        default_factory=lambda: dict(DEFAULT_RATE_LIMITS)
    )

    @classmethod
    def from_env(cls, service: str, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the settings of ``service`` from ``environ`` (default: ``os.environ``).

        Services not in :data:`DEFAULT_PORTS` must set both port variables.
        Raises :class:`ConfigError` naming the first missing or malformed variable.
        """
        env = os.environ if environ is None else environ
        default_grpc, default_metrics = DEFAULT_PORTS.get(service, (None, None))
        log_level = env.get("RUMMY_LOG_LEVEL", "info").strip().lower()
        if log_level not in LOG_LEVELS:
            raise ConfigError(
                f"RUMMY_LOG_LEVEL={log_level!r} is not one of {', '.join(LOG_LEVELS)}"
            )
        return cls(
            service=service,
            jwt_secret=jwt_secret_from_env(env),
            jwt_previous_secret=jwt_previous_secret_from_env(env),
            token_max_lifetime_seconds=token_max_lifetimes_from_env(env),
            rate_limits=rate_limits_from_env(env),
            grpc_port=_port(env, "RUMMY_GRPC_PORT", default_grpc),
            metrics_port=_port(env, "RUMMY_METRICS_PORT", default_metrics),
            bind_host=env.get("RUMMY_BIND_HOST", "127.0.0.1"),
            log_level=log_level,
            grpc_max_workers=_positive_int(env, "RUMMY_GRPC_MAX_WORKERS", 32),
            shutdown_grace_seconds=_non_negative_float(env, "RUMMY_SHUTDOWN_GRACE_SECONDS", 10.0),
            kafka_bootstrap_servers=env.get("KAFKA_BOOTSTRAP_SERVERS") or None,
            database_url=env.get("DATABASE_URL") or None,
            supervisor_pid=_optional_pid(env, SUPERVISOR_PID_VARIABLE),
        )


def jwt_secret_from_env(environ: Mapping[str, str] | None = None) -> str:
    """Return ``RUMMY_JWT_SECRET``; raise :class:`ConfigError` if it is unset or too short."""
    env = os.environ if environ is None else environ
    secret = env.get("RUMMY_JWT_SECRET", "")
    if not secret:
        raise ConfigError(
            "RUMMY_JWT_SECRET is not set: every service and `rummy token` need the shared "
            f"token secret (at least {MIN_JWT_SECRET_BYTES} bytes, e.g. `openssl rand -hex 32`)"
        )
    if len(secret.encode()) < MIN_JWT_SECRET_BYTES:
        raise ConfigError(
            f"RUMMY_JWT_SECRET is {len(secret.encode())} bytes; HS256 needs at least "
            f"{MIN_JWT_SECRET_BYTES} (e.g. `openssl rand -hex 32`)"
        )
    return secret


def jwt_previous_secret_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """Return ``RUMMY_JWT_PREVIOUS_SECRET`` (None when unset or empty); raise
    :class:`ConfigError` if it is too short or equals ``RUMMY_JWT_SECRET``."""
    env = os.environ if environ is None else environ
    previous = env.get("RUMMY_JWT_PREVIOUS_SECRET", "")
    if not previous:
        return None
    if len(previous.encode()) < MIN_JWT_SECRET_BYTES:
        raise ConfigError(
            f"RUMMY_JWT_PREVIOUS_SECRET is {len(previous.encode())} bytes; HS256 needs at least "
            f"{MIN_JWT_SECRET_BYTES}"
        )
    if previous == env.get("RUMMY_JWT_SECRET", ""):
        raise ConfigError(
            "RUMMY_JWT_PREVIOUS_SECRET equals RUMMY_JWT_SECRET: set it to the secret before "
            "the rotation, or unset it"
        )
    return previous


def token_max_lifetime_variable(role: str) -> str:
    """The variable that sets the longest token lifetime of ``role``."""
    return f"RUMMY_{role.upper()}_TOKEN_MAX_SECONDS"


def token_max_lifetimes_from_env(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """The longest token lifetime of each role, in seconds, from the
    ``RUMMY_<ROLE>_TOKEN_MAX_SECONDS`` variables (defaults
    :data:`DEFAULT_TOKEN_MAX_LIFETIME_SECONDS`). Raises :class:`ConfigError` for a value that
    is not a positive integer."""
    env = os.environ if environ is None else environ
    return {
        role: _positive_int(env, token_max_lifetime_variable(role), default, "a number of seconds")
        for role, default in DEFAULT_TOKEN_MAX_LIFETIME_SECONDS.items()
    }


def rate_limit_variable(who: str) -> str:
    """The variable that sets the token bucket of ``who`` (a role, or ``unauthenticated``)."""
    return f"RUMMY_RATE_LIMIT_{who.upper()}"


def rate_limits_from_env(environ: Mapping[str, str] | None = None) -> dict[str, BucketSpec | None]:
    """The token bucket of each of :data:`RATE_LIMITED` from the ``RUMMY_RATE_LIMIT_<WHO>``
    variables: ``<calls per second>,<burst>`` (``20,100``), or ``off`` for no limit (None).
    Defaults :data:`DEFAULT_RATE_LIMITS`. Raises :class:`ConfigError` for anything else."""
    env = os.environ if environ is None else environ
    limits: dict[str, BucketSpec | None] = {}
    for who in RATE_LIMITED:
        name = rate_limit_variable(who)
        raw = env.get(name, "").strip().lower()
        limits[who] = DEFAULT_RATE_LIMITS[who] if not raw else _bucket(name, raw)
    return limits


def _bucket(name: str, raw: str) -> BucketSpec | None:
    if raw == "off":
        return None
    usage = f"{name}={raw[:40]!r} is not '<calls per second>,<burst>' (e.g. '20,100') or 'off'"
    rate_text, comma, burst_text = raw.partition(",")
    if not comma:
        raise ConfigError(usage)
    try:
        rate, burst = float(rate_text), int(burst_text)
    except ValueError:
        raise ConfigError(usage) from None
    if not (0 < rate < float("inf")) or burst < 1:
        raise ConfigError(f"{usage}: the rate must be positive and the burst at least 1")
    return BucketSpec(rate, burst)


def load_settings_or_exit(service: str) -> Settings:
    """Read the settings of ``service`` from ``os.environ``; on a :class:`ConfigError`, print
    the message to stderr and exit with status 2 (a bootstrap's first line)."""
    try:
        return Settings.from_env(service)
    except ConfigError as error:
        print(f"rummy {service}: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def _port(env: Mapping[str, str], name: str, default: int | None) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        if default is None:
            raise ConfigError(f"{name} is not set and this service has no default port")
        return default
    try:
        port = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"{name}={port} is outside 0..65535")
    return port


def _optional_pid(env: Mapping[str, str], name: str) -> int | None:
    return _positive_int(env, name, 0, "a process id") or None


def _positive_int(env: Mapping[str, str], name: str, default: int, noun: str = "an integer") -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not {noun}") from None
    if value < 1:
        raise ConfigError(f"{name}={value} is not {noun} (must be at least 1)")
    return value


def _non_negative_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number of seconds") from None
    if value < 0:
        raise ConfigError(f"{name}={value} must not be negative")
    return value
