"""Readers of the monitoring files in ``deploy/``: the PromQL of the alert rules and the Grafana
dashboards, and the scrape targets of a ``prometheus.yml``.

No YAML library is installed, so the files are read as the deploy/ files promise to be written:
alert expressions on one line in single quotes, one ``static_configs`` entry per scrape job.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
DEPLOY = REPO_ROOT / "deploy"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
LOCAL_PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"

#: Series Prometheus makes itself for every scrape target (not exported by any service).
PROMETHEUS_OWN_SERIES = frozenset({"up"})

_PROMQL_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}


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
    """(alert name, expression) of every rule in ``path`` (default deploy/prometheus/alerts.yml),
    in file order. Raises AssertionError when an ``expr`` is not one single-quoted line."""
    text = path.read_text()
    alerts = re.findall(r"^\s*- alert: (\S+)\s*$", text, re.MULTILINE)
    exprs = re.findall(r"^\s*expr: '([^']*)'\s*$", text, re.MULTILINE)
    every_expr_line = re.findall(r"^\s*expr:", text, re.MULTILINE)
    assert len(exprs) == len(every_expr_line) == len(alerts), (
        "every rule needs exactly one single-line, single-quoted expr"
    )
    return list(zip(alerts, exprs, strict=True))


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
    """job_name -> targets of a prometheus.yml written with one static_configs entry per job."""
    text = config.read_text()
    jobs = re.findall(r"- job_name: (\S+)\s+static_configs:\s+- targets: \[([^\]]*)\]", text)
    return {job: re.findall(r'"([^"]+)"', targets) for job, targets in jobs}
