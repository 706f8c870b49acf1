"""A tiny service run as a real process by the server tests: ``python -m probe_service``.

It uses :class:`rummy_platform.server.ServiceHost` exactly as the five services do, with a
generic (bytes in, bytes out) service ``rummy.probe.v1.ProbeService`` whose methods exercise
auth, roles, error mapping, streaming and the graceful drain.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc

from rummy_platform.auth import Role, current_principal, require_role
from rummy_platform.config import load_settings_or_exit
from rummy_platform.errors import NotFound
from rummy_platform.server import ServiceHost

SERVICE = "rummy.probe.v1.ProbeService"


def who_am_i(request: bytes, context: grpc.ServicerContext) -> bytes:
    principal = current_principal()
    return f"{principal.account_id}:{principal.role.value}".encode()


def operator_only(request: bytes, context: grpc.ServicerContext) -> bytes:
    require_role(context, Role.OPERATOR)
    return b"operator ok"


def sleep(request: bytes, context: grpc.ServicerContext) -> bytes:
    time.sleep(float(request.decode()))
    return b"slept"


def missing_table(request: bytes, context: grpc.ServicerContext) -> bytes:
    raise NotFound(f"no table {request.decode()}")


def count(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
    account = current_principal().account_id
    for number in range(int(request.decode())):
        yield f"{account}:{number}".encode()


def _unary(fn):  # type: ignore[no-untyped-def]
    return grpc.unary_unary_rpc_method_handler(fn)  # no serializers: bytes in, bytes out


def add_probe_service(servicer: object, server: grpc.Server) -> None:
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "WhoAmI": _unary(who_am_i),
                    "OperatorOnly": _unary(operator_only),
                    "Sleep": _unary(sleep),
                    "MissingTable": _unary(missing_table),
                    "Count": grpc.unary_stream_rpc_method_handler(count),
                },
            ),
        )
    )


def main() -> None:
    settings = load_settings_or_exit("probe")
    host = ServiceHost("probe", settings)
    host.add_servicer(add_probe_service, None, SERVICE)
    host.on_shutdown(lambda: print('{"event": "probe shutdown hook ran"}', flush=True))
    host.serve_forever()


if __name__ == "__main__":
    main()
