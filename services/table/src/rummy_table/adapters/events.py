"""Kafka for the table service (the only module that builds Kafka clients): the event log, the
full read of the table stream at start, the loop over the inputs (ledger, fairness, dealer and
clock events, group ``table``) and the hand-start ticker."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from rummy_platform.envelope import Envelope, decode, event_payloads
from rummy_platform.errors import Unavailable
from rummy_platform.eventlog import (
    EventLog,
    EventLogError,
    KafkaEventLog,
    Record,
    TopicPartition,
    WriterFenced,
)
from rummy_platform.logging import get_logger
from rummy_table.application import TableApp

_log = get_logger(__name__)


def kafka_log(bootstrap_servers: str) -> EventLog:
    return KafkaEventLog(bootstrap_servers, client_id="table")


def read_topic(bootstrap_servers: str, topic: str, timeout_s: float = 120.0) -> list[Envelope]:
    """Every committed envelope of ``topic``, all partitions, each partition in offset order
    (so each table's stream is in order). Raises EventLogError past ``timeout_s`` seconds."""
    registry = event_payloads()
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap_servers.split(","),
        client_id="table-replay",
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        tps = [KafkaTopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)  # last stable offsets under read_committed
        out: list[Envelope] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise EventLogError(f"replaying {topic} took over {timeout_s}s")
            for tp, messages in sorted(consumer.poll(timeout_ms=500).items()):
                out.extend(decode(m.value, registry) for m in messages if m.offset < end[tp])
        return out
    finally:
        consumer.close(autocommit=False)


class InputLoop:
    """Consumes the table's inputs and hands each to :meth:`TableApp.on_input` (which appends
    its facts with the consumed offset in one transaction). A failing input is retried after
    ``retry_pause_s``; a fenced writer ends the loop with WriterFenced."""

    def __init__(
        self,
        log: EventLog,
        app: TableApp,
        topics: Sequence[str],
        *,
        retry_pause_s: float = 1.0,
        poll_timeout_s: float = 0.2,
    ) -> None:
        self._log = log
        self._app = app
        self._topics = list(topics)
        self._retry_pause_s = retry_pause_s
        self._poll_timeout_s = poll_timeout_s

    def run(self, stop: threading.Event) -> None:
        consumer = self._log.consumer(self._app.input_group, self._topics)
        # The offsets this loop's inputs commit carry the member's generation (KIP-447).
        self._app.input_group_metadata = consumer.group_metadata
        try:
            while not stop.is_set():
                if self._app.fenced:
                    raise WriterFenced("the table writer was fenced; stopping the input loop")
                records = consumer.poll(self._poll_timeout_s)
                for i, record in enumerate(records):
                    try:
                        self._handle(record)
                    except (WriterFenced, Unavailable):
                        raise WriterFenced("the table writer was fenced") from None
                    except Exception:
                        _log.exception("input failed; will retry", event_type=record.envelope.type)
                        pending: dict[TopicPartition, int] = {}
                        for r in records[i:]:
                            pending.setdefault(TopicPartition(r.topic, r.partition), r.offset)
                        for tp, offset in pending.items():
                            consumer.seek(tp, offset)
                        stop.wait(self._retry_pause_s)
                        break
        finally:
            consumer.close()

    def _handle(self, record: Record) -> None:
        self._app.on_input(
            record.envelope, TopicPartition(record.topic, record.partition), record.next_offset
        )


def hand_starter(app: TableApp, period_s: float = 0.1) -> Callable[[threading.Event], None]:
    """A loop for BackgroundLoops: start due hands every ``period_s`` seconds; ends (raising
    WriterFenced) once the writer is fenced."""

    def loop(stop: threading.Event) -> None:
        while not stop.wait(period_s):
            try:
                app.tick()
            except Unavailable:
                raise WriterFenced("the table writer was fenced; stopping hand starts") from None
            except Exception:
                _log.exception("starting hands failed; will retry")

    return loop
