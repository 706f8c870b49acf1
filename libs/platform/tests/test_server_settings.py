"""Service settings come from the environment when asked, with the conventional defaults."""

from __future__ import annotations

import grpc
import pytest

from rummy_platform.config import (
    DEFAULT_RATE_LIMITS,
    DEFAULT_TOKEN_MAX_LIFETIME_SECONDS,
    BucketSpec,
    ConfigError,
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

SECRET = "settings-test-secret-0123456789abcdef"


def test_each_service_defaults_to_its_conventional_ports():
    expected = {"table": (50051, 9101), "dealer": (50052, 9102), "ledger": (50053, 9103),
                "fairness": (50054, 9104), "clock": (50055, 9105)}  # fmt: skip
    for service, ports in expected.items():
        settings = Settings.from_env(service, {"RUMMY_JWT_SECRET": SECRET})
        assert (settings.grpc_port, settings.metrics_port) == ports
        assert settings.bind_host == "127.0.0.1"


def test_environment_variables_override_the_defaults():
    settings = Settings.from_env(
        "table",
        {
            "RUMMY_JWT_SECRET": SECRET,
            "RUMMY_GRPC_PORT": "0",
            "RUMMY_METRICS_PORT": "19999",
            "RUMMY_LOG_LEVEL": "DEBUG",
            "RUMMY_SHUTDOWN_GRACE_SECONDS": "2.5",
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:19092",
            "DATABASE_URL": "postgresql://rummy:rummy@127.0.0.1:15432/rummy",
        },
    )
    assert (settings.grpc_port, settings.metrics_port) == (0, 19999)
    assert (settings.log_level, settings.shutdown_grace_seconds) == ("debug", 2.5)
    assert settings.kafka_bootstrap_servers == "127.0.0.1:19092"
    assert settings.database_url == "postgresql://rummy:rummy@127.0.0.1:15432/rummy"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "RUMMY_JWT_SECRET is not set"),
        ({"RUMMY_JWT_SECRET": "too-short"}, "at least 32"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_GRPC_PORT": "http"}, "RUMMY_GRPC_PORT"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_METRICS_PORT": "70000"}, "outside 0..65535"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_LOG_LEVEL": "loud"}, "RUMMY_LOG_LEVEL"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_SHUTDOWN_GRACE_SECONDS": "-1"}, "negative"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_SUPERVISOR_PID": "rummy"}, "RUMMY_SUPERVISOR_PID"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_SUPERVISOR_PID": "0"}, "not a process id"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_JWT_PREVIOUS_SECRET": "short"},
         "RUMMY_JWT_PREVIOUS_SECRET is 5 bytes"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_JWT_PREVIOUS_SECRET": SECRET}, "equals"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_PLAYER_TOKEN_MAX_SECONDS": "12h"},
         "RUMMY_PLAYER_TOKEN_MAX_SECONDS"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_SERVICE_TOKEN_MAX_SECONDS": "0"}, "at least 1"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_RATE_LIMIT_PLAYER": "20"}, "RUMMY_RATE_LIMIT_PLAYER"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_RATE_LIMIT_OPERATOR": "0,10"}, "rate must be posit"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_RATE_LIMIT_SERVICE": "nan,10"}, "rate must be posit"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_RATE_LIMIT_UNAUTHENTICATED": "5,0"}, "burst"),
        ({"RUMMY_JWT_SECRET": SECRET, "RUMMY_RATE_LIMIT_PLAYER": "fast,x"}, "'<calls per"),
    ],
)  # fmt: skip
def test_a_missing_or_malformed_variable_is_named_in_the_error(env, message):
    with pytest.raises(ConfigError, match=message):
        Settings.from_env("table", env)


def test_a_supervisor_pid_is_read_only_when_set():
    assert Settings.from_env("table", {"RUMMY_JWT_SECRET": SECRET}).supervisor_pid is None
    supervised = Settings.from_env(
        "table", {"RUMMY_JWT_SECRET": SECRET, "RUMMY_SUPERVISOR_PID": " 4321 "}
    )
    assert supervised.supervisor_pid == 4321


def test_token_lifetimes_rate_limits_and_the_previous_secret_have_defaults():
    settings = Settings.from_env("table", {"RUMMY_JWT_SECRET": SECRET})
    assert settings.jwt_previous_secret is None
    assert settings.token_max_lifetime_seconds == DEFAULT_TOKEN_MAX_LIFETIME_SECONDS
    assert settings.token_max_lifetime_seconds == {"player": 43200, "operator": 86400,
                                                   "service": 3600}  # fmt: skip
    assert settings.rate_limits == DEFAULT_RATE_LIMITS


def test_token_lifetimes_rate_limits_and_the_previous_secret_are_read_from_the_environment():
    previous = "previous-secret-0123456789abcdefghij"
    settings = Settings.from_env(
        "table",
        {
            "RUMMY_JWT_SECRET": SECRET,
            "RUMMY_JWT_PREVIOUS_SECRET": previous,
            "RUMMY_PLAYER_TOKEN_MAX_SECONDS": "7200",
            "RUMMY_RATE_LIMIT_PLAYER": " 2.5,8 ",
            "RUMMY_RATE_LIMIT_UNAUTHENTICATED": "OFF",
        },
    )
    assert settings.jwt_previous_secret == previous
    assert settings.token_max_lifetime_seconds["player"] == 7200
    assert settings.token_max_lifetime_seconds["operator"] == 86400
    assert settings.rate_limits["player"] == BucketSpec(2.5, 8)
    assert settings.rate_limits["unauthenticated"] is None
    assert settings.rate_limits["operator"] == DEFAULT_RATE_LIMITS["operator"]


def test_a_service_without_default_ports_must_set_them():
    with pytest.raises(ConfigError, match="RUMMY_GRPC_PORT is not set"):
        Settings.from_env("probe", {"RUMMY_JWT_SECRET": SECRET})


def test_each_service_error_maps_to_its_status_and_subclasses_inherit_it():
    class NotYourTurn(FailedPrecondition):
        pass

    assert status_for(InvalidArgument("bad card")) is grpc.StatusCode.INVALID_ARGUMENT
    assert status_for(NotFound("no table")) is grpc.StatusCode.NOT_FOUND
    assert status_for(Conflict("stale version")) is grpc.StatusCode.ABORTED
    assert status_for(NotYourTurn("seat 2 is to play")) is grpc.StatusCode.FAILED_PRECONDITION
    assert status_for(ServiceError("unclassified")) is grpc.StatusCode.INTERNAL
