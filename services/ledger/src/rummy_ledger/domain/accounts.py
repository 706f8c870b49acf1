"""The ledger's pure core: accounts, commands, journal transaction shapes and their validation.

No I/O, no clock, no id generation. Every amount is an ``int`` of hundredths of a House Token,
in a field whose name ends in ``_hundredths``; points are ints.

The ledger never computes the rules' money: the table computes a hand's reservation and its
settlement with ``rummy_rules.settlement`` and carries them in ``HandStarted``
(``reservation_hundredths``) and ``HandEnded`` (each seat's points and net amount, the
commission). The ledger checks the settlement's invariants (:func:`settlement_transaction`) and
posts it as given; one that fails them is refused (:class:`SettlementRefused`): nothing of it is
posted and the hand's holds are released.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rummy_platform.limits import MAX_ACCOUNT_ID_BYTES, MAX_IDEMPOTENCY_KEY_BYTES
from rummy_rules.rules import BASIS_POINTS_PER_UNIT, INT64_MAX, RuleSetError, check_bounds
from rummy_rules.settlement import Settlement, commission_for

if TYPE_CHECKING:  # the stdlib stubs' protocol of a dataclass instance
    from _typeshed import DataclassInstance

#: The account every grant debits: the only account allowed below zero.
ISSUANCE_ACCOUNT = "house:issuance"
#: The account that receives every commission line.
HOUSE_COMMISSION_ACCOUNT = "house:commission"


class AccountKind(StrEnum):
    PLAYER = "player"
    HOUSE = "house"
    ISSUANCE = "issuance"


class LineKind(StrEnum):
    """What a journal line is for; shown on statements."""

    ISSUANCE = "issuance"  # the issuance account's side of a grant
    GRANT = "grant"  # a player's side of a grant
    LOSS = "loss"  # a loser pays points x point value
    WIN = "win"  # the winner receives the losers' total
    COMMISSION = "commission"  # the winner pays, the house receives, the commission
    FORFEIT = "forfeit"  # a match seat pays from what it held (entries, a game's stake)
    PRIZE = "prize"  # a match seat receives (or breaks even): its net of the pool or the game


class TransactionKind(StrEnum):
    GRANT = "grant"
    SETTLEMENT = "settlement"


class ReservationState(StrEnum):
    HELD = "held"
    SETTLED = "settled"
    RELEASED = "released"


# ---------------------------------------------------------------------------------------- errors


class LedgerError(Exception):
    """Base of every error a ledger handler raises on purpose."""


class InvalidCommand(LedgerError):
    """The command is malformed (gRPC INVALID_ARGUMENT): nothing moved."""


class Conflict(LedgerError):
    """The idempotency key was already used with a different body (gRPC ALREADY_EXISTS)."""


class AccountNotFound(LedgerError):
    """No such account (gRPC NOT_FOUND)."""


class SettlementRefused(LedgerError):
    """The settlement fails an invariant and cannot be posted (gRPC FAILED_PRECONDITION): nothing
    of it moved. The message names the invariant. The ledger's reaction then records the refusal
    and releases the hand's holds (:class:`RefuseSettlement`)."""


# -------------------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class Grant:
    """An operator credits ``amount_hundredths`` (> 0) to a player ``account_id``, debiting
    issuance. ``idempotency_key`` names the grant: a retry with the same key and body returns the
    first result; the same key with a different account or amount is a :class:`Conflict`."""

    operator: str
    account_id: str
    amount_hundredths: int
    idempotency_key: str


@dataclass(frozen=True)
class SeatStake:
    """One seat of ``HandStarted``: hold ``amount_hundredths`` of ``account_id``'s balance."""

    seat: int
    account_id: str
    amount_hundredths: int


@dataclass(frozen=True)
class ReserveStakes:
    """Reserve each dealt seat's maximum loss before the deal, all-or-nothing per seat."""

    hand_id: str
    table_id: str
    seats: tuple[SeatStake, ...]


@dataclass(frozen=True)
class SeatResult:
    """One seat's money in ``HandEnded``: ``points`` charged (0 for the winner) and the net
    ``amount_hundredths`` (negative for a loser's cost, the winner's takings after commission)."""

    seat: int
    points: int
    amount_hundredths: int


