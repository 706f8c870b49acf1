"""deploy/ agrees with the code: scrape targets, metric names, topics, ports.

The YAML files are read with PyYAML (``rummy_testing.deploy_files``) and their fields compared
with the code's ports, topics and series. Nothing here runs Docker or Kubernetes; ``promtool``
(Debian's ``prometheus`` package, ``deploy/local/prometheus.sh install``) checks the rules and
configs: missing, those tests are skipped locally and fail under CI.
tests/e2e/test_prometheus_scrape.py runs a real Prometheus.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from rummy_ops.certs import TLS_VARIABLES, dns_names
from rummy_ops.pg_roles import ADMIN_URL_VARIABLE, DATABASE_SCHEMAS
from rummy_platform.db_roles import service_roles
from rummy_platform.ports import DEFAULT_PORTS
from rummy_platform.topics import event_topic_specs
from rummy_table.adapters.directory import directory_spec
from rummy_testing.deploy_files import (
    DEPLOY,
    PROMETHEUS_OWN_SERIES,
    REPO_ROOT,
    alert_rules,
    dashboard_exprs,
    k8s_document,
    load_yaml,
    promql_series,
    scrape_targets,
    yaml_documents,
)
from rummy_testing.prometheus import require_tool

ROOT = REPO_ROOT
SOURCE_DIRS = [ROOT / "libs", ROOT / "services"]


#: The series a prometheus-client metric constructor exposes, by constructor.
_SUFFIXES = {
    "Counter": ("_total",),
    "CounterMetricFamily": ("_total",),
    "Gauge": ("",),
    "GaugeMetricFamily": ("",),
    "_gauge": ("",),  # rummy_ledger.adapters.metrics: a GaugeMetricFamily helper
    "Histogram": ("_bucket", "_sum", "_count"),
    "Summary": ("", "_sum", "_count"),
}
_CONSTRUCTOR = re.compile(
    r"\b(" + "|".join(_SUFFIXES) + r')\(\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"', re.MULTILINE
)


def exported_series() -> set[str]:
    """Every series name the services' and libraries' source (tests excluded) constructs, and
    the table's series the installed variants declare (``VariantBundle.counters``)."""
    names: set[str] = set()
    for source_dir in SOURCE_DIRS:
        for path in source_dir.rglob("*.py"):
            if "tests" in path.relative_to(source_dir).parts:
                continue
            for kind, name in _CONSTRUCTOR.findall(path.read_text()):
                base = name.removesuffix("_total") if "Counter" in kind else name
                names.update(base + suffix for suffix in _SUFFIXES[kind])
    # the table's series of the installed variants' own events (rummy_table.adapters.metrics)
    from rummy_game.bundle import bundles

    names.update(f"rummy_table_{c.name}_total" for b in bundles() for c in b.counters)
    return names


def test_the_series_reader_finds_the_grpc_and_ledger_series_the_code_documents() -> None:
    series = exported_series()
    # rummy_platform.metrics and rummy_ledger.adapters.metrics document these by name.
    assert {"grpc_requests_total", "grpc_request_seconds_bucket"} <= series
    assert "rummy_ledger_invariant_violations" in series
    assert "rummy_clock_firing_lag_seconds_count" in series
    assert "grpc_requests" not in series  # a counter is exported only with _total


def test_the_series_reader_agrees_with_what_prometheus_client_exposes() -> None:
    from prometheus_client import CollectorRegistry

    from rummy_ledger.adapters.metrics import counters
    from rummy_platform.metrics import GrpcMetrics
    from rummy_table.adapters.metrics import TableMetrics

    registry = CollectorRegistry()
    grpc = GrpcMetrics(registry)
    grpc.requests.labels("s", "m", "OK").inc()
    grpc.latency.labels("s", "m").observe(0.01)
    table = TableMetrics.create(registry)
    table.variant_series["declares"].labels("valid").inc()
    table.variant_series["drops"].labels("first").inc()
    table.seat_outcomes.labels("won").inc()
    table.action_latency.labels("discard").observe(0.01)
    counters(registry)
    exposed = {
        sample.name
        for family in registry.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    }
    assert "rummy_table_action_latency_seconds_bucket" in exposed
    assert exposed <= exported_series()


def test_the_promql_reader_keeps_series_and_drops_functions_labels_and_keywords() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, job) (rate(a_seconds_bucket{code="X"}[5m]))) > 2 '
        "unless on() sum(increase(b_total[15m])) > 1e3 or c / 100"
    )
    assert promql_series(expr) == {"a_seconds_bucket", "b_total", "c"}


