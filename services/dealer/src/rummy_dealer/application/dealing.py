"""The dealer's use cases: deal a hand from its locked seeds, reshuffle the discard pile into a
new stock (the deal itself: ``rummy_dealer.domain.deal``; its messages: :mod:`.deal_messages`).

Handlers take the input envelope and return the ``(topic, envelope)`` pairs to append; the
reactor appends them in the Kafka transaction that commits the input's offset. The server seed is
fetched from fairness for each input and never stored or logged; nor is any deck order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.application import upcast
from rummy_dealer.application.deal_messages import deal_from_lock, reshuffle_from_exhausted
from rummy_dealer.application.ports import Counters, SeedSource, StreamVersions
from rummy_platform.envelope import Envelope, reaction_event_id, type_name
from rummy_platform.logging import get_logger
from rummy_platform.skips import SKIPPED
from rummy_platform.topics import DEALER_EVENTS
from rummy_rules import registry
from rummy_rules.shuffle import SHUFFLE_VERSION

_log = get_logger(__name__)

Outgoing = list[tuple[str, Envelope]]


class Dealer:
    """Reactions to table-events, producing dealer-events keyed by table id."""

    def __init__(
        self,
        seeds: SeedSource,
        versions: StreamVersions,
        *,
        topic: str = DEALER_EVENTS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        counters: Counters | None = None,
    ) -> None:
        self._seeds = seeds
        self._versions = versions
        self._topic = topic
        self._clock = clock
        self._counters = counters or Counters()

    def on_seeds_locked(self, source: Envelope) -> Outgoing:
        """Deal the hand. An input that cannot be dealt (wrong shuffle version, bad seats or
        shoe) is logged and produces nothing; a hand of a variant this build does not know (a
        newer table service's, in a rolling deploy) is skipped, counted and logged once
        (``rummy_platform.skips``), without asking fairness for its seed; a fairness failure
        raises (retried). A SeedsLocked of an old shape is upcast first
        (:mod:`rummy_dealer.application.upcast`)."""
        assert isinstance(source.payload, table_events.SeedsLocked)
        locked = upcast.seeds_locked(source.payload)
        if not self._speaks(source) or not self._knows_variant(source, locked):
            return []
        server_seed = self._seeds.server_seed(locked.hand_id)
        try:
            dealt = deal_from_lock(locked, server_seed)
        except ValueError as exc:
            _log.error("cannot deal this hand", hand_id=locked.hand_id, reason=str(exc))
            return []
        self._counters.dealt()
        _log.info("hand dealt", hand_id=locked.hand_id, seats=len(dealt.hands))
        return [self._envelope(source, dealt)]

    def on_stock_exhausted(self, source: Envelope) -> Outgoing:
        """Reshuffle the discard pile but its top into a new stock (sub-stream reshuffle_no)."""
        exhausted = source.payload
        assert isinstance(exhausted, table_events.StockExhausted)
        if not self._speaks(source):
            return []
        server_seed = self._seeds.server_seed(exhausted.hand_id)
        client_seeds = self._seeds.locked_client_seeds(exhausted.hand_id)
        try:
            reshuffled = reshuffle_from_exhausted(exhausted, server_seed, client_seeds)
        except ValueError as exc:
            _log.error("cannot reshuffle", hand_id=exhausted.hand_id, reason=str(exc))
            return []
        self._counters.reshuffled()
        _log.info(
            "stock reshuffled",
            hand_id=exhausted.hand_id,
            reshuffle_no=exhausted.reshuffle_no,
            stock_size=len(reshuffled.stock),
        )
        return [self._envelope(source, reshuffled)]

    @staticmethod
    def _knows_variant(source: Envelope, locked: table_events.SeedsLocked) -> bool:
        found = SKIPPED.lookup_or_skip(
            registry.lookup,
            locked.variant,
            type_name=source.type,
            table_id=source.stream_id,
            hand_id=locked.hand_id,
            consumer="dealer",
        )
        return found is not None

    @staticmethod
    def _speaks(source: Envelope) -> bool:
        if source.shuffle_version and source.shuffle_version != SHUFFLE_VERSION:
            _log.error(
                "the hand asks for a shuffle this dealer does not implement",
                hand_id=source.correlation_id,
                asked=source.shuffle_version,
                implemented=SHUFFLE_VERSION,
            )
            return False
        return True

    def _envelope(
        self, source: Envelope, payload: dealer_events.HandDealt | dealer_events.StockReshuffled
    ) -> tuple[str, Envelope]:
        return (
            self._topic,
            Envelope.new(
                payload,
                event_id=reaction_event_id(source, type_name(payload)),
                stream_id=source.stream_id,
                stream_version=self._versions.next(source.stream_id),
                occurred_at=self._clock(),
                correlation_id=payload.hand_id,
                causation_id=source.event_id,
                rules_version=source.rules_version,
                shuffle_version=SHUFFLE_VERSION,
            ),
        )
