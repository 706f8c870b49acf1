"""Seats and the dealer button: taking and leaving a seat, the seats eligible for the next hand,
the seat the button moves to.

Seat rules: one seat per account per table; a seat that could not cover the reservation sits out
of later hands (``SeatInfo.sitting_out_reason``) until its player leaves and takes a seat again;
the dealer button moves to the next eligible seat each hand (at a match table, unless the format
keeps the dealer after a drawn deal: ``MatchFormat.keeps_dealer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rummy_rules.commands import LeaveHand
from rummy_rules.formats import messages as fm

from . import match_hosting
from .errors import BadRequest, NotPermitted, WrongState
from .facts import PlayerLeft, PlayerSeated

if TYPE_CHECKING:
    from .table import Fact, Table

#: How the ledger names the reasons it rejects a stake or a match's money for
#: (``STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE``, ...), before the words.
_REASON_PREFIX = "STAKE_REJECTION_REASON_"


@dataclass
class SeatInfo:
    account_id: str
    sitting_out_reason: str = ""


def reason_words(name: str) -> str:
    """The words of the ledger's rejection reason ``name``
    (``STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE`` -> ``insufficient balance``)."""
    return name.removeprefix(_REASON_PREFIX).lower().replace("_", " ")


def reason_name(words: str) -> str:
    """The ledger's name of the rejection reason ``words`` (the inverse of
    :func:`reason_words`)."""
    return _REASON_PREFIX + words.upper().replace(" ", "_")


def rejection_text(required_hundredths: int, available_hundredths: int, reason: str) -> str:
    """Why a seat sits out: the ledger could not hold its reservation (or its match money) of
    ``required_hundredths``, ``available_hundredths`` being there, for ``reason`` (words)."""
    return (
        f"could not cover the reservation of {required_hundredths} hundredths "
        f"(available {available_hundredths}; {reason}); leave and take a seat again "
        "to play"
    )


def take_seat(table: Table, account_id: str, wanted: int | None) -> list[Fact]:
    """PlayerSeated for ``account_id`` at ``wanted`` or the first free seat.
    Raises BadRequest (no such seat) or WrongState (seated, taken, full, the
    table closing or closed)."""
    if table.closing:
        raise WrongState(f"this table is {table.state_name}: no seat is taken")
    already = table.seat_of(account_id)
    if already is not None:
        raise WrongState(f"you already sit at seat {already} of this table")
    count = table.seat_count
    if wanted is not None:
        if not 0 <= wanted < count:
            raise BadRequest(f"seats are numbered 0..{count - 1}")
        if wanted in table.seats:
            raise WrongState(f"seat {wanted} is taken")
        seat = wanted
    else:
        free = [s for s in range(count) if s not in table.seats]
        if not free:
            raise WrongState("the table is full")
        seat = free[0]
    if table.dealt_in(seat):
        raise WrongState(f"seat {seat} is still playing the current hand")
    return [PlayerSeated(seat=seat, account_id=account_id)]


def leave(table: Table, account_id: str, at_ms: int) -> list[Fact]:
    """PlayerLeft, and the seat's exit from a running hand (the variant's LeaveHand).
    Raises NotPermitted if the account is not seated here."""
    seat = table.seat_of(account_id)
    if seat is None:
        raise NotPermitted("you do not sit at this table")
    during = table.dealt_in(seat)
    out: list[Fact] = [PlayerLeft(seat=seat, account_id=account_id, during_hand=during)]
    match = table.match
    if (
        match is not None
        and match.running
        and seat in match.state.active
        and match_hosting.match_seat_account(table, seat) == account_id
    ):
        out += match.decide([fm.LeaveMatch(seat=seat, at_ms=at_ms)])[0]
    if during and seat_still_playing(table, seat):
        out += table.hand_commands([LeaveHand(seat=seat, at_ms=at_ms)])
    return out


def seat_still_playing(table: Table, seat: int) -> bool:
    view = table.variant.view(table.hand, seat)
    status = next((s.status for s in view.seats if s.seat == seat), "")
    return status in ("waiting", "playing")


def eligible_seats(table: Table) -> list[int]:
    """Seats that may be dealt into the next hand, ascending."""
    return sorted(s for s, info in table.seats.items() if not info.sitting_out_reason)


def next_dealer(table: Table, among: Sequence[int] | None = None) -> int:
    """The seat the button moves to: the first eligible seat (of ``among``, when given)
    after the last dealer."""
    seats = eligible_seats(table) if among is None else sorted(among)
    if table.dealer_seat is None:
        return seats[0]
    later = [s for s in seats if s > table.dealer_seat]
    return later[0] if later else seats[0]
