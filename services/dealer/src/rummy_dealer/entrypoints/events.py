"""Kafka for the dealer (the only module that builds Kafka clients): the event log, the
transactional writer of dealer-events, the reactor on table-events, stream versions."""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.application.dealing import Dealer
from rummy_platform.envelope import type_name
from rummy_platform.eventlog import EventLog, KafkaEventLog, TransactionalWriter
from rummy_platform.reactor import TransactionalReactor
from rummy_platform.topics import DEALER_EVENTS, TABLE_EVENTS

CONSUMER_GROUP = "dealer"


def kafka_log(bootstrap_servers: str) -> EventLog:
    return KafkaEventLog(bootstrap_servers, client_id="dealer")


class LogStreamVersions:
    """Stream versions of dealer-events, learnt from the log once per table (the last committed
    version of its stream) and counted on in memory. :meth:`forget` drops what was counted, for
    after an aborted transaction. One reactor thread only."""

    def __init__(self, log: EventLog, topic: str = DEALER_EVENTS) -> None:
        self._log = log
        self._topic = topic
        self._last: dict[str, int] = {}

    def next(self, stream_id: str) -> int:
        if stream_id not in self._last:
            records = self._log.read_stream(self._topic, stream_id)
            self._last[stream_id] = max((r.envelope.stream_version for r in records), default=0)
        self._last[stream_id] += 1
        return self._last[stream_id]

    def forget(self) -> None:
        self._last.clear()


def table_reactor(
    log: EventLog,
    writer: TransactionalWriter,
    dealer: Dealer,
    versions: LogStreamVersions,
    *,
    topic: str = TABLE_EVENTS,
    group_id: str = CONSUMER_GROUP,
) -> TransactionalReactor:
    """Deals on SeedsLocked, reshuffles on StockExhausted; outputs and offsets in one Kafka
    transaction."""
    return TransactionalReactor(
        log,
        writer,
        group_id=group_id,
        topics=[topic],
        handlers={
            type_name(table_events.SeedsLocked): dealer.on_seeds_locked,
            type_name(table_events.StockExhausted): dealer.on_stock_exhausted,
        },
        on_abort=versions.forget,
    )
