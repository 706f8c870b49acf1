"""gRPC TLS in one place (issue 32): the server's credentials, a client's channel, and the
service a verified client certificate names.

With :class:`~rummy_platform.config.TlsSettings` on (``RUMMY_TLS_CA_FILE`` set, ``RUMMY_INSECURE``
not), a server serves TLS with its certificate and requires every client to present one the CA
signed (mutual TLS; gRPC Python's ``ssl_server_credentials`` cannot ask for a certificate without
requiring it, so a client of a TLS stack presents one: a service its own, a tool or a player's
program ``client``'s). A client checks the server's certificate against the CA and presents its
own. :func:`certificate_service` reads the verified peer certificate's common name: the auth
interceptor gives the service role only to a call whose certificate names a service
(:data:`~rummy_platform.ports.SERVICES`), whatever its token says.

With TLS off, servers listen and clients dial in plaintext, as before issue 32.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from rummy_platform.config import ConfigError, TlsSettings
from rummy_platform.ports import SERVICES

#: The auth-context key under which gRPC puts a verified peer certificate's common name.
COMMON_NAME_KEY = "x509_common_name"


def _read(path: Any) -> bytes:
    try:
        return bytes(path.read_bytes())
    except OSError as error:
        raise ConfigError(f"cannot read TLS file {str(path)!r}: {error.strerror}") from None


def server_credentials(tls: TlsSettings) -> grpc.ServerCredentials | None:
    """The credentials a server binds its gRPC port with: TLS with ``tls``'s certificate,
    requiring a client certificate signed by its CA; None when TLS is off (plaintext).
    Raises :class:`~rummy_platform.config.ConfigError` when a file cannot be read."""
    if not tls.tls_enabled:
        return None
    assert tls.tls_ca_file is not None and tls.tls_cert_file is not None
    assert tls.tls_key_file is not None
    return grpc.ssl_server_credentials(
        [(_read(tls.tls_key_file), _read(tls.tls_cert_file))],
        root_certificates=_read(tls.tls_ca_file),
        require_client_auth=True,
    )


def bind_grpc(server: Any, address: str, tls: TlsSettings) -> int:
    """Bind ``server`` (``grpc`` or ``grpc.aio``) to ``address``: TLS per ``tls``, else
    plaintext. Returns the port (0 when gRPC could not bind), as ``add_*_port`` does."""
    credentials = server_credentials(tls)
    if credentials is None:
        return int(server.add_insecure_port(address))
    return int(server.add_secure_port(address, credentials))


def channel_credentials(tls: TlsSettings) -> grpc.ChannelCredentials | None:
    """A client's credentials: check the server against ``tls``'s CA and present its
    certificate; None when TLS is off. Raises ConfigError when a file cannot be read."""
    if not tls.tls_enabled:
        return None
    assert tls.tls_ca_file is not None
    key = _read(tls.tls_key_file) if tls.tls_key_file is not None else None
    cert = _read(tls.tls_cert_file) if tls.tls_cert_file is not None else None
    return grpc.ssl_channel_credentials(_read(tls.tls_ca_file), key, cert)


def client_tls(tls: TlsSettings | None = None) -> TlsSettings:
    """``tls``, or the TLS settings of this process's environment (a client that has no
    settings object of its own: a tool, a test)."""
    return tls if tls is not None else TlsSettings.load()


def dial(
    target: str, options: Iterable[tuple[str, Any]], tls: TlsSettings | None = None
) -> grpc.Channel:
    """A channel to ``target``: TLS per ``tls`` (default: the environment's), else plaintext."""
    credentials = channel_credentials(client_tls(tls))
    if credentials is None:
        return grpc.insecure_channel(target, options=list(options))
    return grpc.secure_channel(target, credentials, options=list(options))


def dial_aio(
    target: str,
    options: Iterable[tuple[str, Any]] = (),
    tls: TlsSettings | None = None,
    interceptors: Sequence[Any] | None = None,
) -> grpc.aio.Channel:
    """As :func:`dial`, for ``grpc.aio`` (``interceptors``: the channel's client interceptors)."""
    credentials = channel_credentials(client_tls(tls))
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=list(options), interceptors=interceptors)
    return grpc.aio.secure_channel(
        target, credentials, options=list(options), interceptors=interceptors
    )


def certificate_service(auth_context: Mapping[str, Iterable[bytes]]) -> str | None:
    """The service the call's verified client certificate names (its common name, one of
    :data:`~rummy_platform.ports.SERVICES`); None for no certificate or another name."""
    for value in auth_context.get(COMMON_NAME_KEY, ()):
        name = value.decode("utf-8", "replace")
        if name in SERVICES:
            return name
    return None
