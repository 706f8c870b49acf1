"""The thin gRPC servicer of ``rummy.dealer.v1.DealerService`` (decode, one handler call,
encode)."""

from __future__ import annotations

import grpc

from rummy.dealer.v1 import dealer_service_pb2 as pb
from rummy.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from rummy_dealer.application.shuffle_spec import shuffle_spec

SERVICE_NAME = "rummy.dealer.v1.DealerService"
add_to_server = pb_grpc.add_DealerServiceServicer_to_server


class DealerServicer(pb_grpc.DealerServiceServicer):
    def GetShuffleSpec(  # noqa: N802 - generated name
        self, request: pb.GetShuffleSpecRequest, context: grpc.ServicerContext
    ) -> pb.GetShuffleSpecResponse:
        spec = shuffle_spec()
        return pb.GetShuffleSpecResponse(
            shuffle_version=spec.shuffle_version, spec_reference=spec.spec_reference
        )
