"""A local certificate authority and one certificate per service (issue 32), made with the
``cryptography`` package: ``rummy certs`` and the launchers' first use.

:func:`ensure_certs` writes into a directory (``.local/certs`` by default, git-ignored):
``ca.pem``/``ca-key.pem`` (the CA, ECDSA P-256, 10 years), and ``<service>.pem``/
``<service>-key.pem`` for each of :data:`~rummy_platform.ports.SERVICES` plus ``client`` (the
certificate a tool or a test presents to act as a service), ``postgres`` (the local
PostgreSQL server's, ``deploy/local/postgres.sh`` with ``RUMMY_PG_TLS=1``) and ``kafka`` (the
secured local broker's, ``RUMMY_KAFKA_SECURE=1``: its TLS listeners, and its own principal on the
controller listener); neither common name is a service's, so neither gives a gRPC caller a role.
A service certificate's subject common name is the service's name (the role the auth interceptor
gives its calls, see
:mod:`rummy_platform.tls`); its subject alternative names are ``localhost``, ``127.0.0.1``,
``::1``, the service's name, ``rummy-<service>`` and ``rummy-<service>.rummy.svc`` (the
Kubernetes manifests' names), so one certificate serves on a laptop and in the cluster; it is
valid for both server and client authentication, for :data:`SERVICE_DAYS` days.

Existing files are kept (idempotent) unless they are missing, unreadable, about to expire
(within :data:`RENEW_DAYS`) or not signed by the CA on disk; ``rotate=True`` makes a new CA
and new certificates. Private keys are written mode 0600.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path

import click
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from rummy_platform.config import TlsSettings
from rummy_platform.ports import SERVICES

#: The certificates made besides the CA: every service, ``client`` for tools and tests,
#: ``postgres`` for the local PostgreSQL server's TLS, and ``kafka``, the secured local broker's
#: (``RUMMY_KAFKA_SECURE=1 deploy/local/kafka.sh start``).
CERT_NAMES: tuple[str, ...] = (*SERVICES, "client", "postgres", "kafka")
#: Days a CA and a service certificate are valid.
CA_DAYS = 3650
SERVICE_DAYS = 825
#: A certificate that expires within this many days is made again.
RENEW_DAYS = 30
#: The variables that point a process at its certificate (:meth:`CertFiles.environment`).
TLS_VARIABLES = ("RUMMY_TLS_CA_FILE", "RUMMY_TLS_CERT_FILE", "RUMMY_TLS_KEY_FILE")
#: The Kubernetes namespace of deploy/k8s.
NAMESPACE = "rummy"


@dataclass(frozen=True)
class CertFiles:
    """Where :func:`ensure_certs` put the PEM files: ``ca`` and, per name, (cert, key)."""

    directory: Path
    ca: Path
    pairs: dict[str, tuple[Path, Path]]

    def environment(self, name: str) -> dict[str, str]:
        """The ``RUMMY_TLS_*`` variables for a process presenting ``name``'s certificate."""
        cert, key = self.pairs[name]
        return {
            "RUMMY_TLS_CA_FILE": str(self.ca),
            "RUMMY_TLS_CERT_FILE": str(cert),
            "RUMMY_TLS_KEY_FILE": str(key),
        }

    def settings(self, name: str) -> TlsSettings:
        """The TLS settings of a process presenting ``name``'s certificate (TLS on)."""
        cert, key = self.pairs[name]
        return TlsSettings.load(
            tls_ca_file=self.ca, tls_cert_file=cert, tls_key_file=key, insecure=False
        )


def cert_files(directory: Path) -> CertFiles:
    """The paths of the files :func:`ensure_certs` writes under ``directory`` (made or not)."""
    return CertFiles(
        directory=directory,
        ca=directory / "ca.pem",
        pairs={
            name: (directory / f"{name}.pem", directory / f"{name}-key.pem") for name in CERT_NAMES
        },
    )


