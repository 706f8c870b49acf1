"""`rummy token`: mints a token the services accept, and refuses to run without a secret."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest
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
    token = result.stdout.strip()
    assert TokenAuthority(SECRET).verify(token) == Principal("ops-1", Role.OPERATOR)


def test_ttl_sets_the_lifetime_in_seconds():
    token = run("--role", "player", "--account", "alice", "--ttl", "120").stdout.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 120


def test_the_default_lifetime_is_one_hour():
    token = run("--role", "player", "--account", "alice").stdout.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 3600


@pytest.fixture()
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout root of its own (so the real .local/jwt-secret is not read)."""
    monkeypatch.setattr("rummy_ops.token.repository_root", lambda: tmp_path)
    return tmp_path


def test_without_a_secret_it_falls_back_to_the_local_secret_of_rummy_up(checkout: Path):
    (checkout / ".local").mkdir()
    (checkout / ".local" / "jwt-secret").write_text(SECRET + "\n")
    result = run("--role", "operator", "--account", "ops-1", secret=None)
    assert result.exit_code == 0, result.output
    assert TokenAuthority(SECRET).verify(result.stdout.strip()) == Principal("ops-1", Role.OPERATOR)
    assert f"secret from {checkout / '.local' / 'jwt-secret'}" in result.stderr


def test_the_environment_secret_wins_over_the_local_file_and_says_so(checkout: Path):
    (checkout / ".local").mkdir()
    (checkout / ".local" / "jwt-secret").write_text("another-secret-0123456789abcdefghijkl\n")
    result = run("--role", "player", "--account", "alice")
    assert TokenAuthority(SECRET).verify(result.stdout.strip()) == Principal("alice", Role.PLAYER)
    assert "secret from RUMMY_JWT_SECRET" in result.stderr


def test_without_a_secret_it_fails_with_a_clear_message_and_prints_no_token(checkout: Path):
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
