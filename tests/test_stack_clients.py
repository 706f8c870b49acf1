"""A test stack's client variables stay with the tests that are its clients.

:func:`rummy_testing.client_env.without_stack_clients` (which the plug-in wraps around every test
outside ``tests/e2e``, and ``start_service`` around its process's environment) gives back the
TLS variables as they were before the stacks that are still running set them, and the stacks'
afterwards.
"""

from __future__ import annotations

import os

import pytest

from rummy_testing.client_env import CLIENT_VARIABLES, before_stacks, without_stack_clients


def test_without_a_running_stack_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rummy_testing.client_env.before_stacks", [])
    monkeypatch.setenv("RUMMY_TLS_CA_FILE", "mine.pem")
    with without_stack_clients():
        assert os.environ["RUMMY_TLS_CA_FILE"] == "mine.pem"


def test_a_running_stack_s_variables_are_lifted_inside_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outer = dict.fromkeys(CLIENT_VARIABLES, None) | {"RUMMY_INSECURE": "0"}
    inner = dict.fromkeys(CLIENT_VARIABLES, None)
    saved = list(before_stacks)
    before_stacks[:] = [outer, inner]
    try:
        for variable in CLIENT_VARIABLES:
            monkeypatch.setenv(variable, f"stack-{variable}")
        with without_stack_clients():
            assert {v: os.environ.get(v) for v in CLIENT_VARIABLES} == outer
        assert {v: os.environ.get(v) for v in CLIENT_VARIABLES} == {
            v: f"stack-{v}" for v in CLIENT_VARIABLES
        }
    finally:
        before_stacks[:] = saved
