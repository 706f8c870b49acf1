"""The ledger's Prometheus series (amounts in hundredths of a House Token, ages in seconds).

Counters (this process's work since it started):

- ``rummy_ledger_reservations_total{outcome="reserved"|"rejected"}``: seats of HandStarted;
- ``rummy_ledger_settlements_total``: hands settled;
- ``rummy_ledger_commission_hundredths_total``: commission posted by those settlements;
- ``rummy_ledger_hands_aborted_total``;
- ``rummy_ledger_settlements_refused_total``: hands whose settlement failed an invariant (the
  hand void, its holds released; alert RummySettlementRefused);
- ``rummy_ledger_refused_events_total{type}``: other table events the ledger refused (nothing
  moved), every type of ``application.ports.REFUSABLE_EVENTS`` exported from the start;
- ``rummy_ledger_grants_total`` and ``rummy_ledger_granted_hundredths_total``;
- match money (``purpose`` ``entry``, ``rejoin``, ``stake``; a settlement's ``entry`` for a
  match's end, ``stake`` for a game's): ``rummy_ledger_match_holds_total{purpose,outcome}``
  (``held``/``rejected``), ``rummy_ledger_match_settlements_total{purpose}`` (their commission
  added to ``rummy_ledger_commission_hundredths_total``),
  ``rummy_ledger_match_settlements_refused_total{purpose}`` (each also counted in
  ``rummy_ledger_settlements_refused_total``, so RummySettlementRefused fires) and
  ``rummy_ledger_matches_aborted_total``.

Gauges read from PostgreSQL at each scrape (the whole ledger, whichever process wrote it), by
``db.gauges``: one statement over the balances (a row per account) and the rows held or waiting
now (partial indexes), nothing that grows with the journal:

- ``rummy_ledger_tokens_reserved_hundredths`` (the balances' ``reserved``, summed),
  ``rummy_ledger_held_reservations_hundredths`` (the held reservations' amounts, summed, in the
  same snapshot: the two are equal in a sound ledger, alert RummyLedgerReservedMismatch) and
  ``rummy_ledger_reservations_held`` (how many);
- ``rummy_ledger_oldest_held_reservation_age_seconds``: the ledger's clock minus the oldest held
  reservation's creation (0 when none is held); a hand's reservations are held from HandStarted
  until its settlement or abort, so a large age is a hand the ledger never heard end (alert
  RummyReservationHeldTooLong);
- ``rummy_ledger_commission_collected_hundredths`` (the house commission account's balance);
- ``rummy_ledger_tokens_issued_hundredths``;
- ``rummy_ledger_outbox_unpublished``, ``rummy_ledger_outbox_age_seconds`` (oldest waiting row);
- ``rummy_ledger_invariant_violations``: ``rummy_platform.ledger_invariants.invariant_violations``
  (tokens conserved, balances equal their entries, reserved equals held reservations,
  transactions sum to zero, nobody but issuance below zero); a full scan, so recomputed at most
  every ``invariants_every_s`` seconds. Anything but 0 is a page.
- ``rummy_ledger_journal_sum_hundredths``: every journal entry ever posted, summed
  (``ledger_invariants.journal_sum``, a full scan of the journal: recomputed with the invariants,
  at most every ``invariants_every_s`` seconds); 0 in a sound ledger, anything else is a page
  (RummyLedgerJournalUnbalanced).

Every gauge is there from the first scrape (the full scans run then, and then on their interval).
- ``rummy_ledger_consumer_lag_records``: is not exported (the stored offsets are in PostgreSQL;
  the topic's end offsets would need a Kafka admin call per scrape).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
from prometheus_client import REGISTRY, CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from psycopg_pool import ConnectionPool

from rummy_ledger.adapters import db
from rummy_ledger.application.ports import REFUSABLE_EVENTS, Clock, Counters
from rummy_ledger.domain.limits import FactKind, Reason
from rummy_ledger.domain.matches import ENTRY, PURPOSES, STAKE
from rummy_platform import ledger_invariants
from rummy_platform.envelope import type_name
from rummy_platform.logging import get_logger

_log = get_logger(__name__)


def counters(registry: CollectorRegistry = REGISTRY) -> Counters:
    """Register the ledger's counters in ``registry`` and return the callbacks that feed them."""
    reservations = Counter(
        "rummy_ledger_reservations", "Seats of HandStarted, by outcome", ["outcome"],
        registry=registry,
    )  # fmt: skip
    settlements = Counter("rummy_ledger_settlements", "Hands settled", registry=registry)
    commission = Counter(
        "rummy_ledger_commission_hundredths", "Commission posted by settlements", registry=registry
    )
    aborted = Counter("rummy_ledger_hands_aborted", "Hands aborted", registry=registry)
    settlements_refused = Counter(
        "rummy_ledger_settlements_refused",
        "Settlements refused (an invariant failed): the hand void, its holds released",
        registry=registry,
    )
    refused = Counter(
        "rummy_ledger_refused_events", "Table events refused; nothing moved", ["type"],
        registry=registry,
    )  # fmt: skip
    grants = Counter("rummy_ledger_grants", "Grants posted", registry=registry)
    granted = Counter(
        "rummy_ledger_granted_hundredths", "Tokens granted by operators", registry=registry
    )

    match_holds = Counter(
        "rummy_ledger_match_holds", "Seats asked to hold match money, by purpose and outcome",
        ["purpose", "outcome"], registry=registry,
    )  # fmt: skip
    match_settlements = Counter(
        "rummy_ledger_match_settlements", "Match and game settlements posted, by purpose",
        ["purpose"], registry=registry,
    )  # fmt: skip
    match_refused = Counter(
        "rummy_ledger_match_settlements_refused",
        "Match and game settlements refused (their holds released), by purpose",
        ["purpose"], registry=registry,
    )  # fmt: skip
    matches_aborted = Counter(
        "rummy_ledger_matches_aborted", "Matches aborted (every hold released)", registry=registry
    )

    limit_refusals = Counter(
        "rummy_ledger_limit_refusals",
        "Reservations refused by the player's own limits, by reason",
        ["reason"], registry=registry,
    )  # fmt: skip
    limit_changes = Counter(
        "rummy_ledger_limit_changes",
        "Changes players made to their own limits, by change",
        ["change"], registry=registry,
    )  # fmt: skip

    def match_settled(purpose: str, commission_hundredths: int) -> None:
        match_settlements.labels(purpose).inc()
        commission.inc(commission_hundredths)

    def match_settlement_refused(purpose: str) -> None:
        match_refused.labels(purpose).inc()
        settlements_refused.inc()

    def settled(commission_hundredths: int) -> None:
        settlements.inc()
        commission.inc(commission_hundredths)

    def granted_tokens(amount_hundredths: int) -> None:
        grants.inc()
        granted.inc(amount_hundredths)

    # Every label value known in advance is exported at 0 from the start (an alert or a rate
    # over a series that appears only on the first refusal has nothing to work on until then).
    for outcome in ("reserved", "rejected"):
        reservations.labels(outcome)
    for event in REFUSABLE_EVENTS:
        refused.labels(type_name(event))
    for purpose in PURPOSES:
        for outcome in ("held", "rejected"):
            match_holds.labels(purpose, outcome)
    for purpose in (ENTRY, STAKE):
        match_settlements.labels(purpose)
        match_refused.labels(purpose)
    for reason in Reason:
        limit_refusals.labels(reason.value)
    for change in FactKind:
        limit_changes.labels(change.value)
    return Counters(
        reservation=lambda outcome: reservations.labels(outcome).inc(),
        settlement=settled,
        settlement_refused=settlements_refused.inc,
        refused=lambda event_type: refused.labels(event_type).inc(),
        aborted=aborted.inc,
        granted=granted_tokens,
        match_hold=lambda purpose, outcome: match_holds.labels(purpose, outcome).inc(),
        match_settlement=match_settled,
        match_settlement_refused=match_settlement_refused,
        match_aborted=matches_aborted.inc,
        limit_refusal=lambda reason: limit_refusals.labels(reason).inc(),
        limit_change=lambda change: limit_changes.labels(change).inc(),
    )