#: Marks a field added to a command after commands were stored: :func:`request_hash` leaves it
#: out at its default, so a command stored before it binds the same body as before.
_LATER_FIELD = {"hashed_unless_default": True}


@dataclass(frozen=True)
class SettleHand:
    """Post a hand's settlement as computed by ``rummy_rules.settlement.settle_shared``.

    ``seats`` has one result per seat dealt in; ``commission_hundredths`` goes to the house.
    ``winner_seat`` and ``co_winner_seats`` (empty with one winner) are the seats that share
    the pot; every other seat is a loser. Accounts are found from the hand's reservations by
    seat. ``commission_bps`` (the table's rate) bounds the commission;
    ``point_value_hundredths`` is recorded for statements. Neither is used to recompute the
    settlement, nor is how a shared pot was split among its winners (the variant's rule).
    """

    hand_id: str
    table_id: str
    winner_seat: int
    seats: tuple[SeatResult, ...]
    commission_hundredths: int
    point_value_hundredths: int = 0
    commission_bps: int = 0
    co_winner_seats: tuple[int, ...] = field(default=(), metadata=_LATER_FIELD)

    @property
    def winner_seats(self) -> tuple[int, ...]:
        """Every winner: ``winner_seat`` first, then ``co_winner_seats`` as listed."""
        return (self.winner_seat, *self.co_winner_seats)

    @classmethod
    def from_settlement(cls, hand_id: str, table_id: str, settlement: Settlement) -> SettleHand:
        """Build from a ``rummy_rules.settlement.Settlement`` (amounts in hundredths, which that
        module calls cents)."""
        return cls(
            hand_id=hand_id,
            table_id=table_id,
            winner_seat=settlement.winner_seat,
            seats=tuple(
                SeatResult(
                    seat=line.seat, points=line.points, amount_hundredths=line.amount_hundredths
                )
                for line in settlement.lines
            ),
            commission_hundredths=settlement.commission_hundredths,
            point_value_hundredths=settlement.point_value_hundredths,
            commission_bps=settlement.commission_bps,
            co_winner_seats=settlement.co_winner_seats,
        )


@dataclass(frozen=True)
class RefuseSettlement:
    """Record that ``hand_id``'s settlement was refused and release every held reservation of
    it; nothing else moves. Idempotent on the hand id (the reason of the first refusal stays)."""

    hand_id: str
    table_id: str


@dataclass(frozen=True)
class AbortHand:
    """Release every held reservation of ``hand_id``; nothing else moves."""

    hand_id: str


def request_hash(command: DataclassInstance) -> str:
    """SHA-256 (hex) of the command's type and fields as canonical JSON: the body a key binds.
    A field added later (``_LATER_FIELD``) is left out while it holds its default, so the hash of
    a command that does not use it is the one stored before the field existed."""
    fields = asdict(command)
    for f in dataclass_fields(command):
        if f.metadata.get("hashed_unless_default") and getattr(command, f.name) == f.default:
            del fields[f.name]
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{type(command).__name__}:{body}".encode()).hexdigest()


# ------------------------------------------------------------------------- journal transactions


@dataclass(frozen=True)
class Posting:
    """One journal line: ``amount_hundredths`` is signed (debit negative, credit positive)."""

    account_id: str
    amount_hundredths: int
    line_kind: LineKind
    seat: int | None = None
    points: int | None = None


@dataclass(frozen=True)
class JournalTransaction:
    """A balanced set of postings under one id (the idempotency key of what caused it)."""

    id: str
    kind: TransactionKind
    postings: tuple[Posting, ...]
    hand_id: str | None = None
    table_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.postings) < 2:
            raise InvalidCommand(f"transaction {self.id} needs at least two postings")
        total = sum(p.amount_hundredths for p in self.postings)
        if total != 0:
            raise InvalidCommand(f"transaction {self.id} does not sum to zero (sum {total})")

    def in_posting_order(self) -> tuple[Posting, ...]:
        """Credits before debits, so an account with several lines (the winner's win, then its
        commission) never passes below zero between two lines of the same transaction."""
        return tuple(sorted(self.postings, key=lambda p: -p.amount_hundredths))


def grant_transaction_id(idempotency_key: str) -> str:
    return f"grant:{idempotency_key}"


def settlement_transaction_id(hand_id: str) -> str:
    return f"settlement:{hand_id}"


