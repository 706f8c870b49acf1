"""The table service's settings: the platform's (``rummy_platform.config.Settings``, Kafka
required) and the table's own, read once by ``rummy_table.bootstrap.main``."""

from __future__ import annotations

from typing import ClassVar

from rummy_platform.config import (
    KafkaServiceSettings,
    ServiceTokenSigningSettings,
    clock_speed_setting,
    setting,
)
from rummy_rules.rules import DEFAULT_MAX_RESERVATION_HUNDREDTHS, INT64_MAX
from rummy_table.application.app import DEFAULT_SERVICE_DEADLINE_SECONDS

#: The prefix of the default transactional id (``table-writer-<advertised address>``).
DEFAULT_WRITER_ID = "table-writer"
#: WatchTable streams one account may hold at once, by default.
DEFAULT_MAX_WATCHES_PER_ACCOUNT = 8


class TableSettings(KafkaServiceSettings, ServiceTokenSigningSettings):
    """Everything the table service reads from its environment (see docs/configuration.md)."""

    service: ClassVar[str] = "table"

    grpc_max_workers: int = setting(
        "RUMMY_GRPC_MAX_WORKERS",
        48,
        "the service's threads for unary calls (the table's `WatchTable` streams take none: "
        "it serves on `grpc.aio`)",
        unit="threads",
        ge=1,
    )
    clock_speed: float = clock_speed_setting()
    service_deadline_seconds: int = setting(
        "RUMMY_TABLE_SERVICE_DEADLINE_SECONDS",
        DEFAULT_SERVICE_DEADLINE_SECONDS,
        "a hand still waiting this long for another service's answer (the ledger's stakes, "
        "fairness's commitment, the dealer's deal) after its last fact is aborted (every "
        "reservation released, the seed revealed; at a match table the deal is voided and "
        "replayed, and a second void in a row aborts the match); wall-clock seconds, not "
        "divided by `RUMMY_CLOCK_SPEED` (another service's outage lasts real time)",
        unit="seconds",
        ge=1,
        le=86_400,
    )
    max_reservation_hundredths: int = setting(
        "RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS",
        DEFAULT_MAX_RESERVATION_HUNDREDTHS,
        "the most a table opened here may reserve per seat and hand (max loss x point value; "
        "100,000,000 = 1,000,000 House Tokens); `OpenTable` refuses a point value, an entry fee or "
        "a game's stake (max game points x point value) above it",
        unit="hundredths of a House Token",
        ge=1,
        le=INT64_MAX,
    )
    ledger_address: str = setting(
        "RUMMY_LEDGER_ADDRESS",
        "",
        "the ledger's `host:port`: `TakeSeat` asks it whether the player's own limits allow the "
        "seat (a break, a self-exclusion, the stake limit: FAILED_PRECONDITION; the ledger not "
        "answering: UNAVAILABLE); empty: not asked (`rummy up`, `rummy demo` and the "
        "manifests set it)",
    )
    max_watches_per_account: int = setting(
        "RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT",
        DEFAULT_MAX_WATCHES_PER_ACCOUNT,
        "the `WatchTable` streams one account may hold at once; one more ends "
        "`RESOURCE_EXHAUSTED` naming the limit",
        unit="streams",
        ge=1,
        le=10_000,
    )
    snapshot_events: int = setting(
        "RUMMY_TABLE_SNAPSHOT_EVENTS",
        2000,
        "a partition's tables are snapshotted once this many of its events were folded since "
        "its last snapshot (and at a graceful stop)",
        unit="events",
        ge=1,
        le=10**9,
    )
    snapshot_seconds: int = setting(
        "RUMMY_TABLE_SNAPSHOT_SECONDS",
        30,
        "... or this long after its last snapshot when anything changed",
        unit="seconds",
        ge=1,
        le=86_400,
    )
    advertised_address: str | None = setting(
        "RUMMY_TABLE_ADVERTISED_ADDRESS",
        None,
        "the `host:port` other instances redirect this one's clients to (not "
        "`RUMMY_TABLE_ADDRESS`, which names the table service for its clients)",
        shown_default="`127.0.0.1:<RUMMY_GRPC_PORT>`",
    )
    writer_id: str | None = setting(
        "RUMMY_TABLE_WRITER_ID",
        None,
        "this instance's transactional id (after the topic prefix); every instance needs its "
        "own, and a restart with the same one aborts what its predecessor left open",
        shown_default="`table-writer-<advertised address>`",
    )
    session_seconds: int = setting(
        "RUMMY_TABLE_SESSION_SECONDS",
        6,
        "how long the consumer group waits for a silent instance before its partitions go to "
        "the others (6 is the broker's minimum)",
        unit="seconds",
        ge=1,
        le=3600,
    )

    @property
    def address(self) -> str:
        """The advertised ``host:port`` of this instance."""
        return self.advertised_address or f"127.0.0.1:{self.grpc_port}"

    @property
    def transactional_id(self) -> str:
        """This instance's transactional id, topic prefix included."""
        return self.topic_prefix + (self.writer_id or f"{DEFAULT_WRITER_ID}-{self.address}")
