"""An unreachable Kafka, PostgreSQL or gRPC service given to a ``rummy`` command is one ``Error:``
line within :data:`REACH_TIMEOUT_S` seconds, naming the address, exit status 1: the commands
check the brokers they are given before they read (:func:`require_kafka`), connect through
:func:`connect_postgres`, and check that a service's address answers before they call it
(:func:`require_grpc`), or open their channel through :func:`service_channel`, which does both
and words a refusal (:func:`refused`: a wrong service at the address is named as such). Every
``rummy`` command that calls a gRPC service goes through here. kafka-python's own waits (30 s to
bootstrap, then as long again for a first record) and a client's retries of UNAVAILABLE (the
table service's contract: an instance hands a table over) are right for the services, which ride
out an outage; a person at a prompt wants to know at once that the address is wrong. Nothing
here is used by the services.
"""

from __future__ import annotations

import math
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
import grpc
import psycopg

from rummy_platform.config import ConfigError, TlsSettings
from rummy_platform.eventlog import cluster_probe
from rummy_platform.limits import open_channel
from rummy_platform.ports import DEFAULT_PORTS

#: How the errors name the services a command calls.
LEDGER_SERVICE = "the ledger service"
TABLE_SERVICE = "the table service"
#: Where a command finds the ledger service unless told (``--address``, RUMMY_LEDGER_ADDRESS).
DEFAULT_LEDGER_ADDRESS = f"127.0.0.1:{DEFAULT_PORTS['ledger'][0]}"
#: Seconds a command waits for a broker it is given before it says it cannot reach it.
REACH_TIMEOUT_S = 5.0


class Unreachable(click.ClickException):
    """A broker given to a command does not answer: ``Error: cannot reach <what> at <address>:
    <why>``, exit status 1."""


def redact(address: str) -> str:
    """``address`` with a URL's password replaced by ``***`` (``postgresql://u:***@h/db``)."""
    return re.sub(r"(//[^:/@]+:)[^@]*@", r"\1***@", address)


def _host_port(server: str) -> tuple[str, int]:
    host, sep, port = server.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{server!r} is not host:port")
    return host.strip("[]"), int(port)


def _tcp_reason(server: str, timeout_s: float) -> str | None:
    """None when ``server`` (``host:port``) accepts a TCP connection within ``timeout_s``
    seconds, else why not (``connection refused``, ``no answer within 5 s``, ...)."""
    try:
        host, port = _host_port(server)
    except ValueError as error:
        return str(error)
    try:
        socket.create_connection((host, port), timeout=max(timeout_s, 0.1)).close()
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    except socket.gaierror as error:
        return f"unknown host {host!r} ({error.strerror})"
    except OSError as error:
        return (error.strerror or str(error)).lower()
    return None


