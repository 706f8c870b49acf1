"""Typed settings of a process, read from its environment once, when it starts (pydantic-settings).

A service's ``main`` calls :meth:`EnvSettings.load_or_exit` on its own settings class (the
platform's :class:`Settings` plus the service's fields, in ``rummy_<service>/config.py``) and
passes the result down; nothing else reads the environment (``tests/test_settings_sources.py``
checks the tree). Constructing a settings class from keyword arguments (``Settings(
token_public_keys_file=..., grpc_port=0, metrics_port=0)``, as in-process tests do) reads
the environment too, for every field not given: that is pydantic-settings' own behaviour,
kept so a test's brokers reach it.

Each field names its variable (``validation_alias``), its unit and its meaning: the table of
variables in docs/configuration.md is generated from them (``deploy/settings_table.py``; a test
fails when the two differ). A bad value ends the start with status 2 and one line naming the
variable, what it holds and what it expects (:meth:`EnvSettings.load_or_exit`), before any port is
bound; so does a service's port that another process holds (:meth:`Settings.load_or_exit`). The
default ports are :mod:`rummy_platform.ports`' table. Empty variables count as unset. Secrets are
never printed.

One module per family of settings, all importable from here:

- :mod:`~rummy_platform.config.base`: :class:`EnvSettings`, :func:`setting`, :class:`ConfigError`;
- :mod:`~rummy_platform.config.token_keys`: the files of the token keys;
- :mod:`~rummy_platform.config.token_lifetimes`: each role's longest token lifetime;
- :mod:`~rummy_platform.config.rate_limits`: each kind of caller's token bucket;
- :mod:`~rummy_platform.config.tls`: gRPC TLS (the CA, the process's certificate, insecure);
- :mod:`~rummy_platform.config.kafka_security`: Kafka's TLS and SASL/SCRAM (protocol, user,
  password file, CA);
- :mod:`~rummy_platform.config.network`: ports, the bind address, the brokers' list;
- :mod:`~rummy_platform.config.process`: log level, topic prefix, plug-ins, supervisor, faults;
- :mod:`~rummy_platform.config.clock`: the deadlines' clock speed;
- :mod:`~rummy_platform.config.service`: :class:`Settings` (all of them) and the Kafka and
  PostgreSQL services' settings.
"""

from __future__ import annotations

from rummy_platform.config.base import ConfigError, EnvSettings, setting
from rummy_platform.config.clock import clock_speed_setting
from rummy_platform.config.kafka_security import KafkaSecuritySettings
from rummy_platform.config.network import bindable_host, broker_list
from rummy_platform.config.process import (
    FAULT_POINT_VARIABLE,
    LOG_LEVELS,
    PLUGINS_VARIABLE,
    SUPERVISOR_PID_VARIABLE,
    TOPIC_PREFIX_VARIABLE,
)
from rummy_platform.config.rate_limits import (
    DEFAULT_RATE_LIMITS,
    RATE_LIMITED,
    BucketSpec,
    parse_bucket,
    rate_limit_variable,
)
from rummy_platform.config.service import (
    KafkaServiceSettings,
    PostgresServiceSettings,
    Settings,
)
from rummy_platform.config.tls import TlsSettings
from rummy_platform.config.token_keys import (
    PUBLIC_KEYS_VARIABLE,
    SERVICE_KEY_VARIABLE,
    SERVICE_PUBLIC_KEYS_VARIABLE,
    SIGNING_KEY_VARIABLE,
    ServiceTokenSigningSettings,
    TokenKeySettings,
)
from rummy_platform.config.token_lifetimes import (
    DEFAULT_TOKEN_MAX_LIFETIME_SECONDS,
    ROLES,
    TokenLifetimeSettings,
    token_max_lifetime_variable,
    token_max_lifetimes_from_env,
)

__all__ = [
    "DEFAULT_RATE_LIMITS",
    "DEFAULT_TOKEN_MAX_LIFETIME_SECONDS",
    "FAULT_POINT_VARIABLE",
    "LOG_LEVELS",
    "PUBLIC_KEYS_VARIABLE",
    "SERVICE_KEY_VARIABLE",
    "SERVICE_PUBLIC_KEYS_VARIABLE",
    "SIGNING_KEY_VARIABLE",
    "PLUGINS_VARIABLE",
    "RATE_LIMITED",
    "ROLES",
    "SUPERVISOR_PID_VARIABLE",
    "TOPIC_PREFIX_VARIABLE",
    "BucketSpec",
    "ConfigError",
    "EnvSettings",
    "KafkaSecuritySettings",
    "KafkaServiceSettings",
    "PostgresServiceSettings",
    "ServiceTokenSigningSettings",
    "Settings",
    "TokenKeySettings",
    "TlsSettings",
    "TokenLifetimeSettings",
    "bindable_host",
    "broker_list",
    "clock_speed_setting",
    "parse_bucket",
    "rate_limit_variable",
    "setting",
    "token_max_lifetime_variable",
    "token_max_lifetimes_from_env",
]
