"""Readers of the files in ``deploy/`` (PyYAML's ``safe_load``, a dev dependency): the PromQL of the
alert rules and the Grafana dashboards, the scrape targets of a ``prometheus.yml``, and the
documents of a multi-document manifest (Kubernetes, compose).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
DEPLOY = REPO_ROOT / "deploy"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
LOCAL_PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"

#: Series Prometheus makes itself for every scrape target (not exported by any service).
PROMETHEUS_OWN_SERIES = frozenset({"up"})

_PROMQL_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}


def load_yaml(path: Path) -> Any:
    """The one YAML document in ``path``, as plain dicts, lists and scalars."""
    return yaml.safe_load(path.read_text())


def yaml_documents(path: Path) -> list[Any]:
    """Every non-empty document of a multi-document YAML file (``---`` separated), in file order."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def k8s_document(path: Path, kind: str, name: str) -> dict[str, Any]:
    """The manifest of ``kind`` (``Deployment``, ``Service``, ...) named ``name`` in ``path``.
    Raises AssertionError when there is none."""
    for doc in yaml_documents(path):
        if doc.get("kind") == kind and doc.get("metadata", {}).get("name") == name:
            return dict(doc)
    raise AssertionError(f"no {kind} {name} in {path}")


def promql_series(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (not functions, labels or keywords)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', "", expr)  # string literals
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range selectors
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    text = re.sub(r"\$\w+", "", text)  # Grafana variables
    names = set()
    for match in re.finditer(r"(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?", text):
        if match.group(2) is None and match.group(1) not in _PROMQL_KEYWORDS:
            names.add(match.group(1))
    return names


def alert_rules(path: Path = ALERTS) -> list[tuple[str, str]]:
    """(alert name, expression) of every alerting rule of every group in ``path`` (default
    deploy/prometheus/alerts.yml), in file order; recording rules are left out."""
    return [
        (rule["alert"], str(rule["expr"]))
        for group in load_yaml(path)["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def dashboard_exprs(folder: Path = DEPLOY / "grafana" / "dashboards") -> list[str]:
    """The PromQL of every panel target of every dashboard (``*.json``) in ``folder``."""
    exprs: list[str] = []
    for path in sorted(folder.glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            exprs.extend(target["expr"] for target in panel.get("targets", []))
    return exprs


def queried_series() -> set[str]:
    """Every metric name the alert rules and the dashboards query."""
    exprs = [expr for _alert, expr in alert_rules()] + dashboard_exprs()
    return set().union(*(promql_series(expr) for expr in exprs))


def scrape_targets(config: Path) -> dict[str, list[str]]:
    """job_name -> the targets of every ``static_configs`` entry of that job, in file order."""
    return {
        job["job_name"]: [
            target for static in job.get("static_configs", []) for target in static["targets"]
        ]
        for job in load_yaml(config)["scrape_configs"]
    }
