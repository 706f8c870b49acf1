"""A player's hands and matches (ListMyHands): the read model the settlements write, and its pages.

The ledger is keyed by account and consumes every settlement, so it keeps this history; the
table service keeps no per-account index. One row per account per **points hand** (kind
``hand``) and per **match** (kind ``match``): its table, its variant (the name the table wrote in
``TableOpened.rule_set`` or, for a table the ledger met first at a hand, in ``HandStarted``'s;
left out there: ``rummy_rules.registry.LEGACY_VARIANT``, by ``rummy_ledger.application.upcast``),
its format (``single`` for a points hand, ``MatchStarted.match_format`` for a match), its result
and its net in hundredths of a House Token.

Written by the handlers that post the money, inside their transaction (so exactly once with the
consumed offset; a repeat writes nothing again):

- ``accounts.settle_hand``: a hand's row per account, ``result`` its ``SeatResult.outcome`` as
  the table wrote it (``won``, ``counted``, ``first_drop``, ...), net = what the settlement posted
  to the account (its win or its loss); ``refuse_settlement``: ``void``, net 0. An aborted hand
  moved nothing and is not listed. A hand at a table hosting a match format is one of its deals:
  not listed (the match is).
- ``matches.settle_match``: each game's settlement (game to N) adds the account's net to the
  match's row, which is not listed until the match ends; ``MatchEnded`` (game 0) adds the
  entries' settlement and ends it (``won`` for a seat of ``MatchEnded.winners``, else ``lost``;
  ``void`` when refused), a free match at net 0; ``abort_match`` ends it ``aborted`` with what its
  settled games moved (a match aborted before any game settled is not listed).

Read with :func:`list_played`, newest first by (``ended_at``, row id); a page token is that
position of a page's last row, opaque to the caller and stable under new rows.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

from rummy_ledger.application.ports import LedgerUnitOfWork, PlayedEntry, PlayedRow
from rummy_ledger.domain.accounts import InvalidCommand, JournalTransaction
from rummy_ledger.domain.matches import MatchBook

HAND, MATCH = "hand", "match"
#: The format of a points hand (``rummy_rules.formats.single``'s name: no match around it).
SINGLE_FORMAT = "single"
#: Results the ledger writes itself: a settlement refused, a match aborted; a match's
#: seat among ``MatchEnded.winners`` or not.
VOID, ABORTED, WON, LOST = "void", "aborted", "won", "lost"

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
_TOKEN_PREFIX = "p1:"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def record_variant(uow: LedgerUnitOfWork, table_id: str, variant: str) -> None:
    """Remember the variant name the table plays (the first record stays). Raises
    InvalidCommand for no table id."""
    if not table_id:
        raise InvalidCommand("a table's variant names its table")
    with uow.transaction():
        uow.history.record_table_variant(table_id, variant)


def net_by_account(transaction: JournalTransaction, accounts: Iterable[str]) -> dict[str, int]:
    """What ``transaction`` posted to each of ``accounts`` (hundredths, signed; 0 when none)."""
    net = dict.fromkeys(accounts, 0)
    for posting in transaction.postings:
        if posting.account_id in net:
            net[posting.account_id] += posting.amount_hundredths
    return net


def hand_entries(
    uow: LedgerUnitOfWork,
    table_id: str,
    hand_id: str,
    nets: Mapping[str, int],
    results: Mapping[str, str],
    ended_at: datetime,
) -> list[PlayedEntry]:
    """Each account's row of a points hand (none for a match table's deal): ``nets`` and
    ``results`` by account (an account missing from ``results`` gets ``result`` ``""``)."""
    if uow.matches.table_commission_bps(table_id) is not None:
        return []
    variant = uow.history.table_variant(table_id) or ""
    return [
        PlayedEntry(
            account_id=account,
            kind=HAND,
            ref_id=hand_id,
            table_id=table_id,
            variant=variant,
            format=SINGLE_FORMAT,
            net_hundredths=net,
            result=results.get(account, ""),
            ended_at=ended_at,
        )
        for account, net in sorted(nets.items())
    ]


def match_entries(
    uow: LedgerUnitOfWork,
    book: MatchBook,
    nets: Mapping[str, int],
    *,
    results: Mapping[int, str] | None = None,
    ended_at: datetime | None = None,
) -> list[PlayedEntry]:
    """Each seat's addition to its match row: ``nets`` by account (missing: 0); ended with the
    seat's result (``results`` by seat) at ``ended_at`` when both are given."""
    variant = uow.history.table_variant(book.table_id) or ""
    ending = results is not None and ended_at is not None
    return [
        PlayedEntry(
            account_id=account,
            kind=MATCH,
            ref_id=book.match_id,
            table_id=book.table_id,
            variant=variant,
            format=book.match_format,
            net_hundredths=nets.get(account, 0),
            result=results.get(seat, LOST) if ending and results is not None else None,
            ended_at=ended_at if ending else None,
        )
        for seat, account in book.seats
    ]


def match_results(book: MatchBook, winners: Sequence[int] | None) -> dict[int, str]:
    """``won`` for the seats of ``winners``, ``lost`` for the others; None (a refused
    settlement): ``void`` for every seat."""
    if winners is None:
        return {seat: VOID for seat, _ in book.seats}
    return {seat: WON if seat in winners else LOST for seat, _ in book.seats}


def page_token(row: PlayedRow) -> str:
    """The opaque position after ``row`` (base64url of its end in microseconds and its id)."""
    return _token((row.ended_at - _EPOCH) // timedelta(microseconds=1), row.id)


def _token(micros: int, row_id: int) -> str:
    raw = f"{_TOKEN_PREFIX}{micros}:{row_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_page_token(token: str) -> tuple[datetime, int] | None:
    """The position a :func:`page_token` names (None for ``""``: the first page). Raises
    InvalidCommand for anything else (without echoing it)."""
    if not token:
        return None
    refused = InvalidCommand("page_token is not a next_page_token ListMyHands returned")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("ascii")
        micros_text, id_text = raw.removeprefix(_TOKEN_PREFIX).split(":")
        micros, row_id = int(micros_text), int(id_text)
        at = _EPOCH + timedelta(microseconds=micros)
    except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError) as error:
        raise refused from error
    if not 1 <= row_id < 2**63 or micros < 0 or _token(micros, row_id) != token:
        raise refused
    return at, row_id


def list_played(
    uow: LedgerUnitOfWork, account_id: str, *, page_size: int = 0, page_token_in: str = ""
) -> tuple[tuple[PlayedRow, ...], str]:
    """The account's ended hands and matches, newest first: at most ``page_size`` rows
    (0: :data:`DEFAULT_PAGE_SIZE`; at most :data:`MAX_PAGE_SIZE`) after the position of
    ``page_token_in``, and the next page's token (``""`` on the last page). An account with no
    rows reads as an empty page. Raises InvalidCommand (no account, a size outside 0..100, a
    token this did not give)."""
    if not account_id:
        raise InvalidCommand("an account id is required")
    if not 0 <= page_size <= MAX_PAGE_SIZE:
        raise InvalidCommand(f"page_size must be 0..{MAX_PAGE_SIZE}, got {page_size}")
    size = page_size or DEFAULT_PAGE_SIZE
    before = parse_page_token(page_token_in)
    with uow.transaction():
        rows = uow.history.page(account_id, size + 1, before)
    page = tuple(rows[:size])
    return page, page_token(page[-1]) if len(rows) > size else ""
