"""Typed settings of a process, read from its environment once, when it starts (pydantic-settings).

A service's ``main`` calls :meth:`EnvSettings.load_or_exit` on its own settings class (the
platform's :class:`Settings` plus the service's fields, in ``rummy_<service>/config.py``) and
passes the result down; nothing else reads the environment (``tests/test_settings_sources.py``
checks the tree). Constructing a settings class from keyword arguments (``Settings(jwt_secret=
..., grpc_port=0, metrics_port=0)``, as in-process tests do) reads the environment too, for every
field not given: that is pydantic-settings' own behaviour, kept so a test's brokers reach it.

Each field names its variable (``validation_alias``), its unit and its meaning: README.md's table
of variables is generated from them (``deploy/settings_table.py``; a test fails when the two
differ). A bad value ends the start with status 2 and one line naming the variable, what it holds
and what it expects (:meth:`EnvSettings.load_or_exit`), before any port is bound; so does a
service's port that another process holds (:meth:`Settings.load_or_exit`). The default ports
are :mod:`rummy_platform.ports`' table. Empty
variables count as unset. Secrets are never printed.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticUndefined
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from rummy_platform.port_check import PortInUse, ensure_free, exit_port_in_use
from rummy_platform.ports import (
    DEFAULT_PORTS,
    GRPC,
    LOCAL_DATABASE_URL,
    LOCAL_KAFKA_BOOTSTRAP,
    METRICS,
    ListeningPort,
    service_listener,
)

#: The shortest shared secret accepted for HS256 (the hash output size, RFC 7518 section 3.2).
MIN_JWT_SECRET_BYTES = 32

LOG_LEVELS = ("debug", "info", "warning", "error")

#: ``RUMMY_SUPERVISOR_PID``: set by the stack supervisor; the service ends when it is gone.
SUPERVISOR_PID_VARIABLE = "RUMMY_SUPERVISOR_PID"
#: ``RUMMY_TOPIC_PREFIX``: prepended to every topic and consumer-group name (tests isolate runs).
TOPIC_PREFIX_VARIABLE = "RUMMY_TOPIC_PREFIX"
#: ``RUMMY_FAULT_POINT``: test-only; names a point where the process kills itself with SIGKILL.
FAULT_POINT_VARIABLE = "RUMMY_FAULT_POINT"
#: ``RUMMY_VARIANT_PLUGINS``: comma-separated module names, each registering its variant(s).
PLUGINS_VARIABLE = "RUMMY_VARIANT_PLUGINS"

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


def parse_bucket(raw: str) -> BucketSpec | None:
    """``<calls per second>,<burst>`` (``20,100``) as a :class:`BucketSpec`, ``off`` as None.
    Raises ValueError for anything else."""
    raw = raw.strip().lower()
    if raw == "off":
        return None
    usage = "not '<calls per second>,<burst>' (e.g. '20,100') or 'off'"
    rate_text, comma, burst_text = raw.partition(",")
    if not comma:
        raise ValueError(usage)
    try:
        rate, burst = float(rate_text), int(burst_text)
    except ValueError:
        raise ValueError(usage) from None
    if not (0 < rate < float("inf")) or burst < 1:
        raise ValueError(f"{usage}: the rate must be positive and the burst at least 1")
    return BucketSpec(rate, burst)


def token_max_lifetime_variable(role: str) -> str:
    """The variable that sets the longest token lifetime of ``role``."""
    return f"RUMMY_{role.upper()}_TOKEN_MAX_SECONDS"


def rate_limit_variable(who: str) -> str:
    """The variable that sets the token bucket of ``who`` (a role, or ``unauthenticated``)."""
    return f"RUMMY_RATE_LIMIT_{who.upper()}"


def setting(
    variable: str,
    default: Any = PydanticUndefined,
    meaning: str = "",
    *,
    unit: str = "",
    shown_default: str | None = None,
    secret: bool = False,
    **constraints: Any,
) -> Any:
    """A settings field read from ``variable`` (no ``default``: required), documented by
    ``meaning`` and ``unit`` in README.md's table (``shown_default`` replaces the default there);
    a ``secret`` is never printed. ``constraints`` are pydantic's (``ge``, ``le``, ...)."""
    extra: dict[str, str | bool] = {"unit": unit, "secret": secret}
    if shown_default is not None:
        extra["default"] = shown_default
    return Field(
        default,
        validation_alias=variable,
        description=meaning,
        json_schema_extra=extra,  # type: ignore[arg-type]
        repr=not secret,
        **constraints,
    )


