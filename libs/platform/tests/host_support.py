"""Helpers of the tests that run a ServiceHost in the test's own process (plain functions)."""

from __future__ import annotations

from rummy_platform.config import Settings

SECRET = "in-process-test-secret-0123456789abcdef"


def in_process_settings() -> Settings:
    """A probe host's settings: free ports, a 1 s shutdown grace, the tests' token secret."""
    return Settings.from_env(
        "probe",
        {"RUMMY_JWT_SECRET": SECRET, "RUMMY_GRPC_PORT": "0", "RUMMY_METRICS_PORT": "0",
         "RUMMY_SHUTDOWN_GRACE_SECONDS": "1"},
    )  # fmt: skip
