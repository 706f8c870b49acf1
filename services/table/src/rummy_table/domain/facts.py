"""The table-level facts of a table's stream, as the domain folds and decides them: plain frozen
dataclasses (no wire). The application maps each to and from its payload on the log
(``rummy_table.application.stream_facts``); a match's facts hold the format's events
(``rummy_rules.formats.messages``), a hand's are still its payloads (the variant's events,
``rummy_rules.events``, are decoded from them).

Seats are numbered from 0; amounts are hundredths of the currency unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules.formats import messages as fm


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
