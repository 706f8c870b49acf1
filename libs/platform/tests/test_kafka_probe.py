"""The Kafka probe of the dependency watch: it answers on the real broker and fails within its
timeout on one that accepts connections and never answers (a broker stopped with SIGSTOP)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from rummy_platform.dependencies import kafka_probe

pytestmark = pytest.mark.integration


@pytest.fixture()
def silent_broker() -> Iterator[str]:
    """``host:port`` of a socket that accepts connections (the kernel's backlog) and never
    reads or answers."""
    with socket.create_server(("127.0.0.1", 0), backlog=16) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"


def test_the_kafka_probe_answers_on_the_running_broker(kafka_bootstrap: str) -> None:
    probe = kafka_probe(kafka_bootstrap, timeout_s=5.0)
    # A probe raises when the broker does not answer; on the running broker it returns, twice
    # (the second time through the same admin client).
    assert [probe(), probe()] == [None, None]


def test_the_kafka_probe_fails_within_its_timeout_on_a_broker_that_never_answers(
    silent_broker: str,
) -> None:
    probe = kafka_probe(silent_broker, timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(Exception):  # noqa: B017 - kafka-python's error depends on where it waits
        probe()
    assert time.monotonic() - started < 5.0
