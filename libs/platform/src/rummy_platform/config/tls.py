"""The gRPC TLS settings (issue 32): the CA every certificate is checked against, the process's
own certificate and key, and ``RUMMY_INSECURE`` to turn TLS off by choice."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import model_validator

from rummy_platform.config.base import EnvSettings, setting


class TlsSettings(EnvSettings):
    """gRPC TLS of a server or a client: on when ``ca_file`` is set and ``insecure`` is not.

    A server then serves TLS with ``cert_file``/``key_file`` and requires every client to
    present a certificate the CA signed (mutual TLS); a client checks the server against the CA
    and presents ``cert_file``/``key_file`` (see :mod:`rummy_platform.tls`). Paths are PEM
    files; ``rummy certs`` makes a local CA and one certificate per service."""

    insecure: bool = setting(
        "RUMMY_INSECURE",
        False,
        "`1`: plaintext gRPC, no certificate checked, whatever the `RUMMY_TLS_*` files say "
        "(every service logs a warning at start); `rummy up`, `rummy demo`, `rummy soak` and "
        "the test stacks then start the whole stack plaintext (as `--insecure`), saying so",
    )
    tls_ca_file: Path | None = setting(
        "RUMMY_TLS_CA_FILE",
        None,
        "PEM file of the CA that signs every certificate of the deployment: servers serve TLS "
        "and require a client certificate it signed, clients check the server against it; "
        "unset: plaintext gRPC (`rummy certs` makes `.local/certs/ca.pem`)",
    )
    tls_cert_file: Path | None = setting(
        "RUMMY_TLS_CERT_FILE",
        None,
        "PEM certificate this process presents, as a server and as a client (its subject's "
        "common name is the service, the role its calls get); required when the CA is set",
    )
    tls_key_file: Path | None = setting(
        "RUMMY_TLS_KEY_FILE",
        None,
        "PEM private key of `RUMMY_TLS_CERT_FILE` (a file, never the key itself)",
    )

    @property
    def tls_enabled(self) -> bool:
        """True when gRPC goes over TLS: a CA is set and ``RUMMY_INSECURE`` is not."""
        return self.tls_ca_file is not None and not self.insecure

    @model_validator(mode="after")
    def _pair_complete(self) -> Self:
        if self.tls_enabled and (self.tls_cert_file is None or self.tls_key_file is None):
            raise ValueError(
                "RUMMY_TLS_CA_FILE is set, so RUMMY_TLS_CERT_FILE and RUMMY_TLS_KEY_FILE must be "
                "too (`rummy certs` makes them; or RUMMY_INSECURE=1 for plaintext)"
            )
        for path in (self.tls_ca_file, self.tls_cert_file, self.tls_key_file):
            if self.tls_enabled and path is not None and not path.is_file():
                raise ValueError(f"TLS file {str(path)!r} does not exist (`rummy certs` makes it)")
        return self