def test_every_series_in_the_alert_rules_is_exported_by_a_service() -> None:
    series = exported_series() | PROMETHEUS_OWN_SERIES
    for alert, expr in alert_rules():
        used = promql_series(expr)
        assert used, f"{alert}: no series found in {expr!r}"
        assert used <= series, f"{alert} uses series no service exports: {used - series}"


def test_the_alert_rules_cover_the_operator_pages() -> None:
    names = {alert for alert, _ in alert_rules()}
    assert {
        "RummyServiceDown",
        "RummyTurnDeadlineFiringLagHigh",
        "RummyOutboxAgeHigh",
        "RummyLedgerInvariantViolated",
        "RummySettlementRefused",
        "RummyLedgerJournalUnbalanced",
        "RummyLedgerReservedMismatch",
        "RummyReservationHeldTooLong",
        "RummyLedgerGaugesMissing",
        "RummyDependencyUnreachable",
        "RummyGrpcInternalErrors",
        "RummyConsumerStuck",
    } <= names


def test_every_series_on_the_dashboard_is_exported_by_a_service() -> None:
    series = exported_series() | PROMETHEUS_OWN_SERIES
    exprs = dashboard_exprs()
    assert exprs
    for expr in exprs:
        used = promql_series(expr)
        assert used and used <= series, f"{expr!r} uses unexported series {used - series}"


def test_the_dashboard_uses_the_provisioned_datasource() -> None:
    provisioned = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
    (datasource,) = load_yaml(provisioned)["datasources"]
    for path in (DEPLOY / "grafana" / "dashboards").glob("*.json"):
        for panel in json.loads(path.read_text())["panels"]:
            assert panel["datasource"]["uid"] == datasource["uid"], panel["title"]


def test_prometheus_scrapes_every_service_at_its_local_metrics_port() -> None:
    targets = scrape_targets(DEPLOY / "prometheus" / "prometheus.yml")
    assert targets == {
        f"rummy-{service}": [f"127.0.0.1:{metrics}"]
        for service, (_grpc, metrics) in DEFAULT_PORTS.items()
    }


def test_compose_prometheus_scrapes_every_service_by_its_compose_name() -> None:
    targets = scrape_targets(DEPLOY / "prometheus" / "prometheus.compose.yml")
    assert targets == {
        f"rummy-{service}": [f"{service}:{metrics}"]
        for service, (_grpc, metrics) in DEFAULT_PORTS.items()
    }
    prometheus = load_yaml(DEPLOY / "compose.yaml")["services"]["prometheus"]
    assert prometheus["command"] == ["--config.file=/etc/prometheus/prometheus.compose.yml"]
    volumes = prometheus["volumes"]
    assert any(volume.startswith("./prometheus:/etc/prometheus") for volume in volumes)


def test_compose_runs_every_service_module_from_the_one_image() -> None:
    services = load_yaml(DEPLOY / "compose.yaml")["services"]
    for service, (grpc_port, _metrics) in DEFAULT_PORTS.items():
        assert service in services, f"compose has no service {service}"
        spec = services[service]
        assert spec["build"]["dockerfile"] == "deploy/docker/Dockerfile", service
        assert spec["command"] == ["python", "-m", f"rummy_{service}"]
        assert f"127.0.0.1:{grpc_port}:{grpc_port}" in spec["ports"]
        assert importlib.util.find_spec(f"rummy_{service}.__main__") is not None


def test_the_dockerfile_installs_exactly_the_locked_environment() -> None:
    dockerfile = (DEPLOY / "docker" / "Dockerfile").read_text()
    assert re.search(r"^RUN uv sync --locked\b", dockerfile, re.MULTILINE)


@pytest.mark.integration
def test_the_container_health_check_passes_only_while_grpc_health_says_serving() -> None:
    from concurrent import futures

    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()

    def check() -> int:
        script = DEPLOY / "docker" / "health_check.py"
        return subprocess.run([sys.executable, str(script), str(port)], timeout=30).returncode

    try:
        servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        assert check() == 1
        servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        assert check() == 0
    finally:
        server.stop(0)
    assert check() == 1  # nobody answers


def test_k8s_topics_match_the_topics_the_services_create() -> None:
    documents = yaml_documents(DEPLOY / "k8s" / "kafka-topics.yaml")
    declared = {
        doc["metadata"]["name"]: (doc["spec"]["partitions"], doc["spec"]["config"])
        for doc in documents
        if doc["kind"] == "KafkaTopic"
    }
    specs = (*event_topic_specs(), directory_spec())
    assert set(declared) == {spec.name for spec in specs}
    for spec in specs:
        partitions, config = declared[spec.name]
        assert partitions == spec.partitions, spec.name
        for key, value in spec.config.items():  # ensure_topics checks exactly these keys
            assert str(config[key]) == value, f"{spec.name} {key}"


