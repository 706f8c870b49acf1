"""The ledger's settings: the platform's (``rummy_platform.config.Settings``) with Kafka and
PostgreSQL required, and the ledger's grant limits, read once by ``rummy_ledger.bootstrap.main``."""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import model_validator

from rummy_ledger.domain.accounts import GrantLimits
from rummy_platform.config import PostgresServiceSettings, setting
from rummy_rules.rules import INT64_MAX

_DEFAULTS = GrantLimits()


class LedgerSettings(PostgresServiceSettings):
    """Everything the ledger reads from its environment (see docs/configuration.md)."""

    service: ClassVar[str] = "ledger"

    max_grant_hundredths: int = setting(
        "RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS",
        _DEFAULTS.max_grant_hundredths,
        "the most one `Grant` may credit (10,000,000,000 = 100 million House Tokens)",
        unit="hundredths of a House Token",
        ge=1,
        le=INT64_MAX,
    )
    max_balance_hundredths: int = setting(
        "RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS",
        _DEFAULTS.max_balance_hundredths,
        "the most a balance may reach through grants (1,000,000,000,000 = 10 billion House "
        "Tokens); at least the grant limit",
        unit="hundredths of a House Token",
        ge=1,
        le=INT64_MAX,
    )

    @model_validator(mode="after")
    def _limits_consistent(self) -> Self:
        try:
            self.grant_limits  # noqa: B018 (GrantLimits checks its bounds)
        except ValueError as error:
            raise ValueError(
                f"RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS / RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS: {error}"
            ) from None
        return self

    @property
    def grant_limits(self) -> GrantLimits:
        """The grant limits these settings give."""
        return GrantLimits(self.max_grant_hundredths, self.max_balance_hundredths)
