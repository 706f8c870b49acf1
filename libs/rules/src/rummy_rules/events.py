"""Events of a hand that any draw-and-discard variant shares: past-tense facts, frozen dataclasses.

Times are ints of milliseconds since the Unix epoch, from the host's clock (``*_ms``); they arrive
inside commands and are copied into events, never read here. Seats are table seat numbers.
A variant adds its own events in its own package (the Indian declare and drops live in
``rummy_rules.indian.events``). Every event type is registered with ``rummy_rules.json_form``.

``redact(event, seat)`` is the copy of an event that ``seat`` may see: another seat's cards, a
card drawn from the stock by someone else and the stock order are removed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from . import json_form
from .cards import Card
from .rules import RuleSet
from .settlement import Settlement
from .shuffle import SeatHand


class Event:
    """Marker base class of every event."""

    __slots__ = ()


@dataclass(frozen=True)
class SeatAccount:
    """A seat dealt into a hand and the account playing it."""

    seat: int
    account_id: str


@dataclass(frozen=True)
class SeatSeed:
    """The client seed a seat contributed, hex-encoded (``""`` when it sent none)."""

    seat: int
    seed_hex: str


class DrawSource(Enum):
    STOCK = "stock"
    DISCARD_PILE = "discard_pile"


@json_form.tag("table.HandStarted")
@dataclass(frozen=True, kw_only=True)
class HandStarted(Event):
    """A hand began: its seats (ascending), the dealer's seat and the rule set it is played by."""

    hand_id: str
    seats: tuple[SeatAccount, ...]
    dealer_seat: int
    rule_set: RuleSet
    at_ms: int


@json_form.tag("table.StakeReserved")
@dataclass(frozen=True, kw_only=True)
class StakeReserved(Event):
    """The ledger reserved a seat's maximum loss (``amount_hundredths`` hundredths of a House
    Token)."""

    seat: int
    amount_hundredths: int


@json_form.tag("table.SeedCommitted")
@dataclass(frozen=True, kw_only=True)
class SeedCommitted(Event):
    """The fairness service committed to its server seed: ``commitment`` is its SHA-256 (hex)."""

    commitment: str


@json_form.tag("table.SeedWindowOpened")
@dataclass(frozen=True, kw_only=True)
class SeedWindowOpened(Event):
    """Client seeds are accepted until ``deadline_ms`` (the clock's turn number 0)."""

    deadline_ms: int


@json_form.tag("table.ClientSeedContributed")
@dataclass(frozen=True, kw_only=True)
class ClientSeedContributed(Event):
    seat: int
    seed_hex: str


@json_form.tag("table.SeedsLocked")
@dataclass(frozen=True, kw_only=True)
class SeedsLocked(Event):
    """The seeds the deal uses: the commitment and one client seed per seat (empty if none sent)."""

    commitment: str
    client_seeds: tuple[SeatSeed, ...]


@json_form.tag("table.HandDealt")
@dataclass(frozen=True, kw_only=True)
class HandDealt(Event):
    """The dealer's deal: each seat's cards, the cut card (``None`` if the variant cuts none),
    the first open card of the discard pile, and the stock (``stock[0]`` is drawn first).

    Redacted for a seat: the other seats' ``cards`` and the ``stock`` are empty tuples;
    ``stock_count`` always holds the stock's size.
    """

    hands: tuple[SeatHand, ...]
    wild_cut: Card | None
    first_open: Card
    stock: tuple[Card, ...]
    stock_count: int


@json_form.tag("table.TurnStarted")
@dataclass(frozen=True, kw_only=True)
class TurnStarted(Event):
    """``seat`` is to play turn ``turn_no`` (1, 2, ...) before ``deadline_ms``."""

    seat: int
    turn_no: int
    deadline_ms: int


@json_form.tag("table.CardDrawn")
@dataclass(frozen=True, kw_only=True)
class CardDrawn(Event):
    """``seat`` drew ``card`` from ``source``. A card from the stock is private: in the copy other
    seats see, ``card`` is None. A card from the discard pile is public."""

    seat: int
    turn_no: int
    source: DrawSource
    card: Card | None


@json_form.tag("table.CardDiscarded")
@dataclass(frozen=True, kw_only=True)
class CardDiscarded(Event):
    seat: int
    turn_no: int
    card: Card


