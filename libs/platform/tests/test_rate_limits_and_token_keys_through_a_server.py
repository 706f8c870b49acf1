"""Rate limits, token lifetimes, algorithms and key rotation, against a real service process (the
probe).

The probe runs with tiny buckets (players 0.5 calls a second in bursts of 4, refused tokens 2 a
second in bursts of 3 per host) so the limits are met within a few calls; the delays asserted
are what the bucket arithmetic gives, not timings.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable, Iterator

import grpc
import pytest
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from prometheus_client.parser import text_string_to_metric_families
from test_server_process import PROBE, SERVERS, ProbeProcess, start_probe, stop_probe

from rummy_platform.auth import AUDIENCE, ISSUER, Role, TokenAuthority, bearer_metadata
from rummy_platform.rate_limit import retry_delay_seconds
from rummy_platform.token_keys import KeyFiles, ensure_key_files
from rummy_testing.token_keys import (
    issuer_authority,
    issuer_signed,
    stranger_authority,
    suite_key_files,
)

#: slow and integration: a probe server process of its own (docs/testing.md#tests).
pytestmark = [pytest.mark.slow, pytest.mark.integration]

PLAYER_RATE, PLAYER_BURST = 0.5, 4
REFUSED_RATE, REFUSED_BURST = 2.0, 3


@pytest.fixture(scope="module")
def previous_keys(tmp_path_factory: pytest.TempPathFactory) -> KeyFiles:
    """The issuer's key pair before a rotation (its public key listed after the current one)."""
    return ensure_key_files(tmp_path_factory.mktemp("previous-token-keys"))


@pytest.fixture(scope="module", params=SERVERS)
def limited(
    request: pytest.FixtureRequest,
    previous_keys: KeyFiles,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ProbeProcess]:
    # Mid-rotation: the current issuer's public key first, the previous one still listed.
    listed = tmp_path_factory.mktemp("rotation") / "issuer.pub.pem"
    listed.write_bytes(
        suite_key_files().issuer_public_keys.read_bytes()
        + previous_keys.issuer_public_keys.read_bytes()
    )
    running = start_probe(
        request.param,
        RUMMY_RATE_LIMIT_PLAYER=f"{PLAYER_RATE},{PLAYER_BURST}",
        RUMMY_RATE_LIMIT_UNAUTHENTICATED=f"{REFUSED_RATE},{REFUSED_BURST}",
        RUMMY_TOKEN_PUBLIC_KEYS_FILE=str(listed),
    )
    yield running
    stop_probe(running)


