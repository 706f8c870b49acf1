"""A player's view of a hand: what one seat may see, as data a host can send as it is.

Own cards, the discard pile, every seat's card count and status, the stock's size, whose turn
and its number, the cut card and wild rank; at the end, every seat's cards and scored
arrangement. Never another seat's cards or the stock order while the hand runs
(``docs/rules/hand-flow.md#views``). Variants build it (``Variant.view``); its shape names no
variant's concepts.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import Card, Rank
from .events import HandAborted, HandEnded


@dataclass(frozen=True)
class SeatView:
    """A seat as everyone sees it. ``status``: ``waiting``, ``playing``, or a variant's word for
    a seat that is out (Indian points: ``dropped``, ``wrong_declare``, ``left``, ``timed_out``),
    ``won``. ``misses_in_a_row`` counts its timed-out turns in a row."""

    seat: int
    account_id: str
    card_count: int
    status: str
    misses_in_a_row: int


@dataclass(frozen=True)
class PlayerView:
    """What ``seat`` sees. ``phase`` is the variant's phase name; ``turn_seat``/``turn_no`` are
    None/0 outside play; ``has_drawn`` says whether the seat on turn has drawn this turn;
    ``result`` is the HandEnded (every seat's cards and arrangement) or HandAborted at the end;
    ``commitment`` is the server seed's commitment (SHA-256, hex) once published, for the
    player's own record of what it was shown before the deal. ``variant_view`` is the
    variant's own public part for ``seat`` (gin: ``rummy_rules.gin.hand.GinView``, the knock
    limit, the knock's melds and deadwood), held to the same privacy, or None; a host puts it on
    the wire through the variant's wire (``VariantWire.view_to_pb``), never reading it."""

    hand_id: str
    seat: int
    phase: str
    cards: tuple[Card, ...]
    discard_pile: tuple[Card, ...]
    stock_count: int
    wild_cut: Card | None
    wild_rank: Rank | None
    seats: tuple[SeatView, ...]
    turn_seat: int | None
    turn_no: int
    turn_deadline_ms: int | None
    has_drawn: bool
    result: HandEnded | HandAborted | None
    commitment: str | None = None
    variant_view: object | None = None
