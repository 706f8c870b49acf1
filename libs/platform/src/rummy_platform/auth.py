"""Identity: EdDSA bearer tokens, the three roles, the server interceptor and client helpers.

A token is a JWT signed with an Ed25519 private key (EdDSA, RFC 8037) carrying ``sub`` (the
account id), ``role`` (``player``/``operator``/``service``), ``iat``, ``exp`` and the fixed
``iss``/``aud`` below, and a ``kid`` header naming the key pair that signed it
(:func:`rummy_platform.token_keys.key_id`). Services hold only public keys
(:mod:`rummy_platform.token_keys`): the issuer's (``RUMMY_TOKEN_PUBLIC_KEYS_FILE``, any role)
and the services' (``RUMMY_SERVICE_TOKEN_PUBLIC_KEYS_FILE``, service-role tokens only); the
issuer's private key is ``rummy token``'s alone. A file may list several public keys, so a key
can be rotated without downtime (docs/operations.md, "Rotating the token keys"). Any other
algorithm (HS256, even keyed with a public key's bytes, or ``none``), an unknown ``kid`` or a
bad signature is refused. Whatever its ``exp`` says, a token may live no longer than its role's
maximum (``RUMMY_<ROLE>_TOKEN_MAX_SECONDS``): a player token hours, an operator token a day.
Every RPC except gRPC health and reflection must carry ``authorization: Bearer <token>``
metadata; the verified :class:`Principal` is then available to the servicer through
:func:`current_principal` or :func:`require_role`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import grpc
import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from rummy_platform.config import (
    DEFAULT_TOKEN_MAX_LIFETIME_SECONDS,
    PUBLIC_KEYS_VARIABLE,
    SERVICE_KEY_VARIABLE,
    SERVICE_PUBLIC_KEYS_VARIABLE,
    SIGNING_KEY_VARIABLE,
    ConfigError,
    Settings,
    token_max_lifetime_variable,
)
from rummy_platform.limits import MAX_ACCOUNT_ID_BYTES
from rummy_platform.logging import log_context
from rummy_platform.rpc_scope import CallContext, ScopeInterceptor, split_method
from rummy_platform.tls import certificate_service
from rummy_platform.token_keys import KeyFiles, key_id, read_public_keys, read_signing_key

ISSUER = "rummy"
AUDIENCE = "rummy-backend"
#: The only algorithm signed or accepted (Ed25519 signatures).
ALGORITHM = "EdDSA"
#: Default lifetime of a minted token, in seconds (shorter when the role's maximum is).
DEFAULT_TTL_SECONDS = 3600
#: Characters of a caller-made value (a ``kid``, a role) quoted back in an error message.
_QUOTED_CHARS = 32

#: Services any caller may use without a token (health checks and ``grpcurl``'s reflection).
PUBLIC_SERVICES = frozenset(
    {
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    }
)

AUTHORIZATION_KEY = "authorization"
_BEARER = "bearer "


class Role(StrEnum):
    """What a token lets its holder do (``docs/rules/promises.md#identity``)."""

    PLAYER = "player"  # acts and reads only for its own account and seat
    OPERATOR = "operator"  # opens tables, grants tokens, replays
    SERVICE = "service"  # internal calls; the only role that may read an unrevealed server seed


@dataclass(frozen=True)
class Principal:
    """The verified caller of an RPC."""

    account_id: str
    role: Role


class InvalidToken(Exception):
    """A token that is malformed, wrongly signed, expired or names no valid role/account.

    The message says which, in words fit to return to the caller.
    """


def account_id_problem(account_id: str) -> str:
    """Why ``account_id`` cannot name an account ("" when it can): longer than
    :data:`~rummy_platform.limits.MAX_ACCOUNT_ID_BYTES` in UTF-8, or holding a NUL character
    (the bounds every request's ``account_id`` is held to, so a token's subject is one too)."""
    size = len(account_id.encode())
    if size > MAX_ACCOUNT_ID_BYTES:
        return f"account id is {size} bytes long; at most {MAX_ACCOUNT_ID_BYTES} are allowed"
    if "\x00" in account_id:
        return "account id contains a NUL character (U+0000)"
    return ""


#: The most accepted tokens a :class:`TokenAuthority` remembers (then it starts afresh).
_ACCEPTED_MAX = 20_000


class TokenAuthority:
    """Verifies tokens with public keys picked by the token's ``kid`` header, within each
    role's longest lifetime; mints tokens when given a private key.

    ``public_keys`` (kid → key) verify a token of any role (the issuer's);
    ``service_public_keys`` verify service-role tokens only (the keys of the services that call
    others). ``signing_key`` signs :meth:`issue`'s tokens; ``signing_roles`` limits the roles it
    may sign (a service's key: only ``service``). ``max_lifetime_seconds`` maps a role value to
    seconds (default :data:`~rummy_platform.config.DEFAULT_TOKEN_MAX_LIFETIME_SECONDS`; a role it
    leaves out keeps its default). Raises :class:`~rummy_platform.config.ConfigError` if a key
    is both the issuer's and a service's (the services need a key pair of their own).
    """

    def __init__(
        self,
        public_keys: Mapping[str, Ed25519PublicKey] | None = None,
        *,
        service_public_keys: Mapping[str, Ed25519PublicKey] | None = None,
        signing_key: Ed25519PrivateKey | None = None,
        signing_roles: frozenset[Role] | None = None,
        max_lifetime_seconds: Mapping[str, int] | None = None,
    ) -> None:
        every_role, service_only = frozenset(Role), frozenset({Role.SERVICE})
        self._keys: dict[str, tuple[Ed25519PublicKey, frozenset[Role]]] = {
            kid: (key, every_role) for kid, key in (public_keys or {}).items()
        }
        for kid, key in (service_public_keys or {}).items():
            if kid in self._keys:
                raise ConfigError(
                    f"key {kid} is both an issuer's and a service's public key: give the "
                    "services a key pair of their own"
                )
            self._keys[kid] = (key, service_only)
        self._signing_key = signing_key
        self._signing_roles = every_role if signing_roles is None else signing_roles
        self.key_id = "" if signing_key is None else key_id(signing_key.public_key())
        lifetimes = {**DEFAULT_TOKEN_MAX_LIFETIME_SECONDS, **(max_lifetime_seconds or {})}
        self._max_lifetime = {role: int(lifetimes[role.value]) for role in Role}
        #: Tokens this authority accepted: token -> (principal, iat, exp). Its keys and
        #: lifetimes never change, so a token accepted once is accepted again until its exp
        #: (checked on every use, with the lifetime); only the signature and the claims'
        #: decoding are skipped (one EdDSA verify per new token, not one per RPC).
        self._accepted: dict[str, tuple[Principal, int, int]] = {}

    @classmethod
    def from_settings(
        cls, settings: Settings, *, service_key_file: Path | None = None
    ) -> TokenAuthority:
        """The authority of a service process: its public keys and lifetimes from
        ``settings``; with ``service_key_file`` (the services' private key) it also mints
        service-role tokens. Raises ConfigError if a file cannot be read."""
        service_keys = settings.service_token_public_keys_file
        return cls(
            read_public_keys(settings.token_public_keys_file, PUBLIC_KEYS_VARIABLE),
            service_public_keys=(
                None
                if service_keys is None
                else read_public_keys(service_keys, SERVICE_PUBLIC_KEYS_VARIABLE)
            ),
            signing_key=(
                None
                if service_key_file is None
                else read_signing_key(service_key_file, SERVICE_KEY_VARIABLE)
            ),
            signing_roles=frozenset({Role.SERVICE}),
            max_lifetime_seconds=settings.token_max_lifetime_seconds,
        )

    @classmethod
    def of_issuer(
        cls, files: KeyFiles, *, max_lifetime_seconds: Mapping[str, int] | None = None
    ) -> TokenAuthority:
        """The issuer of a key set (``rummy token``, the demo, the tests' minting helper):
        mints tokens of any role with the issuer's private key and verifies them as a service
        does. Raises ConfigError if a file cannot be read."""
        return cls(
            read_public_keys(files.issuer_public_keys, PUBLIC_KEYS_VARIABLE),
            service_public_keys=read_public_keys(
                files.service_public_keys, SERVICE_PUBLIC_KEYS_VARIABLE
            ),
            signing_key=read_signing_key(files.issuer_key, SIGNING_KEY_VARIABLE),
            max_lifetime_seconds=max_lifetime_seconds,
        )

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The ``kid`` of every key that verifies: the issuer's (newest first), then the
        services'."""
        return tuple(self._keys)

    def max_lifetime_seconds(self, role: Role | str) -> int:
        """The longest a token of ``role`` may live, in seconds."""
        return self._max_lifetime[Role(role)]

    def issue(
        self,
        account_id: str,
        role: Role | str,
        ttl_seconds: int | None = None,
        *,
        now: float | None = None,
    ) -> str:
        """Return a token for ``account_id`` in ``role`` signed with the signing key (its
        ``kid`` in the header), valid ``ttl_seconds`` seconds from ``now`` (Unix seconds;
        default: the current time). The default ttl is :data:`DEFAULT_TTL_SECONDS`, or the
        role's maximum lifetime when that is shorter.

        Raises RuntimeError if this authority has no signing key, PermissionError if its key may
        not sign ``role``; ValueError for an empty account id or one no request may carry (see
        :func:`account_id_problem`), an unknown role, a non-positive ttl or one longer than the
        role's maximum lifetime.
        """
        if not account_id:
            raise ValueError("account id must not be empty")
        problem = account_id_problem(account_id)
        if problem:
            raise ValueError(problem)
        role = Role(role)
        if self._signing_key is None:
            raise RuntimeError("this token authority holds no private key: it only verifies")
        if role not in self._signing_roles:
            raise PermissionError(f"this key may not sign {role.value} tokens")
        longest = self._max_lifetime[role]
        ttl = min(DEFAULT_TTL_SECONDS, longest) if ttl_seconds is None else ttl_seconds
        if ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl}")
        if ttl > longest:
            raise ValueError(
                f"{'an' if role.value[0] in 'aeiou' else 'a'} {role.value} token may live at most "
                f"{longest} s "
                f"({token_max_lifetime_variable(role.value)}); asked for {ttl} s"
            )
        issued_at = int(time.time() if now is None else now)
        claims = {
            "sub": account_id,
            "role": role.value,
            "iat": issued_at,
            "exp": issued_at + ttl,
            "iss": ISSUER,
            "aud": AUDIENCE,
        }
        return jwt.encode(
            claims, self._signing_key, algorithm=ALGORITHM, headers={"kid": self.key_id}
        )

    def verify(self, token: str) -> Principal:
        """Return the principal a token names; raise :class:`InvalidToken` saying why not
        (malformed, an algorithm other than EdDSA, no or an unknown ``kid``, wrong signature, a
        service's key signing another role, expired, a missing claim, an
        unknown role, or a lifetime longer than its role's maximum)."""
        accepted = self._accepted.get(token)
        if accepted is not None:
            principal, issued_at, expires_at = accepted
            if time.time() < expires_at:  # PyJWT: expired once exp <= now
                self._check_lifetime(principal.role, issued_at, expires_at)
                return principal
            self._accepted.pop(token, None)  # and the full check below says why not
        key, roles = self._key_of(token)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[ALGORITHM],
                audience=AUDIENCE,
                issuer=ISSUER,
                options={"require": ["sub", "role", "iat", "exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("token has expired") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("token signature is invalid") from None
        except jwt.MissingRequiredClaimError as error:
            raise InvalidToken(f"token lacks the {error.claim!r} claim") from None
        except jwt.InvalidTokenError as error:
            raise InvalidToken(f"token is invalid: {error}") from None
        except (ValueError, TypeError, OverflowError):  # e.g. an exp of Infinity
            raise InvalidToken("token is invalid: a claim is not a number it can be") from None
        account_id, role = claims["sub"], claims["role"]
        if not isinstance(account_id, str) or not account_id:
            raise InvalidToken("token names no account")
        problem = account_id_problem(account_id)
        if problem:
            raise InvalidToken(f"token's subject: {problem}")
        try:
            principal = Principal(account_id=account_id, role=Role(role))
        except ValueError:
            raise InvalidToken(f"token has unknown role {str(role)[:_QUOTED_CHARS]!r}") from None
        if principal.role not in roles:
            raise InvalidToken(
                f"token's key (a service's) may sign only service-role tokens, not "
                f"{principal.role.value} ones"
            )
        issued_at, expires_at = int(claims["iat"]), int(claims["exp"])
        self._check_lifetime(principal.role, issued_at, expires_at)
        if len(self._accepted) >= _ACCEPTED_MAX:
            self._accepted.clear()  # bounded: the busy tokens come back at their next call
        self._accepted[token] = (principal, issued_at, expires_at)
        return principal

    def _key_of(self, token: str) -> tuple[Ed25519PublicKey, frozenset[Role]]:
        """The public key the token's ``kid`` header names, and the roles it may sign; refuses
        a token whose ``alg`` header is not EdDSA before any key is used (so an HS256 token
        keyed with a public key's bytes, or an unsigned one, never reaches a verifier)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as error:
            raise InvalidToken(f"token is invalid: {error}") from None
        algorithm = header.get("alg")
        if algorithm != ALGORITHM:
            raise InvalidToken(
                f"token is signed with {str(algorithm)[:_QUOTED_CHARS]!r}; only {ALGORITHM} "
                "tokens are accepted: get a new token"
            )
        kid = header.get("kid")
        if kid is None:
            raise InvalidToken("token has no 'kid' header naming the key that signed it")
        entry = self._keys.get(kid) if isinstance(kid, str) else None
        if entry is None:
            raise InvalidToken(
                f"token is signed with a key this service does not know "
                f"(kid {str(kid)[:_QUOTED_CHARS]!r}): it may have been rotated out; get a new token"
            )
        return entry

    def _check_lifetime(self, role: Role, issued_at: int, expires_at: int) -> None:
        """Refuse a token whose lifetime (``exp`` − ``iat``, or ``exp`` − now when ``iat`` is
        in the future) is longer than ``role`` may have, whatever ``exp`` says."""
        now = time.time()
        start = issued_at if issued_at <= now else now
        lifetime = expires_at - start
        longest = self._max_lifetime[role]
        if lifetime > longest:
            raise InvalidToken(
                f"token lives {lifetime:.0f} s (exp - iat), longer than the {longest} s a "
                f"{role.value} token may: get a new token"
            )


# -- server side ---------------------------------------------------------------------------

_principal: ContextVar[Principal | None] = ContextVar("rummy_principal", default=None)


def current_principal() -> Principal:
    """The verified caller of the RPC being handled in this thread.

    Raises RuntimeError outside an authenticated RPC (a programming error, not a client one).
    """
    principal = _principal.get()
    if principal is None:
        raise RuntimeError("no authenticated principal: not inside an authenticated RPC")
    return principal


@contextmanager
def acting_as(principal: Principal) -> Iterator[None]:
    """Run the block with ``principal`` as :func:`current_principal`, as the authenticating
    interceptor runs a verified call: for a caller that reaches a servicer in its own process,
    without gRPC and its token (the simulator, ``rummy_sim``)."""
    token = _principal.set(principal)
    try:
        yield
    finally:
        _principal.reset(token)


def require_role(context: grpc.ServicerContext, *roles: Role) -> Principal:
    """Return the caller if its role is one of ``roles``; otherwise end the RPC with
    PERMISSION_DENIED (``context.abort`` raises, so nothing after this call runs)."""
    principal = current_principal()
    if principal.role not in roles:
        allowed = " or ".join(role.value for role in roles)
        context.abort(
            grpc.StatusCode.PERMISSION_DENIED,
            f"this call needs the {allowed} role; the token's role is {principal.role.value}",
        )
    return principal


def bearer_token(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str:
    """The token of an ``authorization: Bearer <token>`` entry; raise :class:`InvalidToken`
    if there is none or it is not a bearer token."""
    values = [value for key, value in metadata or () if key.lower() == AUTHORIZATION_KEY]
    if not values:
        raise InvalidToken("missing 'authorization: Bearer <token>' metadata")
    if len(values) > 1:
        raise InvalidToken("more than one authorization metadata entry")
    value = values[0] if isinstance(values[0], str) else values[0].decode("ascii", "replace")
    if not value.lower().startswith(_BEARER) or not value[len(_BEARER) :].strip():
        raise InvalidToken("authorization metadata must be 'Bearer <token>'")
    return value[len(_BEARER) :].strip()


class AuthInterceptor(ScopeInterceptor):
    """Verifies the bearer token of every RPC outside :data:`PUBLIC_SERVICES`.

    A missing, malformed, wrongly signed or expired token ends the call UNAUTHENTICATED with a
    message saying which; otherwise the servicer runs with :func:`current_principal` set.
    ``on_refused(context)`` runs first for a refused token, and may end the call itself (the
    rate limit of refused calls, :mod:`rummy_platform.rate_limit`).

    With ``tls`` (the server serves mutual TLS), the service role is taken from the client
    certificate, not from a token alone: a service token on a call whose verified certificate
    names no service (:func:`rummy_platform.tls.certificate_service`) ends PERMISSION_DENIED.
    """

    def __init__(
        self,
        authority: TokenAuthority,
        *,
        on_refused: Callable[[CallContext], None] | None = None,
        tls: bool = False,
    ) -> None:
        self._authority = authority
        self._on_refused = on_refused
        self._tls = tls
        super().__init__(self._scope)

    @contextmanager
    def _scope(self, method: str, context: CallContext) -> Iterator[None]:
        if split_method(method)[0] in PUBLIC_SERVICES:
            yield
            return
        try:
            principal = self._authority.verify(bearer_token(context.invocation_metadata()))
        except InvalidToken as error:
            if self._on_refused is not None:
                self._on_refused(context)
            context.abort(grpc.StatusCode.UNAUTHENTICATED, str(error))
        if (
            self._tls
            and principal.role is Role.SERVICE
            and certificate_service(context.auth_context()) is None
        ):
            context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "the service role needs a service's client certificate (mutual TLS); this "
                "call's certificate names no service",
            )
        with (
            acting_as(principal),
            log_context(account_id=principal.account_id, role=principal.role.value),
        ):
            yield


# -- client side ---------------------------------------------------------------------------


def bearer_metadata(token: str) -> tuple[tuple[str, str]]:
    """Per-call metadata carrying ``token``: ``stub.Method(request, metadata=...)``."""
    return ((AUTHORIZATION_KEY, f"Bearer {token}"),)


@dataclass
class _CallDetails(grpc.ClientCallDetails):
    """A call's details with other metadata (gRPC's interceptors read them by attribute)."""

    method: str
    timeout: float | None
    metadata: tuple[tuple[str, str | bytes], ...] | None
    credentials: grpc.CallCredentials | None
    wait_for_ready: bool | None
    compression: grpc.Compression | None


class BearerTokenClientInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds ``authorization: Bearer <token>`` to every call on a channel (works on insecure
    channels, unlike call credentials). ``token`` may be a string or a function returning the
    current one, so a caller can refresh it."""

    def __init__(self, token: str | Callable[[], str]) -> None:
        self._token = token if callable(token) else (lambda: token)

    def _with_token(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        metadata = [
            (key, value)
            for key, value in (details.metadata or ())
            if key.lower() != AUTHORIZATION_KEY
        ]
        metadata.extend(bearer_metadata(self._token()))
        return _CallDetails(
            details.method,
            details.timeout,
            tuple(metadata),
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)

    def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(self._with_token(details), requests)

    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(self._with_token(details), requests)


def authorized_channel(channel: grpc.Channel, token: str | Callable[[], str]) -> grpc.Channel:
    """Wrap ``channel`` so every call on it carries ``token``:
    ``stub = TableServiceStub(authorized_channel(open_channel(target), token))``
    (:func:`rummy_platform.limits.open_channel` sets the message size limits)."""
    return grpc.intercept_channel(channel, BearerTokenClientInterceptor(token))
