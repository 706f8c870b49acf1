"""Service settings come from the environment when asked, with the conventional defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import grpc
import pytest

from rummy_platform.config import (
    DEFAULT_RATE_LIMITS,
    DEFAULT_TOKEN_MAX_LIFETIME_SECONDS,
    BucketSpec,
    ConfigError,
    KafkaServiceSettings,
    PostgresServiceSettings,
    Settings,
)
from rummy_platform.errors import (
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServiceError,
    status_for,
)
from rummy_platform.ports import DEFAULT_PORTS
from rummy_testing.settings_env import use_settings_environment
from rummy_testing.token_keys import suite_key_files, token_environment


def settings_of(service: str, base: type[Settings] = Settings) -> type[Settings]:
    """A settings class of ``service`` (its default ports are DEFAULT_PORTS')."""
    return type(f"{service.title()}Settings", (base,), {"service": service})


class TableLike(Settings):
    service: ClassVar[str] = "table"


@pytest.fixture
def from_env(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Settings]:
    """``from_env(env, cls=TableLike)``: ``cls`` loaded with exactly ``env`` as its variables."""

    def load(env: dict[str, str], cls: type[Settings] = TableLike) -> Settings:
        use_settings_environment(monkeypatch, env)
        return cls.load()

    return load


def test_each_service_defaults_to_its_conventional_ports(from_env: Callable[..., Settings]) -> None:
    expected = {"table": (15051, 15101), "dealer": (15052, 15102), "ledger": (15053, 15103),
                "fairness": (15054, 15104), "clock": (15055, 15105)}  # fmt: skip
    assert dict(DEFAULT_PORTS) == expected
    for service, ports in expected.items():
        settings = from_env(token_environment(), settings_of(service))
        assert (settings.grpc_port, settings.metrics_port) == ports
        assert settings.bind_host == "127.0.0.1"


def test_environment_variables_override_the_defaults(from_env: Callable[..., Settings]) -> None:
    settings = from_env(
        {
            **token_environment(),
            "RUMMY_GRPC_PORT": "0",
            "RUMMY_METRICS_PORT": "19999",
            "RUMMY_LOG_LEVEL": "DEBUG",
            "RUMMY_SHUTDOWN_GRACE_SECONDS": "2.5",
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:19092",
        },
    )
    assert (settings.grpc_port, settings.metrics_port) == (0, 19999)
    assert (settings.log_level, settings.shutdown_grace_seconds) == ("debug", 2.5)
    assert settings.kafka_bootstrap_servers == "127.0.0.1:19092"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "^RUMMY_TOKEN_PUBLIC_KEYS_FILE is not set"),
        ({"RUMMY_TOKEN_PUBLIC_KEYS_FILE": "/nonexistent.pem"}, "cannot read /nonexistent.pem"),
        ({**token_environment(), "RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE": __file__},
         "RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE: .* holds no PEM public key"),
        ({**token_environment(), "RUMMY_GRPC_PORT": "http"}, "RUMMY_GRPC_PORT"),
        ({**token_environment(), "RUMMY_METRICS_PORT": "70000"},
         "RUMMY_METRICS_PORT='70000': .*less than or equal to 65535"),
        ({**token_environment(), "RUMMY_LOG_LEVEL": "loud"}, "RUMMY_LOG_LEVEL"),
        ({**token_environment(), "RUMMY_SHUTDOWN_GRACE_SECONDS": "-1"},
         "RUMMY_SHUTDOWN_GRACE_SECONDS='-1': .*greater than or equal to 0"),
        ({**token_environment(), "RUMMY_SUPERVISOR_PID": "rummy"}, "RUMMY_SUPERVISOR_PID"),
        ({**token_environment(), "RUMMY_SUPERVISOR_PID": "0"},
         "RUMMY_SUPERVISOR_PID='0': .*greater than or equal to 1"),
        ({**token_environment(), "RUMMY_PLAYER_TOKEN_MAX_SECONDS": "12h"},
         "RUMMY_PLAYER_TOKEN_MAX_SECONDS"),
        ({**token_environment(), "RUMMY_SERVICE_TOKEN_MAX_SECONDS": "0"},
         "RUMMY_SERVICE_TOKEN_MAX_SECONDS='0': .*greater than or equal to 1"),
        ({**token_environment(), "RUMMY_RATE_LIMIT_PLAYER": "20"}, "RUMMY_RATE_LIMIT_PLAYER"),
        ({**token_environment(), "RUMMY_RATE_LIMIT_OPERATOR": "0,10"}, "rate must be posit"),
        ({**token_environment(), "RUMMY_RATE_LIMIT_SERVICE": "nan,10"}, "rate must be posit"),
        ({**token_environment(), "RUMMY_RATE_LIMIT_UNAUTHENTICATED": "5,0"}, "burst"),
        ({**token_environment(), "RUMMY_RATE_LIMIT_PLAYER": "fast,x"}, "'<calls per"),
        ({**token_environment(), "RUMMY_BIND_HOST": "not.an.ip"},
         "RUMMY_BIND_HOST='not.an.ip': .*an IP address or a host name this machine resolves"),
        ({**token_environment(), "KAFKA_BOOTSTRAP_SERVERS": "nonsense"},
         "KAFKA_BOOTSTRAP_SERVERS='nonsense': .*host:port"),
        ({**token_environment(), "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:19092,b:99999"},
         "KAFKA_BOOTSTRAP_SERVERS=.*ports 1..65535"),
    ],
)  # fmt: skip
def test_a_missing_or_malformed_variable_is_named_in_the_error(
    from_env: Callable[..., Settings], env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        from_env(env)


def test_ip_addresses_resolvable_names_and_broker_lists_are_accepted(
    from_env: Callable[..., Settings],
) -> None:
    settings = from_env(
        {
            **token_environment(),
            "RUMMY_BIND_HOST": "localhost",
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:19092, broker-2.example:9092",
        }
    )
    assert settings.bind_host == "localhost"
    assert settings.kafka_bootstrap_servers == "127.0.0.1:19092, broker-2.example:9092"
    assert from_env({**token_environment(), "RUMMY_BIND_HOST": "::"}).bind_host == "::"


def test_a_bad_value_is_named_with_its_variable(from_env: Callable[..., Settings]) -> None:
    with pytest.raises(ConfigError) as refused:
        from_env(
            {**token_environment(), "RUMMY_GRPC_PORT": "x"},
            settings_of("ledger", PostgresServiceSettings),
        )
    assert "RUMMY_GRPC_PORT='x'" in str(refused.value)
    assert "DATABASE_URL and KAFKA_BOOTSTRAP_SERVERS must be set" in str(refused.value)


def test_every_problem_is_named_at_once_the_missing_variables_first(
    from_env: Callable[..., Settings],
) -> None:
    env = {**token_environment(), "RUMMY_LOG_LEVEL": "loud", "RUMMY_GRPC_PORT": "-1",
           "DATABASE_URL": "postgresql://x"}  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        from_env(env, settings_of("fairness", PostgresServiceSettings))
    message = str(refused.value)
    assert message.startswith("KAFKA_BOOTSTRAP_SERVERS must be set; ")
    assert "RUMMY_LOG_LEVEL='loud'" in message and "RUMMY_GRPC_PORT='-1'" in message


def test_a_service_that_needs_kafka_or_postgresql_cannot_start_without_them(
    from_env: Callable[..., Settings],
) -> None:
    with pytest.raises(ConfigError, match="^KAFKA_BOOTSTRAP_SERVERS must be set$"):
        from_env(token_environment(), settings_of("clock", KafkaServiceSettings))
    settings = from_env(
        {**token_environment(), "KAFKA_BOOTSTRAP_SERVERS": "k:1", "DATABASE_URL": "pg://x"},
        settings_of("ledger", PostgresServiceSettings),
    )
    assert isinstance(settings, PostgresServiceSettings)
    assert (settings.kafka_bootstrap_servers, settings.database_url) == ("k:1", "pg://x")


def test_empty_variables_count_as_unset(from_env: Callable[..., Settings]) -> None:
    settings = from_env({**token_environment(), "RUMMY_GRPC_PORT": "", "RUMMY_LOG_LEVEL": ""})
    assert (settings.grpc_port, settings.log_level) == (15051, "info")


def test_the_topic_prefix_plug_ins_and_fault_point_are_settings_too(
    from_env: Callable[..., Settings],
) -> None:
    settings = from_env(
        {**token_environment(), "RUMMY_TOPIC_PREFIX": "t1-",
         "RUMMY_VARIANT_PLUGINS": " toy_variant.plugin, acme.gin ,,toy_variant.plugin",
         "RUMMY_FAULT_POINT": "outbox-before-append"}
    )  # fmt: skip
    assert settings.topic_prefix == "t1-"
    assert settings.variant_plugins == ("toy_variant.plugin", "acme.gin")
    assert settings.fault_point == "outbox-before-append"
    with pytest.raises(ConfigError, match="RUMMY_VARIANT_PLUGINS: 'acme gin' is not an importable"):
        from_env({**token_environment(), "RUMMY_VARIANT_PLUGINS": "acme gin"})


def test_keyword_arguments_win_over_the_environment(
    from_env: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    use_settings_environment(monkeypatch, {**token_environment(), "RUMMY_GRPC_PORT": "7"})
    assert TableLike.load(grpc_port=0).grpc_port == 0
    assert TableLike(grpc_port=0).token_public_keys_file == suite_key_files().issuer_public_keys


def test_settings_are_frozen(from_env: Callable[..., Settings]) -> None:
    settings = from_env(token_environment())
    with pytest.raises(ValueError, match="frozen"):
        settings.grpc_port = 1


def test_a_supervisor_pid_is_read_only_when_set(from_env: Callable[..., Settings]) -> None:
    assert from_env(token_environment()).supervisor_pid is None
    supervised = from_env({**token_environment(), "RUMMY_SUPERVISOR_PID": " 4321 "})
    assert supervised.supervisor_pid == 4321


def test_token_lifetimes_rate_limits_and_the_service_keys_have_defaults(
    from_env: Callable[..., Settings],
) -> None:
    public = {"RUMMY_TOKEN_PUBLIC_KEYS_FILE": str(suite_key_files().issuer_public_keys)}
    settings = from_env(public)
    assert settings.service_token_public_keys_file is None
    assert settings.token_max_lifetime_seconds == DEFAULT_TOKEN_MAX_LIFETIME_SECONDS
    assert settings.token_max_lifetime_seconds == {"player": 43200, "operator": 86400,
                                                   "service": 3600}  # fmt: skip
    assert settings.rate_limits == DEFAULT_RATE_LIMITS


def test_token_lifetimes_rate_limits_and_the_service_keys_are_read_from_the_environment(
    from_env: Callable[..., Settings],
) -> None:
    settings = from_env(
        {
            **token_environment(),
            "RUMMY_PLAYER_TOKEN_MAX_SECONDS": "7200",
            "RUMMY_RATE_LIMIT_PLAYER": " 2.5,8 ",
            "RUMMY_RATE_LIMIT_UNAUTHENTICATED": "OFF",
        },
    )
    assert settings.service_token_public_keys_file == suite_key_files().service_public_keys
    assert settings.token_max_lifetime_seconds["player"] == 7200
    assert settings.token_max_lifetime_seconds["operator"] == 86400
    assert settings.rate_limits["player"] == BucketSpec(2.5, 8)
    assert settings.rate_limits["unauthenticated"] is None
    assert settings.rate_limits["operator"] == DEFAULT_RATE_LIMITS["operator"]


def test_a_service_without_default_ports_must_set_them(from_env: Callable[..., Settings]) -> None:
    with pytest.raises(ConfigError, match="^RUMMY_GRPC_PORT and RUMMY_METRICS_PORT must be set$"):
        from_env(token_environment(), settings_of("probe"))


def test_each_service_error_maps_to_its_status_and_subclasses_inherit_it() -> None:
    class NotYourTurn(FailedPrecondition):
        pass

    assert status_for(InvalidArgument("bad card")) is grpc.StatusCode.INVALID_ARGUMENT
    assert status_for(NotFound("no table")) is grpc.StatusCode.NOT_FOUND
    assert status_for(Conflict("stale version")) is grpc.StatusCode.ABORTED
    assert status_for(NotYourTurn("seat 2 is to play")) is grpc.StatusCode.FAILED_PRECONDITION
    assert status_for(ServiceError("unclassified")) is grpc.StatusCode.INTERNAL
