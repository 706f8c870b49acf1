"""Token buckets of the rate limiter, on a clock the test moves."""

from __future__ import annotations

import pytest

from rummy_platform.config import BucketSpec
from rummy_platform.rate_limit import SWEEP_AT_LEAST, RateLimiter, peer_host


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(rate: float = 4.0, burst: int = 3) -> tuple[RateLimiter, Clock]:
    clock = Clock()
    return RateLimiter(BucketSpec(rate, burst), clock=clock), clock


def test_a_burst_passes_at_once_and_the_next_call_waits_for_one_token() -> None:
    bucket, _clock = limiter(rate=4.0, burst=3)
    assert [bucket.take("alice") for _ in range(3)] == [(0.0, False)] * 3
    wait, first = bucket.take("alice")
    assert wait == pytest.approx(0.25) and first  # one token comes back every 1/4 s
    wait, first = bucket.take("alice")
    assert wait == pytest.approx(0.25) and not first  # a refused call costs nothing


def test_tokens_come_back_at_the_rate_and_never_beyond_the_burst() -> None:
    bucket, clock = limiter(rate=4.0, burst=3)
    for _ in range(3):
        bucket.take("alice")
    clock.now += 0.5  # two tokens back
    assert [bucket.take("alice")[0] for _ in range(3)] == [0.0, 0.0, pytest.approx(0.25)]
    clock.now += 3600  # idle for an hour: still only a burst
    assert [bucket.take("alice")[0] == 0.0 for _ in range(4)] == [True, True, True, False]


def test_the_delay_given_is_exactly_when_the_next_call_passes() -> None:
    bucket, clock = limiter(rate=3.0, burst=2)
    bucket.take("alice"), bucket.take("alice")
    wait, _ = bucket.take("alice")
    clock.now += wait * 0.99
    assert bucket.take("alice")[0] > 0
    clock.now += wait * 0.02
    assert bucket.take("alice") == (0.0, False)


def test_each_key_has_its_own_bucket() -> None:
    bucket, _clock = limiter(rate=1.0, burst=1)
    assert bucket.take("alice") == (0.0, False)
    assert bucket.take("alice")[0] > 0
    assert bucket.take("bob") == (0.0, False)


def test_a_refusal_after_a_call_passed_is_a_first_refusal_again() -> None:
    bucket, clock = limiter(rate=1.0, burst=1)
    bucket.take("alice")
    assert bucket.take("alice")[1] is True
    assert bucket.take("alice")[1] is False
    clock.now += 1.0
    assert bucket.take("alice") == (0.0, False)
    assert bucket.take("alice")[1] is True


def test_buckets_of_callers_gone_quiet_are_forgotten_when_the_table_grows() -> None:
    bucket, clock = limiter(rate=10.0, burst=5)
    for number in range(SWEEP_AT_LEAST):
        bucket.take(f"caller-{number}")
    assert len(bucket) == SWEEP_AT_LEAST
    clock.now += 1.0  # every bucket has refilled: an idle caller is a full bucket
    bucket.take("busy")
    bucket.take("newcomer")
    assert len(bucket) <= 2
    # the call that set off the sweep counts: busy has 4 of its 5 tokens left
    assert [bucket.take("busy")[0] == 0.0 for _ in range(5)] == [True] * 4 + [False]


@pytest.mark.parametrize(
    ("peer", "host"),
    [
        ("ipv4:127.0.0.1:50123", "ipv4:127.0.0.1"),
        ("ipv6:[::1]:50123", "ipv6:[::1]"),
        ("unix:/tmp/rummy.sock", "unix:/tmp/rummy.sock"),
        ("ipv4:10.0.0.7", "ipv4:10.0.0.7"),
    ],
)
def test_a_peer_is_limited_by_its_host_whatever_port_it_calls_from(peer: str, host: str) -> None:
    assert peer_host(peer) == host
