"""A hand's settlement as the ledger's journal in PostgreSQL holds it (schema ``ledger``:
``journal_transactions`` of kind ``settlement`` with the hand id, and their ``journal_entries``)."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import sql

from rummy_ops.reach import connect_postgres
from rummy_ops.replay.checks import LedgerRows

#: The ledger service's schema (rummy_ledger's migrations create it).
LEDGER_SCHEMA = "ledger"


#: One journal entry of a settlement: transaction id, account id, amount (hundredths, signed),
#: line kind, seat (None for the house's lines), points (None but for a loss line).
JournalRow = tuple[str, str, int, str, "int | None", "int | None"]


def ledger_rows(rows: Sequence[JournalRow]) -> LedgerRows | None:
    """A hand's settlement entries (one transaction's, in entry order) summed per seat, or None
    for no entries. Amounts in hundredths of a House Token; commission = the house's commission
    line(s)."""
    if not rows:
        return None
    net: dict[int, int] = {}
    points: dict[int, int] = {}
    commission = 0
    for _tx, _account, amount, kind, seat, pts in rows:
        if seat is None:
            if kind == "commission":
                commission += amount
            continue
        net[seat] = net.get(seat, 0) + amount
        if kind == "loss":
            points[seat] = points.get(seat, 0) + (pts or 0)
    return LedgerRows(rows[0][0], net, points, commission)


class JournalReader:
    """Reads settlements from the journal at ``database_url``; use as a context manager or call
    :meth:`close`. Raises :class:`~rummy_ops.reach.Unreachable` if the database does not answer
    within :data:`~rummy_ops.reach.REACH_TIMEOUT_S` seconds, psycopg.Error if it refuses."""

    def __init__(self, database_url: str, schema: str = LEDGER_SCHEMA) -> None:
        self._conn = connect_postgres(database_url, autocommit=True)
        self._query = sql.SQL(
            "SELECT t.id, e.account_id, e.amount, e.line_kind, e.seat, e.points "
            "FROM {s}.journal_transactions t JOIN {s}.journal_entries e ON e.transaction_id = t.id "
            "WHERE t.kind = 'settlement' AND t.hand_id = %s ORDER BY e.id"
        ).format(s=sql.Identifier(schema))

    def __call__(self, hand_id: str) -> LedgerRows | None:
        """The hand's settlement rows summed per seat, or None if the journal has none.
        Amounts in hundredths of a House Token; commission = the house's commission line(s)."""
        return ledger_rows(self._conn.execute(self._query, (hand_id,)).fetchall())

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> JournalReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
