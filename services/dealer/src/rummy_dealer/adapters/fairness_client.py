"""The dealer's gRPC client of the fairness service, calling with a service-role token."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rummy.fairness.v1 import fairness_service_pb2 as pb
from rummy.fairness.v1 import fairness_service_pb2_grpc as pb_grpc
from rummy_platform.auth import authorized_channel
from rummy_platform.limits import open_channel


class FairnessClient:
    """``target`` is ``host:port``; ``token`` returns a current service-role token. Every call
    waits at most ``timeout_s`` seconds and raises grpc.RpcError on failure."""

    def __init__(self, target: str, token: Callable[[], str], timeout_s: float = 5.0) -> None:
        self._channel = authorized_channel(open_channel(target), token)
        self._stub = pb_grpc.FairnessServiceStub(self._channel)
        self._timeout_s = timeout_s

    def server_seed(self, hand_id: str) -> bytes:
        response = self._stub.GetServerSeed(
            pb.GetServerSeedRequest(hand_id=hand_id), timeout=self._timeout_s
        )
        return bytes(response.server_seed)

    def locked_client_seeds(self, hand_id: str) -> Sequence[tuple[int, bytes]]:
        response = self._stub.GetProof(pb.GetProofRequest(hand_id=hand_id), timeout=self._timeout_s)
        return [(s.seat, bytes(s.client_seed)) for s in response.client_seeds]

    def close(self) -> None:
        self._channel.close()
