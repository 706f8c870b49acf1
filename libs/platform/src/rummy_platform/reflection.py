"""gRPC server reflection, v1 and v1alpha, on every service host.

grpcio-reflection (pinned in libs/platform) ships only ``grpc.reflection.v1alpha``; clients such
as ``grpcurl`` ask for ``grpc.reflection.v1`` first. The two protocols are the same messages
with the same field numbers under another package name, so v1 is served by the same servicer
with v1alpha's message classes on the wire, and the v1 file descriptor (for a client that
describes the reflection service itself) is derived from v1alpha's installed one by renaming its
package (:func:`v1_file_descriptor`): nothing is copied or generated.

Both versions also resolve a method's name (``rummy.table.v1.TableService.TakeSeat``) to the
file that declares it, as the C++ and Go servers do (``grpcurl describe SERVICE.METHOD``); the
Python descriptor pool alone answers NOT_FOUND for a method (it finds services, messages, fields
and enums). An unknown name still answers NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
import grpc.aio
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection as v1alpha
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha_pb2
from grpc_reflection.v1alpha import reflection_pb2_grpc as v1alpha_grpc

V1ALPHA_SERVICE_NAME = "grpc.reflection.v1alpha.ServerReflection"
V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
#: Both reflection services, as listed by reflection itself.
SERVICE_NAMES = (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
V1_FILE = "grpc/reflection/v1/reflection.proto"
_V1ALPHA_PACKAGE = "grpc.reflection.v1alpha"
_V1_PACKAGE = "grpc.reflection.v1"
_METHOD = "ServerReflectionInfo"


def v1_file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """``grpc/reflection/v1/reflection.proto`` as a FileDescriptorProto: v1alpha's installed
    descriptor with its file name, package and every type reference renamed to v1."""
    proto = descriptor_pb2.FileDescriptorProto()
    v1alpha_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = V1_FILE
    proto.package = _V1_PACKAGE
    old, new = f".{_V1ALPHA_PACKAGE}.", f".{_V1_PACKAGE}."
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    return proto


def _ensure_v1_in(pool: descriptor_pool.DescriptorPool) -> None:
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.Add(v1_file_descriptor())


class _MethodLookup:
    """Mixin for grpcio-reflection's servicers: a method's name resolves to its file."""

    _pool: descriptor_pool.DescriptorPool

    def _file_containing_symbol(self, request: Any, fully_qualified_name: str) -> Any:
        try:
            self._pool.FindFileContainingSymbol(fully_qualified_name)
        except KeyError:
            try:
                method = self._pool.FindMethodByName(fully_qualified_name)
            except KeyError:
                pass
            else:
                file = method.containing_service.file
                return self._file_by_filename(request, file.name)  # type: ignore[attr-defined]
        return super()._file_containing_symbol(request, fully_qualified_name)  # type: ignore[misc]


class ReflectionServicer(_MethodLookup, v1alpha.ReflectionServicer):
    """The thread-pool server's servicer."""


class AioReflectionServicer(_MethodLookup, v1alpha.aio.ReflectionServicer):
    """The ``grpc.aio`` server's servicer."""


def enable_server_reflection(
    service_names: Iterable[str],
    server: grpc.Server | grpc.aio.Server,
    pool: descriptor_pool.DescriptorPool | None = None,
) -> None:
    """Serve reflection v1 and v1alpha on ``server`` (call before it starts), listing
    ``service_names`` and both reflection services. ``pool`` defaults to the default
    descriptor pool, where generated code registers its files; the v1 file is added to it."""
    pool = descriptor_pool.Default() if pool is None else pool
    _ensure_v1_in(pool)
    names = sorted({*service_names, *SERVICE_NAMES})
    servicer: Any
    if isinstance(server, grpc.aio.Server):
        servicer = AioReflectionServicer(names, pool=pool)
    else:
        servicer = ReflectionServicer(names, pool=pool)
    v1alpha_grpc.add_ServerReflectionServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    # The same messages on the wire: v1alpha's classes (de)serialize v1's requests and answers.
    handler = grpc.method_handlers_generic_handler(
        V1_SERVICE_NAME,
        {
            _METHOD: grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=v1alpha_pb2.ServerReflectionRequest.FromString,
                response_serializer=v1alpha_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
