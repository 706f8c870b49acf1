"""How fast one account calls the services: the demo's bots, and a player driven flat out.

Usage (brokers: KAFKA_BOOTSTRAP_SERVERS + DATABASE_URL when set, else the local ones, started and
then stopped if not running, as bench_action_latency.bench_stack gets them):
    .venv/bin/python tests/e2e/bench_call_rate.py [hands] [actions]   # default 12 hands, 400

Starts the five services as processes (rummy_ops.stack, own database and topic prefix, clock 10x
as the e2e tests run it), then records the time of every gRPC call each account makes (a client
interceptor; the account is the token's ``sub``):

1. ``rummy demo``'s bots playing ``hands`` hands at its three tables (``rummy_ops.demo.play``);
2. two players of the test harness playing DrawCard + DiscardCard turns heads-up as fast as the
   services answer (``bench_action_latency.measure``, ``actions`` calls): the fastest any
   client can act, since every action waits for its turn.

Prints, per role, the busiest account's most calls in any 1 s and any 10 s, its mean rate, and
the fewest tokens any account's bucket of the default size (``DEFAULT_RATE_LIMITS``) would have
held: a positive number means no call of the run would have been refused.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import jwt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_action_latency import bench_stack, measure, operator_of  # noqa: E402

from rummy_ops import demo  # noqa: E402
from rummy_ops.demo import DemoOptions  # noqa: E402
from rummy_platform.auth import AUTHORIZATION_KEY  # noqa: E402
from rummy_platform.config import DEFAULT_RATE_LIMITS, BucketSpec  # noqa: E402


class CallLog:
    """Times of calls by (role, account), from every intercepted channel."""

    def __init__(self) -> None:
        self.times: dict[tuple[str, str], list[float]] = defaultdict(list)
        self._lock = threading.Lock()
        self._callers: dict[str, tuple[str, str]] = {}

    def record(self, metadata: Any) -> None:
        for key, value in metadata or ():
            if key.lower() == AUTHORIZATION_KEY:
                token = value.split(" ", 1)[1]
                caller = self._callers.get(token)
                if caller is None:
                    claims = jwt.decode(token, options={"verify_signature": False})
                    caller = self._callers[token] = (claims["role"], claims["sub"])
                with self._lock:
                    self.times[caller].append(time.monotonic())


class _Recorder(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
):
    def __init__(self, log: CallLog) -> None:
        self._log = log

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        self._log.record(details.metadata)
        return continuation(details, request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        self._log.record(details.metadata)
        return continuation(details, request)


@contextmanager
def recording(log: CallLog) -> Iterator[None]:
    """Every ``grpc.insecure_channel`` or ``grpc.secure_channel`` (the stack's mutual TLS)
    opened inside records its calls in ``log``."""
    plain: Callable[..., grpc.Channel] = grpc.insecure_channel
    secure: Callable[..., grpc.Channel] = grpc.secure_channel

    def recorded(open_: Callable[..., grpc.Channel]) -> Callable[..., grpc.Channel]:
        def channel(*args: Any, **kwargs: Any) -> grpc.Channel:
            return grpc.intercept_channel(open_(*args, **kwargs), _Recorder(log))

        return channel

    grpc.insecure_channel = recorded(plain)
    grpc.secure_channel = recorded(secure)
    try:
        yield
    finally:
        grpc.insecure_channel = plain
        grpc.secure_channel = secure


def most_in_window(times: list[float], window: float) -> int:
    """The most calls in any ``window`` seconds."""
    best, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] > window:
            start += 1
        best = max(best, end - start + 1)
    return best


def lowest_level(times: list[float], spec: BucketSpec) -> float:
    """The fewest tokens a bucket of ``spec`` holds just after any of these calls took one."""
    tokens, last, lowest = float(spec.burst), times[0], float(spec.burst)
    for at in times:
        tokens = min(spec.burst, tokens + (at - last) * spec.rate_per_second) - 1
        last, lowest = at, min(lowest, tokens)
    return lowest


def report(title: str, log: CallLog) -> None:
    print(title)
    for role in ("player", "operator"):
        runs = {caller: sorted(t) for caller, t in log.times.items() if caller[0] == role}
        if not runs:
            continue
        spec = DEFAULT_RATE_LIMITS[role]
        assert spec is not None
        calls = sum(map(len, runs.values()))
        one = max(most_in_window(t, 1.0) for t in runs.values())
        ten = max(most_in_window(t, 10.0) for t in runs.values())
        mean = max(len(t) / max(t[-1] - t[0], 1.0) for t in runs.values())
        lowest = min(lowest_level(t, spec) for t in runs.values())
        print(
            f"  {role:<8} accounts {len(runs):>3}  calls {calls:>6}  busiest account: "
            f"{one:>3} in 1 s, {ten:>4} in 10 s, mean {mean:5.1f}/s;  lowest bucket "
            f"{lowest:6.1f} of {spec.burst} ({spec})"
        )


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    actions = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    with bench_stack() as endpoints:
        bots = CallLog()
        with recording(bots):
            played = demo.play(
                endpoints, DemoOptions(hands=hands), echo=lambda _line: None, progress=False
            )
        report(f"rummy demo bots, {len(played.ended)} hands:", bots)
        flat_out = CallLog()
        with recording(flat_out):
            operator = operator_of(endpoints)
            try:
                measure(operator, endpoints.table, actions)
            finally:
                operator.close()
        report(f"two players acting as fast as the services answer, {actions} actions:", flat_out)


if __name__ == "__main__":
    main()
