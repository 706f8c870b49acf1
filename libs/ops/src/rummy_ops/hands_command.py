"""``rummy hands ACCOUNT``: an operator lists a player's hands and matches through the ledger's
``ListMyHands`` (newest first; the ledger writes them as it settles, so they are what it settled).

One line per points hand or match: when it ended, hand or match and its id, the table (its name
with ``--names``, looked up once through the table service), the variant, the format, the result
in the settlement's words and the net in tokens (``+3.60``). ``--limit`` entries at most (pages
of up to 100 are asked for until it is reached); when more remain, the last line gives the
``--page-token`` to continue from. ``--json`` prints ``{"entries": [...], "next_page_token":
...}`` with the net in integer hundredths.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ops.money import tokens
from rummy_ops.operator_auth import account_argument, operator_options, operator_token
from rummy_ops.reach import LEDGER_SERVICE, ledger_address_option, service_channel
from rummy_ops.table_names import DEFAULT_TABLE_ADDRESS, list_tables, table_router
from rummy_platform.auth import bearer_metadata

#: The most entries one ListMyHands page holds (the ledger's maximum).
MAX_PAGE = 100


def entry_id(entry: pb.PlayedEntry) -> str:
    return entry.hand_id or entry.match_id


def describe(
    entries: Sequence[pb.PlayedEntry], names: Mapping[str, str] | None = None
) -> list[str]:
    """The lines ``rummy hands`` prints for ``entries`` (tables by name where ``names`` has one)."""
    names = names or {}
    return [
        f"{e.ended_at.ToJsonString()}  {e.kind:5}  {entry_id(e)}  "
        f"table {names.get(e.table_id, e.table_id)}  {e.variant}  {e.format}  {e.result}  "
        f"{tokens(e.net_hundredths, signed=True)}"
        for e in entries
    ]


def as_json(entries: Sequence[pb.PlayedEntry], next_page_token: str) -> dict[str, Any]:
    """What ``--json`` prints: each entry's fields, the net in integer hundredths."""
    return {
        "entries": [
            {
                "kind": e.kind,
                "hand_id": e.hand_id,
                "match_id": e.match_id,
                "table_id": e.table_id,
                "variant": e.variant,
                "format": e.format,
                "result": e.result,
                "net_hundredths": e.net_hundredths,
                "ended_at": e.ended_at.ToJsonString(),
            }
            for e in entries
        ],
        "next_page_token": next_page_token,
    }


def fetch(
    stub: pb_grpc.LedgerServiceStub,
    account_id: str,
    limit: int,
    page_token: str,
    metadata: tuple[tuple[str, str], ...],
) -> tuple[list[pb.PlayedEntry], str]:
    """Up to ``limit`` entries from ``page_token`` on, page after page, and the token to go on
    from (``""``: nothing more). Raises grpc.RpcError."""
    entries: list[pb.PlayedEntry] = []
    token = page_token
    while len(entries) < limit:
        page = stub.ListMyHands(
            pb.ListMyHandsRequest(
                account_id=account_id,
                page_size=min(MAX_PAGE, limit - len(entries)),
                page_token=token,
            ),
            metadata=metadata,
            timeout=10,
        )
        entries.extend(page.entries)
        token = page.next_page_token
        if not token:
            break
    return entries, token


@click.command("hands")
@account_argument
@ledger_address_option
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=20,
    show_default=True,
    help="The most entries to print.",
)
@click.option("--page-token", default="", help="Continue where a previous listing stopped.")
@click.option("--names", is_flag=True, help="Show each table by name (asks the table service).")
@click.option(
    "--table-address",
    envvar="RUMMY_TABLE_ADDRESS",
    default=DEFAULT_TABLE_ADDRESS,
    show_default=True,
    help="The table service, for --names (RUMMY_TABLE_ADDRESS).",
)
@operator_options
@click.option("--json", "json_out", is_flag=True, help="Print JSON (integer hundredths).")
def hands(
    account_id: str,
    address: str,
    limit: int,
    page_token: str,
    names: bool,
    table_address: str,
    token: str | None,
    operator: str,
    json_out: bool,
) -> None:
    """List ACCOUNT_ID's hands and matches, newest first, with each one's result and net (read
    only). Exit status 1 when the ledger refuses (the status and its message are printed)."""
    metadata = bearer_metadata(operator_token(token, operator))
    with service_channel(LEDGER_SERVICE, address) as channel:
        entries, next_token = fetch(
            pb_grpc.LedgerServiceStub(channel), account_id, limit, page_token, metadata
        )
    if json_out:
        click.echo(json.dumps(as_json(entries, next_token)))
        return
    table_names: dict[str, str] = {}
    if names and entries:
        router = table_router(table_address)
        try:
            table_names = {t.table_id: t.name for t in list_tables(router, metadata) if t.name}
        finally:
            router.close()
    for line in describe(entries, table_names):
        click.echo(line)
    if not entries:
        click.echo(f"{account_id} has no ended hand or match")
    if next_token:
        click.echo(f"more: --page-token {next_token}")
