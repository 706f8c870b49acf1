"""Identity: HS256 bearer tokens, the three roles, the server interceptor and client helpers.

A token is a JWT signed with the shared secret (``RUMMY_JWT_SECRET``) carrying ``sub`` (the
account id), ``role`` (``player``/``operator``/``service``), ``iat``, ``exp`` and the fixed
``iss``/``aud`` below. Every RPC except gRPC health and reflection must carry
``authorization: Bearer <token>`` metadata; the verified :class:`Principal` is then available
to the servicer through :func:`current_principal` or :func:`require_role`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

import grpc
import jwt
from structlog.contextvars import bound_contextvars

from rummy_platform.config import MIN_JWT_SECRET_BYTES, ConfigError
from rummy_platform.rpc_scope import ScopeInterceptor, split_method

ISSUER = "rummy"
AUDIENCE = "rummy-backend"
ALGORITHM = "HS256"
#: Default lifetime of a minted token, in seconds.
DEFAULT_TTL_SECONDS = 3600

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


class TokenAuthority:
    """Mints and verifies tokens with one shared HS256 secret.

    Raises :class:`~rummy_platform.config.ConfigError` if the secret is shorter than
    ``MIN_JWT_SECRET_BYTES`` bytes.
    """

    def __init__(self, secret: str) -> None:
        if len(secret.encode()) < MIN_JWT_SECRET_BYTES:
            raise ConfigError(
                f"the token secret must be at least {MIN_JWT_SECRET_BYTES} bytes long"
            )
        self._secret = secret

    def issue(
        self,
        account_id: str,
        role: Role | str,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        *,
        now: float | None = None,
    ) -> str:
        """Return a signed token for ``account_id`` in ``role``, valid ``ttl_seconds`` seconds
        from ``now`` (Unix seconds; default: the current time).

        Raises ValueError for an empty account id, an unknown role or a non-positive ttl.
        """
        if not account_id:
            raise ValueError("account id must not be empty")
        if ttl_seconds <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl_seconds}")
        issued_at = int(time.time() if now is None else now)
        claims = {
            "sub": account_id,
            "role": Role(role).value,
            "iat": issued_at,
            "exp": issued_at + ttl_seconds,
            "iss": ISSUER,
            "aud": AUDIENCE,
        }
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def verify(self, token: str) -> Principal:
        """Return the principal a token names; raise :class:`InvalidToken` saying why not."""
        try:
            claims = jwt.decode(
                token,
                self._secret,
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
        account_id, role = claims["sub"], claims["role"]
        if not isinstance(account_id, str) or not account_id:
            raise InvalidToken("token names no account")
        try:
            return Principal(account_id=account_id, role=Role(role))
        except ValueError:
            raise InvalidToken(f"token has unknown role {role!r}") from None


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
    """

    def __init__(self, authority: TokenAuthority) -> None:
        self._authority = authority
        super().__init__(self._scope)

    @contextmanager
    def _scope(self, method: str, context: grpc.ServicerContext) -> Iterator[None]:
        if split_method(method)[0] in PUBLIC_SERVICES:
            yield
            return
        try:
            principal = self._authority.verify(bearer_token(context.invocation_metadata()))
        except InvalidToken as error:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, str(error))
        token = _principal.set(principal)
        try:
            with bound_contextvars(account_id=principal.account_id, role=principal.role.value):
                yield
        finally:
            _principal.reset(token)


# -- client side ---------------------------------------------------------------------------


def bearer_metadata(token: str) -> tuple[tuple[str, str]]:
    """Per-call metadata carrying ``token``: ``stub.Method(request, metadata=...)``."""
    return ((AUTHORIZATION_KEY, f"Bearer {token}"),)


class _CallDetails(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: bool | None
    compression: Any


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
            metadata,
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
    ``stub = TableServiceStub(authorized_channel(grpc.insecure_channel(target), token))``."""
    return grpc.intercept_channel(channel, BearerTokenClientInterceptor(token))
