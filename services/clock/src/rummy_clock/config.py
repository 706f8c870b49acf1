"""The clock service's settings: the platform's (``rummy_platform.config.Settings``, Kafka
required) and the clock's own, read once by ``rummy_clock.bootstrap.main``."""

from __future__ import annotations

from typing import ClassVar

from rummy_platform.config import KafkaServiceSettings, clock_speed_setting, setting


class ClockSettings(KafkaServiceSettings):
    """Everything the clock service reads from its environment (see docs/configuration.md)."""

    service: ClassVar[str] = "clock"

    clock_speed: float = clock_speed_setting()
    transactional_id: str = setting(
        "RUMMY_CLOCK_TRANSACTIONAL_ID",
        "clock",
        "the clock's transactional id (after the topic prefix): stable across restarts, one "
        "per running instance",
    )