@pytest.fixture(scope="module")
def channel(limited: ProbeProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(limited.target) as opened:
        grpc.channel_ready_future(opened).result(timeout=10)
        yield opened


def balance(channel: grpc.Channel, token: str) -> grpc.RpcError | None:
    """None when a call answers (the probe's Sleep of 0 s, which any role may make), else the
    error it ended with."""
    try:
        sleep: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(f"/{PROBE}/Sleep")
        sleep(b"0", metadata=bearer_metadata(token), timeout=10)
    except grpc.RpcError as error:
        return error
    return None


def operator(account: str, authority: TokenAuthority | None = None) -> str:
    return (authority or issuer_authority()).issue(account, Role.OPERATOR)


def player(account: str, authority: TokenAuthority | None = None) -> str:
    return (authority or issuer_authority()).issue(account, Role.PLAYER)


def until_refused(
    call: Callable[[], grpc.RpcError | None], limit: int
) -> tuple[int, grpc.RpcError]:
    """Call until an answer is RESOURCE_EXHAUSTED: (calls that passed before it, that error)."""
    for passed in range(limit):
        error = call()
        if error is not None and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
            return passed, error
    raise AssertionError(f"{limit} calls and no RESOURCE_EXHAUSTED")


def test_a_player_over_its_bucket_is_resource_exhausted_with_the_retry_delay(
    channel: grpc.Channel,
) -> None:
    passed, error = until_refused(lambda: balance(channel, player("alice")), 20)
    # a burst, plus the tokens refilled while the calls ran (0.5 a second)
    assert PLAYER_BURST <= passed <= PLAYER_BURST + 2
    delay = retry_delay_seconds(error)
    assert delay is not None and 0 < delay <= 1 / PLAYER_RATE
    assert "account 'alice' (player)" in (error.details() or "")
    assert "RUMMY_RATE_LIMIT_PLAYER" in (error.details() or "")
    assert balance(channel, player("bob")) is None  # another account has its own bucket
    time.sleep(delay + 0.05)
    assert balance(channel, player("alice")) is None  # the delay said is when it passes again


def test_a_response_stream_costs_one_call_when_it_opens(channel: grpc.Channel) -> None:
    token = bearer_metadata(player("carol"))
    count: grpc.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(f"/{PROBE}/Count")
    assert len(list(count(b"20", metadata=token, timeout=10))) == 20
    passed, _error = until_refused(lambda: balance(channel, player("carol")), 20)
    assert PLAYER_BURST - 1 <= passed <= PLAYER_BURST + 1


def test_operators_have_their_own_larger_bucket(channel: grpc.Channel) -> None:
    results = [balance(channel, operator("ops-1")) for _ in range(3 * PLAYER_BURST)]
    assert results == [None] * (3 * PLAYER_BURST)


def test_health_and_reflection_are_never_limited_nor_need_a_token(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for _ in range(10 * PLAYER_BURST):
        reply = health.Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
            health_pb2.HealthCheckRequest(), timeout=5
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    for _ in range(3 * REFUSED_BURST):
        database = ProtoReflectionDescriptorDatabase(channel)
        assert DescriptorPool(database).FindServiceByName("rummy.ledger.v1.LedgerService")


def test_refused_calls_are_counted_by_kind_of_caller(
    channel: grpc.Channel, limited: ProbeProcess
) -> None:
    until_refused(lambda: balance(channel, player("dora")), 20)
    url = f"http://127.0.0.1:{limited.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    assert samples[("rummy_grpc_rate_limited_total", (("who", "player"),))] >= 1
    assert samples[("rummy_grpc_rate_limited_total", (("who", "service"),))] == 0  # from start
    labels = (("code", "RESOURCE_EXHAUSTED"), ("method", "Sleep"), ("service", PROBE))
    exhausted = ("grpc_requests_total", labels)
    assert samples[exhausted] >= 1


def test_a_validly_signed_player_token_with_a_thirty_year_expiry_is_unauthenticated(
    channel: grpc.Channel,
) -> None:
    # repro 6 of issue 12: it was accepted, as long as its signer said
    now = int(time.time())
    claims = {"sub": "eve", "role": "player", "iat": now, "exp": now + 30 * 365 * 86400,
              "iss": ISSUER, "aud": AUDIENCE}  # fmt: skip
    error = balance(channel, issuer_signed(claims))
    assert error is not None and error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "longer than the 43200 s a player token may" in (error.details() or "")


def test_during_a_rotation_tokens_of_the_current_and_the_previous_key_both_pass(
    channel: grpc.Channel, previous_keys: KeyFiles
) -> None:
    assert balance(channel, operator("ops-old", TokenAuthority.of_issuer(previous_keys))) is None
    assert balance(channel, operator("ops-new")) is None


def test_a_token_signed_by_a_key_the_service_does_not_list_is_unauthenticated(
    channel: grpc.Channel,
) -> None:
    error = balance(channel, operator("ops-x", stranger_authority()))
    assert error is not None and error.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "key this service does not know" in (error.details() or "")


# Last: it empties this host's bucket of refused calls, which the tests above also draw on.
def test_refused_tokens_from_one_host_are_limited_but_never_its_valid_ones(
    limited: ProbeProcess,
) -> None:
    time.sleep(REFUSED_BURST / REFUSED_RATE)  # the bucket is full again
    with grpc.insecure_channel(limited.target) as fresh:
        wrong = player("mallory", stranger_authority())
        passed, error = until_refused(lambda: balance(fresh, wrong), 20)
        assert REFUSED_BURST <= passed <= REFUSED_BURST + 2
        assert "calls with a refused token" in (error.details() or "")
        assert "RUMMY_RATE_LIMIT_UNAUTHENTICATED" in (error.details() or "")
        assert 0 < (retry_delay_seconds(error) or 0) <= 1 / REFUSED_RATE
        assert balance(fresh, operator("ops-2")) is None  # same host, a valid token: passes
