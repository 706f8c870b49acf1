"""The table's labelled series exist at 0 before anything happens, so the dashboard's rates and
any alert over them have a series to work on from the first scrape."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client import CollectorRegistry
from world import World, metrics_of

from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_platform.envelope import Envelope
from rummy_table.adapters.metrics import ACTIONS, TableMetrics


def samples(registry: CollectorRegistry, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == name
    }


def test_every_series_the_variants_declare_and_every_action_is_exported_at_zero() -> None:
    registry = CollectorRegistry()
    TableMetrics.create(registry)
    assert samples(registry, "rummy_table_declares_total") == {
        (("result", "valid"),): 0.0,
        (("result", "wrong"),): 0.0,
    }
    assert samples(registry, "rummy_table_drops_total") == {
        (("kind", kind),): 0.0 for kind in ("first", "middle", "timeout", "leave")
    }
    outcomes = samples(registry, "rummy_table_seat_outcomes_total")
    assert {"won", "counted", "first_drop", "wrong_declare", "timed_out"} <= {
        dict(labels)["outcome"] for labels in outcomes
    }
    assert set(outcomes.values()) == {0.0}
    counts = samples(registry, "rummy_table_action_latency_seconds_count")
    assert counts == {(("action", action),): 0.0 for action in ACTIONS}
    assert {"draw", "discard", "declare", "drop", "take_seat"} <= set(ACTIONS)


def test_a_drop_is_counted_under_the_label_its_kind_was_exported_with() -> None:
    registry = CollectorRegistry()
    metrics = TableMetrics.create(registry)
    kinds = {
        pb.DropKind.Name(kind).removeprefix("DROP_KIND_").lower()
        for kind in pb.DropKind.values()
        if kind != pb.DROP_KIND_UNSPECIFIED
    }
    dropped = Envelope.new(
        indian_pb.PlayerDropped(kind=indian_pb.DROP_KIND_TIMEOUT),
        stream_id="t",
        stream_version=1,
        occurred_at=datetime.now(UTC),
    )
    metrics.count([dropped])
    drops = samples(registry, "rummy_table_drops_total")
    assert drops[(("kind", "timeout"),)] == 1.0
    assert {dict(labels)["kind"] for labels in drops} == kinds  # no new series: the same label


def test_a_rebuilt_instance_gauges_the_tables_open_and_the_seats_taken_it_replayed() -> None:
    world = World()
    first, second = world.open_table(seats=4), world.open_table(seats=4)
    world.sit(first, "ann")
    world.sit(first, "bob")
    world.sit(second, "cat")
    rebuilt = world.new_app("table-writer-2")
    metrics = metrics_of(rebuilt)
    assert metrics.tables_open._value.get() == 2
    assert metrics.seats_taken._value.get() == 3
