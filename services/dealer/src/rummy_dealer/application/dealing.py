"""The dealer's use cases: deal a hand from its locked seeds, reshuffle the discard pile into a
new stock (``docs/rules/hand-flow.md#the-deal``, ``docs/rules/deal.md#reshuffle``; the shuffle
spec ``bb-shuffle-v1`` of ``rummy_rules``, ``docs/rules/shuffle-spec.md``).

Handlers take the input envelope and return the ``(topic, envelope)`` pairs to append; the
reactor appends them in the Kafka transaction that commits the input's offset. The server seed is
fetched from fairness for each input and never stored or logged; nor is any deck order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope, type_name
from rummy_platform.logging import get_logger
from rummy_platform.reactor import reaction_event_id
from rummy_platform.skips import SKIPPED
from rummy_platform.topics import DEALER_EVENTS
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.shuffle import SHUFFLE_VERSION, ShuffleInputs, deal, reshuffle

_log = get_logger(__name__)

Outgoing = list[tuple[str, Envelope]]


class SeedSource(Protocol):
    """Where the dealer gets a hand's secret and locked inputs (the fairness service)."""

    def server_seed(self, hand_id: str) -> bytes:
        """The hand's 32-byte server seed (service role). Raises on any failure."""
        ...

    def locked_client_seeds(self, hand_id: str) -> Sequence[tuple[int, bytes]]:
        """``(seat, client seed)`` as locked for the hand."""
        ...


class StreamVersions(Protocol):
    """The next 1-based stream_version of a table's stream in dealer-events."""

    def next(self, stream_id: str) -> int: ...


@dataclass
class Counters:
    """Callbacks the bootstrap points at its metrics (no-ops by default)."""

    dealt: Callable[[], None] = lambda: None
    reshuffled: Callable[[], None] = lambda: None


# -- pure functions of the spec -----------------------------------------------------------------


def shoe_of(spec: cards_pb2.ShoeSpec) -> Shoe:
    """The rules library's shoe for a wire ShoeSpec. Raises ValueError for an empty shoe."""
    return Shoe(decks=spec.decks, printed_jokers=spec.printed_jokers)


def card_to_pb(card: Card, shoe: Shoe) -> cards_pb2.Card:
    return cards_pb2.Card(index=shoe.card_to_index(card), face=card.face)


def card_from_pb(card: cards_pb2.Card, shoe: Shoe) -> Card:
    """The card at the wire card's index. Raises ValueError if it is outside the shoe or its
    face label contradicts the index."""
    found = shoe.index_to_card(card.index)
    if card.face and card.face != found.face:
        raise ValueError(f"card index {card.index} is {found.face}, not {card.face}")
    return found


def deck_digest(order: Sequence[int]) -> str:
    """Hex SHA-256 of the shuffled shoe's canonical indices, each as a 4-byte big-endian word,
    in dealing order (position 0 first)."""
    return hashlib.sha256(b"".join(i.to_bytes(4, "big") for i in order)).hexdigest()


def deal_from_lock(locked: table_events.SeedsLocked, server_seed: bytes) -> dealer_events.HandDealt:
    """The HandDealt of a hand whose inputs ``locked`` fixed, with ``server_seed``, dealt as the
    hand's variant (``locked.variant``; absent: ``rummy_rules.registry.LEGACY_VARIANT``) shapes
    its deal: a wild cut or none, a first open card or none.

    Raises ValueError if the seed does not match the lock's commitment, the variant is not
    registered, or the lock's seats, dealer, shoe or hand size cannot make a deal (see
    ``rummy_rules.shuffle.deal``).
    """
    if hashlib.sha256(server_seed).digest() != locked.server_commitment_sha256:
        raise ValueError(f"the server seed of hand {locked.hand_id} does not match its commitment")
    try:
        variant = registry.lookup(locked.variant if locked.HasField("variant") else "")
    except registry.UnknownVariant as exc:
        raise ValueError(str(exc)) from None
    shoe = shoe_of(locked.shoe)
    seeds = [(s.seat, s.client_seed) for s in locked.client_seeds]
    inputs = ShuffleInputs(server_seed, locked.hand_id, tuple(seeds))
    seats = [seat for seat, _ in seeds]
    dealt = deal(inputs, shoe, seats, locked.dealer_seat, locked.hand_size, variant.deal_shape)
    out = dealer_events.HandDealt(
        hand_id=locked.hand_id,
        hands=[
            dealer_events.SeatHand(seat=h.seat, cards=[card_to_pb(c, shoe) for c in h.cards])
            for h in sorted(dealt.hands, key=lambda h: h.seat)
        ],
        stock=[card_to_pb(c, shoe) for c in dealt.stock],
        deck_digest=deck_digest(dealt.order),
    )
    if dealt.wild_cut is not None:
        out.wild_cut.CopyFrom(card_to_pb(dealt.wild_cut, shoe))
    if dealt.first_open is not None:
        out.first_open.CopyFrom(card_to_pb(dealt.first_open, shoe))
    return out


def reshuffle_from_exhausted(
    exhausted: table_events.StockExhausted,
    server_seed: bytes,
    client_seeds: Sequence[tuple[int, bytes]],
) -> dealer_events.StockReshuffled:
    """The new stock from the discard pile but its top, on sub-stream ``reshuffle_no``.

    Raises ValueError for a reshuffle number below 1, a card outside the shoe or repeated.
    """
    shoe = shoe_of(exhausted.shoe)
    inputs = ShuffleInputs(server_seed, exhausted.hand_id, tuple(client_seeds))
    pile = [card_from_pb(c, shoe) for c in exhausted.cards]
    stock = reshuffle(inputs, shoe, pile, exhausted.reshuffle_no)
    return dealer_events.StockReshuffled(
        hand_id=exhausted.hand_id,
        reshuffle_no=exhausted.reshuffle_no,
        stock=[card_to_pb(c, shoe) for c in stock],
        kept_top_discard=card_to_pb(card_from_pb(exhausted.top_discard, shoe), shoe),
    )


# -- the handlers -------------------------------------------------------------------------------


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
        raises (retried)."""
        locked = source.payload
        assert isinstance(locked, table_events.SeedsLocked)
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
            locked.variant if locked.HasField("variant") else "",
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
