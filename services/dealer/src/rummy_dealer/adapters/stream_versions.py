"""The next stream version of a table's stream in dealer-events, read from the event log (the
port ``rummy_dealer.application.ports.StreamVersions``)."""

from __future__ import annotations

from rummy_platform.eventlog import EventLog
from rummy_platform.topics import DEALER_EVENTS


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
