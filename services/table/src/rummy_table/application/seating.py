"""The seats: a player takes one or stands up."""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as pb

from . import commands as c
from .commit import TableCore, first_of
from .seat_limits import SeatLimits, ask_before_seating


class Seating(TableCore):
    """Take and leave seats."""

    #: The ledger's check of a player's own limits before a seat is taken
    #: (:mod:`.seat_limits`; bootstrap sets it when the ledger's address is configured).
    seat_limits: SeatLimits | None = None

    def take_seat(self, request: c.TakeSeat) -> int:
        """Seat ``request.account_id`` (at ``request.seat``, or the first free seat); returns the
        seat."""
        account_id, wanted = request.account_id, request.seat
        ask_before_seating(
            self.seat_limits, self.projection.tables.get(request.table_id), account_id
        )
        payloads = self._act(
            request,
            lambda t, _at: t.take_seat(account_id, wanted),
            action="take_seat",
        )
        seated: pb.TablePlayerSeated = first_of(payloads, pb.TablePlayerSeated)
        return seated.seat

    def leave_table(self, request: c.LeaveTable) -> None:
        account_id = request.account_id
        self._act(
            request,
            lambda t, at: t.leave(account_id, at),
            action="leave_table",
        )