@json_form.tag("table.TurnTimedOut")
@dataclass(frozen=True, kw_only=True)
class TurnTimedOut(Event):
    """``seat`` let turn ``turn_no`` pass; ``misses_in_a_row`` counts this one. What is played
    for the seat follows as ordinary events."""

    seat: int
    turn_no: int
    misses_in_a_row: int


@json_form.tag("table.StockExhausted")
@dataclass(frozen=True, kw_only=True)
class StockExhausted(Event):
    """The stock ran out during ``turn_no``. ``cards`` (the discard pile but its top, bottom
    first) leave the pile to be reshuffled into stock number ``reshuffle_no`` (1, 2, ...)."""

    turn_no: int
    reshuffle_no: int
    cards: tuple[Card, ...]


@json_form.tag("table.StockReshuffled")
@dataclass(frozen=True, kw_only=True)
class StockReshuffled(Event):
    """The dealer's new stock from the set-aside cards (``stock[0]`` drawn first). Redacted:
    ``stock`` is empty; ``stock_count`` always holds its size."""

    reshuffle_no: int
    stock: tuple[Card, ...]
    stock_count: int


@dataclass(frozen=True)
class ScoredGroup:
    """A group of a scored arrangement: its ``kind`` in the variant's words (Indian points:
    ``pure_sequence``, ``impure_sequence``, ``set``) and its cards."""

    kind: str
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class SeatResult:
    """One seat's result at the end of a hand.

    - ``outcome``: a variant-defined word (Indian points: ``won``, ``counted``, ``first_drop``,
      ``middle_drop``, ``left``, ``timed_out``, ``wrong_declare``).
    - ``points``: what the seat is charged (0 for the winner).
    - ``cards``: the cards it held at the end or when it went out (public now).
    - ``melds`` and ``deadwood``: the scored arrangement of those cards (empty when a fixed
      penalty was charged instead).
    - ``score``: the seat's own signed score of the hand, in points, for a game where every
      seat scores every hand (Rummy 500: its melds and lay-offs minus its cards in hand; may be
      negative); 0 in a game where a hand's winner scores what its losers are charged.
    """

    seat: int
    account_id: str
    outcome: str
    points: int
    cards: tuple[Card, ...]
    melds: tuple[ScoredGroup, ...]
    deadwood: tuple[Card, ...]
    score: int = 0


@json_form.tag("table.HandEnded")
@dataclass(frozen=True, kw_only=True)
class HandEnded(Event):
    """The hand is over: ``winner_seat``, every seat's result (ascending seats) and the money.

    A hand may end with several winners sharing the pot (a variant's tie): ``winner_seat`` is
    the first of them in the variant's order and ``settlement.co_winner_seats`` the others;
    :attr:`winner_seats` gives them all. An Indian points hand has exactly one winner.
    """

    winner_seat: int
    results: tuple[SeatResult, ...]
    settlement: Settlement
    at_ms: int

    @property
    def winner_seats(self) -> tuple[int, ...]:
        """Every seat that shares the pot, ascending (``(winner_seat,)`` with one winner)."""
        return self.settlement.winner_seats


@json_form.tag("table.HandAborted")
@dataclass(frozen=True, kw_only=True)
class HandAborted(Event):
    """The hand cannot proceed; every reservation is released and nothing else moves."""

    reason: str
    at_ms: int


json_form.register(
    HandStarted,
    StakeReserved,
    SeedCommitted,
    SeedWindowOpened,
    ClientSeedContributed,
    SeedsLocked,
    HandDealt,
    TurnStarted,
    CardDrawn,
    CardDiscarded,
    TurnTimedOut,
    StockExhausted,
    StockReshuffled,
    HandEnded,
    HandAborted,
)


def redact(event: Event, seat: int) -> Event:
    """The copy of ``event`` that ``seat`` may see (pass -1 for a spectator who holds no cards;
    ``docs/rules/hand-flow.md#views``)."""
    if isinstance(event, HandDealt):
        hands = tuple(h if h.seat == seat else replace(h, cards=()) for h in event.hands)
        return replace(event, hands=hands, stock=())
    if isinstance(event, CardDrawn) and event.source is DrawSource.STOCK and event.seat != seat:
        return replace(event, card=None)
    if isinstance(event, StockReshuffled):
        return replace(event, stock=())
    return event
