"""The thin gRPC servicer of ``rummy.dealer.v1.DealerService``."""

from __future__ import annotations

import grpc

from rummy.dealer.v1 import dealer_service_pb2 as pb
from rummy.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from rummy_rules.shuffle import SHUFFLE_VERSION

SERVICE_NAME = "rummy.dealer.v1.DealerService"
SPEC_REFERENCE = "docs/rules/shuffle-spec.md"
add_to_server = pb_grpc.add_DealerServiceServicer_to_server


class DealerServicer(pb_grpc.DealerServiceServicer):
    def GetShuffleSpec(  # noqa: N802 - generated name
        self, request: pb.GetShuffleSpecRequest, context: grpc.ServicerContext
    ) -> pb.GetShuffleSpecResponse:
        return pb.GetShuffleSpecResponse(
            shuffle_version=SHUFFLE_VERSION, spec_reference=SPEC_REFERENCE
        )
