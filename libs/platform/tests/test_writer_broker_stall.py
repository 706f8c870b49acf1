"""A transactional writer outlives a broker that stops answering for longer than its timeouts
(issue 14, repro 1): SIGSTOP the broker for 40 s while an append is in flight; while the writer
cannot write its dependency probe fails (``rummy_dependency_up{dependency="kafka-writer"} 0``);
after SIGCONT the writer writes again by itself, without its process being restarted, and
nothing it confirmed is lost or written twice. Uses a broker of the test's own (``own_kafka``),
never the shared one."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from prometheus_client import CollectorRegistry
from test_eventlog_contract import card_drawn

from rummy_ops.own_brokers import OwnServer
from rummy_platform.dependencies import DependencyWatch
from rummy_platform.eventlog import (
    CommitOutcomeUnknown,
    EventLogError,
    GroupCommitWriter,
    KafkaEventLog,
)
from rummy_platform.topics import TopicSpec

#: slow: a Kafka broker of its own, stalled for 40 s (docs/testing.md#tests).
pytestmark = pytest.mark.slow

#: Longer than the producer's request timeout and the append's ack wait (10 s each).
STALL_S = 40.0
#: How long after SIGCONT the writer gets to write again.
RECOVERY_S = 15.0


def test_a_writer_writes_again_by_itself_after_a_broker_stall_longer_than_its_timeouts(
    own_kafka: OwnServer,
) -> None:
    topic = f"stall-{uuid.uuid4().hex[:8]}-table-events"
    with KafkaEventLog(own_kafka.address) as log:
        log.ensure_topics([TopicSpec(topic, 3)])
        writer = GroupCommitWriter(log.transactional_writer(f"stall-{topic}"))
        confirmed: list[int] = []
        unsure: list[int] = []
        version = 0

        def append() -> BaseException | None:
            nonlocal version
            version += 1
            try:
                writer.append_batch([(topic, card_drawn("table-1", version))])
            except CommitOutcomeUnknown as error:
                unsure.append(version)
                return error
            except EventLogError as error:
                return error
            confirmed.append(version)
            return None

        assert append() is None
        registry = CollectorRegistry()
        watch = DependencyWatch(
            {"kafka-writer": writer.ready}, on_change=lambda *_: None, registry=registry
        )
        in_flight: list[BaseException | None] = []
        own_kafka.pause()
        paused = time.monotonic()
        try:
            thread = threading.Thread(target=lambda: in_flight.append(append()))
            thread.start()
            thread.join(STALL_S + 30)  # the broker stays stopped until the append has failed
            assert in_flight and isinstance(in_flight[0], EventLogError), in_flight
            # While the writer cannot write, its probe fails: health NOT_SERVING, and the
            # metric says why.
            assert not watch.check()
            assert (
                registry.get_sample_value("rummy_dependency_up", {"dependency": "kafka-writer"})
                == 0
            )
            time.sleep(max(0.0, STALL_S - (time.monotonic() - paused)))
        finally:
            own_kafka.resume()

        deadline = time.monotonic() + RECOVERY_S
        last = append()
        while last is not None and time.monotonic() < deadline:
            time.sleep(0.5)
            last = append()
        assert last is None, f"no append succeeded within {RECOVERY_S} s of SIGCONT: {last}"
        for _ in range(5):
            assert append() is None
        writer.ready()
        deadline = time.monotonic() + 10
        while not watch.check() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert registry.get_sample_value("rummy_dependency_up", {"dependency": "kafka-writer"}) == 1

        written = [r.envelope.stream_version for r in log.read_stream(topic, "table-1")]
        # Every confirmed append once, in order; an unconfirmed commit at most once; nothing else.
        assert [v for v in written if v in confirmed] == confirmed
        assert set(written) <= set(confirmed) | set(unsure)
        assert len(written) == len(set(written))
        writer.close()
