"""`rummy token`: mints an EdDSA token the services accept with the issuer's private key, refuses
to run without one, and `--new-key` rotates the local key (the previous public key kept)."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest
from click.testing import CliRunner, Result

from rummy_ops.cli import main
from rummy_platform.auth import Principal, Role, TokenAuthority
from rummy_platform.token_keys import ensure_key_files, read_public_keys
from rummy_testing.token_keys import issuer_authority, suite_key_files


def run(*args: str, key: str | None = None, **env: str) -> Result:
    """``rummy token ARGS`` with ``RUMMY_TOKEN_SIGNING_KEY_FILE`` the test issuer's (or ``key``;
    "" leaves it unset)."""
    env["RUMMY_TOKEN_SIGNING_KEY_FILE"] = str(suite_key_files().issuer_key) if key is None else key
    return CliRunner().invoke(main, ["token", *args], env=env)


def test_the_printed_token_verifies_as_the_requested_account_and_role() -> None:
    result = run("--role", "operator", "--account", "ops-1")
    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert issuer_authority().verify(token) == Principal("ops-1", Role.OPERATOR)
    assert jwt.get_unverified_header(token)["alg"] == "EdDSA"


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
    """A checkout root of its own (so the real .local/token-keys is not read)."""
    monkeypatch.setattr("rummy_ops.token.repository_root", lambda: tmp_path)
    return tmp_path


def test_without_the_variable_it_falls_back_to_the_local_key_of_rummy_up(checkout: Path) -> None:
    files = ensure_key_files(checkout / ".local" / "token-keys")
    result = run("--role", "operator", "--account", "ops-1", key="")
    assert result.exit_code == 0, result.output
    verified = TokenAuthority.of_issuer(files).verify(result.stdout.strip())
    assert verified == Principal("ops-1", Role.OPERATOR)
    assert f"key from {files.issuer_key}" in result.stderr


def test_the_variable_wins_over_the_local_key_and_says_so(checkout: Path) -> None:
    ensure_key_files(checkout / ".local" / "token-keys")
    result = run("--role", "player", "--account", "alice")
    assert issuer_authority().verify(result.stdout.strip()) == Principal("alice", Role.PLAYER)
    assert f"key from {suite_key_files().issuer_key}" in result.stderr


def test_without_a_key_it_fails_with_a_clear_message_and_prints_no_token(checkout: Path) -> None:
    result = run("--role", "player", "--account", "alice", key="")
    assert result.exit_code == 1
    assert "RUMMY_TOKEN_SIGNING_KEY_FILE is not set" in result.output
    assert "rummy token --new-key" in result.output
    assert result.stdout == ""


def test_a_key_file_that_is_no_private_key_is_a_clear_error(tmp_path: Path) -> None:
    result = run("--role", "player", "--account", "alice",
                 key=str(suite_key_files().issuer_public_keys))  # fmt: skip
    assert result.exit_code == 1
    assert (
        "RUMMY_TOKEN_SIGNING_KEY_FILE: " in result.output and "no unencrypted PEM" in result.output
    )


def test_new_key_rotates_the_local_issuer_key_keeping_the_previous_public_key(
    checkout: Path,
) -> None:
    files = ensure_key_files(checkout / ".local" / "token-keys")
    before = TokenAuthority.of_issuer(files)
    old_token = before.issue("alice", Role.PLAYER)
    result = run("--new-key", key="")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # no token asked for
    listed = list(read_public_keys(files.issuer_public_keys, "keys"))
    assert listed[1] == before.key_id and f"new issuer key {listed[0]}" in result.stderr
    rotated = TokenAuthority.of_issuer(files)
    new_token = run("--role", "player", "--account", "bob", key="").stdout.strip()
    assert jwt.get_unverified_header(new_token)["kid"] == listed[0]
    assert rotated.verify(new_token) == Principal("bob", Role.PLAYER)
    assert rotated.verify(old_token) == Principal("alice", Role.PLAYER)


def test_without_new_key_role_and_account_are_required() -> None:
    result = run("--role", "player")
    assert result.exit_code == 2 and "--role and --account are required" in result.output


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


def test_the_key_id_of_the_signing_key_is_said_on_stderr_and_is_the_tokens_kid() -> None:
    result = run("--role", "player", "--account", "alice")
    kid = jwt.get_unverified_header(result.stdout.strip())["kid"]
    assert kid == issuer_authority().key_id
    assert f"(kid {kid})" in result.stderr


def test_a_malformed_lifetime_setting_is_a_clear_error() -> None:
    result = run("--role", "player", "--account", "a", RUMMY_PLAYER_TOKEN_MAX_SECONDS="long")
    assert result.exit_code == 1
    assert "RUMMY_PLAYER_TOKEN_MAX_SECONDS" in result.output
