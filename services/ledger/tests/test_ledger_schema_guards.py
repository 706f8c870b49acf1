"""The database itself keeps the ledger's invariants, even against raw SQL that skips the code."""

from __future__ import annotations

import psycopg
import pytest
from ledger_support import funded_player, new_id, storage
from psycopg import errors
from psycopg_pool import ConnectionPool

from rummy_ledger import contract as ledger_contract
from rummy_ledger.application.accounts import reserve_stakes
from rummy_ledger.domain.accounts import ReserveStakes, SeatStake

pytestmark = pytest.mark.integration


def _post(conn: psycopg.Connection, tx_id: str, lines: list[tuple[str, int]]) -> None:
    """Insert a grant-kind journal transaction with raw SQL, in one database transaction."""
    with conn.transaction():
        conn.execute("INSERT INTO journal_transactions (id, kind) VALUES (%s, 'grant')", (tx_id,))
        for account, amount in lines:
            conn.execute(
                "INSERT INTO journal_entries (transaction_id, account_id, amount, line_kind) "
                "VALUES (%s, %s, %s, 'grant')",
                (tx_id, account, amount),
            )


def _balance(conn: psycopg.Connection, account: str) -> tuple[int, int]:
    row = conn.execute(
        "SELECT balance, reserved FROM balances WHERE account_id = %s", (account,)
    ).fetchone()
    assert row is not None
    return row[0], row[1]


def test_journal_entries_cannot_be_updated_or_deleted(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 500)
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        conn.execute(
            "UPDATE journal_entries SET amount = 1000000 WHERE account_id = %s", (account,)
        )
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        conn.execute("DELETE FROM journal_entries WHERE account_id = %s", (account,))
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        conn.execute("TRUNCATE journal_entries CASCADE")
    assert _balance(conn, account) == (500, 0)


