"""Container health check: exit 0 when the gRPC health service at 127.0.0.1:PORT says SERVING.

Usage: python /app/deploy/docker/health_check.py PORT  (health needs no token). Over TLS when
the container's ``RUMMY_TLS_*`` variables say so (``rummy_platform.tls``), as the service serves.
"""

from __future__ import annotations

import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rummy_platform.tls import dial


def main() -> int:
    port = int(sys.argv[1])
    with dial(f"127.0.0.1:{port}", ()) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            answer = stub.Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
                health_pb2.HealthCheckRequest(service=""), timeout=3.0
            )
        except grpc.RpcError as error:
            print(f"health check failed: {error.code().name}", file=sys.stderr)
            return 1
    return 0 if answer.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    raise SystemExit(main())
