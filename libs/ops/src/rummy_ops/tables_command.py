"""``rummy tables``: every table the table service lists, closed ones included.

One line per table in aligned columns: its id, name, variant, format, seats taken of the seats,
what it plays for (a points table's point value, a format's entry fee or its point value a game
point, in House Tokens: ``13.00``), the commission (percent), its state and the hands played.
``--json`` prints the same as a JSON array, money in integer hundredths of a House Token and the
commission in basis points. The format and its money come from the table's match options
through the format's own code (:func:`rummy_ops.money.stakes_of`), the variant is the
table's variant's name: nothing here knows one game.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import click

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.money import Stakes, commission_text, stakes_of
from rummy_ops.operator_auth import operator_token
from rummy_ops.table_names import (
    list_tables,
    matching,
    no_such_table,
    state_name,
    table_router,
    table_service_options,
)
from rummy_platform.auth import bearer_metadata

#: The columns of the human listing, and whether each is right-aligned (a number).
COLUMNS: tuple[tuple[str, bool], ...] = (
    ("ID", False),
    ("NAME", False),
    ("VARIANT", False),
    ("FORMAT", False),
    ("SEATS", True),
    ("STAKES", False),
    ("COMMISSION", True),
    ("STATE", False),
    ("HANDS", True),
)


def _stakes(table: api.TableSummary) -> Stakes:
    options = table.match if table.HasField("match") else None
    return stakes_of(options, table.commission_bps, table.point_value_hundredths)


def table_json(table: api.TableSummary) -> dict[str, object]:
    """One table of ``--json``: money in hundredths (None when the format has no such money),
    the commission in basis points, the state's name."""
    stakes = _stakes(table)
    return {
        "table_id": table.table_id,
        "name": table.name,
        "variant": table.variant,
        "format": stakes.format_name,
        "seats_taken": table.seats_taken,
        "seat_count": table.seat_count,
        "point_value_hundredths": stakes.point_value_hundredths,
        "entry_fee_hundredths": stakes.entry_fee_hundredths,
        "commission_bps": table.commission_bps,
        "state": state_name(table.state),
        "hands_played": table.hands_played,
    }


def table_row(table: api.TableSummary) -> list[str]:
    """One table's cells, in :data:`COLUMNS` order."""
    stakes = _stakes(table)
    return [
        table.table_id,
        table.name or "-",
        table.variant,
        stakes.format_name,
        f"{table.seats_taken}/{table.seat_count}",
        stakes.text(),
        commission_text(table.commission_bps),
        state_name(table.state),
        str(table.hands_played),
    ]


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """The header and ``rows`` in columns as wide as their widest cell, two spaces apart
    (numbers right-aligned), trailing spaces trimmed."""
    table = [[name for name, _right in COLUMNS], *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    return [
        "  ".join(
            cell.rjust(width) if right else cell.ljust(width)
            for cell, width, (_name, right) in zip(row, widths, COLUMNS, strict=True)
        ).rstrip()
        for row in table
    ]


@click.command("tables")
@click.argument("table", required=False)
@table_service_options()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array (money in hundredths).")
def tables(
    table: str | None, address: str, token: str | None, operator: str, as_json: bool
) -> None:
    """List every table (closed ones too, with their state); TABLE (an id or a name) lists
    only the tables it names.

    \b
    Columns:
      ID          the table id (what a name resolves to)
      NAME        the name it was opened with (-: none)
      VARIANT     the variant its hands are played by
      FORMAT      single (a points table) or the match format (pool-101, deals-3, ...)
      SEATS       seats taken/seats
      STAKES      point: House Tokens a point (a game point in a game format);
                  entry: the entry fee a seat
      COMMISSION  the house's share, percent
      STATE       open; closing (the current hand plays out); closed
      HANDS       hands started (the one being played included)

    Exit status 1 when the table service refuses or is not reached, or when TABLE names no
    table."""
    metadata = bearer_metadata(operator_token(token, operator))
    router = table_router(address)
    try:
        listed = list_tables(router, metadata)
    finally:
        router.close()
    if table is not None:
        listed = matching(table, listed)
        if not listed:
            raise no_such_table(table)
    if as_json:
        click.echo(json.dumps([table_json(t) for t in listed], indent=2))
        return
    for line in aligned([table_row(t) for t in listed]):
        click.echo(line)
