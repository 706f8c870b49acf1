"""A tiny service run as a real process by the server tests: ``python -m probe_service``.

It uses :class:`rummy_platform.server.ServiceHost` exactly as the five services do (on the
thread-pool server, or on grpc.aio with ``PROBE_AIO=1``), with

- a real generated API, ``rummy.ledger.v1.LedgerService``, over an in-memory wallet (so that
  reflection can describe it the way ``grpcurl`` does, and roles are checked as the ledger will);
- a generic bytes-in/bytes-out ``rummy.probe.v1.ProbeService`` for what the ledger API has no
  method for: a slow call (the graceful drain), a response stream, logging context, a bug.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import grpc

from rummy.ledger.v1 import ledger_service_pb2 as ledger_pb2
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy_platform.auth import Role, current_principal, require_role
from rummy_platform.config import Settings, setting
from rummy_platform.errors import InvalidArgument, NotFound
from rummy_platform.logging import get_logger, log_context
from rummy_platform.server import ServiceHost

LEDGER_SERVICE = "rummy.ledger.v1.LedgerService"
PROBE_SERVICE = "rummy.probe.v1.ProbeService"

_log = get_logger("probe")


class InMemoryLedger(ledger_grpc.LedgerServiceServicer):
    """Balances in a dict; players read their own, operators read any and grant."""

    def __init__(self) -> None:
        self._balances: dict[str, int] = {"alice": 100_00}

    def GetBalance(  # noqa: N802 (generated name)
        self, request: ledger_pb2.GetBalanceRequest, context: grpc.ServicerContext
    ) -> ledger_pb2.GetBalanceResponse:
        caller = current_principal()
        account_id = request.account_id or caller.account_id
        if account_id != caller.account_id:
            require_role(context, Role.OPERATOR, Role.SERVICE)
        if account_id not in self._balances:
            raise NotFound(f"no account {account_id}")
        balance = self._balances[account_id]
        return ledger_pb2.GetBalanceResponse(
            account_id=account_id, balance_hundredths=balance, available_hundredths=balance
        )

    def Grant(  # noqa: N802 (generated name)
        self, request: ledger_pb2.GrantRequest, context: grpc.ServicerContext
    ) -> ledger_pb2.GrantResponse:
        require_role(context, Role.OPERATOR)
        if request.amount_hundredths <= 0:
            raise InvalidArgument("amount_hundredths must be positive")
        balance = self._balances.get(request.account_id, 0) + request.amount_hundredths
        self._balances[request.account_id] = balance
        return ledger_pb2.GrantResponse(
            journal_transaction_id=request.idempotency_key, balance_hundredths=balance
        )

    def GetStatement(  # noqa: N802 (generated name)
        self, request: ledger_pb2.GetStatementRequest, context: grpc.ServicerContext
    ) -> ledger_pb2.GetStatementResponse:
        """Not served by the probe (as the generated base answers: UNIMPLEMENTED)."""
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the probe keeps no statements")

    def ListMyHands(  # noqa: N802 (generated name)
        self, request: ledger_pb2.ListMyHandsRequest, context: grpc.ServicerContext
    ) -> ledger_pb2.ListMyHandsResponse:
        """Not served by the probe (UNIMPLEMENTED): it keeps no history."""
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the probe keeps no history")

    def _keeps_no_limits(self, request: Any, context: grpc.ServicerContext) -> Any:
        """Not served by the probe (UNIMPLEMENTED): it keeps no limits."""
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the probe keeps no limits")

    GetLimits = SetLossLimit = SetStakeLimit = SetLimitsTimeZone = _keeps_no_limits
    StartBreak = EndBreak = SelfExclude = AskToReturn = CheckSeat = _keeps_no_limits


def _sleep(request: bytes, context: grpc.ServicerContext) -> bytes:
    time.sleep(float(request.decode()))
    return b"slept"


def _count(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
    account = current_principal().account_id
    for number in range(int(request.decode())):
        yield f"{account}:{number}".encode()


def _log_seat(request: bytes, context: grpc.ServicerContext) -> bytes:
    table_id, hand_id, seat = request.decode().split(",")
    with log_context(table_id=table_id, hand_id=hand_id, seat=int(seat)):
        _log.info("probe seat logged")
        logging.getLogger("probe.stdlib").info("probe stdlib line")
    return b"logged"


def _crash(request: bytes, context: grpc.ServicerContext) -> bytes:
    raise RuntimeError("probe bug")


def add_probe_service(servicer: object, server: grpc.Server) -> None:
    """Register the generic probe methods (no serializers: bytes in, bytes out)."""
    handlers: dict[str, grpc.RpcMethodHandler[bytes, Any]] = {
        "Sleep": grpc.unary_unary_rpc_method_handler(_sleep),
        "Count": grpc.unary_stream_rpc_method_handler(_count),
        "LogSeat": grpc.unary_unary_rpc_method_handler(_log_seat),
        "Crash": grpc.unary_unary_rpc_method_handler(_crash),
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(PROBE_SERVICE, handlers),)
    )


class ProbeSettings(Settings):
    """The probe's settings: the platform's (no default ports: both must be set), and
    ``PROBE_AIO=1`` for the same service on the host's grpc.aio server (the table service's)."""

    service: ClassVar[str] = "probe"

    aio: bool = setting("PROBE_AIO", False, "serve on grpc.aio")


def main() -> None:
    settings = ProbeSettings.load_or_exit()
    host = ServiceHost("probe", settings, aio=settings.aio)
    host.add_servicer(
        ledger_grpc.add_LedgerServiceServicer_to_server, InMemoryLedger(), LEDGER_SERVICE
    )
    host.add_servicer(add_probe_service, None, PROBE_SERVICE)
    host.on_stopping(lambda: print("probe stopping hook ran", flush=True))
    host.on_shutdown(lambda: print("probe shutdown hook ran", flush=True))
    host.serve_forever()


if __name__ == "__main__":
    main()
