"""The fairness service's settings: the platform's (``rummy_platform.config.Settings``) with
Kafka and PostgreSQL required, read once by ``rummy_fairness.bootstrap.main``."""

from __future__ import annotations

from typing import ClassVar

from rummy_platform.config import PostgresServiceSettings, setting


class FairnessSettings(PostgresServiceSettings):
    """Everything the fairness service reads from its environment (docs/configuration.md)."""

    service: ClassVar[str] = "fairness"

    seed_key: str | None = setting(
        "RUMMY_FAIRNESS_SEED_KEY",
        None,
        "TEST ONLY, never with real money: when set, each hand's server seed is "
        "HMAC-SHA256(this key, the hand id) instead of 32 fresh bytes of the OS CSPRNG, so "
        "whoever holds the key knows every deal in advance (for the end-to-end tests that plan "
        "a deal and a deterministic simulator); the service logs a warning at start while it "
        "is set",
        shown_default="unset (fresh random seeds)",
        secret=True,
    )
