"""The table-level facts of a table's stream, as the domain folds and decides them: plain frozen
dataclasses (no wire). The application maps each to and from its payload on the log
(``rummy_table.application.stream_facts``); a match's facts hold the format's events
(``rummy_rules.formats.messages``), a hand's the variant's events (``rummy_rules.events``).

Seats are numbered from 0; amounts are hundredths of the currency unit; times are ms since the
epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules import events as ev
from rummy_rules.cards import Card
from rummy_rules.formats import MatchFormat
from rummy_rules.formats import messages as fm
from rummy_rules.rules import RuleSet


@dataclass(frozen=True)
class TableOpened:
    """Table ``table_id`` was opened with ``seat_count`` seats, hands of ``rule_set`` starting
    ``start_delay_ms`` (ms) after the last seat change or hand end, hosting matches of ``fmt``
    (None: a points table) (``rummy.table.v1.TableOpened``)."""

    table_id: str
    seat_count: int
    start_delay_ms: int
    rule_set: RuleSet
    fmt: MatchFormat | None = None


@dataclass(frozen=True)
class HandStarted:
    """Hand ``hand_id``, the table's ``hand_no``-th, started with ``seats`` (ascending), the
    button at ``dealer_seat``, played by ``rule_set`` (``rummy.table.v1.HandStarted``)."""

    hand_id: str
    hand_no: int
    seats: tuple[ev.SeatAccount, ...]
    dealer_seat: int
    rule_set: RuleSet

    @classmethod
    def of(cls, started: ev.HandStarted, hand_no: int) -> HandStarted:
        """The fact of the rules' HandStarted, the table's ``hand_no``-th hand."""
        return cls(started.hand_id, hand_no, started.seats, started.dealer_seat, started.rule_set)

    def event(self, at_ms: int) -> ev.HandStarted:
        """The rules' HandStarted at ``at_ms`` (what the variant applies)."""
        return ev.HandStarted(
            hand_id=self.hand_id,
            seats=self.seats,
            dealer_seat=self.dealer_seat,
            rule_set=self.rule_set,
            at_ms=at_ms,
        )

    @property
    def accounts(self) -> dict[int, str]:
        """Each seat dealt in -> the account playing it."""
        return {s.seat: s.account_id for s in self.seats}


@dataclass(frozen=True)
class HandEvents:
    """One record of hand ``hand_id`` after its HandStarted: the variant's ``events`` it holds
    (one for a record the table decides; a record of the ledger's reservations holds one per
    seat) -- its end is a HandEnded (every seat's result and the money) or a HandAborted -- and
    what the record notes besides the events: ``top_discard``, the discard pile's top after it;
    ``automatic``, a draw or discard played for a timed-out seat; ``wild_cut``, the hand's cut
    card (for the deadwood points of a HandEnded) (the table stream's hand payloads, the other
    services' answers about a hand among them)."""

    hand_id: str
    events: tuple[ev.Event, ...]
    top_discard: Card | None = None
    automatic: bool = False
    wild_cut: Card | None = None

    @property
    def end(self) -> ev.HandEnded | ev.HandAborted | None:
        """The event that ends the hand here (its HandEnded or HandAborted), if any."""
        return next((e for e in self.events if isinstance(e, ev.HandEnded | ev.HandAborted)), None)


@dataclass(frozen=True)
class PlayerSeated:
    """``account_id`` took ``seat`` (``rummy.table.v1.TablePlayerSeated``)."""

    seat: int
    account_id: str


@dataclass(frozen=True)
class PlayerLeft:
    """``account_id`` stood up from ``seat``; ``during_hand``: while dealt into the hand being
    played (``rummy.table.v1.TablePlayerLeft``)."""

    seat: int
    account_id: str
    during_hand: bool = False


@dataclass(frozen=True)
class TableClosing:
    """An operator closes the table: no hand starts and no seat is taken from here on
    (``rummy.table.v1.TableClosing``)."""

    operator_account_id: str
    reason: str


@dataclass(frozen=True)
class TableClosed:
    """The table is closed: every seat stood up (``rummy.table.v1.TableClosed``)."""