def test_journal_transactions_cannot_be_updated_or_deleted(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    funded_player(pool, 500)
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        conn.execute("UPDATE journal_transactions SET kind = 'settlement'")
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        conn.execute("DELETE FROM journal_transactions")


def test_an_unbalanced_transaction_inserted_with_raw_sql_is_rejected_at_commit(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 100)
    tx_id = new_id("raw")
    with pytest.raises(errors.CheckViolation, match="does not sum to zero"):
        _post(conn, tx_id, [("house:issuance", -1000), (account, 900)])
    assert _balance(conn, account) == (100, 0)
    assert (
        conn.execute("SELECT 1 FROM journal_transactions WHERE id = %s", (tx_id,)).fetchone()
        is None
    )


def test_a_transaction_with_a_single_entry_is_rejected_at_commit(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 100)
    with pytest.raises(errors.CheckViolation):
        _post(conn, new_id("raw"), [(account, 0)])


def test_a_player_account_cannot_go_negative_even_with_raw_sql(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    poor, other = funded_player(pool, 100), funded_player(pool, 100)
    with pytest.raises(errors.CheckViolation, match="(balance|available)_not_negative"):
        _post(conn, new_id("raw"), [(other, 101), (poor, -101)])
    assert _balance(conn, poor) == (100, 0)


def test_the_issuance_account_alone_may_go_negative(conn: psycopg.Connection) -> None:
    conn.execute("INSERT INTO accounts (id, kind) VALUES (%s, 'player')", (player := new_id("p"),))
    _post(conn, new_id("raw"), [(player, 50), ("house:issuance", -50)])
    assert _balance(conn, player) == (50, 0)
    assert _balance(conn, "house:issuance")[0] < 0


def test_balances_cannot_be_written_directly(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 100)
    with pytest.raises(errors.RestrictViolation, match="only through journal entries"):
        conn.execute("UPDATE balances SET balance = 1000000 WHERE account_id = %s", (account,))
    with pytest.raises(errors.RestrictViolation):
        conn.execute("DELETE FROM balances WHERE account_id = %s", (account,))
    assert _balance(conn, account) == (100, 0)


def test_a_raw_reservation_beyond_the_available_balance_is_rejected(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 1000)
    with pytest.raises(errors.CheckViolation, match="available_not_negative"):
        conn.execute(
            "INSERT INTO reservations (hand_id, account_id, table_id, seat, amount) "
            "VALUES (%s, %s, 't', 0, 1001)",
            (new_id("hand"), account),
        )
    assert _balance(conn, account) == (1000, 0)


def test_a_reservation_resolves_exactly_once_and_never_goes_back(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 1000)
    hand = new_id("hand")
    reserve_stakes(storage(pool), ReserveStakes(hand, "t", (SeatStake(0, account, 600),)))
    conn.execute(
        "UPDATE reservations SET state = 'released', resolved_at = now() WHERE hand_id = %s",
        (hand,),
    )
    assert _balance(conn, account) == (1000, 0)
    with pytest.raises(errors.RestrictViolation, match="resolves exactly once"):
        conn.execute(
            "UPDATE reservations SET state = 'held', resolved_at = NULL WHERE hand_id = %s", (hand,)
        )
    with pytest.raises(errors.RestrictViolation, match="resolves exactly once"):
        conn.execute(
            "UPDATE reservations SET state = 'settled', settled_amount = 0 WHERE hand_id = %s",
            (hand,),
        )
    with pytest.raises(errors.RestrictViolation, match="never deleted"):
        conn.execute("DELETE FROM reservations WHERE hand_id = %s", (hand,))
    assert _balance(conn, account) == (1000, 0)


def test_a_reservation_cannot_be_settled_above_what_it_held(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    account = funded_player(pool, 1000)
    hand = new_id("hand")
    reserve_stakes(storage(pool), ReserveStakes(hand, "t", (SeatStake(0, account, 600),)))
    with pytest.raises(errors.CheckViolation, match="resolution_shape"):
        conn.execute(
            "UPDATE reservations SET state = 'settled', settled_amount = 601, resolved_at = now() "
            "WHERE hand_id = %s",
            (hand,),
        )
    with pytest.raises(errors.RestrictViolation, match="only the state"):
        conn.execute(
            "UPDATE reservations SET amount = 1, state = 'released', resolved_at = now() "
            "WHERE hand_id = %s",
            (hand,),
        )
    assert _balance(conn, account) == (1000, 600)


def test_a_hand_has_one_settlement_transaction_whatever_its_id(conn: psycopg.Connection) -> None:
    hand = new_id("hand")
    a, b = new_id("p"), new_id("p")
    conn.execute("INSERT INTO accounts (id, kind) VALUES (%s, 'player'), (%s, 'player')", (a, b))
    insert_settlement = (
        "INSERT INTO journal_transactions (id, kind, hand_id, table_id) "
        "VALUES (%s, 'settlement', %s, 't')"
    )
    with conn.transaction():
        conn.execute(insert_settlement, ("first", hand))
        conn.execute(
            "INSERT INTO journal_entries (transaction_id, account_id, amount, line_kind) "
            "VALUES ('first', %s, 0, 'commission'), ('first', %s, 0, 'win')",
            (a, b),
        )
    with pytest.raises(errors.UniqueViolation, match="journal_one_settlement_per_hand"):
        conn.execute(insert_settlement, ("second", hand))
    assert ledger_contract.invariant_violations(conn) == []


def test_a_raw_loss_line_beyond_the_seats_reservation_is_rejected_at_commit(
    pool: ConnectionPool, conn: psycopg.Connection
) -> None:
    loser, winner = funded_player(pool, 5000), funded_player(pool, 5000)
    hand = new_id("hand")
    reserve_stakes(
        storage(pool),
        ReserveStakes(hand, "t", (SeatStake(0, winner, 1000), SeatStake(1, loser, 1000))),
    )
    with (
        pytest.raises(errors.CheckViolation, match="matches no reservation settled"),
        conn.transaction(),
    ):
        conn.execute(
            "UPDATE reservations SET state = 'settled', settled_amount = 1000, "
            "resolved_at = now() WHERE hand_id = %s",
            (hand,),
        )
        conn.execute(
            "INSERT INTO journal_transactions (id, kind, hand_id, table_id) "
            "VALUES (%s, 'settlement', %s, 't')",
            (f"settlement:{hand}", hand),
        )
        conn.execute(
            "INSERT INTO journal_entries (transaction_id, account_id, amount, line_kind) "
            "VALUES (%s, %s, -1500, 'loss'), (%s, %s, 1500, 'win')",
            (f"settlement:{hand}", loser, f"settlement:{hand}", winner),
        )
    assert _balance(conn, loser) == (5000, 1000)


def test_the_guards_work_from_a_session_with_another_search_path(
    pool: ConnectionPool, ledger_database_url: str
) -> None:
    account = funded_player(pool, 100)
    with psycopg.connect(ledger_database_url, autocommit=True) as other:
        assert other.execute("SHOW search_path").fetchone() != ("ledger",)
        tx = new_id("raw")
        with (
            pytest.raises(errors.CheckViolation, match="does not sum to zero"),
            other.transaction(),
        ):
            other.execute(
                "INSERT INTO ledger.journal_transactions (id, kind) VALUES (%s, 'grant')", (tx,)
            )
            other.execute(
                "INSERT INTO ledger.journal_entries (transaction_id, account_id, amount, "
                "line_kind) VALUES (%s, %s, 5, 'grant'), (%s, 'house:issuance', -4, 'grant')",
                (tx, account, tx),
            )
