"""A table service on the in-memory event log, with the other services played by the test
(not a test module). Time is a manual clock in ms; ids are counted."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import table_calls
from google.protobuf.message import Message

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_dealer.application.deal_messages import deal_from_lock
from rummy_game import stream_payloads
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import GroupCommitWriter, InMemoryEventLog, TopicPartition
from rummy_platform.topics import (
    CLOCK_EVENTS,
    DEALER_EVENTS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.shuffle import Deal as ShuffleDeal
from rummy_rules.shuffle import SeatHand
from rummy_table.adapters.metrics import TableMetrics
from rummy_table.application.app import TableApp
from rummy_table.entrypoints.views import player_view

T0 = 1_800_000_000_000
SERVER_SEED = b"\x05" * 32
INPUT_TOPICS = [LEDGER_EVENTS, FAIRNESS_EVENTS, DEALER_EVENTS, CLOCK_EVENTS]
#: A fixed deal (:meth:`World.prepare_fixed`): the hands by seat, the cut, the open card, the top
#: of the stock, each as card faces ("AH 2H").
FixedDeal = tuple[dict[int, str], str, str, str]


#: A request message of one turn (DrawCardRequest, DiscardCardRequest, DropRequest, ...).
TurnRequest = TypeVar("TurnRequest", bound=Message)


class FeedsInputs(Protocol):
    """A test's table that consumes the other services' events (:class:`World`, or one on a
    real broker)."""

    def feed(self, topic: str, table_id: str, payload: Message) -> None: ...


def lock_seeds(
    world: FeedsInputs, table_id: str, hand_id: str, server_seed: bytes = SERVER_SEED
) -> None:
    """Fairness's commitment to ``server_seed``, then the clock closing the seed window, fed to
    ``world``'s table."""
    world.feed(
        FAIRNESS_EVENTS,
        table_id,
        fairness_pb.SeedCommitted(
            hand_id=hand_id, commitment_sha256=hashlib.sha256(server_seed).digest()
        ),
    )
    world.feed(CLOCK_EVENTS, table_id, clock_pb.SeedWindowClosed(hand_id=hand_id))


def replay_all(log: InMemoryEventLog, topic: str = TABLE_EVENTS) -> list[Envelope]:
    """Every table-stream envelope, partition by partition (stream order per table)."""
    consumer = log.consumer(f"replay-{id(log)}-{topic}", [topic], lambda ps: {p: 0 for p in ps})
    out = [r.envelope for r in consumer.poll(max_records=1_000_000)]
    consumer.close()
    return out


def metrics_of(app: TableApp) -> TableMetrics:
    """``app``'s metrics as the service and :class:`World` give them (the Prometheus series)."""
    assert isinstance(app.metrics, TableMetrics)
    return app.metrics


