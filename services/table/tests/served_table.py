"""The table service's gRPC API in-process for tests (not a test module): the real ServiceHost
with its auth and error interceptors over a :class:`world.World`, and clients with tokens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import grpc
import pytest
from prometheus_client import CollectorRegistry
from world import World

from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.config import Settings
from rummy_platform.server import ServiceHost
from rummy_table.entrypoints import grpc as grpc_adapter
from rummy_testing.token_keys import issuer_authority, token_settings


@contextmanager
def served_table(world: World) -> Iterator[tuple[World, ServiceHost]]:
    """``world``'s table app served on a free loopback port until the block ends."""
    with served_table_and_servicer(world) as (served, host, _servicer):
        yield served, host


@contextmanager
def served_table_and_servicer(
    world: World,
) -> Iterator[tuple[World, ServiceHost, grpc_adapter.TableServicer]]:
    """:func:`served_table`, with the servicer (its ``watches``) too."""
    settings = Settings(**token_settings(), grpc_port=0, metrics_port=0)
    host = ServiceHost("table", settings, registry=CollectorRegistry(), aio=True)
    servicer = grpc_adapter.TableServicer(world.app, max_watches_per_account=2)
    host.on_stopping(servicer.watches.close_all)
    host.add_servicer(grpc_adapter.add_to_server, servicer, grpc_adapter.SERVICE_NAME)
    host.start()
    try:
        yield world, host, servicer
    finally:
        host.stop(grace_seconds=1)


def stub(host: ServiceHost, account: str, role: Role) -> api_grpc.TableServiceStub:
    """A client of ``host`` with a token for ``account`` in ``role``."""
    token = issuer_authority().issue(account, role)
    return api_grpc.TableServiceStub(authorized_channel(grpc.insecure_channel(host.address), token))


def code_of(call: Callable[[], object]) -> grpc.StatusCode:
    """The status code ``call()`` fails with (the test fails if it succeeds)."""
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code()
