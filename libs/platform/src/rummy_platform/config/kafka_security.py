"""The Kafka security settings (issue 32): plaintext, or TLS with SASL/SCRAM as the service's own
principal (the user name, a password file, the CA the brokers' certificate is checked against)."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import model_validator

from rummy_platform.config.base import EnvSettings, setting
from rummy_platform.eventlog.kafka_security import (
    KafkaSecurity,
    SaslMechanism,
    SecurityProtocol,
    read_password,
)


class KafkaSecuritySettings(EnvSettings):
    """How the process's Kafka clients connect: ``PLAINTEXT`` (the default), or ``SASL_SSL``
    as ``User:<kafka_username>`` (default: the service's name) with the password in
    ``kafka_password_file``, checking the brokers against ``kafka_ca_file`` (PEM). A secured
    local broker (``RUMMY_KAFKA_SECURE=1 deploy/local/kafka.sh start``) writes each principal's
    password to ``.local/kafka/credentials/<user>.password``; see docs/operations.md."""

    kafka_security_protocol: SecurityProtocol = setting(
        "RUMMY_KAFKA_SECURITY_PROTOCOL",
        "PLAINTEXT",
        "`PLAINTEXT` (no TLS, no authentication: a local broker) or `SASL_SSL` (TLS, then "
        "SASL/SCRAM as the service's own principal)",
    )
    kafka_sasl_mechanism: SaslMechanism = setting(
        "RUMMY_KAFKA_SASL_MECHANISM",
        "SCRAM-SHA-512",
        "the SASL mechanism of `SASL_SSL`: `SCRAM-SHA-512` or `SCRAM-SHA-256`",
    )
    kafka_username: str | None = setting(
        "RUMMY_KAFKA_USERNAME",
        None,
        "the SCRAM user (principal `User:<name>`) of `SASL_SSL`",
        shown_default="the service's name",
    )
    kafka_password_file: Path | None = setting(
        "RUMMY_KAFKA_PASSWORD_FILE",
        None,
        "file holding the SCRAM user's password (its first line; a file, never the password "
        "itself); required with `SASL_SSL`",
    )
    kafka_ca_file: Path | None = setting(
        "RUMMY_KAFKA_CA_FILE",
        None,
        "PEM file of the CA that signed the brokers' certificate (`SASL_SSL`; unset: the "
        "system's CAs; the local broker's is `.local/certs/ca.pem`)",
    )

    @property
    def kafka_security(self) -> KafkaSecurity:
        """The clients' :class:`~rummy_platform.eventlog.KafkaSecurity` (the password read from
        its file now). Raises OSError/ValueError when the file became unreadable or empty."""
        if self.kafka_security_protocol == "PLAINTEXT":
            return KafkaSecurity()
        assert self.kafka_password_file is not None  # checked when loaded
        return KafkaSecurity(
            protocol=self.kafka_security_protocol,
            mechanism=self.kafka_sasl_mechanism,
            username=self.kafka_username or self.service,
            password=read_password(self.kafka_password_file),
            ca_file=self.kafka_ca_file,
        )

    @model_validator(mode="after")
    def _credentials_readable(self) -> Self:
        if self.kafka_security_protocol == "PLAINTEXT":
            return self
        if self.kafka_password_file is None:
            raise ValueError(
                "RUMMY_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs RUMMY_KAFKA_PASSWORD_FILE (the "
                "file of the SCRAM user's password)"
            )
        try:
            read_password(self.kafka_password_file)
        except (OSError, ValueError) as error:
            raise ValueError(
                f"RUMMY_KAFKA_PASSWORD_FILE {str(self.kafka_password_file)!r} unusable: {error}"
            ) from None
        if self.kafka_ca_file is not None and not self.kafka_ca_file.is_file():
            raise ValueError(f"RUMMY_KAFKA_CA_FILE {str(self.kafka_ca_file)!r} does not exist")
        return self