@dataclass
class World:
    log: InMemoryEventLog = field(default_factory=InMemoryEventLog)
    now: int = T0
    app: TableApp = field(init=False)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.log.ensure_topics(event_topic_specs(partitions=2))
        self.app = self.new_app()
        self._inputs = self.log.consumer("table", INPUT_TOPICS)

    def new_app(self, writer_id: str = "table-writer") -> TableApp:
        app = TableApp(
            writer=GroupCommitWriter(self.log.transactional_writer(writer_id)),
            reread=lambda table_id: [
                r.envelope for r in self.log.read_stream(TABLE_EVENTS, table_id)
            ],
            now_ms=lambda: self.now,
            new_hand_id=lambda: f"hand-{next(self._ids)}",
            read_stream=lambda table_id: [
                e for e in replay_all(self.log) if e.stream_id == table_id
            ],
            metrics=TableMetrics.unregistered(),
            render_view=player_view,
        )
        app.replay(replay_all(self.log))
        return app

    def request_id(self) -> str:
        return f"req-{next(self._ids)}"

    def turn_request(
        self, kind: type[TurnRequest], table_id: str, view: api.PlayerView, **fields: Any
    ) -> TurnRequest:
        """A ``kind`` request (``api.DiscardCardRequest``, ``api.DropRequest``, ...) for the turn
        ``view`` shows at ``table_id``: its hand id and turn number, a fresh client request id,
        and ``fields`` (which may name another ``hand_id``)."""
        given = {
            "table_id": table_id,
            "hand_id": view.hand_id,
            "turn_no": view.turn_no,
            "client_request_id": self.request_id(),
        }
        return kind(**{**given, **fields})

    # -- operators and players -----------------------------------------------------------
    def open_table(
        self,
        seats: int = 4,
        point_value: int = 100,
        commission_bps: int = 1000,
        rules: cards_pb2.RuleSet | None = None,
    ) -> str:
        """Open a table as the product does: no ``rules`` = no options, the house's rules
        (Bombay Baazi); ``rules`` only for a test about the options themselves."""
        request = api.OpenTableRequest(
            client_request_id=self.request_id(),
            seat_count=seats,
            point_value_hundredths=point_value,
            commission_bps=commission_bps,
        )
        if rules is not None:
            request.rule_set.CopyFrom(rules)
        return table_calls.open_table(self.app, "op", request)

    def sit(self, table_id: str, account: str, seat: int | None = None) -> int:
        request = api.TakeSeatRequest(table_id=table_id, client_request_id=self.request_id())
        if seat is not None:
            request.seat = seat
        return table_calls.take_seat(self.app, account, request)

    def view(self, table_id: str, account: str | None) -> api.PlayerView:
        view: api.PlayerView = self.app.view(account, table_id)  # as render_view renders it
        return view

    def start_hand(self, table_id: str) -> str:
        self.now += 5_000
        (hand_id,) = self.app.tick()
        return hand_id

    def playing(self, *accounts: str) -> tuple[str, str, str, api.PlayerView]:
        """A table where ``accounts`` sit, its first hand dealt: the table's id, the hand's, the
        account on turn and the table's public view."""
        table_id = self.open_table()
        for account in accounts:
            self.sit(table_id, account)
        hand_id = self.start_hand(table_id)
        self.prepare(table_id, hand_id)
        view = self.view(table_id, None)
        on_turn = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
        return table_id, hand_id, on_turn, view

    # -- the other services -------------------------------------------------------------
    def feed(
        self, topic: str, table_id: str, payload: Message, event_id: str | None = None
    ) -> None:
        """Append an event of another service and let the table consume what is pending."""
        self.log.append(
            topic,
            Envelope.new(
                payload,
                stream_id=table_id,
                stream_version=next(self._ids),
                occurred_at=datetime.fromtimestamp(self.now / 1000, UTC),
                event_id=event_id,
            ),
        )
        self.consume()

    def consume(self) -> None:
        for r in self._inputs.poll(max_records=10_000):
            self.app.on_input(r.envelope, TopicPartition(r.topic, r.partition), r.next_offset)

    def prepare(self, table_id: str, hand_id: str, fixed: FixedDeal | None = None) -> None:
        """Stakes reserved for every seat, the commitment, client seeds, the window closed and
        the deal made from SERVER_SEED."""
        table = self.app.projection.tables[table_id]
        assert table.ctx is not None
        self.feed(
            LEDGER_EVENTS,
            table_id,
            ledger_pb.StakesReserved(
                hand_id=hand_id,
                reservations=[
                    ledger_pb.Reservation(seat=s, account_id=a, amount_hundredths=13_000)
                    for s, a in sorted(table.ctx.accounts.items())
                ],
            ),
        )
        self.lock_seeds(table_id, hand_id)
        self.deal(table_id, hand_id, fixed)

    def lock_seeds(self, table_id: str, hand_id: str, server_seed: bytes = SERVER_SEED) -> None:
        """Fairness's commitment to ``server_seed``, then the clock closing the seed window."""
        lock_seeds(self, table_id, hand_id, server_seed)

    def prepare_fixed(
        self,
        table_id: str,
        hand_id: str,
        hands: dict[int, str],
        cut: str,
        first_open: str,
        stock_top: str,
    ) -> None:
        """As :meth:`prepare`, with a fixed deal: ``hands`` (seat -> cards such as "AH 2H"),
        the cut ("": none, for a variant that cuts no card), the open card and the top of the
        stock; the rest of the shoe follows."""
        self.prepare(table_id, hand_id, fixed=(hands, cut, first_open, stock_top))

    def deal(self, table_id: str, hand_id: str, fixed: FixedDeal | None = None) -> None:
        """The dealer's HandDealt: a ``fixed`` one, else the dealer's own deal of the hand's
        SeedsLocked (the table recorded it when the seed window closed) with SERVER_SEED, in
        the layout of the hand's variant."""
        table = self.app.projection.tables[table_id]
        assert table.ctx is not None
        if fixed is not None:
            dealt = hand_dealt(hand_id, fixed_deal(table.ctx.shoe, *fixed), table.ctx.shoe)
        else:
            locks = [
                r.envelope.payload
                for r in self.log.read_stream(TABLE_EVENTS, table_id)
                if isinstance(r.envelope.payload, pb.SeedsLocked)
                and r.envelope.payload.hand_id == hand_id
            ]
            dealt = deal_from_lock(locks[-1], SERVER_SEED)
        self.feed(DEALER_EVENTS, table_id, dealt)


def hand_dealt(hand_id: str, dealt: ShuffleDeal, shoe: Shoe) -> dealer_pb.HandDealt:
    """The dealer's HandDealt of ``dealt`` (no wild cut or open card where the deal has none)."""
    wild_cut, first_open = dealt.wild_cut, dealt.first_open
    return dealer_pb.HandDealt(
        hand_id=hand_id,
        hands=[
            dealer_pb.SeatHand(
                seat=h.seat, cards=[stream_payloads.card_to_pb(c, shoe) for c in h.cards]
            )
            for h in dealt.hands
        ],
        wild_cut=None if wild_cut is None else stream_payloads.card_to_pb(wild_cut, shoe),
        first_open=None if first_open is None else stream_payloads.card_to_pb(first_open, shoe),
        stock=[stream_payloads.card_to_pb(c, shoe) for c in dealt.stock],
    )


def fixed_deal(
    shoe: Shoe, hands: dict[int, str], cut: str, first_open: str, stock_top: str
) -> ShuffleDeal:
    """A deal of ``shoe`` as given (see :meth:`World.prepare_fixed`): the stock is
    ``stock_top`` then the rest of the shoe in its order."""
    remaining = list(shoe.cards)

    def take(text: str) -> tuple[Card, ...]:
        out = []
        for face in text.split():
            card = next(c for c in remaining if c.face == face)
            remaining.remove(card)
            out.append(card)
        return tuple(out)

    given = {seat: take(cards) for seat, cards in hands.items()}
    wild = take(cut)[0] if cut else None
    (open_card,) = take(first_open)
    top = take(stock_top)
    return ShuffleDeal(
        order=(),
        hands=tuple(SeatHand(seat, cards) for seat, cards in sorted(given.items())),
        wild_cut=wild,
        first_open=open_card,
        stock=(*top, *remaining),
    )
