"""The ledger's contract: what the ops tools may know of the ledger without importing its
internals (the import contracts let ``rummy_ops`` import this module and no other of the ledger).

- :func:`match_settlement_key`: the key the journal names a match's money by
  (``journal_transactions.hand_id``); the ledger writes under it, the replay reads by it.
- :func:`journal_sum`, :func:`invariant_violations`: the ledger's invariants over its PostgreSQL
  tables (schema ``ledger``: ``balances``, ``journal_entries``, ``reservations``), as plain SQL
  over a connection whose ``search_path`` is that schema: the checks the ledger runs on itself
  (its full-scan gauges, its storage's ``invariant_violations``) and ``rummy soak`` runs from
  outside.

Amounts are hundredths of a House Token.
"""

from __future__ import annotations

import psycopg

from rummy_ledger.domain.journal_keys import match_settlement_key

__all__ = ["invariant_violations", "journal_sum", "match_settlement_key"]


def journal_sum(conn: psycopg.Connection) -> int:
    """The sum of every journal entry ever posted, in hundredths: 0 in a sound ledger (every
    transaction sums to zero). Cost: a full scan of ``journal_entries`` (one row per line of
    every grant and settlement), so callers bound how often they run it."""
    (total,) = conn.execute("SELECT coalesce(sum(amount), 0) FROM journal_entries").fetchone()  # type: ignore[misc]
    return int(total)


def invariant_violations(conn: psycopg.Connection) -> list[str]:
    """Check the ledger's invariants over the whole database; ``[]`` when all hold.

    Tokens are conserved (balances sum to zero); every balance equals the sum of its journal
    entries; every reserved amount equals the sum of its held reservations; every transaction
    sums to zero; no account but issuance has a negative balance or available balance.
    """
    problems: list[str] = []
    (total,) = conn.execute("SELECT coalesce(sum(balance), 0) FROM balances").fetchone()  # type: ignore[misc]
    if total != 0:
        problems.append(f"balances sum to {total}, not 0")
    for account_id, balance, posted in conn.execute(
        "SELECT b.account_id, b.balance, coalesce(sum(e.amount), 0) FROM balances b "
        "LEFT JOIN journal_entries e ON e.account_id = b.account_id "
        "GROUP BY b.account_id, b.balance HAVING b.balance <> coalesce(sum(e.amount), 0)"
    ):
        problems.append(f"{account_id}: balance {balance} but its entries sum to {posted}")
    for account_id, reserved, held in conn.execute(
        "SELECT b.account_id, b.reserved, coalesce(sum(r.amount), 0) FROM balances b "
        "LEFT JOIN reservations r ON r.account_id = b.account_id AND r.state = 'held' "
        "GROUP BY b.account_id, b.reserved HAVING b.reserved <> coalesce(sum(r.amount), 0)"
    ):
        problems.append(f"{account_id}: reserved {reserved} but held reservations sum to {held}")
    for tx_id, tx_sum in conn.execute(
        "SELECT transaction_id, sum(amount) FROM journal_entries GROUP BY transaction_id "
        "HAVING sum(amount) <> 0"
    ):
        problems.append(f"transaction {tx_id} sums to {tx_sum}")
    for account_id, balance, reserved in conn.execute(
        "SELECT account_id, balance, reserved FROM balances "
        "WHERE kind <> 'issuance' AND (balance < 0 OR balance - reserved < 0)"
    ):
        problems.append(f"{account_id}: balance {balance}, reserved {reserved}")
    return problems