@dataclass(frozen=True)
class GrantLimits:
    """The most one grant may move and the most a player's balance may reach through grants,
    in hundredths of a House Token (ledger settings ``RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS`` and
    ``RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS``; defaults 100 million and 10 billion tokens).
    Raises ValueError unless ``1 <= max_grant_hundredths <= max_balance_hundredths <= 2**63-1``."""

    max_grant_hundredths: int = 10**10
    max_balance_hundredths: int = 10**12

    def __post_init__(self) -> None:
        if not 1 <= self.max_grant_hundredths <= self.max_balance_hundredths <= INT64_MAX:
            raise ValueError(
                "grant limits need 1 <= max grant <= max balance <= 2**63-1 hundredths, got "
                f"{self.max_grant_hundredths} and {self.max_balance_hundredths}"
            )


DEFAULT_GRANT_LIMITS = GrantLimits()


def validate_grant(command: Grant, limits: GrantLimits = DEFAULT_GRANT_LIMITS) -> None:
    """Raise :class:`InvalidCommand` unless the grant is well formed: an idempotency key of at
    most MAX_IDEMPOTENCY_KEY_BYTES, an operator, a player account id, and an amount in
    ``1..limits.max_grant_hundredths``."""
    if not command.idempotency_key:
        raise InvalidCommand("a grant needs an idempotency key")
    _check_length("idempotency key", command.idempotency_key, MAX_IDEMPOTENCY_KEY_BYTES)
    if not command.operator:
        raise InvalidCommand("a grant names the operator who made it")
    if command.amount_hundredths <= 0:
        raise InvalidCommand(
            f"a grant moves a positive amount, got {command.amount_hundredths} hundredths"
        )
    if command.amount_hundredths > limits.max_grant_hundredths:
        raise InvalidCommand(
            f"a grant moves at most {limits.max_grant_hundredths} hundredths, "
            f"got {command.amount_hundredths}"
        )
    validate_player_account_id(command.account_id)


def check_balance_limit(
    balance_hundredths: int, amount_hundredths: int, limits: GrantLimits = DEFAULT_GRANT_LIMITS
) -> None:
    """Raise :class:`InvalidCommand` if crediting ``amount_hundredths`` to a balance of
    ``balance_hundredths`` would pass ``limits.max_balance_hundredths``."""
    if balance_hundredths + amount_hundredths > limits.max_balance_hundredths:
        raise InvalidCommand(
            f"the balance would be {balance_hundredths + amount_hundredths} hundredths, more "
            f"than the maximum balance of {limits.max_balance_hundredths}"
        )


def validate_player_account_id(account_id: str) -> None:
    """Raise :class:`InvalidCommand` for an empty id, one longer than MAX_ACCOUNT_ID_BYTES or one
    in the house's ``house:`` namespace."""
    if not account_id:
        raise InvalidCommand("an account id is required")
    _check_length("account id", account_id, MAX_ACCOUNT_ID_BYTES)
    if account_id.startswith("house:"):
        raise InvalidCommand(f"{account_id!r} is a house account, not a player's")


def _check_length(what: str, value: str, limit: int) -> None:
    size = len(value.encode())
    if size > limit:
        raise InvalidCommand(f"the {what} is {size} bytes long; at most {limit} bytes are allowed")


def grant_transaction(
    command: Grant, limits: GrantLimits = DEFAULT_GRANT_LIMITS
) -> JournalTransaction:
    """Issuance pays, the player receives (validated with ``limits``)."""
    validate_grant(command, limits)
    return JournalTransaction(
        id=grant_transaction_id(command.idempotency_key),
        kind=TransactionKind.GRANT,
        postings=(
            Posting(ISSUANCE_ACCOUNT, -command.amount_hundredths, LineKind.ISSUANCE),
            Posting(command.account_id, command.amount_hundredths, LineKind.GRANT),
        ),
        metadata={"operator": command.operator},
    )


