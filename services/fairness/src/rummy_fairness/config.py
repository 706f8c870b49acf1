"""The fairness service's settings: the platform's (``rummy_platform.config.Settings``) with
Kafka and PostgreSQL required, read once by ``rummy_fairness.bootstrap.main``."""

from __future__ import annotations

from typing import ClassVar

from rummy_platform.config import PostgresServiceSettings


class FairnessSettings(PostgresServiceSettings):
    """Everything the fairness service reads from its environment (README.md, Configuration)."""

    service: ClassVar[str] = "fairness"
