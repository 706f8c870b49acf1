"""PostgreSQL adapter of the ledger (psycopg 3): migrations, a pool, and one function per query.

The tables live in the ``ledger`` schema; migrations and pools come from ``rummy_platform.db``.

Every function but :func:`apply_migrations` and :func:`open_pool` takes a connection already
inside a transaction (the application handler opens it) and never commits. Amounts are bigint
hundredths of a House Token. The schema (``migrations/``) enforces the ledger's invariants on
its own; these functions only read and append.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from rummy_ledger.application.ports import (
    BalanceRow,
    JournalEntry,
    OutboxRow,
    PlayedEntry,
    PlayedRow,
    ReservationRow,
    StatementRow,
    StoredCommand,
)
from rummy_ledger.domain.accounts import (
    AccountKind,
    Conflict,
    HeldReservation,
    JournalTransaction,
)
from rummy_ledger.domain.limits import PlayerLimits
from rummy_ledger.domain.matches import MatchBook
from rummy_platform import db as platform_db

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
#: The PostgreSQL schema holding the ledger's tables (in the database of ``DATABASE_URL``).
SCHEMA = "ledger"


def apply_migrations(database_url: str, *, owner_url: str | None = None) -> None:
    """Create the ``ledger`` schema if needed and apply every pending migration of
    ``migrations/`` (yoyo, plain SQL, each in a transaction, under a lock); with ``owner_url``
    as the schema's owner, granting ``database_url``'s role its privileges
    (:func:`rummy_platform.db.migrate_service`)."""
    platform_db.migrate_service(database_url, MIGRATIONS_DIR, schema=SCHEMA, owner_url=owner_url)


def open_pool(database_url: str, *, min_size: int = 1, max_size: int = 8) -> ConnectionPool:
    """An open pool whose connections use the ``ledger`` schema (raises PoolTimeout)."""
    return platform_db.open_pool(
        database_url, schema=SCHEMA, name="ledger", min_size=min_size, max_size=max_size
    )


# ------------------------------------------------------------------------ idempotent commands


def claim_command(
    conn: psycopg.Connection, key: str, command: str, request_hash: str
) -> StoredCommand | None:
    """Claim ``key`` for this transaction, or return the first result stored under it.

    Returns ``None`` when the key is new (the caller then does the work and calls
    :func:`store_command_result`). A concurrent claim of the same key waits for the first
    transaction to finish. Raises :class:`Conflict` when the key was used with another body.
    """
    row = conn.execute(
        "INSERT INTO command_results (key, command, request_hash) VALUES (%s, %s, %s) "
        "ON CONFLICT (key) DO NOTHING RETURNING key",
        (key, command, request_hash),
    ).fetchone()
    if row is not None:
        return None
    stored = conn.execute(
        "SELECT command, request_hash, result FROM command_results WHERE key = %s", (key,)
    ).fetchone()
    assert stored is not None  # the conflicting row is committed and never deleted
    stored_command, stored_hash, result = stored
    if stored_command != command or stored_hash != request_hash:
        raise Conflict(
            f"idempotency key {key!r} was already used for a different {stored_command} request"
        )
    return StoredCommand(result)


def store_command_result(conn: psycopg.Connection, key: str, result: Any) -> None:
    conn.execute("UPDATE command_results SET result = %s WHERE key = %s", (Jsonb(result), key))


# ------------------------------------------------------------------------- accounts, balances


def ensure_player_accounts(conn: psycopg.Connection, account_ids: Iterable[str]) -> None:
    """Open a player account (balance 0) for each id that has none yet."""
    for account_id in sorted(set(account_ids)):
        conn.execute(
            "INSERT INTO accounts (id, kind) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
            (account_id, AccountKind.PLAYER.value),
        )


def lock_balances(conn: psycopg.Connection, account_ids: Iterable[str]) -> dict[str, BalanceRow]:
    """Lock the balance rows of ``account_ids`` (FOR UPDATE, in account id order so two writers
    never deadlock) and return them. Accounts that do not exist are missing from the result."""
    rows = conn.execute(
        "SELECT account_id, kind, balance, reserved FROM balances "
        "WHERE account_id = ANY(%s) ORDER BY account_id FOR UPDATE",
        (sorted(set(account_ids)),),
    ).fetchall()
    return {r[0]: BalanceRow(r[0], AccountKind(r[1]), r[2], r[3]) for r in rows}


def read_balance(conn: psycopg.Connection, account_id: str) -> BalanceRow | None:
    row = conn.execute(
        "SELECT account_id, kind, balance, reserved FROM balances WHERE account_id = %s",
        (account_id,),
    ).fetchone()
    return None if row is None else BalanceRow(row[0], AccountKind(row[1]), row[2], row[3])


# ---------------------------------------------------------------------------------- journal


def insert_transaction(conn: psycopg.Connection, transaction: JournalTransaction) -> None:
    """Append the transaction and its entries (credits first; see ``in_posting_order``)."""
    conn.execute(
        "INSERT INTO journal_transactions (id, kind, hand_id, table_id, metadata) "
        "VALUES (%s, %s, %s, %s, %s)",
        (
            transaction.id,
            transaction.kind.value,
            transaction.hand_id,
            transaction.table_id,
            Jsonb(dict(transaction.metadata)),
        ),
    )
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO journal_entries "
            "(transaction_id, account_id, amount, line_kind, seat, points) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            [JournalEntry.of(transaction.id, p) for p in transaction.in_posting_order()],
        )


def statement_rows(
    conn: psycopg.Connection, account_id: str, limit: int, before_seq: int | None
) -> list[StatementRow]:
    """The account's journal transactions, newest first, ``seq < before_seq`` when given."""
    heads = conn.execute(
        """
        WITH mine AS (
            SELECT t.seq, sum(e.amount) AS net
            FROM journal_entries e JOIN journal_transactions t ON t.id = e.transaction_id
            WHERE e.account_id = %(account)s
            GROUP BY t.seq
        ), running AS (
            SELECT seq, net, sum(net) OVER (ORDER BY seq) AS balance_after FROM mine
        )
        SELECT r.seq, t.id, t.kind, t.hand_id, t.table_id, t.created_at, t.metadata,
               r.net, r.balance_after
        FROM running r JOIN journal_transactions t ON t.seq = r.seq
        WHERE %(before)s::bigint IS NULL OR r.seq < %(before)s::bigint
        ORDER BY r.seq DESC
        LIMIT %(limit)s
        """,
        {"account": account_id, "before": before_seq, "limit": limit},
    ).fetchall()
    if not heads:
        return []
    lines: dict[str, list[tuple[str, int, int | None, int | None]]] = {}
    for tx_id, line_kind, amount, seat, points in conn.execute(
        "SELECT transaction_id, line_kind, amount, seat, points FROM journal_entries "
        "WHERE account_id = %s AND transaction_id = ANY(%s) ORDER BY id",
        (account_id, [h[1] for h in heads]),
    ):
        lines.setdefault(tx_id, []).append((line_kind, amount, seat, points))
    return [
        StatementRow(
            seq=h[0],
            transaction_id=h[1],
            kind=h[2],
            hand_id=h[3],
            table_id=h[4],
            posted_at=h[5],
            metadata=h[6],
            net_hundredths=int(h[7]),
            balance_after_hundredths=int(h[8]),
            lines=tuple(lines.get(h[1], ())),
        )
        for h in heads
    ]


