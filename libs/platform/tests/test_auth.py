"""Bearer tokens: what verifies, and each way a token is refused (a wrong key, a rotated-out
key, a lifetime longer than the role may have, ...)."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

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
    key_id,
)
from rummy_platform.config import ConfigError

SECRET = "unit-test-secret-0123456789abcdefgh"
OTHER_SECRET = "another-secret-0123456789abcdefghij"
THIRTY_YEARS = 30 * 365 * 24 * 3600


@pytest.fixture
def authority() -> TokenAuthority:
    return TokenAuthority(SECRET)


def claims(**overrides: object) -> dict[str, object]:
    now = int(time.time())
    base = {"sub": "alice", "role": "player", "iat": now, "exp": now + 60, "iss": ISSUER,
            "aud": AUDIENCE}  # fmt: skip
    base.update(overrides)
    return {key: value for key, value in base.items() if value is not None}


def signed(payload: dict[str, object], secret: str = SECRET, kid: str | None = None) -> str:
    """``payload`` signed with ``secret`` under the ``kid`` of ``secret`` (or the one given)."""
    return jwt.encode(payload, secret, algorithm="HS256", headers={"kid": kid or key_id(secret)})


def test_an_issued_token_verifies_as_its_account_and_role(authority: TokenAuthority) -> None:
    for role in Role:
        assert authority.verify(authority.issue("alice", role)) == Principal("alice", role)


def test_an_issued_token_lives_exactly_its_ttl(authority: TokenAuthority) -> None:
    payload = jwt.decode(
        authority.issue("alice", Role.PLAYER, 90), options={"verify_signature": False}
    )
    assert payload["exp"] - payload["iat"] == 90
    assert (payload["iss"], payload["aud"]) == (ISSUER, AUDIENCE)


def test_an_expired_token_is_refused(authority: TokenAuthority) -> None:
    token = authority.issue("alice", Role.PLAYER, 60, now=time.time() - 61)
    with pytest.raises(InvalidToken, match="expired"):
        authority.verify(token)


def test_a_token_accepted_before_is_refused_once_it_has_expired(authority: TokenAuthority) -> None:
    token = authority.issue("alice", Role.PLAYER, 60, now=time.time() - 58)
    assert authority.verify(token) == Principal("alice", Role.PLAYER)
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    time.sleep(max(0.0, expires - time.time()) + 0.05)
    with pytest.raises(InvalidToken, match="expired"):
        authority.verify(token)


def test_a_token_is_checked_in_full_once_and_then_recognised_until_it_expires(
    authority: TokenAuthority, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[str] = []
    real_decode = jwt.decode

    def counting_decode(token: str, *args: Any, **kwargs: Any) -> Any:
        decoded.append(token)
        return real_decode(token, *args, **kwargs)

    monkeypatch.setattr(jwt, "decode", counting_decode)
    token = authority.issue("alice", Role.PLAYER)
    other = authority.issue("bob", Role.OPERATOR)
    for _ in range(3):
        assert authority.verify(token) == Principal("alice", Role.PLAYER)
        assert authority.verify(other) == Principal("bob", Role.OPERATOR)
    assert decoded == [token, other]
    tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    with pytest.raises(InvalidToken):
        authority.verify(tampered)


def test_a_token_signed_with_another_secret_is_refused_as_an_unknown_key(
    authority: TokenAuthority,
) -> None:
    token = TokenAuthority(OTHER_SECRET).issue("alice", Role.OPERATOR)
    with pytest.raises(InvalidToken, match="key this service does not know"):
        authority.verify(token)


def test_a_token_naming_this_services_key_but_signed_with_another_secret_is_refused(
    authority: TokenAuthority,
) -> None:
    token = signed(claims(role="operator"), OTHER_SECRET, kid=key_id(SECRET))
    with pytest.raises(InvalidToken, match="signature"):
        authority.verify(token)


def test_a_token_without_a_kid_header_is_refused_even_when_signed_with_the_secret(
    authority: TokenAuthority,
) -> None:
    token = jwt.encode(claims(), SECRET, algorithm="HS256")
    with pytest.raises(InvalidToken, match="no 'kid' header"):
        authority.verify(token)


def test_an_issued_token_names_the_current_key_in_its_kid_header(authority: TokenAuthority) -> None:
    assert jwt.get_unverified_header(authority.issue("alice", Role.PLAYER))["kid"] == key_id(SECRET)
    assert key_id(SECRET) != key_id(OTHER_SECRET) and len(key_id(SECRET)) == 16
    assert SECRET[:8] not in key_id(SECRET)


def test_after_a_rotation_tokens_of_the_previous_and_the_current_secret_both_verify() -> None:
    before = TokenAuthority(SECRET)
    rotated = TokenAuthority(OTHER_SECRET, previous_secret=SECRET)
    old_token, new_token = before.issue("alice", Role.PLAYER), rotated.issue("bob", Role.OPERATOR)
    assert rotated.verify(old_token) == Principal("alice", Role.PLAYER)
    assert rotated.verify(new_token) == Principal("bob", Role.OPERATOR)
    assert jwt.get_unverified_header(new_token)["kid"] == key_id(OTHER_SECRET)  # mints new
    assert rotated.key_ids == (key_id(OTHER_SECRET), key_id(SECRET))
    with pytest.raises(InvalidToken, match="key this service does not know"):
        before.verify(new_token)  # a service not yet rotated refuses the new key's tokens


def test_once_the_previous_secret_is_dropped_its_tokens_are_refused() -> None:
    old_token = TokenAuthority(SECRET).issue("alice", Role.PLAYER)
    with pytest.raises(InvalidToken, match="rotated out"):
        TokenAuthority(OTHER_SECRET).verify(old_token)


def test_an_unknown_kid_is_refused_and_quoted_back_only_in_part(authority: TokenAuthority) -> None:
    token = signed(claims(), kid="k" * 5000)
    with pytest.raises(InvalidToken, match="unknown|not know") as refused:
        authority.verify(token)
    assert len(str(refused.value)) < 200


@pytest.mark.parametrize("previous", [SECRET, "x" * 31])
def test_a_previous_secret_equal_to_the_current_one_or_too_short_is_refused(previous: str) -> None:
    with pytest.raises(ConfigError):
        TokenAuthority(SECRET, previous_secret=previous)


def test_a_validly_signed_player_token_expiring_in_thirty_years_is_refused(
    authority: TokenAuthority,
) -> None:
    # repro 6 of issue 12: the token was accepted as long as its signer said
    now = int(time.time())
    token = signed(claims(iat=now, exp=now + THIRTY_YEARS))
    with pytest.raises(InvalidToken, match="longer than the 43200 s a player token may"):
        authority.verify(token)


@pytest.mark.parametrize(("role", "longest"), [("player", 43200), ("operator", 86400),
                                               ("service", 3600)])  # fmt: skip
def test_each_role_may_live_up_to_its_maximum_and_not_a_second_longer(
    authority: TokenAuthority, role: str, longest: int
) -> None:
    now = int(time.time())
    assert authority.verify(signed(claims(role=role, iat=now, exp=now + longest))).role == role
    with pytest.raises(InvalidToken, match=f"longer than the {longest} s a {role} token"):
        authority.verify(signed(claims(role=role, iat=now, exp=now + longest + 1)))


def test_a_token_issued_long_ago_for_too_long_is_refused_though_it_has_not_expired(
    authority: TokenAuthority,
) -> None:
    now = int(time.time())
    token = signed(claims(iat=now - 86400, exp=now + 3600))  # a 25-hour player token
    with pytest.raises(InvalidToken, match="longer than"):
        authority.verify(token)


def test_a_token_issued_in_the_future_is_refused(authority: TokenAuthority) -> None:
    now = int(time.time())
    with pytest.raises(InvalidToken):
        authority.verify(signed(claims(iat=now + 600, exp=now + 900)))


def test_configured_lifetimes_bound_what_is_issued_and_what_verifies() -> None:
    short = TokenAuthority(SECRET, max_lifetime_seconds={"player": 600})
    assert short.max_lifetime_seconds(Role.PLAYER) == 600
    assert short.max_lifetime_seconds(Role.OPERATOR) == 86400  # the others keep the default
    with pytest.raises(ValueError, match="at most 600 s"):
        short.issue("alice", Role.PLAYER, 601)
    now = int(time.time())
    with pytest.raises(InvalidToken, match="longer than the 600 s"):
        short.verify(signed(claims(iat=now, exp=now + 601)))
    payload = jwt.decode(short.issue("alice", Role.PLAYER), options={"verify_signature": False})
    assert payload["exp"] - payload["iat"] == 600  # the default ttl is cut to the maximum


def test_a_signed_token_with_claims_that_are_no_numbers_is_refused_not_a_crash(
    authority: TokenAuthority,
) -> None:
    for bad in ({"exp": float("inf")}, {"iat": "soon"}, {"exp": [1]}):
        with pytest.raises(InvalidToken):
            authority.verify(signed(claims(**bad)))


def test_a_player_token_edited_to_say_operator_is_refused(authority: TokenAuthority) -> None:
    header, payload, signature = authority.issue("alice", Role.PLAYER).split(".")
    decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    decoded["role"] = "operator"
    forged = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
    with pytest.raises(InvalidToken, match="signature"):
        authority.verify(f"{header}.{forged}.{signature}")


def test_an_unsigned_token_is_refused(authority: TokenAuthority) -> None:
    unsigned = jwt.encode(claims(role="operator"), key="", algorithm="none")
    with pytest.raises(InvalidToken):
        authority.verify(unsigned)


def test_a_correctly_signed_token_with_an_unknown_role_is_refused(
    authority: TokenAuthority,
) -> None:
    token = signed(claims(role="admin"))
    with pytest.raises(InvalidToken, match="unknown role 'admin'"):
        authority.verify(token)


@pytest.mark.parametrize("missing", ["sub", "role", "exp", "iat", "aud", "iss"])
def test_a_token_lacking_a_required_claim_is_refused(
    authority: TokenAuthority, missing: str
) -> None:
    token = signed(claims(**{missing: None}))
    with pytest.raises(InvalidToken, match=missing):
        authority.verify(token)


def test_a_token_for_another_audience_is_refused(authority: TokenAuthority) -> None:
    token = signed(claims(aud="someone-else"))
    with pytest.raises(InvalidToken, match="(?i)audience"):
        authority.verify(token)


def test_garbage_is_refused(authority: TokenAuthority) -> None:
    with pytest.raises(InvalidToken):
        authority.verify("not.a.jwt")


def test_a_secret_shorter_than_32_bytes_is_refused() -> None:
    with pytest.raises(ConfigError, match="32 bytes"):
        TokenAuthority("x" * 31)


@pytest.mark.parametrize(("account", "ttl"), [("", 60), ("alice", 0), ("alice", -5),
                                              ("alice", 43201)])  # fmt: skip
def test_issuing_needs_an_account_and_a_positive_ttl_within_the_roles_maximum(
    authority: TokenAuthority, account: str, ttl: int
) -> None:
    with pytest.raises(ValueError):
        authority.issue(account, Role.PLAYER, ttl)


def test_bearer_metadata_round_trips_through_bearer_token() -> None:
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
def test_metadata_without_exactly_one_bearer_token_is_refused(
    metadata: tuple[tuple[str, str], ...], message: str
) -> None:
    with pytest.raises(InvalidToken, match=message):
        bearer_token(metadata)


@pytest.mark.parametrize("account_id", ["p\x00x", "p" * 129], ids=["nul", "129-bytes"])
def test_a_signed_token_naming_an_account_id_no_request_may_carry_is_refused(
    authority: TokenAuthority, account_id: str
) -> None:
    # Such a subject reached PostgreSQL as an account id (INTERNAL on GetBalance) and the
    # events of the hands it plays; an account id is at most 128 bytes with no NUL everywhere.
    now = int(time.time())
    claims = {"sub": account_id, "role": "player", "iat": now, "exp": now + 60,
              "iss": ISSUER, "aud": AUDIENCE}  # fmt: skip
    token = jwt.encode(claims, SECRET, algorithm="HS256", headers={"kid": key_id(SECRET)})
    with pytest.raises(InvalidToken, match="account id"):
        authority.verify(token)
    with pytest.raises(ValueError, match="account id"):
        authority.issue(account_id, Role.PLAYER)