def test_k8s_runs_every_service_with_grpc_probes_metrics_port_and_the_token_keys() -> None:
    PUBLIC_KEYS = "/etc/rummy/token-keys/public"  # noqa: N806
    manifests = DEPLOY / "k8s" / "services.yaml"
    for service, (grpc_port, metrics_port) in DEFAULT_PORTS.items():
        deployment = k8s_document(manifests, "Deployment", f"rummy-{service}")
        pod = deployment["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        assert container["command"] == ["python", "-m", f"rummy_{service}"]
        # The kubelet's gRPC probe speaks no TLS: the image's health check, over the pod's TLS.
        check = ["python", "/app/deploy/docker/health_check.py", str(grpc_port)]
        assert container["readinessProbe"]["exec"] == {"command": check}
        assert container["livenessProbe"]["exec"] == {"command": check}
        assert {"name": "grpc", "containerPort": grpc_port} in container["ports"]
        assert {"name": "metrics", "containerPort": metrics_port} in container["ports"]
        env = {variable["name"]: variable for variable in container["env"]}
        assert env["RUMMY_BIND_HOST"]["value"] == "0.0.0.0"
        assert env["RUMMY_TOKEN_PUBLIC_KEYS_FILE"]["value"] == f"{PUBLIC_KEYS}/issuer.pub.pem"
        assert (
            env["RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE"]["value"] == f"{PUBLIC_KEYS}/service.pub.pem"
        )
        mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
        volumes = {volume["name"]: volume for volume in pod["spec"]["volumes"]}
        assert mounts["token-public-keys"]["mountPath"] == PUBLIC_KEYS
        assert volumes["token-public-keys"]["secret"]["secretName"] == "rummy-token-public-keys"
        # Only the services that call others hold the services' private key; none the issuer's.
        signs = service in ("table", "dealer")
        assert ("RUMMY_SERVICE_TOKEN_KEY_FILE" in env) is signs
        assert ("service-token-key" in volumes) is signs
        assert "RUMMY_TOKEN_SIGNING_KEY_FILE" not in env
        assert not any(name.startswith("RUMMY_JWT") for name in env)
        assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(metrics_port)
        k8s_service = k8s_document(manifests, "Service", f"rummy-{service}")
        assert {"name": "metrics", "port": metrics_port, "targetPort": "metrics"} in k8s_service[
            "spec"
        ]["ports"]


def test_k8s_serves_every_port_over_mutual_tls_with_the_service_s_own_certificate() -> None:
    manifests = DEPLOY / "k8s" / "services.yaml"
    kustomized = yaml_documents(DEPLOY / "k8s" / "kustomization.yaml")[0]["resources"]
    assert "tls.yaml" in kustomized and kustomized.index("tls.yaml") < kustomized.index(
        "services.yaml"
    )
    image_user = re.search(r"--uid (\d+) rummy", (DEPLOY / "docker" / "Dockerfile").read_text())
    assert image_user is not None
    for service in DEFAULT_PORTS:
        pod = k8s_document(manifests, "Deployment", f"rummy-{service}")["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        env = {variable["name"]: variable.get("value") for variable in container["env"]}
        mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
        volumes = {volume["name"]: volume for volume in pod["spec"]["volumes"]}
        assert mounts["tls"]["mountPath"] == "/etc/rummy/tls"
        assert volumes["tls"]["secret"]["secretName"] == f"rummy-{service}-tls"
        assert {variable: env[variable] for variable in TLS_VARIABLES} == {
            "RUMMY_TLS_CA_FILE": "/etc/rummy/tls/ca.crt",
            "RUMMY_TLS_CERT_FILE": "/etc/rummy/tls/tls.crt",
            "RUMMY_TLS_KEY_FILE": "/etc/rummy/tls/tls.key",
        }
        assert "RUMMY_INSECURE" not in env
        # That secret is the one cert-manager writes for the service's own Certificate.
        certificate = k8s_document(DEPLOY / "k8s" / "tls.yaml", "Certificate", f"rummy-{service}")
        assert certificate["spec"]["secretName"] == f"rummy-{service}-tls"
        assert certificate["spec"]["commonName"] == service
        # The secrets are readable to the image's user (its group, through fsGroup).
        user = int(image_user.group(1))
        assert pod["spec"]["securityContext"] == {
            "runAsUser": user,
            "runAsGroup": user,
            "fsGroup": user,
        }
        # Every address a service dials is a name its peer's certificate carries.
        for name, value in env.items():
            if name.startswith("RUMMY_") and name.endswith("_ADDRESS") and "ADVERTISED" not in name:
                peer = name.removeprefix("RUMMY_").removesuffix("_ADDRESS").lower()
                assert str(value).split(":")[0] in dns_names(peer), (service, name, value)


def test_k8s_gives_each_database_service_its_own_roles_over_verified_tls() -> None:
    manifests = DEPLOY / "k8s" / "services.yaml"
    for service in DEFAULT_PORTS:
        pod = k8s_document(manifests, "Deployment", f"rummy-{service}")["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        env = {variable["name"]: variable for variable in container["env"]}
        secrets = {
            variable["valueFrom"]["secretKeyRef"]["name"]
            for variable in container["env"]
            if "secretKeyRef" in variable.get("valueFrom", {})
        }
        assert "rummy-postgres-app" not in secrets and "rummy-postgres-superuser" not in secrets
        if service not in DATABASE_SCHEMAS:
            assert "DATABASE_URL" not in env and "RUMMY_DATABASE_OWNER_URL" not in env
            continue
        # Its runtime role for its queries, its schema's owner for the migrations: its own Secret.
        assert env["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
            "name": f"rummy-{service}-db",
            "key": "uri",
        }
        assert env["RUMMY_DATABASE_OWNER_URL"]["valueFrom"]["secretKeyRef"] == {
            "name": f"rummy-{service}-db",
            "key": "owner-uri",
        }
        mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
        volumes = {volume["name"]: volume for volume in pod["spec"]["volumes"]}
        assert mounts["postgres-ca"]["mountPath"] == "/etc/rummy/pg/ca"
        assert volumes["postgres-ca"]["secret"]["secretName"] == "rummy-postgres-ca"
        assert not any("db-roles" in str(volume) for volume in volumes.values())
    # The roles are made by a Job as the superuser, before the services, with the local tool.
    kustomized = yaml_documents(DEPLOY / "k8s" / "kustomization.yaml")[0]["resources"]
    assert kustomized.index("db-roles.yaml") < kustomized.index("services.yaml")
    cluster = k8s_document(DEPLOY / "k8s" / "postgres.yaml", "Cluster", "rummy-postgres")
    assert cluster["spec"]["enableSuperuserAccess"] is True
    job = k8s_document(DEPLOY / "k8s" / "db-roles.yaml", "Job", "rummy-db-roles")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["command"] == [
        "python",
        "-m",
        "rummy_ops.pg_roles",
        "/etc/rummy/pg/roles/pgpass",
        "--ca-file",
        "/etc/rummy/pg/ca/ca.crt",
    ]
    env = {variable["name"]: variable for variable in container["env"]}
    assert set(env) == {ADMIN_URL_VARIABLE, "PGPASSWORD"}
    admin = urlsplit(env[ADMIN_URL_VARIABLE]["value"])
    assert (admin.username, admin.password, admin.path) == ("postgres", None, "/rummy")
    assert dict(parse_qsl(admin.query)) == {
        "sslmode": "verify-full",
        "sslrootcert": "/etc/rummy/pg/ca/ca.crt",
    }
    assert env["PGPASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "rummy-postgres-superuser",
        "key": "password",
    }
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    assert volumes["roles"]["secret"]["secretName"] == "rummy-db-roles"
    # The header's commands make exactly the roles the tool makes, and each service's Secret.
    header = (DEPLOY / "k8s" / "db-roles.yaml").read_text(encoding="utf-8")
    roles = [
        role
        for schema in DATABASE_SCHEMAS
        for role in (service_roles(schema).owner, service_roles(schema).runtime)
    ]
    assert f"for role in {' '.join(roles)}; do" in header
    assert f"for s in {' '.join(DATABASE_SCHEMAS)}; do" in header
    assert "sslmode=verify-full&sslrootcert=/etc/rummy/pg/ca/ca.crt" in header


@pytest.mark.integration
@pytest.mark.parametrize(
    "command",
    [
        ["check", "rules", "prometheus/alerts.yml"],
        ["check", "config", "prometheus/prometheus.yml"],
        ["check", "config", "prometheus/prometheus.compose.yml"],
        ["test", "rules", "prometheus/alerts_test.yml"],
    ],
    ids=["rules-valid", "local-config-valid", "compose-config-valid", "alerts-fire-as-tested"],
)
def test_promtool_accepts_the_rules_and_configs_and_the_alerts_fire_on_synthetic_series(
    command: list[str],
) -> None:
    promtool = require_tool("promtool")
    result = subprocess.run(
        [promtool, *command], cwd=DEPLOY, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("ci", ["", "true"], ids=["CI-unset", "CI=true"])
def test_a_missing_promtool_fails_the_test_and_names_the_install_wherever_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: nothing to find
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="promtool is not installed") as failed:
        require_tool("promtool")
    assert "bash deploy/local/prometheus.sh install" in str(failed.value)