# ------------------------------------------------------------------------------ reservations


def insert_reservation(
    conn: psycopg.Connection, hand_id: str, table_id: str, seat: int, account_id: str, amount: int
) -> None:
    conn.execute(
        "INSERT INTO reservations (hand_id, account_id, table_id, seat, amount) "
        "VALUES (%s, %s, %s, %s, %s)",
        (hand_id, account_id, table_id, seat, amount),
    )


def lock_held_reservations(conn: psycopg.Connection, hand_id: str) -> list[HeldReservation]:
    """The hand's held reservations, locked FOR UPDATE, in seat order."""
    rows = conn.execute(
        "SELECT seat, account_id, amount FROM reservations "
        "WHERE hand_id = %s AND state = 'held' ORDER BY seat FOR UPDATE",
        (hand_id,),
    ).fetchall()
    return [HeldReservation(seat=r[0], account_id=r[1], amount_hundredths=r[2]) for r in rows]


def reservations_of_hand(conn: psycopg.Connection, hand_id: str) -> list[ReservationRow]:
    """Every reservation of the hand, whatever its state, in seat order."""
    rows = conn.execute(
        "SELECT hand_id, seat, account_id, amount, state, settled_amount FROM reservations "
        "WHERE hand_id = %s ORDER BY seat",
        (hand_id,),
    ).fetchall()
    return [ReservationRow(*r) for r in rows]


