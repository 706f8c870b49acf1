"""The seats: a player takes one or stands up."""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as pb
from rummy_table.domain import seating

from . import commands as c
from .commit import TableCore, first_of
from .seat_limits import ask_before_seating


def take_seat(core: TableCore, request: c.TakeSeat) -> int:
    """Seat ``request.account_id`` (at ``request.seat``, or the first free seat); returns the
    seat."""
    account_id, wanted = request.account_id, request.seat
    ask_before_seating(core.seat_limits, core.projection.tables.get(request.table_id), account_id)
    payloads = core.act(
        request,
        lambda t, _at: seating.take_seat(t, account_id, wanted),
        action="take_seat",
    )
    seated: pb.TablePlayerSeated = first_of(payloads, pb.TablePlayerSeated)
    return seated.seat


def leave_table(core: TableCore, request: c.LeaveTable) -> None:
    account_id = request.account_id
    core.act(
        request,
        lambda t, at: seating.leave(t, account_id, at),
        action="leave_table",
    )
