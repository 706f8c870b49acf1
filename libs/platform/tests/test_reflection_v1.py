"""Server reflection v1 (beside v1alpha) through a real host: what ``grpcurl`` asks first.

The client here is a raw v1 stub whose message classes come from the v1 descriptor the server
registers, on the path ``/grpc.reflection.v1.ServerReflection/ServerReflectionInfo``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha_pb2
from host_support import in_process_settings
from probe_service import InMemoryLedger
from prometheus_client import CollectorRegistry

from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy_platform.reflection import V1_FILE, v1_file_descriptor
from rummy_platform.server import ServiceHost

LEDGER = "rummy.ledger.v1.LedgerService"
_PATH = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


def _v1_classes() -> tuple[Any, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(v1_file_descriptor())
    return (
        message_factory.GetMessageClass(
            pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionRequest")
        ),
        message_factory.GetMessageClass(
            pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionResponse")
        ),
    )


Request, Response = _v1_classes()


@pytest.fixture(params=["thread pool", "aio"])
def address(request: pytest.FixtureRequest) -> Iterator[str]:
    host = ServiceHost(
        "probe", in_process_settings(), registry=CollectorRegistry(), aio=request.param == "aio"
    )
    host.add_servicer(ledger_grpc.add_LedgerServiceServicer_to_server, InMemoryLedger(), LEDGER)
    host.start()
    try:
        yield host.address
    finally:
        host.stop()


def _ask(address: str, *requests: Any) -> list[Any]:
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(
            _PATH,
            request_serializer=Request.SerializeToString,
            response_deserializer=Response.FromString,
        )
        return list(call(iter(requests), timeout=10))


def _files(response: Any) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    assert response.WhichOneof("message_response") == "file_descriptor_response", response
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in response.file_descriptor_response.file_descriptor_proto
    ]
    return {file.name: file for file in files}


def test_v1_lists_every_service_both_reflection_versions_included(address: str) -> None:
    (answer,) = _ask(address, Request(list_services=""))
    names = {service.name for service in answer.list_services_response.service}
    assert {
        LEDGER,
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names


def test_v1_describes_a_single_method_a_service_and_the_v1_service_itself(address: str) -> None:
    method, service, itself = _ask(
        address,
        Request(file_containing_symbol=f"{LEDGER}.GetBalance"),
        Request(file_containing_symbol=LEDGER),
        Request(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
    )
    files = _files(method)
    declaring = files["rummy/ledger/v1/ledger_service.proto"]
    (ledger,) = [s for s in declaring.service if s.name == "LedgerService"]
    (get_balance,) = [m for m in ledger.method if m.name == "GetBalance"]
    assert get_balance.input_type == ".rummy.ledger.v1.GetBalanceRequest"
    assert method.original_request.file_containing_symbol == f"{LEDGER}.GetBalance"
    assert set(_files(service)) == set(files)
    (reflection_v1,) = _files(itself).values()
    assert reflection_v1.name == V1_FILE
    assert [s.name for s in reflection_v1.service] == ["ServerReflection"]


def test_v1_describes_a_field_and_refuses_an_unknown_method_or_symbol(
    address: str,
) -> None:
    field, unknown_method, unknown_symbol = _ask(
        address,
        Request(file_containing_symbol="rummy.ledger.v1.GetBalanceRequest.account_id"),
        Request(file_containing_symbol=f"{LEDGER}.NoSuchMethod"),
        Request(file_containing_symbol="rummy.nothing.v1.Nothing"),
    )
    assert "rummy/ledger/v1/ledger_service.proto" in _files(field)
    for answer in (unknown_method, unknown_symbol):
        assert answer.WhichOneof("message_response") == "error_response"
        assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_the_v1_descriptor_is_v1alpha_renamed_field_for_field() -> None:
    v1alpha = descriptor_pb2.FileDescriptorProto()
    v1alpha_pb2.DESCRIPTOR.CopyToProto(v1alpha)
    v1 = v1_file_descriptor()
    assert (v1.name, v1.package) == (V1_FILE, "grpc.reflection.v1")
    for old, new in zip(v1alpha.message_type, v1.message_type, strict=True):
        assert [(f.name, f.number, f.type, f.label) for f in old.field] == [
            (f.name, f.number, f.type, f.label) for f in new.field
        ]
        assert [f.type_name.replace("v1alpha", "v1") for f in old.field] == [
            f.type_name for f in new.field
        ]
