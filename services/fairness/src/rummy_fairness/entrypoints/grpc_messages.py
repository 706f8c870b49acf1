"""Protobuf <-> the fairness service's own types for ``rummy.fairness.v1.FairnessService``
(pure functions, no I/O): a :class:`~rummy_fairness.application.seeds.Proof` into a
``GetProofResponse``, a hand's server seed into a ``GetServerSeedResponse``."""

from __future__ import annotations

from rummy.fairness.v1 import fairness_service_pb2 as pb
from rummy_fairness.application.seeds import Proof


def proof_response(proof: Proof) -> pb.GetProofResponse:
    """The commitment, and once revealed the server seed (``b""`` before), with the client seeds
    as locked (seat, bytes) and the shuffle version."""
    return pb.GetProofResponse(
        hand_id=proof.hand_id,
        commitment_sha256=proof.commitment_sha256,
        revealed=proof.revealed,
        server_seed=proof.server_seed,
        client_seeds=[
            pb.ClientSeedUsed(seat=seat, client_seed=seed) for seat, seed in proof.client_seeds
        ],
        shuffle_version=proof.shuffle_version,
    )


def server_seed_response(hand_id: str, server_seed: bytes) -> pb.GetServerSeedResponse:
    return pb.GetServerSeedResponse(hand_id=hand_id, server_seed=server_seed)
