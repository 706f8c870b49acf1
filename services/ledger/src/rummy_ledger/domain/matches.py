"""The ledger's pure core for match money (``rummy.match.v1``; docs/rules/formats.md#money).

No I/O. Amounts are ints of hundredths of a House Token. A match's format owns its money: the
table computes every hold and every settlement with ``rummy_rules.formats.money`` and writes
them on its stream (``MoneyReserved``, ``GameEnded.settlement``, ``MatchEnded.settlement``); the
ledger holds what is asked (all-or-nothing per seat), checks a settlement's invariants against
what it holds (:func:`check_match_settlement`) and posts it as given, never recomputed.

What the ledger remembers of a match is its :class:`MatchBook` (one per (table, match)): the
seats' accounts (``MatchStarted``), each game's seats (``GameStarted``), the hold batches and
the outcome of each seat asked for, and each settlement's outcome. The money itself is held as
reservations (the ``reservations`` rows every hand uses, so balances' ``reserved``, the gauges
and the invariant scans see match holds as they see a hand's), one group per batch:
:func:`hold_group` names it, and ``rummy_ledger.domain.journal_keys.match_settlement_key`` names the
settlement that covers it (the group's name starts with the key and a colon, which the schema's
``forfeit`` trigger reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rummy_ledger.domain.accounts import (
    HOUSE_COMMISSION_ACCOUNT,
    HeldReservation,
    InvalidCommand,
    JournalTransaction,
    LineKind,
    Posting,
    SettlementRefused,
    TransactionKind,
    validate_player_account_id,
)
from rummy_ledger.domain.journal_keys import match_settlement_key
from rummy_platform.limits import MAX_ACCOUNT_ID_BYTES
from rummy_rules.rules import BASIS_POINTS_PER_UNIT, INT64_MAX
from rummy_rules.settlement import commission_for

#: The purposes of a hold: a match's entry, a rejoin's entry, a game's stake (game to N).
ENTRY, REJOIN, STAKE = "entry", "rejoin", "stake"
PURPOSES = (ENTRY, REJOIN, STAKE)
#: ``rummy_rules.formats.messages.MoneyReserved`` names a game's stake ``game``; the wire says
#: ``stake``. Both are read as the stake.
_PURPOSE_NAMES = {ENTRY: ENTRY, REJOIN: REJOIN, STAKE: STAKE, "game": STAKE}
#: The longest table or match id the ledger keys match money by (bytes).
MAX_MATCH_ID_BYTES = MAX_ACCOUNT_ID_BYTES

#: Why a seat's hold was rejected (``rummy.ledger.v1.StakeRejectionReason``'s names).
INSUFFICIENT_BALANCE, UNKNOWN_ACCOUNT = "insufficient_balance", "unknown_account"


def purpose_of(name: str) -> str:
    """The purpose ``name`` stands for (``game`` is the stake). Raises InvalidCommand for any
    other name."""
    purpose = _PURPOSE_NAMES.get(name)
    if purpose is None:
        raise InvalidCommand(f"a hold's purpose is one of {list(PURPOSES)}, got {name!r}")
    return purpose


def settlement_purpose(game_no: int) -> str:
    """What a settlement pays out: the entries (``game_no`` 0, the match's end) or a game's
    stakes."""
    return ENTRY if game_no == 0 else STAKE


def hold_group(table_id: str, match_id: str, purpose: str, game_no: int) -> str:
    """The reservations group (``hand_id`` of the rows) of one batch of holds: the key of the
    settlement that covers it, a colon, the purpose. Entries and rejoins are covered by the
    match's settlement (game 0), a game's stakes by that game's."""
    covered_by = game_no if purpose == STAKE else 0
    return f"{match_settlement_key(table_id, match_id, covered_by)}:{purpose}"


def settlement_transaction_id(key: str) -> str:
    return f"settlement:{key}"


def check_ids(table_id: str, match_id: str) -> None:
    """Raise InvalidCommand unless both ids are given, at most MAX_MATCH_ID_BYTES long and free
    of NUL characters (which PostgreSQL text cannot hold)."""
    for what, value in (("table", table_id), ("match", match_id)):
        if not value:
            raise InvalidCommand(f"match money names its {what}")
        check_text(f"the {what} id", value)


def check_text(what: str, value: str) -> None:
    """Raise InvalidCommand for a string longer than MAX_MATCH_ID_BYTES or holding a NUL."""
    if len(value.encode()) > MAX_MATCH_ID_BYTES:
        raise InvalidCommand(
            f"{what} is {len(value.encode())} bytes long; at most {MAX_MATCH_ID_BYTES} bytes "
            "are allowed"
        )
    if "\x00" in value:
        raise InvalidCommand(f"{what} contains a NUL character (U+0000)")


# ----------------------------------------------------------------------------------- the book


@dataclass(frozen=True)
class SeatHold:
    """One seat asked for in a batch: ``held`` (its ``amount_hundredths`` now reserved) or
    rejected with ``reason`` (:data:`INSUFFICIENT_BALANCE` or :data:`UNKNOWN_ACCOUNT`, or the
    player's own limit: a ``domain.limits.Reason`` value, with ``detail`` the sentence for that
    player and operators); ``available_hundredths`` is what the account had free when asked."""

    seat: int
    account_id: str
    amount_hundredths: int
    held: bool
    available_hundredths: int
    reason: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class HoldBatch:
    """The holds of one table transaction: same purpose and game; ``seats`` the seats it asks
    for (entry: every seat of the match; stake: the game's seats; rejoin: the one seat).
    ``answered`` once every seat has its outcome and ``MatchMoneyHeld`` was written."""

    purpose: str
    game_no: int
    seats: tuple[int, ...]
    holds: tuple[SeatHold, ...] = ()
    answered: bool = False

    def hold_of(self, seat: int) -> SeatHold | None:
        return next((h for h in self.holds if h.seat == seat), None)

    @property
    def complete(self) -> bool:
        return {h.seat for h in self.holds} >= set(self.seats)

    @property
    def identity(self) -> tuple[str, int, tuple[int, ...]]:
        return _identity(self.purpose, self.game_no, self.seats)


def _identity(
    purpose: str, game_no: int, seats: tuple[int, ...]
) -> tuple[str, int, tuple[int, ...]]:
    """A batch is one per purpose and game, but a rejoin's is its seat's own (one rejoin per
    seat and match: the hold's idempotency key is (table, match, purpose, seat, game_no))."""
    return (purpose, game_no, seats if purpose == REJOIN else ())


@dataclass(frozen=True)
class SettlementOutcome:
    """How the ledger ended a settlement: ``settled`` (posted), ``refused`` or ``free`` (nothing
    held, nothing moved); ``body`` is the settlement's hash, so a repeat is recognised."""

    game_no: int
    outcome: str
    body: str


@dataclass(frozen=True)
class MatchBook:
    """What the ledger knows of one match (see the module docstring). ``commission_bps`` is the
    table's rate (``TableOpened``), None when the ledger never saw the table opened."""

    table_id: str
    match_id: str
    match_format: str
    commission_bps: int | None
    seats: tuple[tuple[int, str], ...]  # (seat, account id), ascending seats
    games: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (game_no, seats) of GameStarted
    batches: tuple[HoldBatch, ...] = ()
    settlements: tuple[SettlementOutcome, ...] = ()
    aborted: bool = False

    def account_of(self, seat: int) -> str | None:
        return dict(self.seats).get(seat)

    def batch(self, purpose: str, game_no: int, seat: int) -> HoldBatch | None:
        """The batch of ``purpose`` and ``game_no`` (a rejoin's: ``seat``'s own)."""
        wanted = _identity(purpose, game_no, (seat,))
        return next((b for b in self.batches if b.identity == wanted), None)

    def with_batch(self, batch: HoldBatch) -> MatchBook:
        others = tuple(b for b in self.batches if b.identity != batch.identity)
        return replace(self, batches=(*others, batch))

    def settlement(self, game_no: int) -> SettlementOutcome | None:
        return next((s for s in self.settlements if s.game_no == game_no), None)

    def covered_groups(self, game_no: int) -> tuple[str, ...]:
        """The reservation groups a settlement of ``game_no`` covers (0: entries and rejoins)."""
        purposes = (ENTRY, REJOIN) if game_no == 0 else (STAKE,)
        groups = (
            hold_group(self.table_id, self.match_id, b.purpose, b.game_no)
            for b in self.batches
            if b.purpose in purposes and (game_no == 0 or b.game_no == game_no)
        )
        return tuple(dict.fromkeys(groups))

    def every_group(self) -> tuple[str, ...]:
        groups = (
            hold_group(self.table_id, self.match_id, b.purpose, b.game_no) for b in self.batches
        )
        return tuple(dict.fromkeys(groups))

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "match_id": self.match_id,
            "match_format": self.match_format,
            "commission_bps": self.commission_bps,
            "seats": [list(s) for s in self.seats],
            "games": [[g, list(seats)] for g, seats in self.games],
            "batches": [
                {
                    "purpose": b.purpose,
                    "game_no": b.game_no,
                    "seats": list(b.seats),
                    "holds": [vars(h) for h in b.holds],
                    "answered": b.answered,
                }
                for b in self.batches
            ],
            "settlements": [vars(s) for s in self.settlements],
            "aborted": self.aborted,
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> MatchBook:
        return cls(
            table_id=body["table_id"],
            match_id=body["match_id"],
            match_format=body["match_format"],
            commission_bps=body["commission_bps"],
            seats=tuple((int(s), str(a)) for s, a in body["seats"]),
            games=tuple((int(g), tuple(seats)) for g, seats in body["games"]),
            batches=tuple(
                HoldBatch(
                    b["purpose"],
                    b["game_no"],
                    tuple(b["seats"]),
                    tuple(SeatHold(**h) for h in b["holds"]),
                    b["answered"],
                )
                for b in body["batches"]
            ),
            settlements=tuple(SettlementOutcome(**s) for s in body["settlements"]),
            aborted=body["aborted"],
        )


# ------------------------------------------------------------------------------ the commands


@dataclass(frozen=True)
class StartMatch:
    """``MatchStarted``: the match's seats and their accounts."""

    table_id: str
    match_id: str
    match_format: str
    seats: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class HoldMoney:
    """One ``MoneyReserved``: hold ``amount_hundredths`` from ``seat`` for ``purpose``."""

    table_id: str
    match_id: str
    seat: int
    amount_hundredths: int
    purpose: str
    game_no: int


@dataclass(frozen=True)
class MoneyLine:
    """One seat's line of a settlement: what it ``held_hundredths``, what moves (signed)."""

    seat: int
    held_hundredths: int
    amount_hundredths: int


@dataclass(frozen=True)
class SettleMatch:
    """A settlement of ``rummy.match.v1.MatchEnded`` (``game_no`` 0) or ``GameEnded``
    (``game_no`` N), as the table computed it with ``rummy_rules.formats.money``; ``present``
    False when the event carries none."""

    table_id: str
    match_id: str
    game_no: int
    pool_hundredths: int = 0
    commission_bps: int = 0
    commission_hundredths: int = 0
    lines: tuple[MoneyLine, ...] = ()
    winners: tuple[int, ...] = ()
    present: bool = True

    @property
    def moves_nothing(self) -> bool:
        return (
            self.pool_hundredths == 0
            and self.commission_hundredths == 0
            and all(line.amount_hundredths == 0 for line in self.lines)
        )


@dataclass(frozen=True)
class MatchHolds:
    """The holds a settlement covers, by seat: each seat's reservations (several when a seat
    holds an entry and a rejoin), in the order they were made."""

    by_seat: Mapping[int, tuple[tuple[str, HeldReservation], ...]] = field(default_factory=dict)

    def held(self, seat: int) -> int:
        return sum(r.amount_hundredths for _, r in self.by_seat.get(seat, ()))

    @property
    def total(self) -> int:
        return sum(self.held(seat) for seat in self.by_seat)


def check_match_settlement(book: MatchBook, command: SettleMatch, holds: MatchHolds) -> None:
    """Raise :class:`SettlementRefused`, naming the invariant, unless ``command`` can be posted
    against ``holds`` (what the ledger holds for the settlement's game):

    - something is held for it, and the table's commission rate is known;
    - one line per seat holding money, none listed twice, none without a hold, every line's
      ``held`` the ledger's hold for that seat, every seat a seat of the match;
    - nobody pays beyond what it holds (``amount >= -held``); only winners receive; the winners
      are distinct seats holding money here, at least one;
    - the pool is what is at stake: every hold (the match's end) or what the losers pay (a game);
    - the commission is ``floor(pool x bps / 10000)`` at the table's ``commission_bps`` and the
      lines sum to zero with it; every amount fits a signed 64-bit int.
    """
    what = "the match" if command.game_no == 0 else f"game {command.game_no}"
    where = f"match {command.match_id}, {what}"
    if not holds.by_seat:
        raise SettlementRefused(f"{where}: nothing is held for it")
    if book.commission_bps is None:
        raise SettlementRefused(f"{where}: the table's commission rate is unknown (no TableOpened)")
    seats = [line.seat for line in command.lines]
    if len(set(seats)) != len(seats):
        raise SettlementRefused(f"{where}: the settlement lists a seat twice")
    outside = sorted(s for s in seats if book.account_of(s) is None)
    if outside:
        raise SettlementRefused(f"{where}: seats {outside} are not seats of the match")
    unheld = sorted(set(seats) - set(holds.by_seat))
    if unheld:
        raise SettlementRefused(f"{where}: seats {unheld} hold nothing here")
    missing = sorted(set(holds.by_seat) - set(seats))
    if missing:
        raise SettlementRefused(f"{where}: held seats {missing} have no line in the settlement")
    winners = command.winners
    if not winners or len(set(winners)) != len(winners) or not set(winners) <= set(seats):
        raise SettlementRefused(
            f"{where}: the winners {list(winners)} must be distinct seats holding money here"
        )
    for line in command.lines:
        held = holds.held(line.seat)
        if line.held_hundredths != held:
            raise SettlementRefused(
                f"{where}: seat {line.seat}'s line says it held {line.held_hundredths} hundredths,"
                f" the ledger holds {held}"
            )
        if -line.amount_hundredths > held:
            raise SettlementRefused(
                f"{where}: seat {line.seat} would pay {-line.amount_hundredths} hundredths, more "
                f"than the {held} it holds"
            )
        if line.amount_hundredths > 0 and line.seat not in winners:
            raise SettlementRefused(
                f"{where}: seat {line.seat} receives {line.amount_hundredths} hundredths but is "
                "not a winner"
            )
        if abs(line.amount_hundredths) > INT64_MAX:
            raise SettlementRefused(f"{where}: seat {line.seat}'s amount does not fit 64 bits")
    paid = -sum(line.amount_hundredths for line in command.lines if line.amount_hundredths < 0)
    pool = holds.total if command.game_no == 0 else paid
    if command.pool_hundredths != pool:
        at_stake = "every hold" if command.game_no == 0 else "what the losers pay"
        raise SettlementRefused(
            f"{where}: the pool is {command.pool_hundredths} hundredths, but {at_stake} comes "
            f"to {pool}"
        )
    bps = book.commission_bps
    if command.commission_bps != bps or not 0 <= bps <= BASIS_POINTS_PER_UNIT:
        raise SettlementRefused(
            f"{where}: the settlement's rate is {command.commission_bps} bps, the table's {bps}"
        )
    commission = commission_for(pool, bps)
    if command.commission_hundredths != commission:
        raise SettlementRefused(
            f"{where}: a commission of {command.commission_hundredths} hundredths is not "
            f"floor({pool} x {bps} / 10000) = {commission}"
        )
    total = sum(line.amount_hundredths for line in command.lines)
    if total + command.commission_hundredths != 0:
        raise SettlementRefused(
            f"{where}: the lines sum to {total} and the commission is "
            f"{command.commission_hundredths}: the settlement does not sum to zero"
        )


def settled_amounts(command: SettleMatch, holds: MatchHolds) -> list[tuple[str, int, int]]:
    """``(group, seat, settled amount)`` for every hold covered: what a seat pays is taken from
    its holds in the order they were made (an entry before a rejoin), each at most its amount;
    a hold it does not need settles at 0."""
    out: list[tuple[str, int, int]] = []
    for line in command.lines:
        owed = max(-line.amount_hundredths, 0)
        for group, reservation in holds.by_seat[line.seat]:
            take = min(owed, reservation.amount_hundredths)
            owed -= take
            out.append((group, line.seat, take))
    return out


def match_settlement_transaction(book: MatchBook, command: SettleMatch) -> JournalTransaction:
    """The journal transaction of a checked settlement: each seat's line (``forfeit`` when it
    pays, ``prize`` when it receives or breaks even) and the house ``commission`` line (written
    even when 0, so every result shows it)."""
    postings = []
    for line in command.lines:
        account = book.account_of(line.seat)
        assert account is not None  # checked
        kind = LineKind.FORFEIT if line.amount_hundredths < 0 else LineKind.PRIZE
        postings.append(Posting(account, line.amount_hundredths, kind, line.seat))
    postings.append(
        Posting(HOUSE_COMMISSION_ACCOUNT, command.commission_hundredths, LineKind.COMMISSION)
    )
    key = match_settlement_key(command.table_id, command.match_id, command.game_no)
    return JournalTransaction(
        id=settlement_transaction_id(key),
        kind=TransactionKind.SETTLEMENT,
        postings=tuple(postings),
        hand_id=key,
        table_id=command.table_id,
        metadata={
            "match_id": command.match_id,
            "match_format": book.match_format,
            "game_no": command.game_no,
            "pool_hundredths": command.pool_hundredths,
            "commission_hundredths": command.commission_hundredths,
            "commission_bps": command.commission_bps,
            "winners": list(command.winners),
        },
    )


def validate_start(command: StartMatch) -> None:
    """Raise InvalidCommand for missing ids, no seats, or a seat or an account listed twice."""
    check_ids(command.table_id, command.match_id)
    seats = [s for s, _ in command.seats]
    accounts = [a for _, a in command.seats]
    if not seats or len(set(seats)) != len(seats) or len(set(accounts)) != len(accounts):
        raise InvalidCommand(
            f"match {command.match_id}: seats and accounts must be given, each once"
        )
    if not all(accounts) or any(seat < 0 for seat in seats):
        raise InvalidCommand(f"match {command.match_id}: every seat (>= 0) names its account")
    check_text("the match format", command.match_format)
    for account in accounts:
        validate_player_account_id(account)
        check_text("an account id", account)


def validate_hold(command: HoldMoney) -> None:
    """Raise InvalidCommand for missing ids, a negative or 64-bit-overflowing amount, or a game
    number that does not fit the purpose (a stake names its game, an entry or rejoin names 0)."""
    check_ids(command.table_id, command.match_id)
    if not 0 <= command.amount_hundredths <= INT64_MAX:
        raise InvalidCommand(f"a hold is 0..2**63-1 hundredths, got {command.amount_hundredths}")
    if (command.purpose == STAKE) != (command.game_no > 0):
        raise InvalidCommand(
            f"a {command.purpose} hold names game {command.game_no}: a stake names its game "
            "(1, 2, ...), an entry or a rejoin game 0"
        )


def held_outcome(book: MatchBook, command: HoldMoney, balance: tuple[int, int] | None) -> SeatHold:
    """The outcome of holding ``command`` for an account whose ``(balance, reserved)`` is given
    (None: no such account): held when its available balance covers the amount."""
    account = book.account_of(command.seat)
    assert account is not None
    if balance is None:
        return SeatHold(command.seat, account, command.amount_hundredths, False, 0, UNKNOWN_ACCOUNT)
    available = balance[0] - balance[1]
    if available >= command.amount_hundredths:
        return SeatHold(command.seat, account, command.amount_hundredths, True, available)
    return SeatHold(
        command.seat, account, command.amount_hundredths, False, available, INSUFFICIENT_BALANCE
    )


def batch_for(book: MatchBook, command: HoldMoney) -> HoldBatch:
    """The batch ``command`` belongs to (opened when it is the batch's first hold). Raises
    InvalidCommand for a seat outside the match, or outside the game, or a stake of a game the
    ledger never saw started."""
    if book.account_of(command.seat) is None:
        raise InvalidCommand(f"match {book.match_id}: seat {command.seat} is not in the match")
    batch = book.batch(command.purpose, command.game_no, command.seat)
    if batch is not None:
        if command.seat not in batch.seats:
            raise InvalidCommand(
                f"match {book.match_id}: seat {command.seat} is not asked for in this "
                f"{command.purpose} batch"
            )
        return batch
    if command.purpose == ENTRY:
        return HoldBatch(ENTRY, 0, tuple(s for s, _ in book.seats))
    if command.purpose == REJOIN:
        return HoldBatch(REJOIN, 0, (command.seat,))
    seats = dict(book.games).get(command.game_no)
    if seats is None:
        raise InvalidCommand(f"match {book.match_id}: game {command.game_no} was never started")
    if command.seat not in seats:
        raise InvalidCommand(
            f"match {book.match_id}: seat {command.seat} does not play game {command.game_no}"
        )
    return HoldBatch(STAKE, command.game_no, tuple(seats))


def holds_by_seat(
    groups: Sequence[tuple[str, Sequence[HeldReservation]]],
) -> MatchHolds:
    """Gather the held reservations of ``groups`` (in order) by seat."""
    by_seat: dict[int, list[tuple[str, HeldReservation]]] = {}
    for group, held in groups:
        for reservation in held:
            by_seat.setdefault(reservation.seat, []).append((group, reservation))
    return MatchHolds({seat: tuple(rows) for seat, rows in sorted(by_seat.items())})