def validate_reserve(command: ReserveStakes) -> None:
    """Raise :class:`InvalidCommand` on an empty hand, duplicate seats or accounts, negative
    amounts or house accounts."""
    if not command.hand_id or not command.table_id:
        raise InvalidCommand("a reservation names its hand and table")
    if not command.seats:
        raise InvalidCommand(f"hand {command.hand_id} has no seats to reserve")
    seats = [s.seat for s in command.seats]
    accounts = [s.account_id for s in command.seats]
    if len(set(seats)) != len(seats):
        raise InvalidCommand(f"hand {command.hand_id} lists a seat twice")
    if len(set(accounts)) != len(accounts):
        raise InvalidCommand(f"hand {command.hand_id} seats one account twice")
    for stake in command.seats:
        validate_player_account_id(stake.account_id)
        if stake.seat < 0 or stake.amount_hundredths < 0:
            raise InvalidCommand(
                f"seat {stake.seat}: seat and amount must be >= 0, "
                f"got amount {stake.amount_hundredths} hundredths"
            )


def rejection_reason(
    balance_hundredths: int, reserved_hundredths: int, amount_hundredths: int
) -> str | None:
    """Why a seat cannot be reserved, or ``None`` when its available balance covers the amount."""
    available = balance_hundredths - reserved_hundredths
    if available >= amount_hundredths:
        return None
    if reserved_hundredths:
        return (
            f"available {available} < reservation {amount_hundredths} hundredths "
            f"(balance {balance_hundredths}, {reserved_hundredths} already reserved)"
        )
    return f"balance {balance_hundredths} < reservation {amount_hundredths} hundredths"


@dataclass(frozen=True)
class HeldReservation:
    """A held reservation as the settlement sees it."""

    seat: int
    account_id: str
    amount_hundredths: int


def settlement_transaction(
    command: SettleHand, held: Sequence[HeldReservation]
) -> tuple[JournalTransaction, dict[int, int]]:
    """The journal transaction of a hand's settlement, and the amount settled per seat.

    Lines: each loser ``loss`` (-cost, with its points). One winner: ``win`` (+ the losers'
    total) and ``commission`` (- the commission). A shared pot
    (``docs/rules/money.md#shared-pot``): each winner ``win`` (+ its share, the commission
    already taken from the pot). Then the house ``commission`` (+ the commission). The
    commission lines are written even when zero, so every result shows it. A free table gives
    all-zero lines (the points still show on statements). Every winner's reservation settles at
    0, a loser's at its cost.

    The settlement is posted as the table computed it, after :func:`check_settlement`; raises
    InvalidCommand for a command naming no hand or table and SettlementRefused for a settlement
    that fails an invariant.
    """
    if not command.hand_id or not command.table_id:
        raise InvalidCommand("a settlement names its hand and table")
    check_settlement(command, held)
    account = {r.seat: r.account_id for r in held}
    winners = command.winner_seats
    losers = [s for s in command.seats if s.seat not in winners]
    total = -sum(s.amount_hundredths for s in losers)
    postings = [
        Posting(account[s.seat], s.amount_hundredths, LineKind.LOSS, s.seat, s.points)
        for s in losers
    ]
    if len(winners) == 1:
        winner = command.winner_seat
        postings += [
            Posting(account[winner], total, LineKind.WIN, winner, 0),
            Posting(account[winner], -command.commission_hundredths, LineKind.COMMISSION, winner),
        ]
    else:
        share = {s.seat: s.amount_hundredths for s in command.seats}
        postings += [Posting(account[w], share[w], LineKind.WIN, w, 0) for w in sorted(winners)]
    postings.append(
        Posting(HOUSE_COMMISSION_ACCOUNT, command.commission_hundredths, LineKind.COMMISSION)
    )
    metadata: dict[str, Any] = {
        "winner_seat": command.winner_seat,
        "total_hundredths": total,
        "commission_hundredths": command.commission_hundredths,
        "point_value_hundredths": command.point_value_hundredths,
        "commission_bps": command.commission_bps,
    }
    if command.co_winner_seats:
        metadata["co_winner_seats"] = list(command.co_winner_seats)
    transaction = JournalTransaction(
        id=settlement_transaction_id(command.hand_id),
        kind=TransactionKind.SETTLEMENT,
        postings=tuple(postings),
        hand_id=command.hand_id,
        table_id=command.table_id,
        metadata=metadata,
    )
    settled = {s.seat: (0 if s.seat in winners else -s.amount_hundredths) for s in command.seats}
    return transaction, settled


