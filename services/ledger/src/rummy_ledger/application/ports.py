"""The ledger's seam to its storage: a unit of work and its repositories (interfaces only).

The application (:mod:`rummy_ledger.application.accounts`, the reactions of
:mod:`rummy_ledger.application.reactions`) reaches storage only through :class:`LedgerUnitOfWork`;
it imports no psycopg and no adapter (an import contract in the root ``pyproject.toml``). Two
implementations:

- ``rummy_ledger.adapters.postgres.PostgresUnitOfWork``: the service's, over psycopg 3 and the
  SQL of ``rummy_ledger.adapters.db`` (the schema's constraints and triggers enforce the
  invariants once more, whoever writes);
- ``rummy_ledger.adapters.memory.InMemoryUnitOfWork``: the fake the application tests run on,
  with the same semantics (it refuses what the schema refuses; its module docstring lists what
  only PostgreSQL can show).

``tests/test_ledger_storage_contract.py`` runs one suite against both.

Every repository method is called inside ``uow.transaction()`` (the PostgreSQL one raises
RuntimeError otherwise). Amounts are hundredths of a House Token.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple

from google.protobuf.message import Message

from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.domain.accounts import AccountKind, HeldReservation, JournalTransaction, Posting
from rummy_ledger.domain.limits import PlayerLimits
from rummy_ledger.domain.matches import MatchBook
from rummy_platform.envelope import Envelope, encode

# ----------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class StoredCommand:
    """A command already handled under this key: its first result (JSON)."""

    result: Any


@dataclass(frozen=True)
class BalanceRow:
    account_id: str
    kind: AccountKind
    balance_hundredths: int
    reserved_hundredths: int


class JournalEntry(NamedTuple):
    """One line of a journal transaction as the journal stores it (``journal_entries``):
    ``amount`` in hundredths, signed; ``line_kind`` the ``LineKind`` value."""

    transaction_id: str
    account_id: str
    amount: int
    line_kind: str
    seat: int | None
    points: int | None

    @classmethod
    def of(cls, transaction_id: str, posting: Posting) -> JournalEntry:
        """The stored line of ``posting`` of the transaction ``transaction_id``."""
        return cls(
            transaction_id,
            posting.account_id,
            posting.amount_hundredths,
            posting.line_kind.value,
            posting.seat,
            posting.points,
        )


@dataclass(frozen=True)
class StatementRow:
    seq: int
    transaction_id: str
    kind: str
    hand_id: str | None
    table_id: str | None
    posted_at: datetime
    metadata: Mapping[str, Any]
    net_hundredths: int
    balance_after_hundredths: int
    lines: tuple[tuple[str, int, int | None, int | None], ...]  # (line kind, amount, seat, points)


@dataclass(frozen=True)
class ReservationRow:
    """A reservation as stored: ``state`` ``"held"``, ``"settled"`` (with ``settled_amount``,
    what the settlement charged) or ``"released"``."""

    hand_id: str
    seat: int
    account_id: str
    amount_hundredths: int
    state: str
    settled_amount_hundredths: int | None


@dataclass(frozen=True)
class OutgoingEvent:
    """An event for the outbox: ``event_id`` (the envelope's, so consumers can drop duplicates),
    the topic, the record key (the envelope's stream id: table id or account id), the payload
    type name and the encoded ``EventEnvelope`` bytes (what ``rummy_platform.outbox.OutboxRelay``
    publishes; it checks that the bytes carry this event id and key)."""

    event_id: str
    topic: str
    key: str
    type: str
    payload: bytes

    @classmethod
    def from_envelope(cls, topic: str, envelope: Envelope) -> OutgoingEvent:
        """The outbox row of ``envelope`` on ``topic``."""
        return cls(envelope.event_id, topic, envelope.stream_id, envelope.type, encode(envelope))


@dataclass(frozen=True)
class OutboxRow:
    event_id: str
    position: int
    topic: str
    key: str
    type: str
    payload: bytes
    created_at: datetime


@dataclass(frozen=True)
class PlayedEntry:
    """What a settlement (or an abort) adds to one account's row of a hand or a match
    (``History.add``): ``kind`` ``"hand"`` (``ref_id`` the hand id) or ``"match"`` (the match
    id); ``net_hundredths`` is added to the row's net; ``result`` and ``ended_at`` end the row
    (None: a match still running, one of its games settled)."""

    account_id: str
    kind: str
    ref_id: str
    table_id: str
    variant: str
    format: str
    net_hundredths: int
    result: str | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True)
class PlayedRow:
    """One ended hand or match of an account, as listed (``History.page``); ``id`` with
    ``ended_at`` is its place in the listing (the page token's keyset)."""

    id: int
    account_id: str
    kind: str
    ref_id: str
    table_id: str
    variant: str
    format: str
    result: str
    net_hundredths: int
    ended_at: datetime


# ---------------------------------------------------------------------------- repositories


class Commands(abc.ABC):
    """Idempotent commands: the first result under each key, with a hash of the command's body."""

    @abc.abstractmethod
    def claim(self, key: str, command: str, request_hash: str) -> StoredCommand | None:
        """Claim ``key`` for this transaction (None: new, do the work, then
        :meth:`store_result`), or the first result stored under it. Raises
        ``domain.accounts.Conflict`` when the key was used with another command or body."""

    @abc.abstractmethod
    def store_result(self, key: str, result: Any) -> None:
        """Store the JSON ``result`` of the command claimed under ``key``."""


class Accounts(abc.ABC):
    @abc.abstractmethod
    def ensure_players(self, account_ids: Iterable[str]) -> None:
        """Open a player account (balance 0) for each id that has none yet."""

    @abc.abstractmethod
    def lock_balances(self, account_ids: Iterable[str]) -> dict[str, BalanceRow]:
        """The balance rows of ``account_ids``, locked until the transaction ends (in account id
        order, so two writers never deadlock); unknown accounts are missing from the result."""

    @abc.abstractmethod
    def balance(self, account_id: str) -> BalanceRow | None:
        """The account's balance row, or None for an unknown account."""


class Journal(abc.ABC):
    @abc.abstractmethod
    def insert(self, transaction: JournalTransaction) -> None:
        """Append the transaction and its entries (credits first: ``in_posting_order``); each
        entry moves its account's balance."""

    @abc.abstractmethod
    def statement(self, account_id: str, limit: int, before_seq: int | None) -> list[StatementRow]:
        """The account's journal transactions, newest first, ``seq < before_seq`` when given."""


class Reservations(abc.ABC):
    @abc.abstractmethod
    def insert(self, hand_id: str, table_id: str, seat: int, account_id: str, amount: int) -> None:
        """Hold ``amount`` of the account's balance for the hand's seat."""

    @abc.abstractmethod
    def lock_held(self, hand_id: str) -> list[HeldReservation]:
        """The hand's held reservations, locked, in seat order."""

    @abc.abstractmethod
    def settle(self, hand_id: str, seat: int, settled_amount: int) -> None:
        """Resolve the seat's held reservation as settled at ``settled_amount``."""

    @abc.abstractmethod
    def release(self, hand_id: str, seat: int) -> None:
        """Resolve the seat's held reservation as released."""

    @abc.abstractmethod
    def of_hand(self, hand_id: str) -> list[ReservationRow]:
        """Every reservation of the hand, whatever its state, in seat order."""


class Outbox(abc.ABC):
    @abc.abstractmethod
    def next_stream_version(self, stream_id: str) -> int:
        """Take the next 1-based stream version of ``stream_id`` (dense: a rolled-back one is
        taken again)."""

    @abc.abstractmethod
    def write(self, events: Sequence[OutgoingEvent]) -> None:
        """Append the events to the outbox, in order (a repeated event id is refused)."""

    @abc.abstractmethod
    def unpublished(self, limit: int = 100) -> list[OutboxRow]:
        """The oldest unpublished events, in the order they were written."""

    @abc.abstractmethod
    def mark_published(self, event_ids: Sequence[str]) -> None: ...


class Offsets(abc.ABC):
    @abc.abstractmethod
    def store(self, consumer_group: str, topic: str, partition: int, offset: int) -> None:
        """Record that ``offset`` was handled: the group's next offset becomes at least
        offset + 1."""

    @abc.abstractmethod
    def next_offsets(self, consumer_group: str) -> dict[tuple[str, int], int]:
        """``{(topic, partition): next offset to read}`` for the group."""


class Matches(abc.ABC):
    """What the ledger remembers of the tables that host a match format and of their matches
    (``rummy_ledger.domain.matches``); the money itself is held as reservations."""

    @abc.abstractmethod
    def record_table(self, table_id: str, commission_bps: int) -> None:
        """Remember the table's commission rate (``TableOpened``); the first record stays."""

    @abc.abstractmethod
    def table_commission_bps(self, table_id: str) -> int | None:
        """The rate recorded for the table, or None."""

    @abc.abstractmethod
    def lock(self, table_id: str, match_id: str) -> MatchBook | None:
        """The match's book, locked until the transaction ends, or None if never started."""

    @abc.abstractmethod
    def save(self, book: MatchBook) -> None:
        """Store the book (insert or replace)."""


class Limits(abc.ABC):
    """Responsible play (``rummy_ledger.domain.limits``): each player's limits and its net losses
    per period, kept up to date as settlements post. Called under the lock of the account's
    balance row (``Accounts.lock_balances``), which serialises everything about one account."""

    @abc.abstractmethod
    def of(self, account_id: str) -> PlayerLimits | None:
        """The player's stored limits, or None when it never set any."""

    @abc.abstractmethod
    def save(self, limits: PlayerLimits) -> None:
        """Store the player's limits (insert or replace)."""

    @abc.abstractmethod
    def add_loss(self, account_id: str, period: str, start: date, net_loss_hundredths: int) -> None:
        """Add ``net_loss_hundredths`` (signed: a gain is negative) to the period's total."""

    @abc.abstractmethod
    def losses(self, account_id: str, periods: Sequence[tuple[str, date]]) -> dict[str, int]:
        """``{period: net loss}`` of the given ``(period, start)`` keys (0 when none posted)."""


class History(abc.ABC):
    """A player's hands and matches (``application.history``; ListMyHands): a read model keyed
    by account, written in the transaction of the settlement it reflects."""

    @abc.abstractmethod
    def record_table_variant(self, table_id: str, variant: str) -> None:
        """Remember the variant name the table plays; the first record stays."""

    @abc.abstractmethod
    def table_variant(self, table_id: str) -> str | None:
        """The variant recorded for the table, or None."""

    @abc.abstractmethod
    def add(self, entries: Sequence[PlayedEntry]) -> None:
        """Add each entry to its row (account, kind, table, ref id), creating it: the net is
        added, ``result`` and ``ended_at`` set when given (a row already ended stays ended)."""

    @abc.abstractmethod
    def page(
        self, account_id: str, limit: int, before: tuple[datetime, int] | None
    ) -> list[PlayedRow]:
        """The account's ended rows, newest first by (``ended_at``, ``id``), at most ``limit``,
        only those before the position ``before`` when given."""


class LedgerUnitOfWork(abc.ABC):
    """The ledger's repositories and the transaction they run in."""

    commands: Commands
    accounts: Accounts
    journal: Journal
    reservations: Reservations
    matches: Matches
    limits: Limits
    history: History
    outbox: Outbox
    offsets: Offsets

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A transaction: the outermost commits at its end (or is the caller's, which commits
        it), a nested one is a savepoint; an exception undoes everything done inside it."""

    @abc.abstractmethod
    def invariant_violations(self) -> list[str]:
        """The ledger's invariants checked over everything stored; ``[]`` when all hold: tokens
        conserved (balances sum to zero), every balance the sum of its entries, every reserved
        amount the sum of its held reservations, every transaction summing to zero, no account
        but issuance negative (balance or available)."""


# ------------------------------------------------------------------------- clock and metrics

#: The ledger's clock (its events' ``occurred_at``, the gauges' ages, a player's limits): the
#: system clock at the composition root (``bootstrap``), an advanceable one in tests.
Clock = Callable[[], datetime]


def _noop(*_args: object) -> None:
    return None


#: The table events a reaction may refuse (``Counters.refused(event_type)`` gets their full type
#: names): a hand's, and a match's with ``TableOpened``.
REFUSABLE_EVENTS: tuple[type[Message], ...] = (
    table_events.HandStarted,
    table_events.HandEnded,
    table_events.HandAborted,
    table_events.TableOpened,
    match_pb2.MatchStarted,
    match_pb2.GameStarted,
    match_pb2.MoneyReserved,
    match_pb2.GameEnded,
    match_pb2.MatchEnded,
    match_pb2.MatchAborted,
)


@dataclass
class Counters:
    """Callbacks the bootstrap points at its metrics (no-ops by default).

    ``reservation(outcome)`` per seat with ``"reserved"`` or ``"rejected"``;
    ``settlement(commission_hundredths)`` per hand settled; ``settlement_refused()`` per hand
    whose settlement was refused (its holds released); ``refused(event_type)`` per other table
    event the ledger refused; ``aborted()`` per hand aborted; ``granted(amount_hundredths)``.
    Match money: ``match_hold(purpose, outcome)`` per seat asked for (``"held"`` or
    ``"rejected"``), ``match_settlement(purpose, commission_hundredths)`` per settlement posted
    (purpose ``"entry"`` for a match's end, ``"stake"`` for a game's),
    ``match_settlement_refused(purpose)``, ``match_aborted()``. Responsible play:
    ``limit_refusal(reason)`` per reservation a player's own limit refused (``loss_limit``,
    ``stake_limit``, ``break``, ``self_exclusion``), ``limit_change(change)`` per limit fact.
    """

    reservation: Callable[[str], None] = _noop
    settlement: Callable[[int], None] = _noop
    settlement_refused: Callable[[], None] = _noop
    refused: Callable[[str], None] = _noop
    aborted: Callable[[], None] = _noop
    granted: Callable[[int], None] = _noop
    match_hold: Callable[[str, str], None] = _noop
    match_settlement: Callable[[str, int], None] = _noop
    match_settlement_refused: Callable[[str], None] = _noop
    match_aborted: Callable[[], None] = _noop
    limit_refusal: Callable[[str], None] = _noop
    limit_change: Callable[[str], None] = _noop
