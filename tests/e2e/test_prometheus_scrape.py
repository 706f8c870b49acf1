"""A real Prometheus scraping the running stack with the repository's own configuration.

Prometheus (``deploy/local/prometheus.sh install``) runs on loopback with a temporary folder for
its configuration and TSDB: ``deploy/prometheus/prometheus.yml`` with the five targets moved to
the stack's metrics ports and the intervals shortened to one second, and
``deploy/prometheus/alerts.yml`` as its rule file. Once every target has been scraped twice, its
HTTP API must show every target up, every series that the Grafana dashboard and the alert rules
query (names read from their expressions), and every alert rule loaded and evaluated without an
error. Missing Prometheus skips these tests locally and fails them under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rummy_platform.ports import DEFAULT_PORTS
from rummy_testing.deploy_files import (
    ALERTS,
    LOCAL_PROMETHEUS_CONFIG,
    PROMETHEUS_OWN_SERIES,
    alert_rules,
    dashboard_exprs,
    load_yaml,
    queried_series,
    scrape_targets,
)
from rummy_testing.prometheus import Prometheus, require_tool, running_prometheus
from rummy_testing.stacks import RunningStack
from rummy_testing.waiting import wait_until

#: Scrape and rule evaluation interval of the test's Prometheus.
INTERVAL = "1s"
#: Seconds the test gives Prometheus to scrape every target twice / evaluate every rule.
SETTLE_TIMEOUT_S = 60.0


def config_for_ports(metrics_ports: dict[str, int]) -> str:
    """deploy/prometheus/prometheus.yml with each service's target on ``metrics_ports[service]``
    instead of its default port, and scrapes and rule evaluations every ``INTERVAL``."""
    config = load_yaml(LOCAL_PROMETHEUS_CONFIG)
    config["global"].update(scrape_interval=INTERVAL, evaluation_interval=INTERVAL)
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    for service, (_grpc, default_port) in DEFAULT_PORTS.items():
        (static,) = jobs[f"rummy-{service}"]["static_configs"]
        assert static["targets"] == [f"127.0.0.1:{default_port}"], f"{service}'s target"
        static["targets"] = [f"127.0.0.1:{metrics_ports[service]}"]
    return yaml.safe_dump(config, sort_keys=False)


@pytest.fixture(scope="module")
def prometheus(
    rummy_stack: RunningStack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Prometheus]:
    binary = require_tool("prometheus")
    ports = {name: metrics for name, (_grpc, metrics) in rummy_stack.stack.config.ports.items()}
    folder: Path = tmp_path_factory.mktemp("prometheus")
    with running_prometheus(
        binary, config_for_ports(ports), folder, files={ALERTS.name: ALERTS}
    ) as server:
        yield server


def jobs() -> set[str]:
    return set(scrape_targets(LOCAL_PROMETHEUS_CONFIG))


@pytest.fixture(scope="module")
def scraped_twice(prometheus: Prometheus) -> Prometheus:
    """``prometheus`` once every job of the configuration has been scraped at least twice."""

    def scrapes() -> dict[str, float]:
        counts = {
            item["metric"]["job"]: float(item["value"][1])
            for item in prometheus.query('count_over_time(up{job=~"rummy-.*"}[10m])')
        }
        return counts if set(counts) == jobs() and min(counts.values()) >= 2 else {}

    wait_until("every target scraped twice", scrapes, SETTLE_TIMEOUT_S)
    return prometheus


def test_prometheus_scrapes_every_service_of_the_stack_and_finds_it_up(
    scraped_twice: Prometheus,
) -> None:
    targets = scraped_twice.api("targets", state="active")["activeTargets"]
    assert {target["labels"]["job"] for target in targets} == jobs()
    for target in targets:
        assert target["health"] == "up", (target["scrapeUrl"], target["lastError"])
    up = {item["metric"]["job"]: item["value"][1] for item in scraped_twice.query("up")}
    assert up == dict.fromkeys(jobs(), "1")


def test_every_series_the_dashboard_and_the_alert_rules_query_exists_in_prometheus(
    scraped_twice: Prometheus,
) -> None:
    wanted = queried_series()
    assert wanted >= PROMETHEUS_OWN_SERIES  # the reader found the alerts' `up` at least
    present = set(scraped_twice.api("label/__name__/values"))
    missing = sorted(wanted - present)
    assert missing == [], f"queried, but no service of the running stack exports {missing}"


def test_every_dashboard_query_evaluates_in_prometheus_without_an_error(
    scraped_twice: Prometheus,
) -> None:
    failed = []
    for expr in dashboard_exprs():
        try:
            scraped_twice.query(expr)  # raises unless Prometheus answers status success
        except Exception as error:  # noqa: BLE001 - every failing query is listed, not the first
            failed.append(f"{expr}: {error}")
    assert failed == [], "dashboard queries Prometheus refused:\n" + "\n".join(failed)


def test_the_alert_rules_load_into_prometheus_and_evaluate_without_errors(
    scraped_twice: Prometheus,
) -> None:
    def evaluated_rules() -> list[dict[str, Any]]:
        groups = scraped_twice.api("rules")["groups"]
        rules = [rule for group in groups for rule in group["rules"]]
        return rules if rules and all(rule["health"] != "unknown" for rule in rules) else []

    rules = wait_until("every rule evaluated", evaluated_rules, SETTLE_TIMEOUT_S)
    assert sorted(rule["name"] for rule in rules) == sorted(name for name, _ in alert_rules())
    for rule in rules:
        assert rule["type"] == "alerting", rule["name"]
        assert (rule["health"], rule.get("lastError", "")) == ("ok", ""), rule["name"]
    # Every service is up, so the availability alert is neither pending nor firing.
    alerts = scraped_twice.api("alerts")["alerts"]
    assert [a for a in alerts if a["labels"]["alertname"] == "RummyServiceDown"] == []
