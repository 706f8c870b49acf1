"""The dealer's settings: the platform's (``rummy_platform.config.Settings``, Kafka required)
and the dealer's own, read once by ``rummy_dealer.bootstrap.main``."""

from __future__ import annotations

from typing import ClassVar

from rummy_platform.config import KafkaServiceSettings, ServiceTokenSigningSettings, setting
from rummy_platform.ports import DEFAULT_PORTS


class DealerSettings(KafkaServiceSettings, ServiceTokenSigningSettings):
    """Everything the dealer reads from its environment (see docs/configuration.md)."""

    service: ClassVar[str] = "dealer"

    fairness_address: str = setting(
        "RUMMY_FAIRNESS_ADDRESS",
        f"127.0.0.1:{DEFAULT_PORTS['fairness'][0]}",
        "the fairness service's `host:port` (the dealer asks it for each hand's seed)",
    )
    transactional_id: str = setting(
        "RUMMY_DEALER_TRANSACTIONAL_ID",
        "dealer",
        "the dealer's transactional id (after the topic prefix): one per running instance",
    )
