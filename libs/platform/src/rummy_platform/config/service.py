"""What every service process reads (:class:`Settings`, composed of the other families), and
the services that need Kafka, or Kafka and PostgreSQL."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import field_validator, model_validator
from pydantic_settings import NoDecode

from rummy_platform.config.base import setting
from rummy_platform.config.kafka_security import KafkaSecuritySettings
from rummy_platform.config.network import bindable_host, broker_list, port_setting
from rummy_platform.config.process import (
    FAULT_POINT_VARIABLE,
    PLUGINS_VARIABLE,
    SUPERVISOR_PID_VARIABLE,
    TOPIC_PREFIX_VARIABLE,
    module_names,
)
from rummy_platform.config.rate_limits import Bucket, BucketSpec, parse_bucket, rate_limit_setting
from rummy_platform.config.tls import TlsSettings
from rummy_platform.config.token_keys import TokenKeySettings
from rummy_platform.config.token_lifetimes import TokenLifetimeSettings
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


class Settings(TokenLifetimeSettings, TokenKeySettings, TlsSettings, KafkaSecuritySettings):
    """What every service process reads: its ports, Kafka and how it authenticates there, logs,
    the gRPC pool, the token public keys and lifetimes, the gRPC TLS files, the rate limits, the
    topic prefix, the variant plug-ins and the supervisor's pid. Each service extends it in
    ``rummy_<service>/config.py`` (setting :attr:`service`); the ports default to
    :data:`DEFAULT_PORTS` of that service (a process not there must set both).

    Ports are TCP ports (0 asks the OS for a free one); ``shutdown_grace_seconds`` is seconds.
    """

    service: ClassVar[str] = ""

    grpc_port: int = port_setting("RUMMY_GRPC_PORT", 0, "the service's gRPC port")
    metrics_port: int = port_setting(
        "RUMMY_METRICS_PORT", 1, "the service's Prometheus `/metrics` port"
    )
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
        "service of a deployment the same list "
        "(see [Variant plug-ins](development.md#variant-plug-ins))",
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
    rate_limit_player: Bucket = rate_limit_setting(
        "player", "the token bucket of each player account"
    )
    rate_limit_operator: Bucket = rate_limit_setting(
        "operator", "the token bucket of each operator"
    )
    rate_limit_service: Bucket = rate_limit_setting(
        "service", "the token bucket of each service account"
    )
    rate_limit_unauthenticated: Bucket = rate_limit_setting(
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
        return module_names(value) if isinstance(value, str) else value

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
        meaning=f"PostgreSQL URL (local: `{LOCAL_DATABASE_URL}`); with "
        "`RUMMY_DATABASE_OWNER_URL` set, the service's runtime role, which may only read and "
        "write its schema's tables",
        shown_default="required",
        secret=True,
    )
    database_owner_url: str | None = setting(
        "RUMMY_DATABASE_OWNER_URL",
        None,
        "PostgreSQL URL of the role owning the service's schema: the migrations run as it at "
        "start, then `DATABASE_URL`'s role is granted what it needs; unset: `DATABASE_URL`'s "
        "role does both (the one-role mode). A password goes in a pgpass file "
        "(`?passfile=PATH`), not the URL",
        secret=True,
    )
