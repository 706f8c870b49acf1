"""gRPC TLS (issue 32): certificates ``rummy certs`` makes serve a ServiceHost over mutual TLS;
a plaintext client, a client that does not trust the CA and one without a certificate cannot
call it; the service role needs a service's client certificate, not a service token alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client import CollectorRegistry

from rummy.fairness.v1 import fairness_service_pb2 as pb
from rummy.fairness.v1 import fairness_service_pb2_grpc as pb_grpc
from rummy_ops.certs import CERT_NAMES, CertFiles, dns_names, ensure_certs
from rummy_ops.cli import main
from rummy_platform.auth import Role, authorized_channel, require_role
from rummy_platform.config import ConfigError, Settings, TlsSettings
from rummy_platform.limits import open_channel
from rummy_platform.server import ServiceHost
from rummy_testing.deploy_files import DEPLOY, k8s_document
from rummy_testing.token_keys import issuer_authority, token_settings


class _SeedKeeper(pb_grpc.FairnessServiceServicer):
    """Answers GetServerSeed to the service role only (as the fairness service does)."""

    def GetProof(  # noqa: N802 - generated name
        self, request: pb.GetProofRequest, context: grpc.ServicerContext
    ) -> pb.GetProofResponse:
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "not in this test")

    def GetServerSeed(  # noqa: N802 - generated name
        self, request: pb.GetServerSeedRequest, context: grpc.ServicerContext
    ) -> pb.GetServerSeedResponse:
        require_role(context, Role.SERVICE)
        return pb.GetServerSeedResponse(hand_id=request.hand_id)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    files, _made = ensure_certs(tmp_path_factory.mktemp("certs"))
    return files


def _tls(files: CertFiles, name: str) -> TlsSettings:
    return files.settings(name)


@pytest.fixture(scope="module")
def host(certs: CertFiles) -> Iterator[ServiceHost]:
    cert, key = certs.pairs["fairness"]
    settings = Settings(
        **token_settings(),
        grpc_port=0,
        metrics_port=0,
        shutdown_grace_seconds=1,
        tls_ca_file=certs.ca,
        tls_cert_file=cert,
        tls_key_file=key,
    )
    served = ServiceHost("fairness", settings, registry=CollectorRegistry())
    served.add_servicer(
        pb_grpc.add_FairnessServiceServicer_to_server,
        _SeedKeeper(),
        "rummy.fairness.v1.FairnessService",
    )
    served.start()
    yield served
    served.stop()


def _health(channel: grpc.Channel) -> int:
    reply = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
        health_pb2.HealthCheckRequest(), timeout=10
    )
    return int(reply.status)


def _seed(channel: grpc.Channel, role: Role) -> pb.GetServerSeedResponse:
    token = issuer_authority().issue("dealer", role)
    stub = pb_grpc.FairnessServiceStub(authorized_channel(channel, token))
    return stub.GetServerSeed(pb.GetServerSeedRequest(hand_id="h1"), timeout=10)


def test_health_and_reflection_are_served_over_tls(host: ServiceHost, certs: CertFiles) -> None:
    with open_channel(host.address, _tls(certs, "client")) as channel:
        assert _health(channel) == health_pb2.HealthCheckResponse.SERVING
        stream = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(  # type: ignore[operator]  # the stub's type is wrong
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
        )
        names = {service.name for service in next(stream).list_services_response.service}
    assert "rummy.fairness.v1.FairnessService" in names


def test_a_plaintext_client_cannot_call_a_tls_port(host: ServiceHost) -> None:
    with grpc.insecure_channel(host.address) as channel, pytest.raises(grpc.RpcError) as caught:
        _health(channel)
    assert caught.value.code() is grpc.StatusCode.UNAVAILABLE


def test_a_client_that_does_not_trust_the_ca_cannot_call(
    host: ServiceHost, certs: CertFiles, tmp_path: Path
) -> None:
    stranger, _made = ensure_certs(tmp_path / "other-ca")
    with (
        open_channel(host.address, _tls(stranger, "client")) as channel,
        pytest.raises(grpc.RpcError) as caught,
    ):
        _health(channel)
    assert caught.value.code() is grpc.StatusCode.UNAVAILABLE


def test_a_client_without_a_certificate_cannot_call(host: ServiceHost, certs: CertFiles) -> None:
    credentials = grpc.ssl_channel_credentials(certs.ca.read_bytes())
    with (
        grpc.secure_channel(host.address, credentials) as channel,
        pytest.raises(grpc.RpcError) as caught,
    ):
        _health(channel)
    assert caught.value.code() is grpc.StatusCode.UNAVAILABLE


def test_the_service_role_needs_a_service_certificate_not_a_service_token_alone(
    host: ServiceHost, certs: CertFiles
) -> None:
    with (
        open_channel(host.address, _tls(certs, "client")) as channel,
        pytest.raises(grpc.RpcError) as caught,
    ):
        _seed(channel, Role.SERVICE)
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "client certificate" in (caught.value.details() or "")
    with open_channel(host.address, _tls(certs, "dealer")) as channel:
        assert _seed(channel, Role.SERVICE).hand_id == "h1"
        with pytest.raises(grpc.RpcError) as caught:
            _seed(channel, Role.PLAYER)  # a service's certificate does not lift a player token
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED


def test_rummy_certs_is_idempotent_and_rotates(tmp_path: Path) -> None:
    def run(*arguments: str) -> dict[str, object]:
        done = CliRunner().invoke(main, ["certs", "--dir", str(tmp_path), *arguments, "--json"])
        assert done.exit_code == 0, done.output
        parsed: dict[str, object] = json.loads(done.output)
        return parsed

    assert run()["made"] == ["ca", *CERT_NAMES]
    first_ca = (tmp_path / "ca.pem").read_bytes()
    assert run()["made"] == []
    assert (tmp_path / "table-key.pem").stat().st_mode & 0o077 == 0
    (tmp_path / "clock.pem").unlink()
    assert run()["made"] == ["clock"]
    assert run("--rotate")["made"] == ["ca", *CERT_NAMES]
    assert (tmp_path / "ca.pem").read_bytes() != first_ca


def test_tls_settings_need_the_certificate_with_the_ca(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not used")
    with pytest.raises(ConfigError, match="RUMMY_TLS_CERT_FILE"):
        TlsSettings.load(tls_ca_file=ca)
    assert not TlsSettings.load(tls_ca_file=ca, insecure=True).tls_enabled
    assert not TlsSettings.load().tls_enabled


def test_the_cert_manager_certificates_name_every_service_as_rummy_certs_does() -> None:
    manifests = DEPLOY / "k8s" / "tls.yaml"
    # The broker's certificate in the cluster is Strimzi's (its cluster CA, deploy/k8s/kafka.yaml).
    for name in (name for name in CERT_NAMES if name != "kafka"):
        spec = k8s_document(manifests, "Certificate", f"rummy-{name}")["spec"]
        assert spec["commonName"] == name
        assert set(spec["usages"]) == {"server auth", "client auth"}
        if name != "client":
            assert set(spec["dnsNames"]) == set(dns_names(name)) - {name}
