"""Operator grants: idempotent on their key, conflicting on a different body."""

from __future__ import annotations

import pytest
from ledger_support import balance_of, new_id
from psycopg_pool import ConnectionPool

from rummy_ledger.adapters import db
from rummy_ledger.application import ConsumedPosition, OutgoingEvent, grant
from rummy_ledger.domain import AccountNotFound, Conflict, Grant, InvalidCommand

pytestmark = pytest.mark.integration


def test_a_retried_grant_with_the_same_key_and_body_returns_the_first_result(
    pool: ConnectionPool,
) -> None:
    account, key = new_id("player"), new_id("grant")
    first = grant(pool, Grant("op", account, 2500, key))
    grant(pool, Grant("op", account, 100, new_id("grant")))  # the balance moves on meanwhile
    retry = grant(pool, Grant("op", account, 2500, key))

    assert retry == first and retry.replayed and not first.replayed
    assert (retry.transaction_id, retry.balance_hundredths) == (f"grant:{key}", 2500)
    assert balance_of(pool, account) == (2600, 0, 2600)


def test_the_same_grant_key_with_a_different_body_is_a_conflict_and_moves_nothing(
    pool: ConnectionPool,
) -> None:
    account, key = new_id("player"), new_id("grant")
    grant(pool, Grant("op", account, 2500, key))
    with pytest.raises(Conflict, match=key):
        grant(pool, Grant("op", account, 2501, key))
    with pytest.raises(Conflict):
        grant(pool, Grant("op", new_id("player"), 2500, key))
    assert balance_of(pool, account) == (2500, 0, 2500)


def test_a_grant_must_move_a_positive_amount_to_a_player(pool: ConnectionPool) -> None:
    with pytest.raises(InvalidCommand, match="positive amount"):
        grant(pool, Grant("op", new_id("player"), 0, new_id("grant")))
    with pytest.raises(InvalidCommand, match="house account"):
        grant(pool, Grant("op", "house:commission", 10, new_id("grant")))


def test_a_grant_writes_its_event_and_consumed_offset_in_the_same_transaction_once(
    pool: ConnectionPool,
) -> None:
    account, key = new_id("player"), new_id("grant")
    event = OutgoingEvent(new_id("evt"), "ledger-events", account, "TokensGranted", b"\x01\x02")
    for offset in (9, 9, 10):
        grant(
            pool,
            Grant("op", account, 300, key),
            consumed=ConsumedPosition("ops-commands", 0, offset, consumer_group="ledger-test"),
            outbox=[event],
        )
    with pool.connection() as conn:
        rows = [r for r in db.unpublished_outbox(conn) if r.key == account]
        assert [(r.event_id, r.type, r.payload) for r in rows] == [
            (event.event_id, "TokensGranted", b"\x01\x02")
        ]
        db.mark_published(conn, [event.event_id])
        assert [r for r in db.unpublished_outbox(conn) if r.key == account] == []
        assert db.next_offsets(conn, "ledger-test") == {("ops-commands", 0): 11}


def test_a_handler_on_the_callers_connection_commits_only_with_the_caller(
    pool: ConnectionPool,
) -> None:
    kept, dropped = new_id("player"), new_id("player")
    with pool.connection() as conn:
        with conn.transaction():
            grant(conn, Grant("op", kept, 700, new_id("grant")))
        with pytest.raises(RuntimeError), conn.transaction():
            grant(conn, Grant("op", dropped, 700, new_id("grant")))
            raise RuntimeError("the reactor's transaction fails after the handler")
    assert balance_of(pool, kept) == (700, 0, 700)
    with pytest.raises(AccountNotFound):
        balance_of(pool, dropped)
