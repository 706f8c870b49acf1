"""The table service's Prometheus metrics, counted from the events it appends (never on replay).

Every labelled series whose label values are known in advance (player actions, and what the
installed variants declare: their seats' outcomes and the series of their own events, e.g.
Indian points' declares and drops; ``rummy_game.bundle``) is exported at 0 from the start, as
Prometheus advises: a series that appears only once something happens leaves the dashboard's
rates and any alert on it empty until then. No variant is named here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from google.protobuf.message import Message
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from rummy.table.v1 import events_pb2 as pb
from rummy_game import variant_wires
from rummy_game.bundle import CounterSeries, bundles
from rummy_platform.envelope import Envelope
from rummy_platform.metrics import LATENCY_BUCKETS_SECONDS
from rummy_rules.commands import Command
from rummy_table.application.ports import ACTIONS, OVERDUE_KINDS, Action, OverdueKind

__all__ = ["ACTIONS", "TableMetrics", "variant_counters"]


def variant_counters(registry: CollectorRegistry) -> dict[str, Counter]:
    """``rummy_table_<name>_total`` for every counter series an installed variant declares
    (``VariantBundle.counters``), each label value at 0. Raises ValueError for two variants
    declaring one name with different labels."""
    declared: dict[str, CounterSeries] = {}
    for bundle in bundles():
        for series in bundle.counters:
            known = declared.get(series.name)
            if known is not None and known.label != series.label:
                raise ValueError(f"two variants declare rummy_table_{series.name} differently")
            values = (*known.values, *series.values) if known is not None else series.values
            declared[series.name] = replace(series, values=tuple(dict.fromkeys(values)))
    counters: dict[str, Counter] = {}
    for name, series in declared.items():
        counter = Counter(f"rummy_table_{name}", series.help, [series.label], registry=registry)
        for value in series.values:
            counter.labels(value)
        counters[name] = counter
    return counters


@dataclass(frozen=True)
class TableMetrics:
    """The Prometheus series of :class:`rummy_table.application.ports.Metrics`."""

    hands_started: Counter
    hands_ended: Counter
    hands_aborted: Counter
    #: How each seat's part of an ended hand went, by ``outcome`` (the variants'
    #: ``SeatResult.outcome`` words, ``VariantBundle.outcomes``: every declared one at 0).
    seat_outcomes: Counter
    timeouts: Counter
    action_latency: Histogram  # label action; seconds from request to answer
    tables_open: Gauge
    seats_taken: Gauge
    hand_start_failures: Counter  # a table's hand start raised (that table is retried later)
    #: What the tick aborted because another service did not answer within the service deadline
    #: (``RUMMY_TABLE_SERVICE_DEADLINE_SECONDS``), by ``kind``: ``hand`` (a hand waiting for the
    #: ledger's stakes, fairness's commitment or the dealer's deal) or ``match`` (a match whose
    #: money the ledger did not hold).
    overdue_aborts: Counter
    #: Commands the rules' ``decide`` judged (never on replay), by command (the rules library's
    #: command class, e.g. ``DrawFromStock``, ``TurnTimeout``) and outcome (``accepted``, or the
    #: refusal's ``ErrorCode`` in lower case, e.g. ``not_your_turn``). A request refused before
    #: the rules (unknown table, wrong hand, bad card index, bad token) is not counted.
    decisions: Counter
    #: Snapshots of a partition's tables written (``rummy_table.adapters.snapshot``).
    snapshots_written: Counter
    #: Snapshots ignored at start (the partition replayed in full), by reason: ``shape`` (another
    #: shape version) or ``undecodable``.
    snapshots_ignored: Counter
    #: The size of the last snapshot written, bytes (before the producer's compression).
    snapshot_bytes: Gauge
    #: The series of the variants' own events by name (:func:`variant_counters`: Indian points'
    #: ``declares`` by result, ``drops`` by kind), counted as their wires say.
    variant_series: dict[str, Counter]

    @classmethod
    def create(cls, registry: CollectorRegistry = REGISTRY) -> TableMetrics:
        """The series registered in ``registry``, every known label value at 0."""
        metrics = cls(
            Counter("rummy_table_hands_started", "Hands started", registry=registry),
            Counter("rummy_table_hands_ended", "Hands ended with a winner", registry=registry),
            Counter("rummy_table_hands_aborted", "Hands aborted", registry=registry),
            Counter(
                "rummy_table_seat_outcomes",
                "Seats' outcomes of ended hands, by outcome (the variants' words)",
                ["outcome"],
                registry=registry,
            ),
            Counter("rummy_table_turn_timeouts", "Turns that timed out", registry=registry),
            Histogram(
                "rummy_table_action_latency_seconds",
                "Player action: request to answer, seconds",
                ["action"],
                buckets=LATENCY_BUCKETS_SECONDS,
                registry=registry,
            ),
            Gauge("rummy_table_tables_open", "Tables open", registry=registry),
            Gauge("rummy_table_seats_taken", "Seats taken", registry=registry),
            Counter(
                "rummy_table_hand_start_failures",
                "Hand starts that raised (the table is retried after a backoff)",
                registry=registry,
            ),
            Counter(
                "rummy_table_overdue_aborts",
                "Hands and matches aborted: another service did not answer within the deadline",
                ["kind"],
                registry=registry,
            ),
            Counter(
                "rummy_table_rules_decisions",
                "Commands judged by the rules' decide, by command and outcome",
                ["command", "outcome"],
                registry=registry,
            ),
            Counter(
                "rummy_table_snapshots_written",
                "Snapshots of a partition's tables written",
                registry=registry,
            ),
            Counter(
                "rummy_table_snapshots_ignored",
                "Snapshots ignored at start (the partition replayed in full), by reason",
                ["reason"],
                registry=registry,
            ),
            Gauge(
                "rummy_table_snapshot_bytes",
                "Size of the last snapshot written, bytes",
                registry=registry,
            ),
            variant_counters(registry),
        )
        for overdue in OVERDUE_KINDS:
            metrics.overdue_aborts.labels(overdue)
        for reason in ("shape", "undecodable"):
            metrics.snapshots_ignored.labels(reason)
        for bundle in bundles():
            for outcome in bundle.outcomes:
                metrics.seat_outcomes.labels(outcome.name)
        for action in ACTIONS:
            metrics.action_latency.labels(action)
        return metrics

    @classmethod
    def unregistered(cls) -> TableMetrics:
        """Metrics on a private registry (tests, several apps in one process)."""
        return cls.create(CollectorRegistry())

    def count_decision(self, command: Command, outcome: str) -> None:
        """Count one call of the rules' ``decide`` (see :attr:`decisions`)."""
        self.decisions.labels(type(command).__name__, outcome).inc()

    def tables_now(self, open_tables: int, seats_taken: int) -> None:
        self.tables_open.set(open_tables)
        self.seats_taken.set(seats_taken)

    def table_opened(self) -> None:
        self.tables_open.inc()

    def action_answered(self, action: Action, seconds: float) -> None:
        self.action_latency.labels(action).observe(seconds)

    def overdue_aborted(self, kind: OverdueKind) -> None:
        self.overdue_aborts.labels(kind).inc()

    def hand_start_failed(self) -> None:
        self.hand_start_failures.inc()

    def snapshot_ignored(self, reason: str) -> None:
        self.snapshots_ignored.labels(reason).inc()

    def snapshot_written(self, size_bytes: int) -> None:
        self.snapshots_written.inc()
        self.snapshot_bytes.set(size_bytes)

    def _count_variant_event(self, payload: Message) -> None:
        """Count a variant's own event as its wire says (``VariantWire.metric``: a series it
        declared and one of its label values; anything else is not counted)."""
        counted = variant_wires.metric_of(payload)
        if counted is None:
            return
        metric, label = counted
        counter = self.variant_series.get(metric)
        if counter is not None:
            counter.labels(label).inc()

    def _count_outcomes(self, ended: pb.HandEnded) -> None:
        for result in ended.results:
            self.seat_outcomes.labels(result.outcome).inc()

    def count(self, envelopes: Iterable[Envelope]) -> None:
        """Count what freshly appended envelopes say happened."""
        for envelope in envelopes:
            p = envelope.payload
            if isinstance(p, pb.HandStarted):
                self.hands_started.inc()
            elif isinstance(p, pb.HandEnded):
                self.hands_ended.inc()
                self._count_outcomes(p)
            elif isinstance(p, pb.HandAborted):
                self.hands_aborted.inc()
            elif variant_wires.is_variant_event(p):
                self._count_variant_event(p)
            elif isinstance(p, pb.TurnTimedOut):
                self.timeouts.inc()
            elif isinstance(p, pb.TablePlayerSeated):
                self.seats_taken.inc()
            elif isinstance(p, pb.TablePlayerLeft):
                self.seats_taken.dec()
            elif isinstance(p, pb.TableClosed):
                self.tables_open.dec()
