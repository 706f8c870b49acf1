"""A port in use is one sentence naming the port, who wanted it, the variable that moves it and
the process holding it (``rummy_platform.port_check``); a host that cannot bind says it instead of
gRPC's ``RuntimeError: Failed to bind``, and never shares its port with another listener."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from host_support import in_process_settings
from prometheus_client import CollectorRegistry

from rummy_platform.port_check import TIME_WAIT_HOLDER, PortInUse, ensure_free, holder, in_use
from rummy_platform.ports import ListeningPort
from rummy_platform.server import ServiceHost


@pytest.fixture
def listening() -> Iterator[int]:
    """A port this process listens on (a plain socket, as any other program's)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def free() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def this_process() -> str:
    """How :func:`holder` names this process: ``pid <pid> (<its command line>``."""
    command = Path("/proc/self/cmdline").read_bytes().decode().replace("\0", " ").split()
    return f"pid {os.getpid()} ({' '.join(command)[:100]}"


def test_a_listened_port_is_in_use_and_proc_names_its_holder(listening: int) -> None:
    assert in_use("127.0.0.1", listening)
    found = holder(listening)
    assert found is not None and found.startswith(this_process())


def test_a_free_port_and_port_zero_are_not_in_use() -> None:
    port = free()
    assert not in_use("127.0.0.1", port) and holder(port) is None
    assert not in_use("127.0.0.1", 0)


def test_a_connection_closed_moments_ago_still_holds_its_port_and_is_named_so() -> None:
    # Issue 26's second run: a client's source port, closed, in TIME-WAIT, refuses gRPC's bind.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = int(server.getsockname()[1])
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # this side closes first: its socket on `port` enters TIME-WAIT
        client.close()
    assert in_use("127.0.0.1", port)
    assert holder(port) == TIME_WAIT_HOLDER
    wanted = ListeningPort(port, "the clock service's gRPC server", "RUMMY_CLOCK_GRPC_PORT")
    assert str(PortInUse(wanted, holder(port))) == (
        f"port {port}, wanted by the clock service's gRPC server, is in use by a closed "
        "connection in TIME-WAIT: wait a minute for the kernel to free it or set "
        "RUMMY_CLOCK_GRPC_PORT to a free port"
    )


def test_the_sentence_names_the_port_the_listener_the_variable_and_the_holder(
    listening: int,
) -> None:
    wanted = ListeningPort(listening, "the table service's gRPC server", "RUMMY_TABLE_GRPC_PORT")
    with pytest.raises(PortInUse) as refused:
        ensure_free([ListeningPort(free(), "another", "X"), wanted])
    message = str(refused.value)
    assert message.startswith(
        f"port {listening}, wanted by the table service's gRPC server, is in use by pid "
        f"{os.getpid()} ("
    )
    assert message.endswith("): stop that process or set RUMMY_TABLE_GRPC_PORT to a free port")
    assert "\n" not in message
    unknown = PortInUse(wanted, None)
    assert str(unknown) == (
        f"port {listening}, wanted by the table service's gRPC server, is in use: stop what "
        "holds it or set RUMMY_TABLE_GRPC_PORT to a free port"
    )


@pytest.mark.parametrize("taken", ["grpc_port", "metrics_port"])
def test_a_host_whose_port_is_taken_raises_port_in_use_naming_its_variable(
    listening: int, taken: str
) -> None:
    settings = in_process_settings().model_copy(update={taken: listening})
    host = ServiceHost("probe", settings, registry=CollectorRegistry())
    shut_down: list[str] = []
    host.on_shutdown(lambda: shut_down.append("closed"))
    with pytest.raises(PortInUse) as refused:
        host.start()
    variable = {"grpc_port": "RUMMY_GRPC_PORT", "metrics_port": "RUMMY_METRICS_PORT"}[taken]
    assert refused.value.wanted.variable == variable
    assert refused.value.holder is not None and f"pid {os.getpid()} " in refused.value.holder
    assert shut_down == ["closed"]  # what build() started is closed again
    host.stop()  # nothing more to do


def test_serve_forever_says_the_sentence_and_exits_2_instead_of_a_traceback(
    listening: int, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = in_process_settings().model_copy(update={"grpc_port": listening})
    host = ServiceHost("probe", settings, registry=CollectorRegistry())
    with pytest.raises(SystemExit) as exited:
        host.serve_forever()
    assert exited.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"Error: port {listening}, wanted by the rummy service's gRPC server")
    assert "set RUMMY_GRPC_PORT to a free port" in line


def test_a_second_host_on_a_hosts_grpc_port_is_refused_not_given_half_its_calls() -> None:
    first = ServiceHost("probe", in_process_settings(), registry=CollectorRegistry())
    first.start()
    try:
        assert first.grpc_port is not None
        # gRPC binds with SO_REUSEPORT unless told not to: two of its servers would share it.
        second_settings = in_process_settings().model_copy(update={"grpc_port": first.grpc_port})
        second = ServiceHost("probe", second_settings, registry=CollectorRegistry())
        with pytest.raises(PortInUse) as refused:
            second.start()
        assert refused.value.wanted.port == first.grpc_port
        assert refused.value.holder is not None
        assert refused.value.holder.startswith(f"pid {os.getpid()} ({sys.executable}"[:20])
    finally:
        first.stop()
