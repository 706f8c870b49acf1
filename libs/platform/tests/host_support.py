"""Helpers of the tests that run a ServiceHost in the test's own process (plain functions)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from rummy_platform.config import Settings
from rummy_testing.token_keys import token_settings


def in_process_settings() -> Settings:
    """A probe host's settings: free ports, a 1 s shutdown grace, the tests' token secret."""
    return Settings(**token_settings(), grpc_port=0, metrics_port=0, shutdown_grace_seconds=1)


def request_codes(registry: CollectorRegistry, method: str) -> dict[str, float]:
    """The calls of ``method`` (its bare name) that ``registry``'s ``grpc_requests_total``
    counted, by status code name."""
    return {
        sample.labels["code"]: sample.value
        for metric in registry.collect()
        if metric.name == "grpc_requests"
        for sample in metric.samples
        if sample.name == "grpc_requests_total" and sample.labels["method"] == method
    }
