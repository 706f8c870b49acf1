"""Helpers of the tests that run a ServiceHost in the test's own process (plain functions)."""

from __future__ import annotations

from rummy_platform.config import Settings
from rummy_testing.token_keys import token_settings


def in_process_settings() -> Settings:
    """A probe host's settings: free ports, a 1 s shutdown grace, the tests' token secret."""
    return Settings(**token_settings(), grpc_port=0, metrics_port=0, shutdown_grace_seconds=1)
