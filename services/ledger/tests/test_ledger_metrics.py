"""The ledger's labelled counters exist at 0 before anything happens, so the dashboard's rates and
any alert over them have a series to work on from the first scrape."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from rummy_ledger.adapters.metrics import counters


def test_every_refusable_table_event_and_reservation_outcome_is_exported_at_zero() -> None:
    registry = CollectorRegistry()
    callbacks = counters(registry)
    refused = {
        sample.labels["type"]: sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == "rummy_ledger_refused_events_total"
    }
    assert refused == {
        "rummy.table.v1.HandStarted": 0.0,
        "rummy.table.v1.HandEnded": 0.0,
        "rummy.table.v1.HandAborted": 0.0,
        "rummy.table.v1.TableOpened": 0.0,
        "rummy.match.v1.MatchStarted": 0.0,
        "rummy.match.v1.GameStarted": 0.0,
        "rummy.match.v1.MoneyReserved": 0.0,
        "rummy.match.v1.GameEnded": 0.0,
        "rummy.match.v1.MatchEnded": 0.0,
        "rummy.match.v1.MatchAborted": 0.0,
    }
    callbacks.refused("rummy.table.v1.HandEnded")
    assert (
        registry.get_sample_value(
            "rummy_ledger_refused_events_total", {"type": "rummy.table.v1.HandEnded"}
        )
        == 1.0
    )
    for outcome in ("reserved", "rejected"):
        assert (
            registry.get_sample_value("rummy_ledger_reservations_total", {"outcome": outcome})
            == 0.0
        )


def test_match_holds_settlements_and_refusals_are_exported_by_purpose_at_zero() -> None:
    registry = CollectorRegistry()
    callbacks = counters(registry)
    for purpose in ("entry", "rejoin", "stake"):
        for outcome in ("held", "rejected"):
            labels = {"purpose": purpose, "outcome": outcome}
            assert registry.get_sample_value("rummy_ledger_match_holds_total", labels) == 0.0
    for purpose in ("entry", "stake"):
        for name in ("settlements", "settlements_refused"):
            value = registry.get_sample_value(
                f"rummy_ledger_match_{name}_total", {"purpose": purpose}
            )
            assert value == 0.0
    callbacks.match_settlement_refused("stake")
    # a refused match settlement feeds the alert the hands' refusals feed
    assert registry.get_sample_value("rummy_ledger_settlements_refused_total") == 1.0
    callbacks.match_settlement("entry", 300)
    assert registry.get_sample_value("rummy_ledger_commission_hundredths_total") == 300.0
