"""Produce-and-ack round trip of one small event on a real broker: the latency floor.

Usage::

    KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:19092 .venv/bin/python libs/platform/bench/produce_latency.py

Sends ``--count`` single events one after the other (each waits for its acknowledgement) through
``KafkaEventLog.append`` (idempotent producer, acks=all), then ``--count`` one-event transactions
through a ``TransactionalWriter`` (begin, send, ack, commit). Prints median, p99 and max in
milliseconds, and the CPU time of this process (the producer's sender thread included) per call.
``--set KEY=VALUE`` (repeatable; VALUE as JSON, e.g. ``--set retry_backoff_ms=100``) overrides a
setting of ``KafkaEventLog.producer_config``, to compare a setting with the one in use. Uses a
topic of its own (``bench-produce-latency-<random>``, 1 partition), deleted
at the end unless ``--keep-topic``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kafka import KafkaAdminClient

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope, encode
from rummy_platform.eventlog import KafkaEventLog
from rummy_platform.ports import LOCAL_KAFKA_BOOTSTRAP
from rummy_platform.topics import TopicSpec


def small_event(table_id: str, version: int) -> Envelope:
    """A CardDrawn in its envelope, as the table service writes one."""
    return Envelope.new(
        table_events.CardDrawn(
            hand_id="bench-hand",
            seat=1,
            turn_no=version,
            source=table_events.DRAW_SOURCE_STOCK,
            card=cards_pb2.Card(index=17, face="5D"),
        ),
        stream_id=table_id,
        stream_version=version,
        occurred_at=datetime.now(UTC),
        correlation_id="bench-hand",
        rules_version="indian13-points/1",
        shuffle_version="bb-shuffle-v1",
    )


class TunedEventLog(KafkaEventLog):
    """The event log with some producer settings overridden (``--set``)."""

    def __init__(self, bootstrap_servers: str, overrides: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(bootstrap_servers, **kwargs)
        self._overrides = overrides

    def producer_config(self) -> dict[str, Any]:
        return {**super().producer_config(), **self._overrides}


def measure(send: Callable[[int], object], count: int, warmup: int) -> tuple[list[float], float]:
    """Milliseconds of ``count`` calls of ``send(i)``, after ``warmup`` unmeasured ones, and
    the process's CPU milliseconds per measured call."""
    for i in range(warmup):
        send(i)
    samples = []
    cpu_started = time.process_time()
    for i in range(count):
        start = time.perf_counter()
        send(warmup + i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples, (time.process_time() - cpu_started) * 1000 / max(1, count)


def summary(label: str, measured: tuple[list[float], float]) -> str:
    samples, cpu_ms = measured
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"{label:<34} n={len(samples)}  median={statistics.median(ordered):.2f} ms  "
        f"mean={statistics.fmean(ordered):.2f} ms  "
        f"p99={p99:.2f} ms  max={ordered[-1]:.2f} ms  cpu={cpu_ms:.2f} ms/call"
    )


def setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE as JSON (a bare word is taken as a string)."""
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", LOCAL_KAFKA_BOOTSTRAP)
    )
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--keep-topic", action="store_true")
    parser.add_argument("--set", type=setting, action="append", default=[], metavar="KEY=VALUE")
    opts = parser.parse_args(argv)
    overrides = dict(opts.set)

    topic = f"bench-produce-latency-{uuid.uuid4().hex[:8]}"
    table_id = f"table-{uuid.uuid4()}"
    with TunedEventLog(opts.bootstrap, overrides, client_id="produce-latency-bench") as log:
        log.ensure_topics([TopicSpec(topic, partitions=1)])
        size = len(encode(small_event(table_id, 1)))
        print(f"broker {opts.bootstrap}, topic {topic}, event of {size} bytes")
        print(f"producer settings overridden: {overrides or 'none'}")
        plain = measure(
            lambda i: log.append(topic, small_event(table_id, i + 1)), opts.count, opts.warmup
        )
        print(summary("append (idempotent, acks=all)", plain))
        with log.transactional_writer(f"bench-{uuid.uuid4()}") as writer:
            txn = measure(
                lambda i: writer.append(topic, small_event(table_id, i + 1)),
                opts.count,
                opts.warmup,
            )
        print(summary("transactional append + commit", txn))
    if not opts.keep_topic:
        admin = KafkaAdminClient(bootstrap_servers=opts.bootstrap.split(","))
        try:
            admin.delete_topics([topic])
        finally:
            admin.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
