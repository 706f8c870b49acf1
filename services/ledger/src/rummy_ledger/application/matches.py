"""The ledger's use cases for match money, each one transaction of the unit of work.

Like :mod:`rummy_ledger.application.accounts`, each handler takes a
:class:`~rummy_ledger.application.ports.LedgerUnitOfWork` and a command
(:mod:`rummy_ledger.domain.matches`), and ``outbox``: a function of its result returning the events
to write in the same transaction (none when the command was a repeat). The match's book
(``uow.matches``, locked) is the idempotency record: a hold is keyed by (table, match, purpose,
seat, game_no), a settlement by (table, match, game_no), an abort by (table, match); a repeat with
the same body does nothing again, one with another body raises ``Conflict``. Errors raised:
``InvalidCommand``, ``Conflict`` (both ``LedgerError``: nothing moved). A settlement that fails an
invariant is not an error here: it is refused (:class:`MatchRefusal`), its holds released.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from rummy_ledger.application import history
from rummy_ledger.application.accounts import JournalLine, ReleasedReservation
from rummy_ledger.application.limits import record_losses, reservation_refusal
from rummy_ledger.application.ports import LedgerUnitOfWork, OutgoingEvent
from rummy_ledger.domain.accounts import (
    HOUSE_COMMISSION_ACCOUNT,
    Conflict,
    InvalidCommand,
    SettlementRefused,
    request_hash,
)
from rummy_ledger.domain.matches import (
    STAKE,
    HoldBatch,
    HoldMoney,
    MatchBook,
    MatchHolds,
    SeatHold,
    SettleMatch,
    SettlementOutcome,
    StartMatch,
    batch_for,
    check_ids,
    check_match_settlement,
    held_outcome,
    hold_group,
    holds_by_seat,
    match_settlement_transaction,
    settled_amounts,
    validate_hold,
    validate_start,
)
from rummy_rules.rules import BASIS_POINTS_PER_UNIT

R = TypeVar("R")
MatchOutbox = Callable[[R], Sequence[OutgoingEvent]]


@dataclass(frozen=True)
class HoldResult:
    """One seat's hold: its outcome, its batch after it, and ``answer`` when this hold completed
    the batch (every seat asked for has its outcome: ``MatchMoneyHeld`` is due)."""

    hold: SeatHold
    batch: HoldBatch
    answer: bool
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class MatchSettleResult:
    """A settlement posted: its key and journal transaction, the lines, the commission."""

    match_id: str
    game_no: int
    transaction_id: str
    lines: tuple[JournalLine, ...]
    commission_hundredths: int
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class MatchRefusal:
    """A settlement refused: why, and the holds released (nothing else moved)."""

    match_id: str
    game_no: int
    reason: str
    released: tuple[ReleasedReservation, ...]
    replayed: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class MatchRelease:
    """An aborted match: every hold still held, released."""

    match_id: str
    released: tuple[ReleasedReservation, ...]
    replayed: bool = field(default=False, compare=False)


def record_table(uow: LedgerUnitOfWork, table_id: str, commission_bps: int) -> None:
    """Remember the rate of a table hosting a match format (``TableOpened``). Raises
    InvalidCommand for a rate outside 0..10000 bps or no table id."""
    if not table_id:
        raise InvalidCommand("a table's rate names its table")
    if not 0 <= commission_bps <= BASIS_POINTS_PER_UNIT:
        raise InvalidCommand(f"commission_bps is 0..10000, got {commission_bps}")
    with uow.transaction():
        uow.matches.record_table(table_id, commission_bps)


def start_match(uow: LedgerUnitOfWork, command: StartMatch) -> bool:
    """Open the match's book with its seats' accounts and the table's rate; False when it was
    already open with the same seats. Raises InvalidCommand or Conflict (other seats)."""
    validate_start(command)
    seats = tuple(sorted(command.seats))
    with uow.transaction():
        book = uow.matches.lock(command.table_id, command.match_id)
        if book is not None:
            if book.seats != seats:
                raise Conflict(f"match {command.match_id} was started with other seats")
            return False
        uow.matches.save(
            MatchBook(
                table_id=command.table_id,
                match_id=command.match_id,
                match_format=command.match_format,
                commission_bps=uow.matches.table_commission_bps(command.table_id),
                seats=seats,
            )
        )
    return True


def start_game(
    uow: LedgerUnitOfWork, table_id: str, match_id: str, game_no: int, seats: Sequence[int]
) -> bool:
    """Remember a game's seats (``GameStarted``: the seats its stakes are asked of); False when
    already known with the same seats. Raises InvalidCommand (unknown match, game 0, a seat not
    in the match) or Conflict (other seats)."""
    check_ids(table_id, match_id)
    if game_no < 1:
        raise InvalidCommand(f"games are numbered from 1, got {game_no}")
    chosen = tuple(sorted(set(seats)))
    with uow.transaction():
        book = _book(uow, table_id, match_id)
        outside = [s for s in chosen if book.account_of(s) is None]
        if not chosen or outside:
            raise InvalidCommand(f"match {match_id}: game {game_no}'s seats {outside or []}")
        known = dict(book.games).get(game_no)
        if known is not None:
            if known != chosen:
                raise Conflict(f"match {match_id}: game {game_no} was started with other seats")
            return False
        uow.matches.save(replace(book, games=(*book.games, (game_no, chosen))))
    return True


def hold_money(
    uow: LedgerUnitOfWork,
    command: HoldMoney,
    *,
    outbox: MatchOutbox[HoldResult],
    at: datetime | None = None,
) -> HoldResult:
    """Hold ``command.amount_hundredths`` of the seat's account (all or nothing): held when its
    available balance covers it and the player's own limits allow it at ``at`` (the
    MoneyReserved's time), else rejected (``insufficient_balance``, ``unknown_account`` when
    the ledger has no such account, or the limit's ``domain.limits.Reason`` value). The other
    holds of the batch stay as they are either way (the table aborts the match; its
    MatchAborted releases them).
    Raises InvalidCommand (an unknown, aborted or already settled match; a seat outside the
    match or the game) or Conflict (the same key with another amount)."""
    validate_hold(command)
    with uow.transaction():
        book = _book(uow, command.table_id, command.match_id)
        known = book.batch(command.purpose, command.game_no, command.seat)
        existing = None if known is None else known.hold_of(command.seat)
        if known is not None and existing is not None:  # a repeat, whatever happened since
            if existing.amount_hundredths != command.amount_hundredths:
                raise Conflict(
                    f"match {command.match_id}: seat {command.seat}'s {command.purpose} hold was "
                    f"asked for {existing.amount_hundredths} hundredths, now "
                    f"{command.amount_hundredths}"
                )
            return HoldResult(existing, known, False, replayed=True)
        if book.aborted:
            raise InvalidCommand(f"match {command.match_id} was aborted: nothing more is held")
        covering = command.game_no if command.purpose == STAKE else 0
        if book.settlement(covering) is not None:
            raise InvalidCommand(
                f"match {command.match_id}: the settlement covering this hold is done"
            )
        batch = batch_for(book, command)
        account = book.account_of(command.seat)
        assert account is not None  # batch_for checked
        row = uow.accounts.lock_balances([account]).get(account)
        outcome = held_outcome(
            book,
            command,
            None if row is None else (row.balance_hundredths, row.reserved_hundredths),
        )
        if outcome.held and row is not None:
            limit = reservation_refusal(uow, row, command.amount_hundredths, at)
            if limit is not None:
                outcome = replace(
                    outcome, held=False, reason=limit.reason.value, detail=limit.describe()
                )
        if outcome.held:
            group = hold_group(command.table_id, command.match_id, command.purpose, command.game_no)
            uow.reservations.insert(
                group, command.table_id, command.seat, account, command.amount_hundredths
            )
        batch = replace(batch, holds=(*batch.holds, outcome))
        answer = batch.complete and not batch.answered
        batch = replace(batch, answered=batch.answered or answer)
        uow.matches.save(book.with_batch(batch))
        result = HoldResult(outcome, batch, answer)
        uow.outbox.write(outbox(result))
    return result


def settle_match(
    uow: LedgerUnitOfWork,
    command: SettleMatch,
    *,
    settled: MatchOutbox[MatchSettleResult],
    refused: MatchOutbox[MatchRefusal],
    at: datetime | None = None,
    winners: Sequence[int] = (),
) -> MatchSettleResult | MatchRefusal | None:
    """Post the settlement of the match (``game_no`` 0) or of one game exactly once, after
    checking its invariants against what is held for it (``domain.matches.check_match_settlement``),
    settling each covered hold at what its seat pays (released at 0 for what it does not); or
    refuse it: nothing posted, every covered hold released. None when nothing is due: a repeat,
    or a free match (nothing held, nothing to move). Raises InvalidCommand (an unknown match)
    or Conflict (a second, different settlement of the same game). ``at``: the event's time,
    the period the net losses (forfeits less prizes) count in, and in each seat's history
    (``application.history``) when the match's row gains what this settlement moved and, for
    game 0, ends (won for a seat of ``winners``: ``MatchEnded.winners``; void when refused);
    None: neither is written."""
    check_ids(command.table_id, command.match_id)
    with uow.transaction():
        book = uow.matches.lock(command.table_id, command.match_id)
        if book is None:
            if not command.present or command.moves_nothing:
                return None
            raise InvalidCommand(f"match {command.match_id} was never started at the ledger")
        body = request_hash(command)
        prior = book.settlement(command.game_no)
        if prior is not None:
            if prior.body != body:
                raise Conflict(
                    f"match {command.match_id}: game {command.game_no} was settled with another "
                    "settlement"
                )
            return None
        groups = book.covered_groups(command.game_no)
        holds = holds_by_seat([(g, uow.reservations.lock_held(g)) for g in groups])
        if not holds.by_seat and (not command.present or command.moves_nothing):
            uow.matches.save(_ended(book, command.game_no, "free", body))
            _in_history(uow, book, command.game_no, {}, winners, at)
            return None
        try:
            if not command.present:
                raise SettlementRefused(
                    f"match {command.match_id}: the event carries no settlement, but "
                    f"{holds.total} hundredths are held for it"
                )
            check_match_settlement(book, command, holds)
        except SettlementRefused as error:
            released = _release(uow, holds)
            uow.matches.save(_ended(book, command.game_no, "refused", body))
            _in_history(uow, book, command.game_no, {}, None, at)
            refusal = MatchRefusal(command.match_id, command.game_no, str(error), released)
            uow.outbox.write(refused(refusal))
            return refusal
        uow.accounts.lock_balances(
            [r.account_id for rows in holds.by_seat.values() for _, r in rows]
            + [HOUSE_COMMISSION_ACCOUNT]
        )
        for group, seat, amount in settled_amounts(command, holds):
            uow.reservations.settle(group, seat, amount)
        transaction = match_settlement_transaction(book, command)
        uow.journal.insert(transaction)
        if at is not None:
            record_losses(uow, transaction, at)
        nets = history.net_by_account(transaction, (account for _, account in book.seats))
        _in_history(uow, book, command.game_no, nets, winners, at)
        uow.matches.save(_ended(book, command.game_no, "settled", body))
        result = MatchSettleResult(
            command.match_id,
            command.game_no,
            transaction.id,
            tuple(
                JournalLine(p.account_id, p.amount_hundredths, p.line_kind.value, p.seat, p.points)
                for p in transaction.in_posting_order()
            ),
            command.commission_hundredths,
        )
        uow.outbox.write(settled(result))
    return result


def abort_match(
    uow: LedgerUnitOfWork,
    table_id: str,
    match_id: str,
    *,
    outbox: MatchOutbox[MatchRelease],
    at: datetime | None = None,
) -> MatchRelease:
    """Release every hold of the match still held (the open game's stakes, the entries; what
    settled games paid stands); nothing else moves. Exactly once: a repeat returns
    ``replayed`` with nothing released again. ``at`` given and a game of the match settled:
    each seat's match row ends ``aborted`` then, with what its settled games moved (a match
    aborted before any money moved is in nobody's history). Raises InvalidCommand for an
    unknown match."""
    check_ids(table_id, match_id)
    with uow.transaction():
        book = _book(uow, table_id, match_id)
        if book.aborted:
            return MatchRelease(match_id, (), replayed=True)
        holds = holds_by_seat([(g, uow.reservations.lock_held(g)) for g in book.every_group()])
        released = _release(uow, holds)
        uow.matches.save(replace(book, aborted=True))
        if at is not None and book.settlement(0) is None and _games_settled(book):
            results = {seat: history.ABORTED for seat, _ in book.seats}
            uow.history.add(history.match_entries(uow, book, {}, results=results, ended_at=at))
        result = MatchRelease(match_id, released)
        uow.outbox.write(outbox(result))
    return result


def _games_settled(book: MatchBook) -> bool:
    """Whether a game of the match was settled (money moved before its end)."""
    return any(s.game_no > 0 and s.outcome == "settled" for s in book.settlements)


def _in_history(
    uow: LedgerUnitOfWork,
    book: MatchBook,
    game_no: int,
    nets: dict[str, int],
    winners: Sequence[int] | None,
    at: datetime | None,
) -> None:
    """Add a settlement's ``nets`` (by account) to each seat's match row; game 0 ends it at
    ``at`` (``history.match_results`` of ``winners``; None: void). Nothing when ``at`` is None."""
    if at is None:
        return
    if game_no != 0:
        if nets:
            uow.history.add(history.match_entries(uow, book, nets))
        return
    results = history.match_results(book, winners)
    uow.history.add(history.match_entries(uow, book, nets, results=results, ended_at=at))


def _book(uow: LedgerUnitOfWork, table_id: str, match_id: str) -> MatchBook:
    book = uow.matches.lock(table_id, match_id)
    if book is None:
        raise InvalidCommand(f"match {match_id} was never started at the ledger")
    return book


def _ended(book: MatchBook, game_no: int, outcome: str, body: str) -> MatchBook:
    return replace(book, settlements=(*book.settlements, SettlementOutcome(game_no, outcome, body)))


def _release(uow: LedgerUnitOfWork, holds: MatchHolds) -> tuple[ReleasedReservation, ...]:
    """Release every hold of ``holds``; one entry per seat with what it had held in all."""
    uow.accounts.lock_balances([r.account_id for rows in holds.by_seat.values() for _, r in rows])
    released = []
    for seat, rows in holds.by_seat.items():
        for group, reservation in rows:
            uow.reservations.release(group, reservation.seat)
        released.append(ReleasedReservation(seat, rows[0][1].account_id, holds.held(seat)))
    return tuple(released)


__all__ = [
    "HoldResult",
    "MatchRefusal",
    "MatchRelease",
    "MatchSettleResult",
    "abort_match",
    "hold_money",
    "record_table",
    "settle_match",
    "start_game",
    "start_match",
]
