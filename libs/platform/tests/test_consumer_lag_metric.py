"""ConsumerLagReporter: rummy_consumer_lag_events per owned partition, at most once an interval;
partitions no longer owned leave the gauge; a lag that cannot be read leaves it as it was."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from rummy_platform.eventlog import EventLogError, TopicPartition
from rummy_platform.metrics import ConsumerLagReporter

P0 = TopicPartition("table-events", 0)
P1 = TopicPartition("table-events", 1)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lag_of(registry: CollectorRegistry, tp: TopicPartition, group: str = "ledger") -> float | None:
    labels = {"topic": tp.topic, "partition": str(tp.partition), "group": group}
    return registry.get_sample_value("rummy_consumer_lag_events", labels)


def test_each_owned_partition_gets_its_lag_under_the_group() -> None:
    registry = CollectorRegistry()
    reporter = ConsumerLagReporter("ledger", registry=registry, clock=FakeClock())
    assert reporter.maybe_report(lambda: {P0: 7, P1: 0})
    assert (lag_of(registry, P0), lag_of(registry, P1)) == (7.0, 0.0)
    assert lag_of(registry, P0, group="dealer") is None


def test_the_lag_is_read_at_most_once_an_interval() -> None:
    registry, clock, reads = CollectorRegistry(), FakeClock(), []
    reporter = ConsumerLagReporter("ledger", interval_s=15.0, registry=registry, clock=clock)

    def lag() -> dict[TopicPartition, int]:
        reads.append(clock.now)
        return {P0: len(reads)}

    for second in range(0, 31):
        clock.now = float(second)
        reporter.maybe_report(lag)
    assert reads == [0.0, 15.0, 30.0]
    assert lag_of(registry, P0) == 3.0


def test_a_partition_no_longer_owned_leaves_the_gauge() -> None:
    registry, clock = CollectorRegistry(), FakeClock()
    reporter = ConsumerLagReporter("ledger", interval_s=1.0, registry=registry, clock=clock)
    reporter.maybe_report(lambda: {P0: 3, P1: 4})
    clock.now = 1.0
    reporter.maybe_report(lambda: {P1: 2})
    assert (lag_of(registry, P0), lag_of(registry, P1)) == (None, 2.0)


def test_a_lag_that_cannot_be_read_keeps_the_last_values() -> None:
    registry, clock = CollectorRegistry(), FakeClock()
    reporter = ConsumerLagReporter("ledger", interval_s=1.0, registry=registry, clock=clock)
    reporter.maybe_report(lambda: {P0: 5})
    clock.now = 1.0

    def unreachable() -> dict[TopicPartition, int]:
        raise EventLogError("broker unreachable")

    assert not reporter.maybe_report(unreachable)
    assert lag_of(registry, P0) == 5.0
