"""Bugs planted from inside the simulator, wrapping the real code (never a switch in product
code), so a test can show that the simulator finds such a bug within a few hundred seeds.

- :class:`SettlesRedeliveredTwice`: the ledger settles a redelivered ``HandEnded`` a second
  time: on a HandEnded it has handled before (the same event id, delivered again after a lost
  commit answer or a redelivery), it publishes a second ``HandSettled`` under a new event id, as
  a ledger whose reaction were keyed by the delivery instead of the hand would.
- :class:`ReleasesOnRedeliveredStart`: the ledger takes a ``HandStarted`` delivered again for a
  restart of the hand and releases its holds first (as a ``HandAborted`` would), while the hand
  plays on: a hold released before its hand ended.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.application.ports import LedgerUnitOfWork, OutgoingEvent
from rummy_ledger.application.reactions import Ledger
from rummy_platform.envelope import Envelope, reaction_event_id, type_name
from rummy_platform.topics import LEDGER_EVENTS


class SettlesRedeliveredTwice(Ledger):
    """The real ledger, but a HandEnded seen again is settled again (see the module doc)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._seen: Counter[str] = Counter()

    def on_hand_ended(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        super().on_hand_ended(uow, source)
        ended = source.payload
        assert isinstance(ended, table_events.HandEnded)
        if source.event_id in self._seen:
            settled = ledger_events.HandSettled(hand_id=ended.hand_id)
            again = Envelope.new(
                settled,
                event_id=reaction_event_id(source, type_name(settled), self._seen[source.event_id]),
                stream_id=source.stream_id,
                stream_version=uow.outbox.next_stream_version(source.stream_id),
                occurred_at=source.occurred_at,
                correlation_id=ended.hand_id,
                causation_id=source.event_id,
            )
            uow.outbox.write([OutgoingEvent.from_envelope(LEDGER_EVENTS, again)])
        self._seen[source.event_id] += 1


class ReleasesOnRedeliveredStart(Ledger):
    """The real ledger, but a HandStarted seen again releases the hand's holds (see the module
    doc)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._seen: set[str] = set()

    def on_hand_started(self, uow: LedgerUnitOfWork, source: Envelope) -> None:
        started = source.payload
        assert isinstance(started, table_events.HandStarted)
        if source.event_id in self._seen:
            aborted = table_events.HandAborted(hand_id=started.hand_id, reason="restarted")
            self.on_hand_aborted(
                uow,
                Envelope.new(
                    aborted,
                    event_id=reaction_event_id(source, type_name(aborted)),
                    stream_id=source.stream_id,
                    stream_version=source.stream_version,
                    occurred_at=source.occurred_at,
                    correlation_id=started.hand_id,
                    causation_id=source.event_id,
                ),
            )
        super().on_hand_started(uow, source)
        self._seen.add(source.event_id)