@dataclass(frozen=True)
class StakeRejected:
    """The ledger could not hold the reservation of ``seat`` (``account_id``) for hand
    ``hand_id``: ``required_hundredths`` asked, ``available_hundredths`` there; ``reason``: the
    ledger's reason in lower-case words (``insufficient balance``, ``unknown account``, ``not
    dealt in``, ``unspecified``) (``rummy.ledger.v1.StakeRejected``, recorded on the table's
    stream as the ledger's answer)."""

    hand_id: str
    seat: int
    account_id: str
    reason: str
    available_hundredths: int
    required_hundredths: int


@dataclass(frozen=True)
class JournalLine:
    """One line of the ledger's journal: ``amount_hundredths`` (signed) on ``account_id``."""

    account_id: str
    amount_hundredths: int
    memo: str = ""


@dataclass(frozen=True)
class Reservation:
    """A hold of ``amount_hundredths`` on ``account_id`` for ``seat``."""

    seat: int
    account_id: str
    amount_hundredths: int


@dataclass(frozen=True)
class SeedRevealed:
    """Fairness revealed hand ``hand_id``'s server seed (``rummy.fairness.v1.SeedRevealed``):
    it closes the hand's proof."""

    hand_id: str
    server_seed: bytes
    commitment_sha256: bytes


@dataclass(frozen=True)
class HandSettled:
    """The ledger posted hand ``hand_id``'s settlement: its journal transaction, lines and
    commission (``rummy.ledger.v1.HandSettled``)."""

    hand_id: str
    journal_transaction_id: str
    lines: tuple[JournalLine, ...]
    commission_hundredths: int


@dataclass(frozen=True)
class SettlementRefused:
    """The ledger refused hand ``hand_id``'s settlement for ``reason``, releasing ``released``:
    the hand is void (``rummy.ledger.v1.SettlementRefused``)."""

    hand_id: str
    reason: str
    released: tuple[Reservation, ...]


@dataclass(frozen=True)
class MatchSettled:
    """The ledger posted match ``match_id``'s settlement (``game_no`` 0) or one game's
    (``rummy.ledger.v1.MatchSettled``), recorded on the table's stream for the match's replay."""

    match_id: str
    game_no: int
    journal_transaction_id: str
    lines: tuple[JournalLine, ...]
    commission_hundredths: int


@dataclass(frozen=True)
class MatchFact:
    """One event of the table's match (the format's), with what its record names beside it:
    ``hand_id``, the hand that plays the deal (DealStarted, DealScored, DealVoided; else "");
    ``game_no``, the game whose stakes a MoneyReserved of purpose ``game`` holds (else 0).
    (``rummy.match.v1``'s event of the same name.)"""

    event: fm.MatchEvent
    hand_id: str = ""
    game_no: int = 0


@dataclass(frozen=True)
class MatchMoneyHeld:
    """The ledger holds the ``reservations`` asked for match ``match_id``'s ``purpose`` (the
    ledger's name: ``entry``, ``rejoin``, ``stake``; ``game_no``: a stake's game, else 0)
    (``rummy.ledger.v1.MatchMoneyHeld``)."""

    match_id: str
    purpose: str
    game_no: int
    reservations: tuple[Reservation, ...]


@dataclass(frozen=True)
class MatchMoneyRejected:
    """The ledger could not hold ``seat``'s (``account_id``) money for match ``match_id``'s
    ``purpose`` (as :class:`MatchMoneyHeld`): ``required_hundredths`` asked,
    ``available_hundredths`` there, ``reason`` as :attr:`StakeRejected.reason`
    (``rummy.ledger.v1.MatchMoneyRejected``)."""

    match_id: str
    purpose: str
    game_no: int
    seat: int
    account_id: str
    reason: str
    available_hundredths: int
    required_hundredths: int


#: The ledger's answers about a match's money.
MatchMoney = MatchMoneyHeld | MatchMoneyRejected
#: What a table's match folds (its record, :attr:`MatchHost.log`).
MatchRecord = MatchFact | MatchMoneyHeld | MatchMoneyRejected
#: The facts that close a hand's proof (its seed reveal, its settlement or the refusal of it).
ProofClosing = SeedRevealed | HandSettled | SettlementRefused
#: The facts of a hand (its start, then its events).
HandFact = HandStarted | HandEvents
#: The table-level facts.
TableFact = (
    PlayerSeated
    | PlayerLeft
    | TableClosing
    | TableClosed
    | StakeRejected
    | SeedRevealed
    | HandSettled
    | SettlementRefused
    | MatchSettled
    | MatchFact
    | MatchMoneyHeld
    | MatchMoneyRejected
)
