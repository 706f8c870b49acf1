"""The ledger's ``CheckSeat`` for TakeSeat (outbound: a gRPC client with a service-role token),
behind ``rummy_table.application.seat_limits.SeatLimits``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC

import grpc

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_platform.auth import authorized_channel
from rummy_platform.limits import open_channel
from rummy_table.application.seat_limits import LimitsUnavailable, SeatCheck

_REASONS = {
    pb.PLAY_CLOSED_REASON_BREAK: "break",
    pb.PLAY_CLOSED_REASON_SELF_EXCLUSION: "self_exclusion",
    pb.PLAY_CLOSED_REASON_LOSS_LIMIT: "loss_limit",
    pb.PLAY_CLOSED_REASON_STAKE_LIMIT: "stake_limit",
}


class LedgerSeatLimits:
    """``target``: the ledger's ``host:port``; ``token`` returns a current service-role token;
    a call waits at most ``timeout_s`` seconds (then LimitsUnavailable)."""

    def __init__(self, target: str, token: Callable[[], str], timeout_s: float = 3.0) -> None:
        self._channel = authorized_channel(open_channel(target), token)
        self._stub = pb_grpc.LedgerServiceStub(self._channel)
        self._timeout_s = timeout_s

    def check(self, account_id: str, amount_hundredths: int) -> SeatCheck:
        request = pb.CheckSeatRequest(account_id=account_id, amount_hundredths=amount_hundredths)
        try:
            answer = self._stub.CheckSeat(request, timeout=self._timeout_s)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            raise LimitsUnavailable(getattr(code, "name", "no answer")) from error
        if answer.allowed:
            return SeatCheck(True)
        until = answer.until.ToDatetime(UTC) if answer.HasField("until") else None
        return SeatCheck(False, _REASONS.get(answer.reason, "limit"), answer.detail, until)

    def close(self) -> None:
        self._channel.close()
