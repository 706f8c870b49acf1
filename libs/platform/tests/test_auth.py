"""Bearer tokens: what verifies, and each way a token is refused."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pytest

from rummy_platform.auth import (
    AUDIENCE,
    ISSUER,
    InvalidToken,
    Principal,
    Role,
    TokenAuthority,
    bearer_metadata,
    bearer_token,
)
from rummy_platform.config import ConfigError

SECRET = "unit-test-secret-0123456789abcdefgh"


@pytest.fixture
def authority() -> TokenAuthority:
    return TokenAuthority(SECRET)


def claims(**overrides: object) -> dict[str, object]:
    now = int(time.time())
    base = {"sub": "alice", "role": "player", "iat": now, "exp": now + 60, "iss": ISSUER,
            "aud": AUDIENCE}  # fmt: skip
    base.update(overrides)
    return {key: value for key, value in base.items() if value is not None}


def test_an_issued_token_verifies_as_its_account_and_role(authority):
    for role in Role:
        assert authority.verify(authority.issue("alice", role)) == Principal("alice", role)


def test_an_issued_token_lives_exactly_its_ttl(authority):
    payload = jwt.decode(
        authority.issue("alice", Role.PLAYER, 90), options={"verify_signature": False}
    )
    assert payload["exp"] - payload["iat"] == 90
    assert (payload["iss"], payload["aud"]) == (ISSUER, AUDIENCE)


def test_an_expired_token_is_refused(authority):
    token = authority.issue("alice", Role.PLAYER, 60, now=time.time() - 61)
    with pytest.raises(InvalidToken, match="expired"):
        authority.verify(token)


def test_a_token_signed_with_another_secret_is_refused(authority):
    token = TokenAuthority("another-secret-0123456789abcdefghij").issue("alice", Role.OPERATOR)
    with pytest.raises(InvalidToken, match="signature"):
        authority.verify(token)


def test_a_player_token_edited_to_say_operator_is_refused(authority):
    header, payload, signature = authority.issue("alice", Role.PLAYER).split(".")
    decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    decoded["role"] = "operator"
    forged = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
    with pytest.raises(InvalidToken, match="signature"):
        authority.verify(f"{header}.{forged}.{signature}")


def test_an_unsigned_token_is_refused(authority):
    unsigned = jwt.encode(claims(role="operator"), key=None, algorithm="none")
    with pytest.raises(InvalidToken):
        authority.verify(unsigned)


def test_a_correctly_signed_token_with_an_unknown_role_is_refused(authority):
    token = jwt.encode(claims(role="admin"), SECRET, algorithm="HS256")
    with pytest.raises(InvalidToken, match="unknown role 'admin'"):
        authority.verify(token)


@pytest.mark.parametrize("missing", ["sub", "role", "exp", "iat", "aud", "iss"])
def test_a_token_lacking_a_required_claim_is_refused(authority, missing):
    token = jwt.encode(claims(**{missing: None}), SECRET, algorithm="HS256")
    with pytest.raises(InvalidToken):
        authority.verify(token)


def test_a_token_for_another_audience_is_refused(authority):
    token = jwt.encode(claims(aud="someone-else"), SECRET, algorithm="HS256")
    with pytest.raises(InvalidToken, match="(?i)audience"):
        authority.verify(token)


def test_garbage_is_refused(authority):
    with pytest.raises(InvalidToken):
        authority.verify("not.a.jwt")


def test_a_secret_shorter_than_32_bytes_is_refused():
    with pytest.raises(ConfigError, match="32 bytes"):
        TokenAuthority("x" * 31)


@pytest.mark.parametrize(("account", "ttl"), [("", 60), ("alice", 0), ("alice", -5)])
def test_issuing_needs_an_account_and_a_positive_ttl(authority, account, ttl):
    with pytest.raises(ValueError):
        authority.issue(account, Role.PLAYER, ttl)


def test_bearer_metadata_round_trips_through_bearer_token():
    assert bearer_token(bearer_metadata("abc.def.ghi")) == "abc.def.ghi"
    assert bearer_token((("Authorization", "bearer xyz"),)) == "xyz"


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ((), "missing"),
        ((("authorization", "Basic dXNlcjpwYXNz"),), "Bearer"),
        ((("authorization", "Bearer "),), "Bearer"),
        ((("authorization", "Bearer a"), ("authorization", "Bearer b")), "more than one"),
    ],
)
def test_metadata_without_exactly_one_bearer_token_is_refused(metadata, message):
    with pytest.raises(InvalidToken, match=message):
        bearer_token(metadata)