@dataclass(frozen=True)
class FullScan:
    """The figures of the scans over the whole journal (``ledger_invariants``:
    ``invariant_violations``, ``journal_sum``), taken together at most every
    ``invariants_every_s`` seconds."""

    invariant_violations: int
    journal_sum_hundredths: int


class LedgerGaugeCollector(Collector):
    """Reads ``db.gauges`` (one query) at each scrape, and the full scans (:class:`FullScan`) at
    most every ``invariants_every_s`` seconds of ``monotonic``; ages are counted on ``clock``
    (the ledger's clock). A scrape while PostgreSQL is down yields no ledger gauges (logged)
    rather than failing ``/metrics``: while ``reachable()`` says PostgreSQL is not (the
    dependency watch's last probe failed) no query is tried at all, and otherwise a connection is
    waited for at most ``connect_timeout_s`` seconds, so a scrape stays well inside Prometheus's
    scrape timeout (10 s) when the database hangs."""

    def __init__(
        self,
        pool: ConnectionPool,
        *,
        invariants_every_s: float = 60.0,
        clock: Clock,
        monotonic: Callable[[], float] = time.monotonic,
        reachable: Callable[[], bool] = lambda: True,
        connect_timeout_s: float = 2.0,
    ) -> None:
        self._pool = pool
        self._reachable = reachable
        self._connect_timeout_s = connect_timeout_s
        self._invariants_every_s = invariants_every_s
        self._clock = clock
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._full_scan: FullScan | None = None
        self._checked_at = float("-inf")

    def collect(self) -> Iterator[GaugeMetricFamily]:
        if not self._reachable():
            return
        try:
            with self._pool.connection(timeout=self._connect_timeout_s) as conn:
                figures = db.gauges(conn)
                players = db.limits_gauges(conn, self._clock())
                full_scan = self._scan(conn)
        except Exception:
            _log.exception("could not read the ledger gauges")
            return
        oldest = figures.oldest_held_reservation_at
        held_age_s = 0.0 if oldest is None else (self._clock() - oldest).total_seconds()
        yield _gauge(
            "rummy_ledger_tokens_reserved_hundredths",
            "Tokens held for hands in progress (the balances' reserved, summed)",
            figures.reserved_hundredths,
        )
        yield _gauge(
            "rummy_ledger_held_reservations_hundredths",
            "Held reservations' amounts, summed; equals tokens_reserved in a sound ledger",
            figures.held_reservations_hundredths,
        )
        yield _gauge(
            "rummy_ledger_reservations_held", "Reservations held", figures.held_reservations
        )
        yield _gauge(
            "rummy_ledger_oldest_held_reservation_age_seconds",
            "Age of the oldest held reservation (0 when none is held)",
            max(0.0, held_age_s),
        )
        yield _gauge(
            "rummy_ledger_commission_collected_hundredths",
            "Balance of the house commission account",
            figures.commission_hundredths,
        )
        yield _gauge(
            "rummy_ledger_tokens_issued_hundredths",
            "Tokens ever granted (minus the issuance balance)",
            figures.issued_hundredths,
        )
        yield _gauge(
            "rummy_ledger_outbox_unpublished", "Outbox rows not yet published",
            figures.outbox_unpublished,
        )  # fmt: skip
        yield _gauge(
            "rummy_ledger_outbox_age_seconds",
            "Age of the oldest unpublished outbox row (0 when none waits)",
            figures.outbox_oldest_age_seconds,
        )
        yield _gauge(
            "rummy_ledger_players_with_limits",
            "Players with a loss or stake limit of their own set",
            players.with_limits,
        )
        yield _gauge("rummy_ledger_players_on_break", "Players on a break now", players.on_break)
        yield _gauge(
            "rummy_ledger_players_excluded",
            "Players self-excluded (until their exclusion ends and they return)",
            players.excluded,
        )
        yield _gauge(
            "rummy_ledger_invariant_violations",
            "Ledger invariants broken (tokens conserved, entries match balances...); 0 expected",
            full_scan.invariant_violations,
        )
        yield _gauge(
            "rummy_ledger_journal_sum_hundredths",
            "Every journal entry ever posted, summed; 0 expected",
            full_scan.journal_sum_hundredths,
        )

    def _scan(self, conn: psycopg.Connection) -> FullScan:
        with self._lock:
            now = self._monotonic()
            if self._full_scan is None or now - self._checked_at >= self._invariants_every_s:
                problems = ledger_invariants.invariant_violations(conn)
                for problem in problems:
                    _log.error("ledger invariant broken", problem=problem)
                journal_sum = ledger_invariants.journal_sum(conn)
                if journal_sum != 0:
                    _log.error("ledger journal unbalanced", journal_sum_hundredths=journal_sum)
                self._full_scan = FullScan(len(problems), journal_sum)
                self._checked_at = now
            return self._full_scan


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def register_gauges(
    pool: ConnectionPool,
    registry: CollectorRegistry = REGISTRY,
    *,
    clock: Clock,
    invariants_every_s: float = 60.0,
    reachable: Callable[[], bool] = lambda: True,
) -> LedgerGaugeCollector:
    """Register a :class:`LedgerGaugeCollector` over ``pool`` in ``registry`` (``reachable``:
    False while PostgreSQL is known to be down, so a scrape does not wait for it)."""
    collector = LedgerGaugeCollector(
        pool, invariants_every_s=invariants_every_s, clock=clock, reachable=reachable
    )
    registry.register(collector)
    return collector
