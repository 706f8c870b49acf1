"""The token bucket of each kind of caller (``RUMMY_RATE_LIMIT_<WHO>``): calls a second and a
burst of calls, or ``off``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic_settings import NoDecode

from rummy_platform.config.base import setting
from rummy_platform.config.token_lifetimes import ROLES

#: Who has a rate limit: each role's accounts, and peer hosts whose token is refused.
RATE_LIMITED = (*ROLES, "unauthenticated")


@dataclass(frozen=True)
class BucketSpec:
    """A token bucket: ``burst`` calls at once, refilled at ``rate_per_second`` calls a second."""

    rate_per_second: float
    burst: int

    def __str__(self) -> str:
        return f"{self.rate_per_second:g} calls a second (bursts of {self.burst})"


#: The default bucket of each rate-limited kind of caller (docs/operations.md#rate-limits: a bot's
#: measured peak is far below the player bucket; ``None`` would mean unlimited).
DEFAULT_RATE_LIMITS: Mapping[str, BucketSpec | None] = {
    "player": BucketSpec(50.0, 200),
    "operator": BucketSpec(50.0, 500),
    "service": BucketSpec(500.0, 2000),
    "unauthenticated": BucketSpec(10.0, 100),
}


def parse_bucket(raw: str) -> BucketSpec | None:
    """``<calls per second>,<burst>`` (``20,100``) as a :class:`BucketSpec`, ``off`` as None.
    Raises ValueError for anything else."""
    raw = raw.strip().lower()
    if raw == "off":
        return None
    usage = "not '<calls per second>,<burst>' (e.g. '20,100') or 'off'"
    rate_text, comma, burst_text = raw.partition(",")
    if not comma:
        raise ValueError(usage)
    try:
        rate, burst = float(rate_text), int(burst_text)
    except ValueError:
        raise ValueError(usage) from None
    if not (0 < rate < float("inf")) or burst < 1:
        raise ValueError(f"{usage}: the rate must be positive and the burst at least 1")
    return BucketSpec(rate, burst)


def rate_limit_variable(who: str) -> str:
    """The variable that sets the token bucket of ``who`` (a role, or ``unauthenticated``)."""
    return f"RUMMY_RATE_LIMIT_{who.upper()}"


Bucket = Annotated[BucketSpec | None, NoDecode]


def rate_limit_setting(who: str, meaning: str) -> Any:
    spec = DEFAULT_RATE_LIMITS[who]
    shown = "off" if spec is None else f"{spec.rate_per_second:g},{spec.burst}"
    return setting(
        rate_limit_variable(who),
        spec,
        f"{meaning}: `<calls per second>,<burst>` or `off` "
        "(see [Rate limits](operations.md#rate-limits))",
        unit="calls/s, calls",
        shown_default=shown,
    )
