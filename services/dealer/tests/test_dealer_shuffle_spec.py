"""``DealerService.GetShuffleSpec``: the shuffle this dealer deals with, and where it is
written down."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import grpc

from rummy.dealer.v1 import dealer_service_pb2 as pb
from rummy_dealer.entrypoints.grpc import DealerServicer
from rummy_rules.shuffle import SHUFFLE_VERSION

REPOSITORY = Path(__file__).resolve().parents[3]


def test_the_dealer_names_its_shuffle_and_a_spec_page_of_the_repository_that_defines_it() -> None:
    context = mock.create_autospec(grpc.ServicerContext, instance=True)
    answer = DealerServicer().GetShuffleSpec(pb.GetShuffleSpecRequest(), context)
    assert answer.shuffle_version == SHUFFLE_VERSION
    page = REPOSITORY / answer.spec_reference
    assert page.is_file()
    assert SHUFFLE_VERSION in page.read_text(encoding="utf-8")
    context.abort.assert_not_called()
