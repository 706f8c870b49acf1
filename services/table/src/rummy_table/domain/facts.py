"""The table-level facts of a table's stream, as the domain folds and decides them: plain frozen
dataclasses (no wire). The application maps each to and from its payload on the log
(``rummy_table.application.stream_facts``); a hand's facts are the variant's events
(``rummy_rules.events``), a match's the format's (``rummy_rules.formats.messages``).

Seats are numbered from 0; amounts are hundredths of the currency unit.
"""

from __future__ import annotations

from dataclasses import dataclass


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


#: The table-level facts.
TableFact = PlayerSeated | PlayerLeft | TableClosing | TableClosed | StakeRejected
