"""Commands any draw-and-discard variant shares: imperative requests, frozen dataclasses.

Player commands name the ``turn_no`` they act on; a command for a turn that has moved on is
refused (``STALE_TURN``; ``docs/rules/hand-flow.md#turns``). ``at_ms`` is the host's clock
reading in milliseconds since the Unix epoch, used only to stamp events and set the next
deadline. Cards, seeds and the deal come from outside (the dealer and fairness services). A
variant adds its own commands in its own package (the Indian ``Declare`` and ``Drop`` live in
``rummy_rules.indian.commands``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import json_form
from .cards import Card
from .events import SeatAccount
from .rules import RuleSet
from .shuffle import SeatHand


class Command:
    """Marker base class of every command."""

    __slots__ = ()


@json_form.tag("table.StartHand")
@dataclass(frozen=True, kw_only=True)
class StartHand(Command):
    """Start hand ``hand_id`` with these seats (at least the rule set's ``min_players``)."""

    hand_id: str
    seats: tuple[SeatAccount, ...]
    dealer_seat: int
    rule_set: RuleSet
    at_ms: int


@json_form.tag("table.RecordStakeReserved")
@dataclass(frozen=True, kw_only=True)
class RecordStakeReserved(Command):
    """The ledger's StakesReserved for one seat. (A StakeRejected is answered with AbortHand.)"""

    seat: int
    amount_hundredths: int
    at_ms: int


@json_form.tag("table.RecordSeedCommitment")
@dataclass(frozen=True, kw_only=True)
class RecordSeedCommitment(Command):
    """The fairness service's SeedCommitted: the SHA-256 of the server seed, as hex."""

    commitment: str
    at_ms: int


@json_form.tag("table.ContributeClientSeed")
@dataclass(frozen=True, kw_only=True)
class ContributeClientSeed(Command):
    """A seat's client seed (hex, at most 256 bytes), accepted while the seed window is open
    (``docs/rules/hand-flow.md#seed-window``)."""

    seat: int
    seed_hex: str
    at_ms: int


@json_form.tag("table.Deal")
@dataclass(frozen=True, kw_only=True)
class Deal(Command):
    """Record the dealer's HandDealt: each seat's cards, the cut, the first open card, the stock
    (``stock[0]`` is the top). Accepted once the seeds are locked."""

    hands: tuple[SeatHand, ...]
    wild_cut: Card | None
    first_open: Card
    stock: tuple[Card, ...]
    at_ms: int


@json_form.tag("table.DrawFromStock")
@dataclass(frozen=True, kw_only=True)
class DrawFromStock(Command):
    seat: int
    turn_no: int
    at_ms: int


@json_form.tag("table.DrawFromDiscardPile")
@dataclass(frozen=True, kw_only=True)
class DrawFromDiscardPile(Command):
    seat: int
    turn_no: int
    at_ms: int


@json_form.tag("table.Discard")
@dataclass(frozen=True, kw_only=True)
class Discard(Command):
    seat: int
    turn_no: int
    card: Card
    at_ms: int


@json_form.tag("table.LeaveHand")
@dataclass(frozen=True, kw_only=True)
class LeaveHand(Command):
    """The seat leaves mid-hand, on its turn or not (no turn number: it acts on no turn;
    ``docs/rules/hand-flow.md#leave``)."""

    seat: int
    at_ms: int


@json_form.tag("table.TurnTimeout")
@dataclass(frozen=True, kw_only=True)
class TurnTimeout(Command):
    """The clock's TurnDeadlinePassed for ``turn_no`` (0 = the client-seed window). A timeout
    whose turn has moved on is stale: ``decide`` returns no event for it."""

    turn_no: int
    at_ms: int


@json_form.tag("table.RecordStockReshuffled")
@dataclass(frozen=True, kw_only=True)
class RecordStockReshuffled(Command):
    """The dealer's StockReshuffled: the set-aside cards reshuffled into stock ``reshuffle_no``."""

    reshuffle_no: int
    stock: tuple[Card, ...]
    at_ms: int


@json_form.tag("table.AbortHand")
@dataclass(frozen=True, kw_only=True)
class AbortHand(Command):
    """Abort a hand that cannot proceed (a stake rejected, a service gone past a deadline)."""

    reason: str
    at_ms: int


json_form.register(
    StartHand,
    RecordStakeReserved,
    RecordSeedCommitment,
    ContributeClientSeed,
    Deal,
    DrawFromStock,
    DrawFromDiscardPile,
    Discard,
    LeaveHand,
    TurnTimeout,
    RecordStockReshuffled,
    AbortHand,
)
