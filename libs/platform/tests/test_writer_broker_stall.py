"""A transactional writer outlives a broker that stops answering for longer than its timeouts
(issue 14, repro 1): SIGSTOP the broker for 40 s while an append is in flight; after SIGCONT the
writer writes again by itself, without its process being restarted, and nothing it confirmed is
lost or written twice. Uses a broker of the test's own (``own_kafka``), never the shared one."""

from __future__ import annotations

import threading
import time
import uuid

from test_eventlog_contract import card_drawn

from rummy_ops.own_brokers import OwnServer
from rummy_platform.eventlog import (
    CommitOutcomeUnknown,
    EventLogError,
    GroupCommitWriter,
    KafkaEventLog,
)
from rummy_platform.topics import TopicSpec

#: Longer than the producer's request timeout and the append's own timeout (30 s each).
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
        in_flight: list[BaseException | None] = []
        own_kafka.pause()
        try:
            thread = threading.Thread(target=lambda: in_flight.append(append()))
            thread.start()
            time.sleep(STALL_S)
        finally:
            own_kafka.resume()
        thread.join(60)
        assert in_flight and isinstance(in_flight[0], EventLogError), in_flight

        deadline = time.monotonic() + RECOVERY_S
        last = append()
        while last is not None and time.monotonic() < deadline:
            time.sleep(0.5)
            last = append()
        assert last is None, f"no append succeeded within {RECOVERY_S} s of SIGCONT: {last}"
        for _ in range(5):
            assert append() is None
        writer.ready()

        written = [r.envelope.stream_version for r in log.read_stream(topic, "table-1")]
        # Every confirmed append once, in order; an unconfirmed commit at most once; nothing else.
        assert [v for v in written if v in confirmed] == confirmed
        assert set(written) <= set(confirmed) | set(unsure)
        assert len(written) == len(set(written))
        writer.close()