class EnvSettings(BaseSettings):
    """What every settings class shares: variables named exactly (case-sensitive), empty ones
    unset, unknown ones ignored, the object frozen; read from keyword arguments, then the
    environment (no ``.env`` file, no secrets folder)."""

    model_config = SettingsConfigDict(
        case_sensitive=True,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    #: The process these settings are for (``rummy <service>: ...`` in errors and logs).
    service: ClassVar[str] = "rummy"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings

    @classmethod
    def load(cls, **values: Any) -> Self:
        """The settings from ``values`` and the environment. Raises :class:`ConfigError` naming
        every variable that is missing or malformed."""
        try:
            return cls(**values)
        except ValidationError as error:
            raise ConfigError(cls.describe(error)) from None

    @classmethod
    def load_or_exit(cls) -> Self:
        """The settings from the environment; on a :class:`ConfigError`, print ``rummy
        <service>: configuration error: ...`` to stderr and exit with status 2 (a ``main``'s
        first line, before anything is bound or connected)."""
        try:
            return cls.load()
        except ConfigError as error:
            print(f"rummy {cls.service}: configuration error: {error}", file=sys.stderr)
            raise SystemExit(2) from None

    @classmethod
    def variable(cls, name: str) -> str:
        """The variable of field ``name`` (``name`` itself when it is a variable already)."""
        field = cls.model_fields.get(name)
        alias = field.validation_alias if field is not None else None
        return alias if isinstance(alias, str) else name

    @classmethod
    def describe(cls, error: ValidationError) -> str:
        """One line for ``error``: ``A and B must be set`` for missing variables, then
        ``VAR='value': what it expects`` for each malformed one (secrets shown as ``VAR``)."""
        secret = {
            cls.variable(name)
            for name, field in cls.model_fields.items()
            if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("secret")
        }
        missing: list[str] = []
        problems: list[str] = []
        for item in error.errors(include_url=False):
            variable = cls.variable(str(item["loc"][0])) if item["loc"] else ""
            message = str(item["msg"]).removeprefix("Value error, ")
            if item["type"] == "missing":
                missing.append(variable)
            elif not variable or message.startswith(variable):
                problems.append(message)
            elif variable in secret or not isinstance(item["input"], str | int | float):
                problems.append(f"{variable}: {message}")
            else:
                problems.append(f"{variable}={str(item['input'])[:40]!r}: {message}")
        if missing:
            *others, last = sorted(missing)
            names = f"{', '.join(others)} and {last}" if others else last
            problems.insert(0, f"{names} must be set")
        return "; ".join(problems)


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
        "(#rotating-the-token-secret))",
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


Bucket = Annotated[BucketSpec | None, NoDecode]


def _rate_limit(who: str, meaning: str) -> Any:
    spec = DEFAULT_RATE_LIMITS[who]
    shown = "off" if spec is None else f"{spec.rate_per_second:g},{spec.burst}"
    return setting(
        rate_limit_variable(who),
        spec,
        f"{meaning}: `<calls per second>,<burst>` or `off` (see [Rate limits](#rate-limits))",
        unit="calls/s, calls",
        shown_default=shown,
    )


def _port(variable: str, which: int, meaning: str) -> Any:
    shown = ", ".join(f"{ports[which]} {service}" for service, ports in DEFAULT_PORTS.items())
    return setting(
        variable, meaning=f"{meaning} (0: any free port)", shown_default=shown, ge=0, le=65535
    )


def _module_names(raw: str) -> tuple[str, ...]:
    from rummy_platform.plugins import PluginError, plugin_names

    try:
        return plugin_names(raw)
    except PluginError as error:
        raise ValueError(str(error)) from None


class Settings(TokenLifetimeSettings, SecretSettings):
    """What every service process reads: its ports, Kafka, logs, the gRPC pool, the token
    secrets and lifetimes, the rate limits, the topic prefix, the variant plug-ins and the
    supervisor's pid. Each service extends it in ``rummy_<service>/config.py`` (setting
    :attr:`service`); the ports default to :data:`DEFAULT_PORTS` of that service (a process not
    there must set both).

    Ports are TCP ports (0 asks the OS for a free one); ``shutdown_grace_seconds`` is seconds.
    """

    service: ClassVar[str] = ""

    grpc_port: int = _port("RUMMY_GRPC_PORT", 0, "the service's gRPC port")
    metrics_port: int = _port("RUMMY_METRICS_PORT", 1, "the service's Prometheus `/metrics` port")
    bind_host: str = setting("RUMMY_BIND_HOST", "127.0.0.1", "the address both servers bind")
    log_level: Literal["debug", "info", "warning", "error"] = setting(
        "RUMMY_LOG_LEVEL", "info", "`debug`, `info`, `warning` or `error` (JSON logs)"
    )
    grpc_max_workers: int = setting(
        "RUMMY_GRPC_MAX_WORKERS",
        32,
        "the service's threads for unary calls (the table's `WatchTable` streams take none: "
        "it serves on `grpc.aio`)",
        unit="threads",
        ge=1,
    )
    shutdown_grace_seconds: float = setting(
        "RUMMY_SHUTDOWN_GRACE_SECONDS",
        10.0,
        "how long in-flight calls get to finish after SIGTERM",
        unit="seconds",
        ge=0,
        allow_inf_nan=False,
    )
    kafka_bootstrap_servers: str | None = setting(
        "KAFKA_BOOTSTRAP_SERVERS",
        None,
        f"Kafka brokers, `host:port[,host:port]` (local: `{LOCAL_KAFKA_BOOTSTRAP}`)",
    )
    topic_prefix: str = setting(
        TOPIC_PREFIX_VARIABLE,
        "",
        "prepended to every topic and consumer-group name (tests and a second deployment on "
        "the same brokers isolate their runs)",
    )
    variant_plugins: Annotated[tuple[str, ...], NoDecode] = setting(
        PLUGINS_VARIABLE,
        (),
        "variants not in the product, loaded once at start by every service and by `rummy`: "
        "comma-separated importable module names (`toy_variant.plugin,acme.gin`), each "
        "registering its variant(s) with `rummy_rules.registry.register` when imported; one "
        "that fails to import, or registers no variant, ends the process with status 2 before "
        "it serves. Give every "
        "service of a deployment the same list (see [Variant plug-ins](#variant-plug-ins))",
        shown_default="unset (Indian points only)",
    )
    supervisor_pid: int | None = setting(
        SUPERVISOR_PID_VARIABLE,
        None,
        "set by `rummy demo`/`rummy up` on each service they start: the service shuts down "
        "gracefully within about a second once its parent is no longer that process, so no "
        "orphan keeps the ports; unset by hand and with `rummy demo --keep-running`",
        ge=1,
    )
    fault_point: str | None = setting(
        FAULT_POINT_VARIABLE,
        None,
        "TEST ONLY, never in production: the crash-test point where the process SIGKILLs itself "
        "(ledger `settlement-before-publish`/`settlement-after-publish`, fairness "
        "`outbox-before-append`/`outbox-after-append`)",
    )
    rate_limit_player: Bucket = _rate_limit("player", "the token bucket of each player account")
    rate_limit_operator: Bucket = _rate_limit("operator", "the token bucket of each operator")
    rate_limit_service: Bucket = _rate_limit("service", "the token bucket of each service account")
    rate_limit_unauthenticated: Bucket = _rate_limit(
        "unauthenticated",
        "the token bucket of each peer host, counting calls whose token is refused",
    )

    @classmethod
    def load_or_exit(cls) -> Self:
        """As :meth:`EnvSettings.load_or_exit`; then, before anything is bound or connected, a
        port of :meth:`listening_ports` that another process holds ends the start the same way:
        ``Error: port ..., wanted by ..., is in use by pid ...`` on stderr, status 2
        (:mod:`rummy_platform.port_check`)."""
        settings = super().load_or_exit()
        try:
            ensure_free(settings.listening_ports(), settings.bind_host)
        except PortInUse as error:
            exit_port_in_use(error)
        return settings

    def listening_port(self, kind: str) -> ListeningPort | None:
        """The ``kind`` (``grpc`` or ``metrics``) port this process listens on, with who
        listens and the variable that moves it; None for port 0 (any free one)."""
        name = f"{kind}_port"
        port = int(getattr(self, name))
        listener = service_listener(self.service or "rummy", kind)
        return ListeningPort(port, listener, self.variable(name)) if port else None

    def listening_ports(self) -> tuple[ListeningPort, ...]:
        """The gRPC and metrics ports of :meth:`listening_port` that are not 0."""
        return tuple(p for kind in (GRPC, METRICS) if (p := self.listening_port(kind)) is not None)

    @model_validator(mode="before")
    @classmethod
    def _default_ports(cls, data: Any) -> Any:
        ports = DEFAULT_PORTS.get(cls.service)
        if not isinstance(data, dict) or ports is None:
            return data
        data = dict(data)
        for name, port in zip(("grpc_port", "metrics_port"), ports, strict=True):
            if name not in data and cls.variable(name) not in data:
                data[name] = port
        return data

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("bind_host")
    @classmethod
    def _bindable(cls, value: str) -> str:
        return bindable_host(value)

    @field_validator("kafka_bootstrap_servers", check_fields=False)
    @classmethod
    def _brokers(cls, value: str | None) -> str | None:
        return None if value is None else broker_list(value)

    @field_validator("variant_plugins", mode="before")
    @classmethod
    def _plugins(cls, value: Any) -> Any:
        return _module_names(value) if isinstance(value, str) else value

    @field_validator(
        "rate_limit_player",
        "rate_limit_operator",
        "rate_limit_service",
        "rate_limit_unauthenticated",
        mode="before",
    )
    @classmethod
    def _bucket(cls, value: Any) -> Any:
        return parse_bucket(value) if isinstance(value, str) else value

    @property
    def rate_limits(self) -> dict[str, BucketSpec | None]:
        """Who (a role, or ``unauthenticated``) -> its token bucket (None: no limit)."""
        return {
            "player": self.rate_limit_player,
            "operator": self.rate_limit_operator,
            "service": self.rate_limit_service,
            "unauthenticated": self.rate_limit_unauthenticated,
        }


class KafkaServiceSettings(Settings):
    """A service that needs Kafka: ``KAFKA_BOOTSTRAP_SERVERS`` is required."""

    kafka_bootstrap_servers: str = setting(
        "KAFKA_BOOTSTRAP_SERVERS",
        meaning=f"Kafka brokers, `host:port[,host:port]` (local: `{LOCAL_KAFKA_BOOTSTRAP}`)",
        shown_default="required",
    )


class PostgresServiceSettings(KafkaServiceSettings):
    """A service that needs Kafka and PostgreSQL: ``DATABASE_URL`` is required too (the only
    settings class that has it)."""

    database_url: str = setting(
        "DATABASE_URL",
        meaning=f"PostgreSQL URL (local: `{LOCAL_DATABASE_URL}`)",
        shown_default="required",
        secret=True,
    )


def bindable_host(value: str) -> str:
    """``value`` if it is an IP address or a name this machine resolves (``localhost``, a pod's
    host name); else ValueError, so a typo fails at start, naming the variable, instead of as
    gRPC's bind error."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        try:
            socket.getaddrinfo(value, None)
        except (OSError, UnicodeError):
            raise ValueError(
                f"an IP address or a host name this machine resolves, got {value!r}"
            ) from None
    return value


def broker_list(value: str) -> str:
    """``value`` if it is ``host:port[,host:port...]`` with ports 1..65535 (whitespace around
    entries allowed); else ValueError (kafka-python would only time out, 30 s later)."""
    for entry in value.split(","):
        host, sep, port = entry.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(f"host:port[,host:port...] with ports 1..65535, got {value!r}")
    return value


def clock_speed_setting() -> Any:
    """The ``RUMMY_CLOCK_SPEED`` field, shared by the table and the clock (one definition)."""
    return setting(
        "RUMMY_CLOCK_SPEED",
        1.0,
        "deadlines (turns, seed windows, start delays) pass this many times faster; give the "
        "table and the clock the same value",
        unit="times real time",
        gt=0,
        allow_inf_nan=False,
    )


def jwt_secret_from_env() -> str:
    """``RUMMY_JWT_SECRET`` (for ``rummy token``); raises :class:`ConfigError` if it is unset
    or too short (or the previous secret is malformed)."""
    return SecretSettings.load().jwt_secret


def token_max_lifetimes_from_env() -> dict[str, int]:
    """Role name -> the longest token lifetime in seconds, from the
    ``RUMMY_<ROLE>_TOKEN_MAX_SECONDS`` variables (for ``rummy token``). Raises
    :class:`ConfigError` for a value that is not a positive integer."""
    return TokenLifetimeSettings.load().token_max_lifetime_seconds