def check_settlement(command: SettleHand, held: Sequence[HeldReservation]) -> None:
    """Raise :class:`SettlementRefused`, naming the invariant, unless the settlement
    ``command`` carries (as the table computed it with the rules) can be posted against the
    hand's ``held`` reservations:

    - every seat of the hand is covered once: one result per held seat, none listed twice, none
      without a hold (never reserved, or the hand was aborted);
    - the winners (``winner_seat`` and ``co_winner_seats``) are distinct seats among them, and
      at least one seat is a loser;
    - every winner is charged no points and receives 0 or more; each loser pays (amount <= 0),
      no more than its reservation (what each point costs, and how a shared pot is split among
      its winners, is the rules' business: the table computed it);
    - it sums to zero with the commission: the winners' amounts add up to the losers' total
      less the commission, and the total fits a signed 64-bit amount;
    - the commission is within the table's rate: 0 <= commission <= floor(total x bps / 10000)
      (rounded down, in the players' favour), with 0 <= bps <= 10000 (the rules' bounds).
    """
    hand = command.hand_id
    seats = [s.seat for s in command.seats]
    by_seat = {s.seat: s for s in command.seats}
    held_seats = {r.seat: r.amount_hundredths for r in held}
    if not held_seats:
        raise SettlementRefused(
            f"hand {hand}: no reservation is held (never reserved, or the hand was aborted)"
        )
    if len(by_seat) != len(seats):
        raise SettlementRefused(f"hand {hand}: the settlement lists a seat twice")
    for seat in seats:
        if seat not in held_seats:
            raise SettlementRefused(
                f"hand {hand}: seat {seat} holds no reservation (never reserved, or the hand was "
                "aborted)"
            )
    missing = sorted(set(held_seats) - set(by_seat))
    if missing:
        raise SettlementRefused(f"hand {hand}: held seats {missing} have no line in the settlement")
    winners = command.winner_seats
    if len(set(winners)) != len(winners):
        raise SettlementRefused(f"hand {hand}: the winners {list(winners)} list a seat twice")
    outside = [w for w in winners if w not in by_seat]
    if outside or len(by_seat) <= len(winners):
        named = f"seat {command.winner_seat}" if len(winners) == 1 else f"seats {list(winners)}"
        raise SettlementRefused(f"hand {hand}: a settlement needs the winner ({named}) and a loser")
    for seat in winners:
        winner = by_seat[seat]
        if winner.points != 0:
            what = "the winner is" if len(winners) == 1 else f"winner seat {seat} is"
            raise SettlementRefused(f"hand {hand}: {what} charged {winner.points} points")
    losers = [s for s in command.seats if s.seat not in winners]
    for loser in losers:
        if loser.amount_hundredths > 0 or loser.points < 0:
            raise SettlementRefused(
                f"hand {hand}: seat {loser.seat} lost but receives {loser.amount_hundredths} "
                "hundredths"
            )
        if -loser.amount_hundredths > held_seats[loser.seat]:
            raise SettlementRefused(
                f"hand {hand}: seat {loser.seat} would pay {-loser.amount_hundredths} hundredths, "
                f"more than the {held_seats[loser.seat]} reserved for it"
            )
    for seat in winners:
        if by_seat[seat].amount_hundredths < 0:
            raise SettlementRefused(
                f"hand {hand}: winner seat {seat} would pay "
                f"{-by_seat[seat].amount_hundredths} hundredths"
            )
    total = -sum(s.amount_hundredths for s in losers)
    if total > INT64_MAX:
        raise SettlementRefused(f"hand {hand}: the losers' total does not fit a 64-bit amount")
    takings = sum(by_seat[w].amount_hundredths for w in winners)
    if takings != total - command.commission_hundredths:
        whose = "winner's" if len(winners) == 1 else "winners'"
        raise SettlementRefused(
            f"hand {hand}: the {whose} {takings} hundredths is not the losers' "
            f"total {total} less the commission {command.commission_hundredths}: the settlement "
            "does not sum to zero"
        )
    try:
        check_bounds("commission_bps", command.commission_bps, 0, BASIS_POINTS_PER_UNIT)
    except RuleSetError as error:
        raise SettlementRefused(f"hand {hand}: {error}") from None
    most = commission_for(total, command.commission_bps)
    if not 0 <= command.commission_hundredths <= most:
        raise SettlementRefused(
            f"hand {hand}: a commission of {command.commission_hundredths} hundredths is outside "
            f"the table's rate of {command.commission_bps} bps on {total} (0..{most})"
        )
