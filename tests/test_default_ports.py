"""Every port we listen on by default is one table's (``rummy_platform.ports``), and every number
that table holds is a safe one: below Linux's ephemeral range, off the ports Prometheus's
exporters and Grafana conventionally take, off the IANA services of ``/etc/services``; the
scripts, the scrape configs, compose, the Kubernetes manifests and the documents spell the
table's numbers and no other (issue 26)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rummy_platform.ports import (
    DEFAULT_PORTS,
    GRAFANA_PORT,
    KAFKA_CONTROLLER_PORT,
    KAFKA_CONTROLLER_PORT_VARIABLE,
    KAFKA_PORT,
    KAFKA_PORT_VARIABLE,
    POSTGRES_PORT,
    POSTGRES_PORT_VARIABLE,
    PROMETHEUS_PORT,
    SERVICES,
    default_ports,
)
from rummy_testing.checkout import checkout_files
from rummy_testing.deploy_files import DEPLOY, REPO_ROOT, load_yaml

#: The first port of Linux's default ephemeral range (``ip_local_port_range``: 32768 60999).
EPHEMERAL_LOW = 32768
#: Prometheus's default port allocations (its own components 9090-9099, the exporters
#: 9100-9999) and Grafana's 3000: ports an operator's machine is likely to run something on.
CONVENTIONAL = frozenset({*range(9090, 10000), 3000})
#: The ports of the services before issue 26 (gRPC inside the ephemeral range, metrics on
#: exporters' ports).
OLD_PORTS = re.compile(r"(?<![\w.])(5005[1-5]|910[1-5])(?![\w.])")
TABLE = {port.port for port in default_ports()}
TEXT_SUFFIXES = {".py", ".md", ".sh", ".yml", ".yaml", ".toml", ".json", ".txt", ".proto", ".js"}


def iana_tcp_ports(services: Path = Path("/etc/services")) -> dict[int, str]:
    """Port -> service name of every TCP service in ``services`` (Debian's ``netbase``)."""
    assert services.is_file(), f"{services} is missing: install Debian's netbase package"
    found: dict[int, str] = {}
    for line in services.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and fields[1].endswith("/tcp"):
            found[int(fields[1].split("/")[0])] = fields[0]
    return found


def test_every_default_port_is_below_the_ephemeral_range_and_off_the_conventional_ones() -> None:
    ports = [port.port for port in default_ports()]
    assert len(ports) == len(set(ports)), "two listeners share a default port"
    iana = iana_tcp_ports()
    for port in default_ports():
        assert 1024 < port.port < EPHEMERAL_LOW, port
        assert port.port not in CONVENTIONAL, port
        assert port.port not in iana, f"{port} is IANA's {iana[port.port]}"


def test_the_service_ports_read_the_table_and_name_their_variables() -> None:
    listed = {(port.port, port.variable) for port in default_ports()}
    for service, (grpc_port, metrics_port) in DEFAULT_PORTS.items():
        assert (grpc_port, f"RUMMY_{service.upper()}_GRPC_PORT") in listed
        assert (metrics_port, f"RUMMY_{service.upper()}_METRICS_PORT") in listed
    assert tuple(DEFAULT_PORTS) == SERVICES
    assert (KAFKA_PORT, KAFKA_PORT_VARIABLE) in listed
    assert (KAFKA_CONTROLLER_PORT, KAFKA_CONTROLLER_PORT_VARIABLE) in listed
    assert (POSTGRES_PORT, POSTGRES_PORT_VARIABLE) in listed


def test_the_scan_for_the_old_ports_finds_them_and_not_inside_hashes() -> None:
    # The ports of before issue 26, and digits of a hash or a version that are not ports.
    assert OLD_PORTS.findall("127.0.0.1:50051 and 9105, not 86550058f or 1.9101 or 91010") == [
        "50051",
        "9105",
    ]


def test_the_local_scripts_default_to_the_tables_broker_ports() -> None:
    lib = (DEPLOY / "local" / "lib.sh").read_text()
    defaults = dict(re.findall(r'^\w+="\$\{(RUMMY_\w+_PORT):-(\d+)\}"$', lib, re.MULTILINE))
    assert defaults == {
        KAFKA_PORT_VARIABLE: str(KAFKA_PORT),
        KAFKA_CONTROLLER_PORT_VARIABLE: str(KAFKA_CONTROLLER_PORT),
        POSTGRES_PORT_VARIABLE: str(POSTGRES_PORT),
    }
    assert 'LOCAL_KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT"' in lib
    assert 'LOCAL_DATABASE_URL="postgresql://rummy:rummy@127.0.0.1:$PG_PORT/rummy"' in lib


def test_compose_publishes_prometheus_grafana_and_the_services_on_the_tables_host_ports() -> None:
    services = load_yaml(DEPLOY / "compose.yaml")["services"]
    published = {
        name: [int(entry.split(":")[1]) for entry in spec.get("ports", [])]
        for name, spec in services.items()
    }
    assert published["prometheus"] == [PROMETHEUS_PORT]
    assert published["grafana"] == [GRAFANA_PORT]
    for service, (grpc_port, _metrics) in DEFAULT_PORTS.items():
        assert published[service] == [grpc_port]
        health = services[service]["healthcheck"]["test"]
        assert health[-1] == str(grpc_port), service
    assert not published["kafka"] and not published["postgres"]  # inside compose's network only


def test_the_image_exposes_exactly_the_services_ports() -> None:
    dockerfile = (DEPLOY / "docker" / "Dockerfile").read_text()
    (expose,) = re.findall(r"^EXPOSE (.+)$", dockerfile, re.MULTILINE)
    assert sorted(map(int, expose.split())) == sorted(
        p for pair in DEFAULT_PORTS.values() for p in pair
    )


def test_the_k8s_manifests_advertise_the_tables_grpc_port() -> None:
    manifest = (DEPLOY / "k8s" / "services.yaml").read_text()
    (advertised,) = re.findall(
        r'RUMMY_TABLE_ADVERTISED_ADDRESS, value: "\$\(POD_IP\):(\d+)"', manifest
    )
    assert int(advertised) == DEFAULT_PORTS["table"][0]
    env_ports = re.findall(r"name: RUMMY_(GRPC|METRICS)_PORT, value: \"(\d+)\"", manifest)
    table = {("GRPC", str(g)) for g, _m in DEFAULT_PORTS.values()}
    table |= {("METRICS", str(m)) for _g, m in DEFAULT_PORTS.values()}
    assert set(env_ports) == table and len(env_ports) == 2 * len(DEFAULT_PORTS)


def test_the_alert_tests_label_their_instances_with_the_tables_metrics_ports() -> None:
    text = (DEPLOY / "prometheus" / "alerts_test.yml").read_text()
    metrics = {f"rummy-{service}": ports[1] for service, ports in DEFAULT_PORTS.items()}
    pairs = re.findall(r'job[=:] ?"?(rummy-\w+)"?, instance[=:] ?"[\w.]+:(\d+)"', text)
    assert len(pairs) > 10
    for job, port in pairs:
        assert int(port) == metrics[job], (job, port)


def test_the_dashboards_and_the_grafana_datasource_name_no_other_port() -> None:
    folder = DEPLOY / "grafana"
    for path in [*folder.rglob("*.json"), *folder.rglob("*.yml")]:
        for port in re.findall(r"127\.0\.0\.1:(\d+)", path.read_text()):
            assert int(port) in TABLE, (path, port)


def test_the_operations_page_lists_the_tables_ports_where_it_says_what_runs_where() -> None:
    readme = (REPO_ROOT / "docs" / "operations.md").read_text()
    rows = {
        service: tuple(map(int, ports))
        for service, *ports in re.findall(
            r"^\| (\w+) \| gRPC `(\d+)`, metrics `(\d+)` \|", readme, re.MULTILINE
        )
    }
    assert rows == dict(DEFAULT_PORTS)
    kafka = f"| `127.0.0.1:{KAFKA_PORT}` | controller `127.0.0.1:{KAFKA_CONTROLLER_PORT}`;"
    assert f"| Kafka broker (KRaft, single node) {kafka}" in readme
    assert f"| PostgreSQL | `127.0.0.1:{POSTGRES_PORT}` |" in readme
    assert f"`127.0.0.1:{PROMETHEUS_PORT}`, `127.0.0.1:{GRAFANA_PORT}`" in readme


@pytest.mark.parametrize("service", ["clock", "dealer", "fairness"])
def test_a_service_readme_gives_that_services_ports(service: str) -> None:
    text = (REPO_ROOT / "services" / service / "README.md").read_text()
    grpc_port, metrics_port = DEFAULT_PORTS[service]
    assert re.findall(r"gRPC (\d+)", text) == [str(grpc_port)]
    assert re.findall(r"`/metrics` on (\d+)", text) == [str(metrics_port)]


def documents() -> list[Path]:
    """The checkout's text files (code, docs, configs, scripts): git's files, so no environment,
    cache or file another test is writing at the same time (the tree walk read those)."""
    return [
        path
        for path in checkout_files()
        if path.suffix in TEXT_SUFFIXES or path.name == "Dockerfile"
    ]


def test_every_loopback_port_the_documents_and_deploy_files_name_is_the_tables() -> None:
    named = re.compile(r"(?:127\.0\.0\.1|localhost):(\d{2,5})\b")
    # compose.yaml is read above: its host ports are the table's, and the localhost of its Kafka
    # health check is the container's own.
    checked = [
        p
        for p in documents()
        if (p.suffix in {".md", ".sh", ".yml", ".yaml"} or p.name == "Dockerfile")
        and p != DEPLOY / "compose.yaml"
    ]
    assert any(p.name == "README.md" for p in checked)
    for path in checked:
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for port in named.findall(line):
                assert int(port) in TABLE, f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"


def test_the_old_ports_are_named_only_where_a_paragraph_says_that_issue_26_changed_them() -> None:
    left = []
    for path in documents():
        if path.name == "uv.lock" or path.is_relative_to(REPO_ROOT / "libs" / "rules" / "vectors"):
            continue
        text = path.read_text(errors="replace")
        for paragraph in re.split(r"\n\s*\n", text):
            if OLD_PORTS.search(paragraph) and "issue 26" not in paragraph:
                left.append(f"{path.relative_to(REPO_ROOT)}: {paragraph.strip()[:200]}")
    assert left == []