def settle_reservation(
    conn: psycopg.Connection, hand_id: str, seat: int, settled_amount: int
) -> None:
    conn.execute(
        "UPDATE reservations SET state = 'settled', settled_amount = %s, resolved_at = now() "
        "WHERE hand_id = %s AND seat = %s AND state = 'held'",
        (settled_amount, hand_id, seat),
    )


# ----------------------------------------------------------------------------------- matches


def record_match_table(conn: psycopg.Connection, table_id: str, commission_bps: int) -> None:
    conn.execute(
        "INSERT INTO match_tables (table_id, commission_bps) VALUES (%s, %s) "
        "ON CONFLICT (table_id) DO NOTHING",
        (table_id, commission_bps),
    )


def match_table_commission_bps(conn: psycopg.Connection, table_id: str) -> int | None:
    row = conn.execute(
        "SELECT commission_bps FROM match_tables WHERE table_id = %s", (table_id,)
    ).fetchone()
    return None if row is None else int(row[0])


def lock_match(conn: psycopg.Connection, table_id: str, match_id: str) -> MatchBook | None:
    """The match's book, locked FOR UPDATE, or None."""
    row = conn.execute(
        "SELECT book FROM matches WHERE table_id = %s AND match_id = %s FOR UPDATE",
        (table_id, match_id),
    ).fetchone()
    return None if row is None else MatchBook.from_json(row[0])


def save_match(conn: psycopg.Connection, book: MatchBook) -> None:
    conn.execute(
        "INSERT INTO matches (table_id, match_id, book) VALUES (%s, %s, %s) "
        "ON CONFLICT (table_id, match_id) DO UPDATE SET book = EXCLUDED.book, updated_at = now()",
        (book.table_id, book.match_id, Jsonb(book.to_json())),
    )


# ---------------------------------------------------------------------------- played history


def record_table_variant(conn: psycopg.Connection, table_id: str, variant: str) -> None:
    conn.execute(
        "INSERT INTO table_variants (table_id, variant) VALUES (%s, %s) "
        "ON CONFLICT (table_id) DO NOTHING",
        (table_id, variant),
    )


