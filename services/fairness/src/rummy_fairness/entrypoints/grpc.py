"""The thin gRPC servicer of ``rummy.fairness.v1.FairnessService``: check who may ask, decode,
call the handler, encode (the messages: :mod:`.grpc_messages`).

Errors raised by the application (NotFound, InvalidArgument) are mapped to status codes by the
host's ErrorMappingInterceptor; the role check ends the call PERMISSION_DENIED itself.
"""

from __future__ import annotations

import grpc

from rummy.fairness.v1 import fairness_service_pb2 as pb
from rummy.fairness.v1 import fairness_service_pb2_grpc as pb_grpc
from rummy_fairness.application.ports import FairnessUnitOfWork
from rummy_fairness.application.seeds import Fairness
from rummy_fairness.entrypoints import grpc_messages
from rummy_platform.auth import Role, require_role

SERVICE_NAME = "rummy.fairness.v1.FairnessService"
add_to_server = pb_grpc.add_FairnessServiceServicer_to_server


class FairnessServicer(pb_grpc.FairnessServiceServicer):
    def __init__(self, fairness: Fairness, uow: FairnessUnitOfWork) -> None:
        self._fairness = fairness
        self._uow = uow

    def GetProof(  # noqa: N802 - generated name
        self, request: pb.GetProofRequest, context: grpc.ServicerContext
    ) -> pb.GetProofResponse:
        return grpc_messages.proof_response(self._fairness.get_proof(self._uow, request.hand_id))

    def GetServerSeed(  # noqa: N802 - generated name
        self, request: pb.GetServerSeedRequest, context: grpc.ServicerContext
    ) -> pb.GetServerSeedResponse:
        require_role(context, Role.SERVICE)
        seed = self._fairness.get_server_seed(self._uow, request.hand_id)
        return grpc_messages.server_seed_response(request.hand_id, seed)
