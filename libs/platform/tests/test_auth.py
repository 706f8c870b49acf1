"""Bearer tokens: what verifies, and each way a token is refused (another algorithm, a wrong
key, a rotated-out key, a service's key signing a player's token, a lifetime longer than the
role may have, ...)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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
from rummy_platform.token_keys import (
    ensure_key_files,
    key_id,
    public_pem,
    read_public_keys,
    read_signing_key,
    rotate_key,
)
from rummy_testing.token_keys import hs256_token

KEY = Ed25519PrivateKey.generate()
OTHER_KEY = Ed25519PrivateKey.generate()
SERVICE_KEY = Ed25519PrivateKey.generate()
THIRTY_YEARS = 30 * 365 * 24 * 3600


def kid(key: Ed25519PrivateKey) -> str:
    return key_id(key.public_key())


def verifier(*keys: Ed25519PrivateKey, **options: Any) -> TokenAuthority:
    """An authority verifying with the public keys of ``keys`` and signing with the first."""
    return TokenAuthority(
        {kid(key): key.public_key() for key in keys},
        service_public_keys={kid(SERVICE_KEY): SERVICE_KEY.public_key()},
        signing_key=keys[0],
        **options,
    )


@pytest.fixture
def authority() -> TokenAuthority:
    return verifier(KEY)


def claims(**overrides: object) -> dict[str, object]:
    now = int(time.time())
    base = {"sub": "alice", "role": "player", "iat": now, "exp": now + 60, "iss": ISSUER,
            "aud": AUDIENCE}  # fmt: skip
    base.update(overrides)
    return {key: value for key, value in base.items() if value is not None}


def signed(
    payload: dict[str, object], key: Ed25519PrivateKey = KEY, kid_header: str | None = None
) -> str:
    """``payload`` signed (EdDSA) with ``key`` under its ``kid`` (or the one given)."""
    return jwt.encode(payload, key, algorithm="EdDSA", headers={"kid": kid_header or kid(key)})


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


def test_an_issued_token_is_an_eddsa_jwt() -> None:
    assert jwt.get_unverified_header(verifier(KEY).issue("alice", Role.PLAYER))["alg"] == "EdDSA"


def test_a_token_signed_with_an_unknown_key_is_refused_as_an_unknown_key(
    authority: TokenAuthority,
) -> None:
    token = verifier(OTHER_KEY).issue("alice", Role.OPERATOR)
    with pytest.raises(InvalidToken, match="key this service does not know"):
        authority.verify(token)


def test_a_token_naming_this_services_key_but_signed_with_another_key_is_refused(
    authority: TokenAuthority,
) -> None:
    token = signed(claims(role="operator"), OTHER_KEY, kid_header=kid(KEY))
    with pytest.raises(InvalidToken, match="signature"):
        authority.verify(token)


def test_a_token_without_a_kid_header_is_refused_even_when_signed_with_the_key(
    authority: TokenAuthority,
) -> None:
    token = jwt.encode(claims(), KEY, algorithm="EdDSA")
    with pytest.raises(InvalidToken, match="no 'kid' header"):
        authority.verify(token)


def test_an_issued_token_names_the_signing_key_in_its_kid_header(
    authority: TokenAuthority,
) -> None:
    assert jwt.get_unverified_header(authority.issue("alice", Role.PLAYER))["kid"] == kid(KEY)
    assert kid(KEY) != kid(OTHER_KEY) and len(kid(KEY)) == 16


# -- the algorithm: EdDSA only --------------------------------------------------------------


def test_an_hs256_token_is_refused_whatever_its_secret(authority: TokenAuthority) -> None:
    token = jwt.encode(claims(role="operator"), "s" * 64, algorithm="HS256",
                       headers={"kid": kid(KEY)})  # fmt: skip
    with pytest.raises(InvalidToken, match="only EdDSA tokens are accepted"):
        authority.verify(token)


@pytest.mark.parametrize("encoding", ["pem", "raw"])
def test_an_hs256_token_keyed_with_the_public_key_is_refused(
    authority: TokenAuthority, encoding: str
) -> None:
    # The alg-confusion attack: the public key is public, so an HMAC "signed" with its bytes
    # would verify as the issuer's if the verifier let the token choose the algorithm.
    public = KEY.public_key()
    secret = (
        public_pem(KEY)
        if encoding == "pem"
        else public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    token = hs256_token(claims(role="operator"), secret, {"kid": kid(KEY)})
    with pytest.raises(InvalidToken, match="'HS256'; only EdDSA"):
        authority.verify(token)


def test_an_unsigned_token_naming_a_known_key_is_refused(authority: TokenAuthority) -> None:
    unsigned = jwt.encode(claims(role="operator"), "", algorithm="none",
                          headers={"kid": kid(KEY)})  # fmt: skip
    with pytest.raises(InvalidToken, match="'none'; only EdDSA"):
        authority.verify(unsigned)


def test_a_token_of_another_asymmetric_algorithm_is_refused(authority: TokenAuthority) -> None:
    token = jwt.encode(claims(), ec.generate_private_key(ec.SECP256R1()), algorithm="ES256",
                       headers={"kid": kid(KEY)})  # fmt: skip
    with pytest.raises(InvalidToken, match="'ES256'"):
        authority.verify(token)


# -- whose key: the issuer's signs any role, a service's only service tokens ------------------


def test_a_services_key_signs_service_tokens_that_verify() -> None:
    service = TokenAuthority(signing_key=SERVICE_KEY, signing_roles=frozenset({Role.SERVICE}))
    token = service.issue("dealer", Role.SERVICE, 60)
    assert verifier(KEY).verify(token) == Principal("dealer", Role.SERVICE)
    with pytest.raises(PermissionError):
        service.issue("dealer", Role.OPERATOR, 60)


@pytest.mark.parametrize("role", ["player", "operator"])
def test_a_player_or_operator_token_signed_with_a_services_key_is_refused(
    authority: TokenAuthority, role: str
) -> None:
    # What a taken-over dealer or table could sign: never more than a service's token.
    with pytest.raises(InvalidToken, match="may sign only service-role tokens"):
        authority.verify(signed(claims(role=role), SERVICE_KEY))


def test_one_key_both_the_issuers_and_a_services_is_refused() -> None:
    with pytest.raises(ConfigError, match="both"):
        TokenAuthority(
            {kid(KEY): KEY.public_key()}, service_public_keys={kid(KEY): KEY.public_key()}
        )


def test_an_authority_without_a_private_key_only_verifies() -> None:
    with pytest.raises(RuntimeError, match="no private key"):
        TokenAuthority({kid(KEY): KEY.public_key()}).issue("alice", Role.PLAYER)


# -- rotation: every listed key verifies, the newest signs ----------------------------------


def test_after_a_rotation_tokens_of_the_previous_and_the_new_key_both_verify() -> None:
    before = verifier(KEY)
    rotated = verifier(OTHER_KEY, KEY)  # the new key first, the old still listed
    old_token, new_token = before.issue("alice", Role.PLAYER), rotated.issue("bob", Role.OPERATOR)
    assert rotated.verify(old_token) == Principal("alice", Role.PLAYER)
    assert rotated.verify(new_token) == Principal("bob", Role.OPERATOR)
    assert jwt.get_unverified_header(new_token)["kid"] == kid(OTHER_KEY)  # mints new
    assert rotated.key_ids == (kid(OTHER_KEY), kid(KEY), kid(SERVICE_KEY))
    with pytest.raises(InvalidToken, match="key this service does not know"):
        before.verify(new_token)  # a service not yet rotated refuses the new key's tokens


def test_once_the_previous_key_is_dropped_its_tokens_are_refused() -> None:
    old_token = verifier(KEY).issue("alice", Role.PLAYER)
    with pytest.raises(InvalidToken, match="rotated out"):
        verifier(OTHER_KEY).verify(old_token)


def test_rotating_a_key_file_keeps_the_previous_public_key_listed_after_the_new(
    tmp_path: Path,
) -> None:
    files = ensure_key_files(tmp_path / "keys")
    first = read_signing_key(files.issuer_key, "issuer key")
    new_kid = rotate_key(files.issuer_key, files.issuer_public_keys)
    second = read_signing_key(files.issuer_key, "issuer key")
    listed = read_public_keys(files.issuer_public_keys, "issuer keys")
    assert list(listed) == [new_kid, kid(first)] and new_kid == kid(second)
    assert files.issuer_key.stat().st_mode & 0o777 == 0o600
    rotate_key(files.issuer_key, files.issuer_public_keys)  # keeps two: the first drops out
    assert kid(first) not in read_public_keys(files.issuer_public_keys, "issuer keys")
    old = TokenAuthority(signing_key=first).issue("alice", Role.PLAYER)
    with pytest.raises(InvalidToken, match="rotated out"):
        TokenAuthority.of_issuer(files).verify(old)


def test_a_key_file_that_is_missing_or_holds_no_ed25519_key_is_a_config_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="RUMMY_X: cannot read"):
        read_public_keys(tmp_path / "absent.pem", "RUMMY_X")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key\n")
    with pytest.raises(ConfigError, match="holds no PEM public key"):
        read_public_keys(garbage, "RUMMY_X")
    with pytest.raises(ConfigError, match="no unencrypted PEM private key"):
        read_signing_key(garbage, "RUMMY_X")


def test_an_unknown_kid_is_refused_and_quoted_back_only_in_part(authority: TokenAuthority) -> None:
    token = signed(claims(), kid_header="k" * 5000)
    with pytest.raises(InvalidToken, match="unknown|not know") as refused:
        authority.verify(token)
    assert len(str(refused.value)) < 200


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
    short = verifier(KEY, max_lifetime_seconds={"player": 600})
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
    token = jwt.encode(claims, KEY, algorithm="EdDSA", headers={"kid": kid(KEY)})
    with pytest.raises(InvalidToken, match="account id"):
        authority.verify(token)
    with pytest.raises(ValueError, match="account id"):
        authority.issue(account_id, Role.PLAYER)
