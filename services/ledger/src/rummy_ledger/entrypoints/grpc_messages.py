"""Protobuf <-> the ledger's own types for ``rummy.ledger.v1.LedgerService`` (pure functions, no
I/O): a ``GrantRequest`` into the :class:`~rummy_ledger.domain.accounts.Grant` command, and the
application's results (:class:`~rummy_ledger.application.accounts.Balance`, statement items,
:class:`~rummy_ledger.application.accounts.GrantResult`) into responses. Amounts are hundredths
of a House Token, as given; the servicer (:mod:`.grpc`) checks the caller and makes the call.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.timestamp_pb2 import Timestamp

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy_ledger.application.accounts import Balance, GrantResult, StatementItem
from rummy_ledger.application.history import HAND
from rummy_ledger.application.ports import PlayedRow
from rummy_ledger.domain.accounts import Grant


def grant_command(operator: str, request: pb.GrantRequest) -> Grant:
    """The ``Grant`` an operator (``operator``: its account id, the audit trail's name) asks for;
    ``memo`` is not stored. Validated by the application (InvalidCommand)."""
    return Grant(
        operator=operator,
        account_id=request.account_id,
        amount_hundredths=request.amount_hundredths,
        idempotency_key=request.idempotency_key,
    )


def grant_response(result: GrantResult) -> pb.GrantResponse:
    """The journal transaction and the balance right after the (first) grant."""
    return pb.GrantResponse(
        journal_transaction_id=result.transaction_id,
        balance_hundredths=result.balance_hundredths,
    )


def balance_response(balance: Balance) -> pb.GetBalanceResponse:
    return pb.GetBalanceResponse(
        account_id=balance.account_id,
        balance_hundredths=balance.balance_hundredths,
        reserved_hundredths=balance.reserved_hundredths,
        available_hundredths=balance.available_hundredths,
    )


def statement_response(items: Sequence[StatementItem], page_size: int) -> pb.GetStatementResponse:
    """The first ``page_size`` of ``items`` (newest first; the caller read one more to know
    whether another page follows), with the next page's token (the last entry's position in
    ASCII digits) or ``""`` on the last page."""
    page = items[:page_size]
    more = len(items) > page_size
    return pb.GetStatementResponse(
        entries=[statement_entry(item) for item in page],
        next_page_token=str(page[-1].seq) if more else "",
    )


def statement_entry(item: StatementItem) -> pb.StatementEntry:
    """One statement item as a ``StatementEntry`` (with its memo)."""
    posted_at = Timestamp()
    posted_at.FromDatetime(item.posted_at)
    entry = pb.StatementEntry(
        journal_transaction_id=item.transaction_id,
        posted_at=posted_at,
        amount_hundredths=item.amount_hundredths,
        balance_after_hundredths=item.balance_after_hundredths,
        memo=statement_memo(item),
        hand_id=item.hand_id or "",
        kind=item.kind,
        table_id=item.table_id or "",
        cost_hundredths=item.cost_hundredths,
        winnings_hundredths=item.winnings_hundredths,
        commission_hundredths=item.commission_hundredths,
    )
    if item.points is not None:
        entry.points = item.points
    return entry


def statement_memo(item: StatementItem) -> str:
    """A line a person reads: ``"grant"``, ``"hand h1: lost, 40 points, cost 1000"``,
    ``"hand h1: won 3500, commission 437"``, ``"hand h1: commission 437"`` (the house)."""
    if item.hand_id is None:
        return item.kind
    if item.points is None:  # the house's commission line
        return f"hand {item.hand_id}: commission {item.commission_hundredths}"
    if item.points == 0 and not item.cost_hundredths:
        return (
            f"hand {item.hand_id}: won {item.winnings_hundredths}, "
            f"commission {item.commission_hundredths}"
        )
    return f"hand {item.hand_id}: lost, {item.points} points, cost {item.cost_hundredths}"


def played_response(rows: Sequence[PlayedRow], next_page_token: str) -> pb.ListMyHandsResponse:
    """A page of ``ListMyHands``: each row as a ``PlayedEntry`` (its id in ``hand_id`` for a
    hand, ``match_id`` for a match), and the next page's token (``""`` on the last page)."""
    return pb.ListMyHandsResponse(
        entries=[played_entry(row) for row in rows], next_page_token=next_page_token
    )


def played_entry(row: PlayedRow) -> pb.PlayedEntry:
    ended_at = Timestamp()
    ended_at.FromDatetime(row.ended_at)
    return pb.PlayedEntry(
        kind=row.kind,
        hand_id=row.ref_id if row.kind == HAND else "",
        match_id="" if row.kind == HAND else row.ref_id,
        table_id=row.table_id,
        variant=row.variant,
        format=row.format,
        result=row.result,
        net_hundredths=row.net_hundredths,
        ended_at=ended_at,
    )
