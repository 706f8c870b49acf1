"""`rummy token`: mints a token the services accept, and refuses to run without a secret."""

from __future__ import annotations

import jwt
from click.testing import CliRunner

from rummy_ops.cli import main
from rummy_platform.auth import Principal, Role, TokenAuthority

SECRET = "cli-test-secret-0123456789abcdefghij"


def run(*args: str, secret: str | None = SECRET):
    env = {"RUMMY_JWT_SECRET": secret} if secret is not None else {"RUMMY_JWT_SECRET": ""}
    return CliRunner().invoke(main, ["token", *args], env=env)


def test_the_printed_token_verifies_as_the_requested_account_and_role():
    result = run("--role", "operator", "--account", "ops-1")
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    assert TokenAuthority(SECRET).verify(token) == Principal("ops-1", Role.OPERATOR)


def test_ttl_sets_the_lifetime_in_seconds():
    token = run("--role", "player", "--account", "alice", "--ttl", "120").output.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 120


def test_the_default_lifetime_is_one_hour():
    token = run("--role", "player", "--account", "alice").output.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 3600


def test_without_a_secret_it_fails_with_a_clear_message_and_prints_no_token():
    result = run("--role", "player", "--account", "alice", secret=None)
    assert result.exit_code == 1
    assert "RUMMY_JWT_SECRET is not set" in result.output
    assert result.stdout == ""


def test_an_unknown_role_is_a_usage_error():
    result = run("--role", "admin", "--account", "alice")
    assert result.exit_code == 2
    assert "'admin' is not one of" in result.output


def test_a_non_positive_ttl_is_a_usage_error():
    assert run("--role", "player", "--account", "alice", "--ttl", "0").exit_code == 2
