"""The money invariants as live gauges: each test breaks one on purpose, behind the ledger's back,
in a database of its own, and reads what ``/metrics`` would say (``LedgerGaugeCollector``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from ledger_support import funded_player, house_rule_set, new_id, storage
from prometheus_client import CollectorRegistry
from psycopg_pool import ConnectionPool

from rummy_ledger.adapters.db import SCHEMA, apply_migrations, open_pool
from rummy_ledger.adapters.metrics import LedgerGaugeCollector
from rummy_ledger.application.accounts import abort_hand, reserve_stakes, settle_hand
from rummy_ledger.domain.accounts import AbortHand, ReserveStakes, SeatStake, SettleHand
from rummy_ledger.domain.limits import PlayerLimits
from rummy_rules.settlement import settle
from rummy_testing.service_process import fresh_database

pytestmark = pytest.mark.integration


@pytest.fixture()
def own_url(database_url: str) -> Iterator[str]:
    """A migrated ledger database for this test alone (it is about to be broken)."""
    with fresh_database(database_url, "ledger_money_gauges") as url:
        apply_migrations(url)
        yield url


@pytest.fixture()
def own_pool(own_url: str) -> Iterator[ConnectionPool]:
    with open_pool(own_url, min_size=1, max_size=2) as pool:  # closed on exit
        yield pool


def raw(url: str) -> psycopg.Connection:
    """A connection around the ledger (autocommit, the ledger's schema): the operator's psql."""
    return psycopg.connect(url, autocommit=True, options=f"-c search_path={SCHEMA}")


class Scraper:
    """A registry holding only the collector, read as Prometheus would; ``monotonic`` and
    ``clock`` are the collector's, set by the test."""

    def __init__(self, pool: ConnectionPool, clock_at: datetime | None = None) -> None:
        self.monotonic = 0.0
        self.clock_at = clock_at
        self.registry = CollectorRegistry()
        self.registry.register(
            LedgerGaugeCollector(
                pool,
                invariants_every_s=60.0,
                clock=self._clock,
                monotonic=lambda: self.monotonic,
            )
        )

    def _clock(self) -> datetime:
        # a test that reads no ages gives no clock (the players' breaks are counted at now)
        return self.clock_at or datetime.now(UTC)

    def scrape(self) -> dict[str, float]:
        return {
            sample.name: sample.value
            for family in self.registry.collect()
            for sample in family.samples
            if sample.name.startswith("rummy_ledger_")
        }


def database_now(url: str) -> datetime:
    with raw(url) as conn:
        row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    (now,) = row
    assert isinstance(now, datetime)
    return now


def two_seat_hand(pool: ConnectionPool, stake: int) -> tuple[str, str]:
    """A hand with two funded seats, each holding ``stake``: (hand id, table id)."""
    winner, loser = funded_player(pool, 4 * stake), funded_player(pool, 4 * stake)
    hand, table = new_id("hand"), new_id("table")
    reserve_stakes(
        storage(pool),
        ReserveStakes(hand, table, (SeatStake(0, winner, stake), SeatStake(1, loser, stake))),
    )
    return hand, table


def test_a_sound_ledger_exports_every_money_gauge_from_the_first_scrape_with_the_invariants_at_zero(
    own_pool: ConnectionPool, own_url: str
) -> None:
    hand, table = two_seat_hand(own_pool, 1300)
    scraper = Scraper(own_pool, clock_at=database_now(own_url))
    during = scraper.scrape()
    assert during["rummy_ledger_journal_sum_hundredths"] == 0
    assert during["rummy_ledger_invariant_violations"] == 0
    assert during["rummy_ledger_tokens_reserved_hundredths"] == 2600
    assert during["rummy_ledger_held_reservations_hundredths"] == 2600
    assert during["rummy_ledger_reservations_held"] == 2
    assert 0 <= during["rummy_ledger_oldest_held_reservation_age_seconds"] < 60

    settle_hand(
        storage(own_pool),
        SettleHand.from_settlement(hand, table, settle(house_rule_set(4, 10, 1000), 0, {1: 50})),
    )
    scraper.monotonic += 60.0
    after = scraper.scrape()
    assert after["rummy_ledger_journal_sum_hundredths"] == 0
    assert after["rummy_ledger_tokens_reserved_hundredths"] == 0
    assert after["rummy_ledger_held_reservations_hundredths"] == 0
    assert after["rummy_ledger_oldest_held_reservation_age_seconds"] == 0


def test_a_journal_row_inserted_behind_the_ledgers_back_shows_in_the_journal_sum_within_a_minute(
    own_pool: ConnectionPool, own_url: str
) -> None:
    player = funded_player(own_pool, 1000)
    scraper = Scraper(own_pool)
    assert scraper.scrape()["rummy_ledger_journal_sum_hundredths"] == 0

    # An operator with the tables' owner role switches the commit-time check off and posts a
    # "grant" whose lines do not balance: 175 credited, 100 taken from issuance.
    with raw(own_url) as conn, conn.transaction():
        conn.execute("ALTER TABLE journal_entries DISABLE TRIGGER journal_entries_sum_to_zero")
        conn.execute("INSERT INTO journal_transactions (id, kind) VALUES ('forged', 'grant')")
        conn.execute(
            "INSERT INTO journal_entries (transaction_id, account_id, amount, line_kind) "
            "VALUES ('forged', 'house:issuance', -100, 'issuance'), ('forged', %s, 175, 'grant')",
            (player,),
        )
        conn.execute("ALTER TABLE journal_entries ENABLE TRIGGER journal_entries_sum_to_zero")

    scraper.monotonic += 59.0  # the journal is scanned at most every 60 s
    assert scraper.scrape()["rummy_ledger_journal_sum_hundredths"] == 0
    scraper.monotonic += 1.0
    figures = scraper.scrape()
    assert figures["rummy_ledger_journal_sum_hundredths"] == 75
    assert figures["rummy_ledger_invariant_violations"] >= 1


def test_a_reservation_written_behind_the_ledgers_back_makes_reserved_differ_from_what_is_held(
    own_pool: ConnectionPool, own_url: str
) -> None:
    player = funded_player(own_pool, 1000)
    with raw(own_url) as conn, conn.transaction():
        conn.execute("ALTER TABLE reservations DISABLE TRIGGER reservations_move_reserved")
        conn.execute(
            "INSERT INTO reservations (hand_id, account_id, table_id, seat, amount) "
            "VALUES ('hand-forged', %s, 'table-forged', 0, 500)",
            (player,),
        )
        conn.execute("ALTER TABLE reservations ENABLE TRIGGER reservations_move_reserved")

    figures = Scraper(own_pool, clock_at=database_now(own_url)).scrape()
    assert figures["rummy_ledger_held_reservations_hundredths"] == 500
    assert figures["rummy_ledger_tokens_reserved_hundredths"] == 0
    assert figures["rummy_ledger_invariant_violations"] >= 1


def test_a_reservation_held_past_its_hand_ages_on_the_ledgers_clock_until_the_hand_is_aborted(
    own_pool: ConnectionPool, own_url: str
) -> None:
    hand, _table = two_seat_hand(own_pool, 800)
    later = database_now(own_url) + timedelta(hours=2)
    scraper = Scraper(own_pool, clock_at=later)
    age = scraper.scrape()["rummy_ledger_oldest_held_reservation_age_seconds"]
    assert 7200 <= age < 7200 + 60

    scraper.clock_at = later + timedelta(minutes=30)
    age = scraper.scrape()["rummy_ledger_oldest_held_reservation_age_seconds"]
    assert 9000 <= age < 9000 + 60

    abort_hand(storage(own_pool), AbortHand(hand))
    figures = scraper.scrape()
    assert figures["rummy_ledger_oldest_held_reservation_age_seconds"] == 0
    assert figures["rummy_ledger_reservations_held"] == 0


def test_players_with_limits_on_a_break_and_excluded_are_counted_on_the_ledgers_clock(
    own_pool: ConnectionPool, own_url: str
) -> None:
    now = database_now(own_url)
    uow = storage(own_pool)
    with uow.transaction():
        uow.limits.save(PlayerLimits(new_id("player"), loss_limits=(("day", 100),)))
        uow.limits.save(PlayerLimits(new_id("player"), break_until=now + timedelta(hours=2)))
        uow.limits.save(PlayerLimits(new_id("player"), excluded_at=now))
        uow.limits.save(PlayerLimits(new_id("player"), stake_limit_hundredths=0))
    first = Scraper(own_pool, clock_at=now).scrape()
    assert (
        first["rummy_ledger_players_with_limits"],
        first["rummy_ledger_players_on_break"],
        first["rummy_ledger_players_excluded"],
    ) == (2, 1, 1)
    later = Scraper(own_pool, clock_at=now + timedelta(hours=3)).scrape()
    assert later["rummy_ledger_players_on_break"] == 0  # the break is over by then
