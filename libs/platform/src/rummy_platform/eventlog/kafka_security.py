"""How a client of the event log authenticates to the brokers (issue 32): plaintext, or TLS with
SASL/SCRAM under one principal per service.

:class:`KafkaSecurity` is what a process gives its clients: the security protocol, the SASL
mechanism, the principal's user name and password, and the PEM file of the CA the brokers'
certificate is checked against. :func:`use_kafka_security` sets it once for every client the
process makes (a service's bootstrap does, from its settings:
:attr:`rummy_platform.config.KafkaSecuritySettings.kafka_security`); a client given one
explicitly (``security=``) uses that instead (tests acting as several principals, tools).

Passwords live in files (:func:`ensure_password_file` makes one, mode 0600, on first use) and
are read when the settings are; they are never logged, and the dataclass does not show them.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

#: The security protocols a client may use: ``PLAINTEXT`` (no TLS, no authentication: the
#: default, a local broker only) or ``SASL_SSL`` (TLS, then SASL).
SecurityProtocol = Literal["PLAINTEXT", "SASL_SSL"]
#: The SASL mechanisms of SASL_SSL (the local broker and the Strimzi manifests enable 512).
SaslMechanism = Literal["SCRAM-SHA-512", "SCRAM-SHA-256"]
#: The random bytes of a generated password (URL-safe base64: ``A-Za-z0-9-_``, no quoting).
PASSWORD_BYTES = 24


@dataclass(frozen=True)
class KafkaSecurity:
    """How a client connects: ``protocol`` PLAINTEXT (nothing else is used) or SASL_SSL with
    ``mechanism``, ``username`` and ``password`` (the principal ``User:<username>``), checking
    the brokers' certificate against the PEM file ``ca_file`` (None: the system's CAs).

    Raises ValueError when SASL_SSL lacks a user name or a password."""

    protocol: SecurityProtocol = "PLAINTEXT"
    mechanism: SaslMechanism = "SCRAM-SHA-512"
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: Path | None = None

    def __post_init__(self) -> None:
        if self.protocol == "SASL_SSL" and (not self.username or not self.password):
            raise ValueError("Kafka SASL_SSL needs a user name and a password")

    @property
    def principal(self) -> str | None:
        """The principal the brokers see (``User:<username>``), None in plaintext."""
        return f"User:{self.username}" if self.protocol == "SASL_SSL" else None

    def client_config(self) -> dict[str, Any]:
        """kafka-python's settings for it (``security_protocol``, ``sasl_*``, ``ssl_cafile``);
        ``{}`` in plaintext, so a plaintext client is configured as before."""
        if self.protocol == "PLAINTEXT":
            return {}
        config: dict[str, Any] = {
            "security_protocol": self.protocol,
            "sasl_mechanism": self.mechanism,
            "sasl_plain_username": self.username,
            "sasl_plain_password": self.password,
        }
        if self.ca_file is not None:
            config["ssl_cafile"] = str(self.ca_file)
        return config


PLAINTEXT = KafkaSecurity()

_process_security: list[KafkaSecurity] = [PLAINTEXT]


def use_kafka_security(security: KafkaSecurity) -> None:
    """Make ``security`` how every Kafka client this process makes from now on connects,
    unless given its own (a service's bootstrap calls it once, before any client exists)."""
    _process_security[0] = security


def process_security() -> KafkaSecurity:
    """What :func:`use_kafka_security` set (:data:`PLAINTEXT` until then)."""
    return _process_security[0]


def security_config(security: KafkaSecurity | None) -> dict[str, Any]:
    """kafka-python's security settings of a client given ``security`` (None: the process's)."""
    return (security if security is not None else process_security()).client_config()


def read_password(path: Path) -> str:
    """The password in the file ``path`` (its first line, without the line end). Raises
    ValueError when the file is empty, OSError when it cannot be read."""
    password = path.read_text(encoding="utf-8").split("\n", 1)[0].strip()
    if not password:
        raise ValueError(f"password file {str(path)!r} is empty")
    return password


def ensure_password_file(path: Path) -> str:
    """The password in ``path``; when the file does not exist, a new random one written there
    first (mode 0600 from the start, the directory 0700 when made). Raises OSError."""
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        password = secrets.token_urlsafe(PASSWORD_BYTES)
        temporary = path.with_name(f".{path.name}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(password + "\n")
        temporary.replace(path)
    return read_password(path)


#: The variables that point a service at its Kafka principal (:meth:`KafkaCredentials.environment`).
KAFKA_SECURITY_VARIABLES = (
    "RUMMY_KAFKA_SECURITY_PROTOCOL",
    "RUMMY_KAFKA_SASL_MECHANISM",
    "RUMMY_KAFKA_USERNAME",
    "RUMMY_KAFKA_PASSWORD_FILE",
    "RUMMY_KAFKA_CA_FILE",
)


@dataclass(frozen=True)
class KafkaCredentials:
    """A secured broker's SCRAM passwords, one file per user (``<directory>/<user>.password``,
    as ``deploy/local/kafka.sh`` writes them), and the PEM file of the CA of its certificate."""

    directory: Path
    ca_file: Path

    def password_file(self, user: str) -> Path:
        """The file of ``user``'s password."""
        return self.directory / f"{user}.password"

    def security(self, user: str, password: str | None = None) -> KafkaSecurity:
        """How a client connects as ``User:<user>`` over SASL_SSL (``password``: another than
        the one in its file). Raises OSError/ValueError when the file cannot be read."""
        return KafkaSecurity(
            "SASL_SSL",
            username=user,
            password=password or read_password(self.password_file(user)),
            ca_file=self.ca_file,
        )

    def environment(self, user: str) -> dict[str, str]:
        """The variables of a service connecting as ``User:<user>`` (every one of
        :data:`KAFKA_SECURITY_VARIABLES`)."""
        return {
            "RUMMY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "RUMMY_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "RUMMY_KAFKA_USERNAME": user,
            "RUMMY_KAFKA_PASSWORD_FILE": str(self.password_file(user)),
            "RUMMY_KAFKA_CA_FILE": str(self.ca_file),
        }
