"""The TCP ports we listen on by default: the one table of them (issue 26).

Every Python default reads it (the services' settings, ``rummy demo``/``rummy up``, the tools'
broker addresses); ``deploy/local/lib.sh``, the Prometheus scrape configs, the compose file, the
Kubernetes manifests and the documents spell the numbers out and ``tests/test_default_ports.py``
checks them against :func:`default_ports`.

The rules the numbers keep (the same test holds them): each is below 32768, Linux's ephemeral
range (``/proc/sys/net/ipv4/ip_local_port_range``, 32768-60999 by default), so no outgoing
connection of ours or anyone's takes one as its source port; none is on a port of Prometheus's
default port allocations (its own 9090-9099 and the exporters' 9100-9999) or on a conventional
one of Grafana (3000); none is an IANA service of ``/etc/services``.

Until issue 26 the services listened on gRPC 50051-50055 (inside the ephemeral range) and
metrics 9101-9105 (on exporters' ports: 9100 node_exporter, 9104 mysqld_exporter), and compose
published Prometheus on 9090 and Grafana on 3000.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: The services, in the order of every table of them.
SERVICES: tuple[str, ...] = ("table", "dealer", "ledger", "fairness", "clock")

#: Service -> (its gRPC port, its metrics port).
DEFAULT_PORTS: Mapping[str, tuple[int, int]] = {
    "table": (15051, 15101),
    "dealer": (15052, 15102),
    "ledger": (15053, 15103),
    "fairness": (15054, 15104),
    "clock": (15055, 15105),
}

#: The local Kafka broker's client and controller ports, and PostgreSQL's (``deploy/local``).
KAFKA_PORT = 19092
KAFKA_CONTROLLER_PORT = 19093
POSTGRES_PORT = 15432
#: The host ports compose publishes Prometheus's and Grafana's web servers on.
PROMETHEUS_PORT = 15090
GRAFANA_PORT = 15300


def local_kafka_bootstrap(port: int = KAFKA_PORT) -> str:
    """The local Kafka broker's address on ``port`` (``deploy/local/stack.sh env`` prints the
    same): ``127.0.0.1:19092``."""
    return f"127.0.0.1:{port}"


def local_database_url(port: int = POSTGRES_PORT) -> str:
    """The local PostgreSQL's URL on ``port`` (``deploy/local/stack.sh env`` prints the same)."""
    return f"postgresql://rummy:rummy@127.0.0.1:{port}/rummy"


#: The local brokers' addresses on the table's ports.
LOCAL_KAFKA_BOOTSTRAP = local_kafka_bootstrap()
LOCAL_DATABASE_URL = local_database_url()

#: The variables ``deploy/local`` reads for the brokers' ports.
KAFKA_PORT_VARIABLE = "RUMMY_KAFKA_PORT"
KAFKA_CONTROLLER_PORT_VARIABLE = "RUMMY_KAFKA_CONTROLLER_PORT"
POSTGRES_PORT_VARIABLE = "RUMMY_PG_PORT"

GRPC, METRICS = "grpc", "metrics"


@dataclass(frozen=True)
class ListeningPort:
    """A port something of ours listens on: ``port``; who listens (``listener``: ``the table
    service's gRPC server``); the variable that moves it (``variable``; None where only a file,
    compose's ``ports:``, does). In the table of defaults a service's variable is the one
    ``rummy demo``/``rummy up`` read; a service started alone reads ``RUMMY_GRPC_PORT`` /
    ``RUMMY_METRICS_PORT``."""

    port: int
    listener: str
    variable: str | None


def stack_port_variable(service: str, kind: str) -> str:
    """The variable that moves ``service``'s ``kind`` (:data:`GRPC` or :data:`METRICS`) port
    for ``rummy demo``/``rummy up``: ``RUMMY_TABLE_GRPC_PORT``, ``RUMMY_CLOCK_METRICS_PORT``."""
    return f"RUMMY_{service.upper()}_{kind.upper()}_PORT"


def service_listener(service: str, kind: str) -> str:
    """``the table service's gRPC server`` / ``... metrics server``: who listens on a port."""
    server = "gRPC" if kind == GRPC else "metrics (/metrics)"
    return f"the {service} service's {server} server"


def default_ports() -> tuple[ListeningPort, ...]:
    """Every port we listen on by default, services first (gRPC, then metrics, of each)."""
    services = tuple(
        ListeningPort(port, service_listener(service, kind), stack_port_variable(service, kind))
        for service, pair in DEFAULT_PORTS.items()
        for kind, port in zip((GRPC, METRICS), pair, strict=True)
    )
    return (
        *services,
        ListeningPort(KAFKA_PORT, "the local Kafka broker", KAFKA_PORT_VARIABLE),
        ListeningPort(
            KAFKA_CONTROLLER_PORT,
            "the local Kafka broker's controller",
            KAFKA_CONTROLLER_PORT_VARIABLE,
        ),  # fmt: skip
        ListeningPort(POSTGRES_PORT, "the local PostgreSQL server", POSTGRES_PORT_VARIABLE),
        ListeningPort(PROMETHEUS_PORT, "compose's Prometheus", None),
        ListeningPort(GRAFANA_PORT, "compose's Grafana", None),
    )
