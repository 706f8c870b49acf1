"""Rate limits of every RPC: a token bucket per account, and one per peer host for refused tokens.

Each authenticated call takes one token from its account's bucket (one bucket per role and
account id, sized by the role: ``RUMMY_RATE_LIMIT_PLAYER`` / ``_OPERATOR`` / ``_SERVICE``); each
call whose token is refused takes one from its peer host's bucket
(``RUMMY_RATE_LIMIT_UNAUTHENTICATED``; a host's valid tokens are never slowed by its refused
ones). Sizes and the bot rates they were chosen against: docs/operations.md#rate-limits.
A call that finds its bucket empty ends RESOURCE_EXHAUSTED, the servicer never entered, with
the delay after which one call would pass in the status details as a ``google.rpc.RetryInfo``
(read it with :func:`retry_delay_seconds`). gRPC health and reflection are never limited. A long
response stream (``WatchTable``) costs one token when it opens.

Buckets are kept in memory per process; one a caller has not used long enough to refill is
forgotten when the table grows, so memory follows the callers active within a burst's refill.
``rummy_grpc_rate_limited_total{who}`` counts refused calls (``who`` is the role, or
``unauthenticated``); the first refusal after a call passed is logged at INFO.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Never

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from prometheus_client import REGISTRY, CollectorRegistry, Counter

from rummy_platform.auth import PUBLIC_SERVICES, current_principal
from rummy_platform.config import RATE_LIMITED, BucketSpec, rate_limit_variable
from rummy_platform.logging import get_logger
from rummy_platform.rpc_scope import CallContext, ScopeInterceptor, split_method

_log = get_logger(__name__)

#: The bucket table is swept of full (idle) buckets when it grows past this many, then past
#: twice what the sweep left.
SWEEP_AT_LEAST = 4096


@dataclass
class _Bucket:
    tokens: float
    updated: float
    refusing: bool = False


class RateLimiter:
    """Token buckets of one size, one per key; thread-safe.

    ``clock`` gives seconds (monotonic; default :func:`time.monotonic`).
    """

    def __init__(self, spec: BucketSpec, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.spec = spec
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()
        self._sweep_at = SWEEP_AT_LEAST

    def take(self, key: str) -> tuple[float, bool]:
        """Take one call from ``key``'s bucket: ``(0.0, False)`` when it passes, otherwise
        ``(seconds until one call would pass, whether this is the first refusal since a call
        of ``key`` passed)``."""
        rate, burst = self.spec.rate_per_second, self.spec.burst
        with self._lock:
            now = self._clock()
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= self._sweep_at:
                    self._sweep(now)
                bucket = self._buckets[key] = _Bucket(float(burst), now)
            else:
                bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * rate)
                bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                bucket.refusing = False
                return 0.0, False
            first = not bucket.refusing
            bucket.refusing = True
            return (1.0 - bucket.tokens) / rate, first

    def __len__(self) -> int:
        return len(self._buckets)

    def _sweep(self, now: float) -> None:
        rate, burst = self.spec.rate_per_second, self.spec.burst
        idle = [
            key
            for key, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.updated) * rate >= burst
        ]
        for key in idle:
            del self._buckets[key]
        self._sweep_at = max(SWEEP_AT_LEAST, 2 * len(self._buckets))


@functools.cache
def rate_limited_counter(registry: CollectorRegistry = REGISTRY) -> Counter:
    """``rummy_grpc_rate_limited_total{who}`` of ``registry``, created on first use."""
    return Counter(
        "rummy_grpc_rate_limited",
        "gRPC calls refused RESOURCE_EXHAUSTED by a rate limit, by kind of caller.",
        ["who"],
        registry=registry,
    )


class RateLimits:
    """The limiters of one server, from ``Settings.rate_limits`` (a role or
    ``unauthenticated`` -> its bucket, None or absent = unlimited).

    Install :meth:`interceptor` right after the auth interceptor (it reads the principal), and
    pass :meth:`refuse_unauthenticated` as the auth interceptor's ``on_refused``.
    """

    def __init__(
        self,
        limits: Mapping[str, BucketSpec | None],
        *,
        registry: CollectorRegistry = REGISTRY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limiters = {
            who: RateLimiter(spec, clock=clock) for who, spec in limits.items() if spec is not None
        }
        self._refused = rate_limited_counter(registry)
        for who in RATE_LIMITED:  # exported at 0 from the start, so a rate() has a series
            self._refused.labels(who)

    def interceptor(self) -> ScopeInterceptor:
        """The interceptor that charges each authenticated call to its account."""
        return ScopeInterceptor(self._account_scope)

    @contextmanager
    def _account_scope(self, method: str, context: CallContext) -> Iterator[None]:
        if split_method(method)[0] not in PUBLIC_SERVICES:
            principal = current_principal()
            who, account = principal.role.value, principal.account_id
            self._charge(context, who, f"{who}:{account}", f"account {account!r} ({who})")
        yield

    def refuse_unauthenticated(self, context: CallContext) -> None:
        """Charge a call whose token was refused to its peer host; end it RESOURCE_EXHAUSTED
        when that host's bucket is empty (otherwise return, and it ends UNAUTHENTICATED)."""
        host = peer_host(context.peer())
        self._charge(context, "unauthenticated", host, f"peer {host} (calls with a refused token)")

    def _charge(self, context: CallContext, who: str, key: str, caller: str) -> None:
        limiter = self._limiters.get(who)
        if limiter is None:
            return
        wait, first = limiter.take(key)
        if not wait:
            return
        self._refused.labels(who).inc()
        if first:
            _log.info("rate limit reached", caller=caller, limit=str(limiter.spec))
        abort_resource_exhausted(
            context,
            f"rate limit: {caller} may make {limiter.spec} "
            f"({rate_limit_variable(who)}); retry in {wait:.3f} s",
            wait,
        )


def abort_resource_exhausted(
    context: CallContext, message: str, retry_after_seconds: float
) -> Never:
    """End the call RESOURCE_EXHAUSTED with ``message`` and a ``google.rpc.RetryInfo`` detail
    of ``retry_after_seconds`` (rounded up to the millisecond). Raises, like ``abort``."""
    delay = duration_pb2.Duration()
    delay.FromMilliseconds(max(1, math.ceil(retry_after_seconds * 1000)))
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=message, details=[detail])
    context.abort_with_status(rpc_status.to_status(status))


def retry_delay_seconds(error: grpc.RpcError) -> float | None:
    """The retry delay a RESOURCE_EXHAUSTED answer carries (seconds), or None if it has none."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]  # a channel's RpcError is its Call
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.ToTimedelta().total_seconds())
    return None


def peer_host(peer: str) -> str:
    """The host part of a gRPC peer string: ``ipv4:127.0.0.1:50123`` -> ``ipv4:127.0.0.1``,
    ``ipv6:[::1]:50123`` -> ``ipv6:[::1]`` (a peer without a port is itself)."""
    host, colon, port = peer.rpartition(":")
    return host if colon and port.isdigit() and host not in ("ipv4", "ipv6") else peer
