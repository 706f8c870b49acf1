"""`rummy token`: mints a token the services accept, and refuses to run without a secret."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest
from click.testing import CliRunner, Result

from rummy_ops.cli import main
from rummy_platform.auth import Principal, Role
from rummy_testing.token_keys import issuer_authority

SECRET = "cli-test-secret-0123456789abcdefghij"


def run(*args: str, secret: str | None = SECRET, **env: str) -> Result:
    env["RUMMY_JWT_SECRET"] = secret if secret is not None else ""
    return CliRunner().invoke(main, ["token", *args], env=env)


def test_the_printed_token_verifies_as_the_requested_account_and_role() -> None:
    result = run("--role", "operator", "--account", "ops-1")
    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert issuer_authority().verify(token) == Principal("ops-1", Role.OPERATOR)


def test_ttl_sets_the_lifetime_in_seconds() -> None:
    token = run("--role", "player", "--account", "alice", "--ttl", "120").stdout.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 120


def test_the_default_lifetime_is_one_hour() -> None:
    token = run("--role", "player", "--account", "alice").stdout.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 3600


@pytest.fixture()
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout root of its own (so the real .local/jwt-secret is not read)."""
    monkeypatch.setattr("rummy_ops.token.repository_root", lambda: tmp_path)
    return tmp_path


def test_without_a_secret_it_falls_back_to_the_local_secret_of_rummy_up(checkout: Path) -> None:
    (checkout / ".local").mkdir()
    (checkout / ".local" / "jwt-secret").write_text(SECRET + "\n")
    result = run("--role", "operator", "--account", "ops-1", secret=None)
    assert result.exit_code == 0, result.output
    assert issuer_authority().verify(result.stdout.strip()) == Principal("ops-1", Role.OPERATOR)
    assert f"secret from {checkout / '.local' / 'jwt-secret'}" in result.stderr


def test_the_environment_secret_wins_over_the_local_file_and_says_so(checkout: Path) -> None:
    (checkout / ".local").mkdir()
    (checkout / ".local" / "jwt-secret").write_text("another-secret-0123456789abcdefghijkl\n")
    result = run("--role", "player", "--account", "alice")
    assert issuer_authority().verify(result.stdout.strip()) == Principal("alice", Role.PLAYER)
    assert "secret from RUMMY_JWT_SECRET" in result.stderr


def test_without_a_secret_it_fails_with_a_clear_message_and_prints_no_token(checkout: Path) -> None:
    result = run("--role", "player", "--account", "alice", secret=None)
    assert result.exit_code == 1
    assert "RUMMY_JWT_SECRET is not set" in result.output
    assert result.stdout == ""


def test_an_unknown_role_is_a_usage_error() -> None:
    result = run("--role", "admin", "--account", "alice")
    assert result.exit_code == 2
    assert "'admin' is not one of" in result.output


def test_a_non_positive_ttl_is_a_usage_error() -> None:
    assert run("--role", "player", "--account", "alice", "--ttl", "0").exit_code == 2


def test_a_ttl_longer_than_the_roles_maximum_is_a_usage_error_and_prints_no_token() -> None:
    result = run("--role", "player", "--account", "alice", "--ttl", str(30 * 365 * 86400))
    assert result.exit_code == 2
    assert "a player token may live at most 43200 s" in result.output
    assert result.stdout == ""


def test_each_role_mints_up_to_its_maximum_lifetime_which_the_services_accept() -> None:
    for role, longest in (("player", 43200), ("operator", 86400), ("service", 3600)):
        result = run("--role", role, "--account", "a1", "--ttl", str(longest))
        assert result.exit_code == 0, result.output
        assert issuer_authority().verify(result.stdout.strip()).role == role


def test_a_configured_shorter_maximum_bounds_the_ttl_and_the_default() -> None:
    limited = {"RUMMY_SERVICE_TOKEN_MAX_SECONDS": "600"}
    refused = run("--role", "service", "--account", "dealer", "--ttl", "601", **limited)
    assert refused.exit_code == 2 and "RUMMY_SERVICE_TOKEN_MAX_SECONDS" in refused.output
    token = run("--role", "service", "--account", "dealer", **limited).stdout.strip()
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 600


def test_the_key_id_of_the_signing_secret_is_said_on_stderr_and_is_the_tokens_kid() -> None:
    result = run("--role", "player", "--account", "alice")
    kid = jwt.get_unverified_header(result.stdout.strip())["kid"]
    assert kid == issuer_authority().key_id
    assert f"(kid {kid})" in result.stderr


def test_a_malformed_lifetime_setting_is_a_clear_error() -> None:
    result = run("--role", "player", "--account", "a", RUMMY_PLAYER_TOKEN_MAX_SECONDS="long")
    assert result.exit_code == 1
    assert "RUMMY_PLAYER_TOKEN_MAX_SECONDS" in result.output