def table_variant(conn: psycopg.Connection, table_id: str) -> str | None:
    row = conn.execute(
        "SELECT variant FROM table_variants WHERE table_id = %s", (table_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def add_played(conn: psycopg.Connection, entries: Sequence[PlayedEntry]) -> None:
    """Upsert each entry's row: its net added; its result and end set unless already ended."""
    with conn.cursor() as cur:
        cur.executemany(
            """
            INSERT INTO played (account_id, kind, ref_id, table_id, variant, format, result,
                                net_hundredths, ended_at)
            VALUES (%(account_id)s, %(kind)s, %(ref_id)s, %(table_id)s, %(variant)s, %(format)s,
                    %(result)s, %(net_hundredths)s, %(ended_at)s)
            ON CONFLICT (kind, table_id, ref_id, account_id) DO UPDATE SET
                net_hundredths = played.net_hundredths + EXCLUDED.net_hundredths,
                result = coalesce(played.result, EXCLUDED.result),
                ended_at = coalesce(played.ended_at, EXCLUDED.ended_at)
            """,
            [asdict(e) for e in entries],
        )


def played_page(
    conn: psycopg.Connection, account_id: str, limit: int, before: tuple[datetime, int] | None
) -> list[PlayedRow]:
    """The account's ended rows, newest first by (ended_at, id), before ``before`` if given."""
    rows = conn.execute(
        """
        SELECT id, account_id, kind, ref_id, table_id, variant, format, result, net_hundredths,
               ended_at
        FROM played
        WHERE account_id = %(account)s AND ended_at IS NOT NULL
          AND (%(at)s::timestamptz IS NULL OR (ended_at, id) < (%(at)s, %(id)s::bigint))
        ORDER BY ended_at DESC, id DESC
        LIMIT %(limit)s
        """,
        {
            "account": account_id,
            "at": None if before is None else before[0],
            "id": None if before is None else before[1],
            "limit": limit,
        },
    ).fetchall()
    return [PlayedRow(*r) for r in rows]


# --------------------------------------------------------------------------- responsible play


def player_limits(conn: psycopg.Connection, account_id: str) -> PlayerLimits | None:
    row = conn.execute(
        "SELECT limits FROM player_limits WHERE account_id = %s", (account_id,)
    ).fetchone()
    return None if row is None else PlayerLimits.from_json(row[0])


def save_player_limits(conn: psycopg.Connection, limits: PlayerLimits) -> None:
    conn.execute(
        "INSERT INTO player_limits (account_id, limits) VALUES (%s, %s) "
        "ON CONFLICT (account_id) DO UPDATE SET limits = EXCLUDED.limits, updated_at = now()",
        (limits.account_id, Jsonb(limits.to_json())),
    )


def add_period_loss(
    conn: psycopg.Connection, account_id: str, period: str, start: date, amount: int
) -> None:
    conn.execute(
        "INSERT INTO period_losses (account_id, period, period_start, net_loss_hundredths) "
        "VALUES (%s, %s, %s, %s) ON CONFLICT (account_id, period, period_start) "
        "DO UPDATE SET net_loss_hundredths = "
        "period_losses.net_loss_hundredths + EXCLUDED.net_loss_hundredths",
        (account_id, period, start, amount),
    )


def period_losses(
    conn: psycopg.Connection, account_id: str, periods: Sequence[tuple[str, date]]
) -> dict[str, int]:
    found = {p: 0 for p, _ in periods}
    for period, start in periods:
        row = conn.execute(
            "SELECT net_loss_hundredths FROM period_losses "
            "WHERE account_id = %s AND period = %s AND period_start = %s",
            (account_id, period, start),
        ).fetchone()
        if row is not None:
            found[period] = int(row[0])
    return found


def release_reservation(conn: psycopg.Connection, hand_id: str, seat: int) -> None:
    conn.execute(
        "UPDATE reservations SET state = 'released', resolved_at = now() "
        "WHERE hand_id = %s AND seat = %s AND state = 'held'",
        (hand_id, seat),
    )


# ------------------------------------------------------------------ consumer offsets, outbox


def store_offset(
    conn: psycopg.Connection, consumer_group: str, topic: str, partition: int, offset: int
) -> None:
    """Record that ``offset`` was handled: the group's next offset becomes at least offset + 1."""
    conn.execute(
        "INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset) "
        "VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (consumer_group, topic, partition) DO UPDATE SET "
        "next_offset = GREATEST(consumer_offsets.next_offset, EXCLUDED.next_offset), "
        "updated_at = now()",
        (consumer_group, topic, partition, offset + 1),
    )


def next_offsets(conn: psycopg.Connection, consumer_group: str) -> dict[tuple[str, int], int]:
    """``{(topic, partition): next offset to read}`` for the group (where its consumer seeks)."""
    rows = conn.execute(
        "SELECT topic, partition, next_offset FROM consumer_offsets WHERE consumer_group = %s",
        (consumer_group,),
    ).fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


def write_outbox(
    conn: psycopg.Connection, events: Sequence[tuple[str, str, str, str, bytes]]
) -> None:
    """Append ``(event_id, topic, key, type, payload)`` rows, in order."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO outbox (id, topic, key, type, payload) VALUES (%s, %s, %s, %s, %s)",
            list(events),
        )


def unpublished_outbox(conn: psycopg.Connection, limit: int = 100) -> list[OutboxRow]:
    """The oldest unpublished events, in the order they were written (locked, SKIP LOCKED)."""
    rows = conn.execute(
        "SELECT id, position, topic, key, type, payload, created_at FROM outbox "
        "WHERE published_at IS NULL ORDER BY position LIMIT %s FOR UPDATE SKIP LOCKED",
        (limit,),
    ).fetchall()
    return [OutboxRow(r[0], r[1], r[2], r[3], r[4], bytes(r[5]), r[6]) for r in rows]


def mark_published(conn: psycopg.Connection, event_ids: Sequence[str]) -> None:
    conn.execute(
        "UPDATE outbox SET published_at = now() WHERE id = ANY(%s) AND published_at IS NULL",
        (list(event_ids),),
    )


# -------------------------------------------------------------------------------- invariants


@dataclass(frozen=True)
class LedgerGauges:
    """Figures for ``/metrics``, in hundredths unless named otherwise."""

    issued_hundredths: int  # everything ever granted (minus the issuance balance)
    reserved_hundredths: int  # balances.reserved summed over all accounts
    held_reservations: int  # how many reservations are held
    held_reservations_hundredths: int  # the held reservations' amounts summed (= reserved)
    oldest_held_reservation_at: datetime | None  # when the oldest one was made; None if none
    commission_hundredths: int  # the house commission account's balance
    outbox_unpublished: int
    outbox_oldest_age_seconds: float  # 0.0 when nothing waits


@dataclass(frozen=True)
class LimitsGauges:
    """How many players have limits of their own, are on a break, are excluded."""

    with_limits: int
    on_break: int
    excluded: int


def limits_gauges(conn: psycopg.Connection, now: datetime) -> LimitsGauges:
    """Count the stored limits (one row per player who ever set one; a pending early end of a
    break is counted as on a break until the break's stored end)."""
    row = conn.execute(
        """
        SELECT
            count(*) FILTER (WHERE limits->'loss_limits' <> '[]'::jsonb
                             OR limits->'stake_limit_hundredths' <> 'null'::jsonb),
            count(*) FILTER (WHERE (limits->>'break_until')::timestamptz > %s),
            count(*) FILTER (WHERE limits->>'excluded_at' IS NOT NULL)
        FROM player_limits
        """,
        (now,),
    ).fetchone()
    assert row is not None
    return LimitsGauges(int(row[0]), int(row[1]), int(row[2]))


def gauges(conn: psycopg.Connection) -> LedgerGauges:
    """Read the ledger's gauges in one snapshot query (one statement, so ``reserved`` and the
    held reservations are read at the same instant and their difference is exact).

    Cost: the balances are summed (one row per account); held reservations are read through the
    partial index ``reservations_held_by_account`` (only the rows held now, whatever the history);
    unpublished outbox rows likewise. Nothing here grows with the journal.
    """
    row = conn.execute(
        """
        SELECT
            (SELECT -balance FROM balances WHERE kind = 'issuance'),
            (SELECT coalesce(sum(reserved), 0) FROM balances),
            held.n, held.amount, held.oldest,
            (SELECT coalesce(sum(balance), 0) FROM balances WHERE kind = 'house'),
            (SELECT count(*) FROM outbox WHERE published_at IS NULL),
            (SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)
               FROM outbox WHERE published_at IS NULL)
        FROM (
            SELECT count(*) AS n, coalesce(sum(amount), 0) AS amount, min(created_at) AS oldest
            FROM reservations WHERE state = 'held'
        ) AS held
        """
    ).fetchone()
    assert row is not None
    return LedgerGauges(
        issued_hundredths=int(row[0]),
        reserved_hundredths=int(row[1]),
        held_reservations=int(row[2]),
        held_reservations_hundredths=int(row[3]),
        oldest_held_reservation_at=row[4],
        commission_hundredths=int(row[5]),
        outbox_unpublished=int(row[6]),
        outbox_oldest_age_seconds=float(row[7]),
    )


def outbox_type(conn: psycopg.Connection, event_id: str) -> str | None:
    """The payload type name of outbox row ``event_id`` (None if there is none)."""
    row = conn.execute("SELECT type FROM outbox WHERE id = %s", (event_id,)).fetchone()
    return None if row is None else str(row[0])