def ensure_certs(directory: Path, *, rotate: bool = False) -> tuple[CertFiles, list[str]]:
    """Make (or keep) the CA and every certificate under ``directory``; return the files and
    the names made this time (``"ca"`` among them when the CA was). Raises OSError when the
    directory cannot be written."""
    files = cert_files(directory)
    directory.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    ca_key_path = directory / "ca-key.pem"
    loaded = None if rotate else _load(files.ca, ca_key_path)
    if loaded is None or _expiring(loaded[0]):
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_cert = _ca_certificate(ca_key)
        _write(files.ca, ca_cert.public_bytes(serialization.Encoding.PEM), private=False)
        _write(ca_key_path, _key_bytes(ca_key), private=True)
        made.append("ca")
    else:
        ca_cert, ca_key = loaded
    for name, (cert_path, key_path) in files.pairs.items():
        kept = None if "ca" in made else _load(cert_path, key_path)
        if kept is not None and not _expiring(kept[0]) and kept[0].issuer == ca_cert.subject:
            continue
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _service_certificate(name, key, ca_cert, ca_key)
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), private=False)
        _write(key_path, _key_bytes(key), private=True)
        made.append(name)
    return files, made


def dns_names(name: str) -> list[str]:
    """The DNS subject alternative names of ``name``'s certificate (``postgres``'s also names
    CloudNativePG's read-write service of deploy/k8s, ``rummy-postgres-rw``)."""
    names = ["localhost", name, f"rummy-{name}", f"rummy-{name}.{NAMESPACE}.svc"]
    if name == "postgres":
        names += ["rummy-postgres-rw", f"rummy-postgres-rw.{NAMESPACE}.svc"]
    return names


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _ca_certificate(key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rummy local CA")])
    start = _now() - datetime.timedelta(minutes=5)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )


def _service_certificate(
    name: str,
    key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
) -> x509.Certificate:
    start = _now() - datetime.timedelta(minutes=5)
    names: list[x509.GeneralName] = [x509.DNSName(dns) for dns in dns_names(name)]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", "::1")]
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=SERVICE_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )


def _load(
    cert_path: Path, key_path: Path
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    """The certificate and key at the paths, or None when either is missing or unreadable."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    return cert, key


def _expiring(cert: x509.Certificate) -> bool:
    return cert.not_valid_after_utc - _now() < datetime.timedelta(days=RENEW_DAYS)


def _key_bytes(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write(path: Path, data: bytes, *, private: bool) -> None:
    """Write ``data`` to ``path`` atomically (a private key: mode 0600 from the start)."""
    temporary = path.with_name(f".{path.name}.tmp")
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644
    )
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    temporary.replace(path)


def local_certs_dir(root: Path) -> Path:
    """Where the local stack keeps its certificates: ``<root>/.local/certs``."""
    return root / ".local" / "certs"


@click.command("certs")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write them (default: .local/certs of the checkout).",
)
@click.option("--rotate", is_flag=True, help="Make a new CA and new certificates.")
@click.option("--json", "as_json", is_flag=True, help="Print the files as JSON.")
def certs(directory: Path | None, rotate: bool, as_json: bool) -> None:
    """Make (or keep) the local CA and a certificate per service for gRPC and PostgreSQL TLS.

    Idempotent: files that exist, are signed by the CA and expire in more than 30 days are
    kept. Point a process at them with RUMMY_TLS_CA_FILE, RUMMY_TLS_CERT_FILE and
    RUMMY_TLS_KEY_FILE (docs/operations.md#tls).
    """
    from rummy_ops.stack import repository_root

    target = directory if directory is not None else local_certs_dir(repository_root())
    try:
        files, made = ensure_certs(target, rotate=rotate)
    except OSError as error:
        raise click.ClickException(f"cannot write {target}: {error.strerror}") from None
    if as_json:
        click.echo(
            json.dumps(
                {
                    "directory": str(files.directory),
                    "ca": str(files.ca),
                    "made": made,
                    "certificates": {
                        name: {"cert": str(cert), "key": str(key)}
                        for name, (cert, key) in files.pairs.items()
                    },
                }
            )
        )
        return
    click.echo(f"certificates in {files.directory}: CA {files.ca.name}")
    click.echo(f"made: {', '.join(made)}" if made else "all kept (none missing or expiring)")