def require_kafka(bootstrap: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Check that a Kafka broker of ``bootstrap`` (``"host:port[,host:port]"``) answers a
    metadata round trip (the event log's :func:`~rummy_platform.eventlog.cluster_probe`)
    within ``timeout_s`` seconds. Raises :class:`Unreachable` naming the address and why (each
    server's TCP error, or no Kafka answer on an open port)."""
    deadline = time.monotonic() + timeout_s
    servers = [s for s in bootstrap.split(",") if s.strip()]
    reasons = {s: _tcp_reason(s, timeout_s) for s in servers}
    if not servers or all(reasons.values()):
        why = "; ".join(f"{s}: {r}" for s, r in reasons.items()) or "no server given"
        raise Unreachable(f"cannot reach Kafka at {bootstrap}: {why}")
    left_s = max(deadline - time.monotonic(), 0.5)
    try:
        cluster_probe(",".join(servers), client_id="rummy-cli-reach", timeout_s=left_s)()
    except Exception as error:  # KafkaTimeoutError, NoBrokersAvailable and kin
        raise Unreachable(
            f"cannot reach Kafka at {bootstrap}: the port is open but no Kafka broker answered "
            f"within {timeout_s:g} s ({type(error).__name__})"
        ) from None


def connect_postgres(
    database_url: str, timeout_s: float = REACH_TIMEOUT_S, **options: Any
) -> psycopg.Connection[Any]:
    """A psycopg connection to ``database_url`` (``options`` as :func:`psycopg.connect` takes
    them), given up after ``timeout_s`` seconds (rounded up to whole seconds, libpq's unit).
    Raises :class:`Unreachable` naming the address (its password hidden) and libpq's reason."""
    seconds = max(1, math.ceil(timeout_s))
    try:
        return psycopg.connect(database_url, connect_timeout=seconds, **options)
    except psycopg.OperationalError as error:
        # libpq's first line says what failed ("... port 1 failed: Connection refused"); the
        # hint lines after it ("Is the server running ...?") add nothing to the address
        why = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise Unreachable(f"cannot reach PostgreSQL at {redact(database_url)}: {why}") from None


def require_grpc(what: str, address: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Check that a gRPC server listens at ``address`` (``host:port``): a TCP connection, then a
    channel that becomes ready (gRPC's HTTP/2 handshake) within ``timeout_s`` seconds in all.
    ``what`` names the service in the error (``the table service``). Raises
    :class:`Unreachable` (``cannot reach the table service at 127.0.0.1:1: connection
    refused``). A live instance that answers UNAVAILABLE (a table being handed over) passes:
    its callers go on retrying that as its contract says."""
    deadline = time.monotonic() + timeout_s
    reason = _tcp_reason(address, timeout_s)
    if reason is not None:
        raise Unreachable(f"cannot reach {what} at {address}: {reason}")
    channel = _channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=max(deadline - time.monotonic(), 0.5))
    except grpc.FutureTimeoutError:
        raise Unreachable(
            f"cannot reach {what} at {address}: the port is open but no gRPC server answered "
            f"within {timeout_s:g} s{_tls_hint()}"
        ) from None
    finally:
        channel.close()


def _channel(address: str) -> grpc.Channel:
    """:func:`open_channel` to ``address`` with this process's ``RUMMY_TLS_*``; a malformed or
    missing TLS file is one ``Error:`` line (click.ClickException), not a traceback."""
    try:
        return open_channel(address)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None


def _tls_hint() -> str:
    """What a handshake that never completed most likely means, by this process's TLS
    settings (read again here: they were valid when the channel opened)."""
    if TlsSettings.load().tls_enabled:
        return (
            " over TLS (a plaintext server, started --insecure? or a certificate the server's "
            "CA did not sign: check RUMMY_TLS_CA_FILE, RUMMY_TLS_CERT_FILE, RUMMY_TLS_KEY_FILE)"
        )
    return (
        " in plaintext (the stack serves mutual TLS unless started --insecure: export "
        "RUMMY_TLS_CA_FILE, RUMMY_TLS_CERT_FILE and RUMMY_TLS_KEY_FILE, see docs/operations.md#tls)"
    )


class WrongService(click.ClickException):
    """Something at the address answers gRPC but not the service a command calls (the call was
    UNIMPLEMENTED): ``Error: the service at <address> is not <what> (UNIMPLEMENTED)``, exit
    status 1."""


def refused(what: str, address: str, error: grpc.RpcError) -> click.ClickException:
    """The ``Error:`` line for a call to ``what`` at ``address`` that ended with ``error``:
    :class:`WrongService` for UNIMPLEMENTED (another service, or another build, listens
    there), else ``<STATUS>: <details>`` as the service said it."""
    code = error.code()
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return WrongService(f"the service at {address} is not {what} (UNIMPLEMENTED)")
    return click.ClickException(f"{code.name}: {error.details()}")


#: The ``--address`` option of a command that calls the ledger service (parameter ``address``,
#: RUMMY_LEDGER_ADDRESS); open it with ``service_channel(LEDGER_SERVICE, address)``.
ledger_address_option = click.option(
    "--address",
    envvar="RUMMY_LEDGER_ADDRESS",
    default=DEFAULT_LEDGER_ADDRESS,
    show_default=True,
    help="The ledger service (RUMMY_LEDGER_ADDRESS).",
)


@contextmanager
def service_channel(
    what: str, address: str, timeout_s: float = REACH_TIMEOUT_S
) -> Iterator[grpc.Channel]:
    """A channel to ``what`` (``the ledger service``) at ``address`` once it answers
    (:func:`require_grpc`), closed on leaving; a grpc.RpcError raised inside is re-raised as
    :func:`refused` words it. Raises :class:`Unreachable`, :class:`WrongService`,
    click.ClickException."""
    require_grpc(what, address, timeout_s)
    with _channel(address) as channel:
        try:
            yield channel
        except grpc.RpcError as error:
            raise refused(what, address, error) from None
