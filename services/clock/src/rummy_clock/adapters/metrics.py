"""The clock's Prometheus series (default registry), as the application's ``ClockMetrics``."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from rummy_clock.application.ports import ClockMetrics

#: Seconds between a deadline's due time and its publication.
LAG_BUCKETS_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def metrics() -> ClockMetrics:
    """The clock's Prometheus series in the default registry (call once per process)."""
    scheduled = Counter(
        "rummy_clock_deadlines_scheduled", "Deadlines scheduled, by kind.", ["kind"]
    )
    fired = Counter("rummy_clock_deadlines_fired", "Deadlines published, by kind.", ["kind"])
    pending = Gauge("rummy_clock_deadlines_pending", "Deadlines scheduled and not yet fired.")
    lag = Histogram(
        "rummy_clock_firing_lag_seconds",
        "Seconds from a deadline's due time to its publication.",
        buckets=LAG_BUCKETS_SECONDS,
    )
    return ClockMetrics(
        scheduled=lambda kind: scheduled.labels(kind=kind).inc(),
        fired=lambda kind: fired.labels(kind=kind).inc(),
        pending=pending.set,
        lag_seconds=lag.observe,
    )
