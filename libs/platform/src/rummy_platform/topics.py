"""The event topics and their layout (which partition a stream lives on:
:func:`rummy_platform.eventlog.partition_for`).

Every service writes only its own topic. All five topics have the same partition count, and every
event about a table is keyed by the table id on each of them, so the table-service instance that
owns a table's partition of ``table-events`` owns the same partition of every topic it consumes
(``docs/rules/promises.md#scales-out``). Events never expire (``retention.ms=-1``,
``docs/rules/promises.md#the-log-is-kept``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TABLE_EVENTS = "table-events"
LEDGER_EVENTS = "ledger-events"
FAIRNESS_EVENTS = "fairness-events"
DEALER_EVENTS = "dealer-events"
CLOCK_EVENTS = "clock-events"
EVENT_TOPICS: tuple[str, ...] = (
    TABLE_EVENTS,
    LEDGER_EVENTS,
    FAIRNESS_EVENTS,
    DEALER_EVENTS,
    CLOCK_EVENTS,
)

#: The topics the table service consumes (each keyed by table id, co-partitioned with
#: ``table-events``: the instance given partition p of them owns partition p of the tables).
TABLE_INPUT_TOPICS: tuple[str, ...] = (LEDGER_EVENTS, FAIRNESS_EVENTS, DEALER_EVENTS, CLOCK_EVENTS)

DEFAULT_PARTITIONS = 8
#: Topic configuration every event topic is created with: the log is the system of record.
NEVER_EXPIRE: Mapping[str, str] = {"retention.ms": "-1"}


@dataclass(frozen=True)
class TopicSpec:
    """A topic as it must exist: name, partition count, replication factor and configuration.

    Raises ValueError if ``partitions`` or ``replication_factor`` is below 1.
    """

    name: str
    partitions: int
    replication_factor: int = 1
    config: Mapping[str, str] = field(default_factory=lambda: dict(NEVER_EXPIRE))

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise ValueError(f"topic {self.name}: partitions must be >= 1, got {self.partitions}")
        if self.replication_factor < 1:
            raise ValueError(f"topic {self.name}: replication_factor must be >= 1")


def event_topic_specs(
    partitions: int = DEFAULT_PARTITIONS, *, replication_factor: int = 1, prefix: str = ""
) -> tuple[TopicSpec, ...]:
    """The five event topics, all with ``partitions`` partitions and infinite retention.

    ``prefix`` is prepended to every name (tests use it to get topics of their own).
    """
    return tuple(
        TopicSpec(prefix + name, partitions, replication_factor, dict(NEVER_EXPIRE))
        for name in EVENT_TOPICS
    )
