"""The thin gRPC servicer of ``rummy.clock.v1.ClockService`` (operator or service role)."""

from __future__ import annotations

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from rummy.clock.v1 import clock_service_pb2 as pb
from rummy.clock.v1 import clock_service_pb2_grpc as pb_grpc
from rummy_clock.application.deadlines import ClockApplication
from rummy_clock.domain.schedule import PendingDeadline
from rummy_platform.auth import Role, require_role
from rummy_rules.variant import DeadlineKind

SERVICE_NAME = "rummy.clock.v1.ClockService"
add_to_server = pb_grpc.add_ClockServiceServicer_to_server

_KINDS = {
    DeadlineKind.TURN: pb.DEADLINE_KIND_TURN,
    DeadlineKind.SEED_WINDOW: pb.DEADLINE_KIND_SEED_WINDOW,
}


#: The most deadlines one ListPendingDeadlines answer holds (also its default), so the answer
#: stays far below the response size limit (rummy_platform.limits.MAX_RESPONSE_BYTES).
MAX_DEADLINES = 1000


class ClockServicer(pb_grpc.ClockServiceServicer):
    def __init__(self, app: ClockApplication) -> None:
        self._app = app

    def ListPendingDeadlines(  # noqa: N802 - generated name
        self, request: pb.ListPendingDeadlinesRequest, context: grpc.ServicerContext
    ) -> pb.ListPendingDeadlinesResponse:
        require_role(context, Role.OPERATOR, Role.SERVICE)
        limit = min(request.limit or MAX_DEADLINES, MAX_DEADLINES)
        found = self._app.pending(request.table_id or None, limit)
        return pb.ListPendingDeadlinesResponse(deadlines=[to_proto(d) for d in found])


def to_proto(deadline: PendingDeadline) -> pb.PendingDeadline:
    """The wire form of a pending deadline (the table's deadline, not the sped-up due time)."""
    stamp = Timestamp()
    stamp.FromDatetime(deadline.deadline)
    return pb.PendingDeadline(
        table_id=deadline.table_id,
        hand_id=deadline.hand_id,
        kind=_KINDS[deadline.kind],
        seat=deadline.seat,
        turn_no=deadline.turn_no,
        deadline=stamp,
    )
