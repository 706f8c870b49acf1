"""The table service hosts a variant it was never told about: the test suite's toy (five-card
knock, 2-3 seats, one deck, no wild cut, its own options, command and event in ``rummy.toy.v1``),
registered here only, played through the public gRPC API on a real Kafka table stream, and
replayed from that stream through ``rummy_game`` to the same state."""

from __future__ import annotations

import itertools
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
from google.protobuf import any_pb2
from google.protobuf.message import Message
from prometheus_client import CollectorRegistry
from served_table import stub
from world import fixed_deal, hand_dealt, lock_seeds

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role
from rummy_platform.config import Settings
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import GroupCommitWriter, KafkaEventLog, TopicPartition
from rummy_platform.server import ServiceHost
from rummy_platform.topics import (
    DEALER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_table.adapters.metrics import TableMetrics
from rummy_table.application.app import TableApp
from rummy_table.application.held_table import HeldTable
from rummy_table.entrypoints import grpc as grpc_adapter
from rummy_table.entrypoints.views import player_view
from rummy_testing.token_keys import token_settings
from toy_variant import TOY_NAME, toy_pb2
from toy_variant.wire import register_toy

T0 = 1_800_000_000_000
REPO = Path(__file__).resolve().parents[3]


@dataclass
class ToyWorld:
    app: TableApp
    log: KafkaEventLog
    host: ServiceHost
    prefix: str
    clock: list[int]
    ids: Iterator[int]

    def feed(self, topic: str, table_id: str, payload: Message) -> None:
        """Another service's event, consumed by the table (appended with it in one
        transaction on the real table stream)."""
        envelope = Envelope.new(
            payload,
            stream_id=table_id,
            stream_version=next(self.ids),
            occurred_at=datetime.fromtimestamp(self.clock[0] / 1000, UTC),
        )
        self.app.on_input(envelope, TopicPartition(self.prefix + topic, 0), next(self.ids))

    def recorded(self, table_id: str) -> list[Envelope]:
        """The table's stream as Kafka holds it, once it holds everything the table committed
        (a read-committed reader sees a transaction once its markers are written)."""
        version = self.app.projection.tables[table_id].version
        deadline = time.monotonic() + 15
        while True:
            out = [r.envelope for r in self.log.read_stream(self.prefix + TABLE_EVENTS, table_id)]
            if (out and out[-1].stream_version >= version) or time.monotonic() > deadline:
                return out
            time.sleep(0.05)

    def player(self, account: str) -> api_grpc.TableServiceStub:
        return stub(self.host, account, Role.PLAYER)


@pytest.fixture
def toy_world(kafka_bootstrap: str) -> Iterator[ToyWorld]:
    register_toy()
    prefix = f"toy{uuid.uuid4().hex[:8]}-"
    log = KafkaEventLog(kafka_bootstrap)
    log.ensure_topics(event_topic_specs(prefix=prefix))
    clock = [T0]
    ids = itertools.count(1)
    app = TableApp(
        GroupCommitWriter(log.transactional_writer(prefix + "table")),
        topic=prefix + TABLE_EVENTS,
        now_ms=lambda: clock[0],
        new_hand_id=lambda: f"toy-hand-{next(ids)}",
        metrics=TableMetrics.unregistered(),
        render_view=player_view,
    )
    settings = Settings(**token_settings(), grpc_port=0, metrics_port=0)
    host = ServiceHost("table", settings, registry=CollectorRegistry(), aio=True)
    servicer = grpc_adapter.TableServicer(app, max_watches_per_account=2)
    host.on_stopping(servicer.watches.close_all)
    host.add_servicer(grpc_adapter.add_to_server, servicer, grpc_adapter.SERVICE_NAME)
    host.start()
    try:
        yield ToyWorld(app, log, host, prefix, clock, ids)
    finally:
        host.stop(grace_seconds=1)
        log.close()


def _toy_rule_set(max_points: int) -> cards_pb2.RuleSet:
    options = cards_pb2.RuleSet(variant=TOY_NAME, start_delay_seconds=0)
    options.other_variant.Pack(toy_pb2.ToyOptions(max_points=max_points, max_turns=6))
    return options


def _play(hand: api.PlayerView, table_id: str, command: Message) -> api.PlayRequest:
    """A Play of ``command`` packed (an ``Any`` given is sent as it is: bytes of the test's)."""
    request = api.PlayRequest(
        table_id=table_id,
        hand_id=hand.hand_id,
        turn_no=hand.turn_no,
        client_request_id=str(uuid.uuid4()),
    )
    if isinstance(command, any_pb2.Any):
        request.command.CopyFrom(command)
    else:
        request.command.Pack(command)
    return request


def _deal(world: ToyWorld, table_id: str, hand_id: str, low_seat: int) -> None:
    """The dealer's deal: ``low_seat`` holds A-5 of hearts (15 points), the other seat the five
    highest spades (50); the seven of clubs is the upcard; the rest of the deck is the stock."""
    table = world.app.projection.tables[table_id]
    assert table.ctx is not None
    shoe = table.ctx.shoe
    assert (shoe.decks, shoe.printed_jokers, shoe.size) == (1, 0, 52)
    hands = {low_seat: "AH 2H 3H 4H 5H", 1 - low_seat: "KS QS JS 10S 9S"}
    dealt = fixed_deal(shoe, hands, cut="", first_open="7C", stock_top="")
    world.feed(DEALER_EVENTS, table_id, hand_dealt(hand_id, dealt, shoe))


def test_a_toy_table_plays_a_hand_through_play_to_its_end_and_replays_to_the_same_state(
    toy_world: ToyWorld,
) -> None:
    world = toy_world
    operator = stub(world.host, "op", Role.OPERATOR)
    opened = operator.OpenTable(
        api.OpenTableRequest(
            client_request_id="open-toy",
            seat_count=2,
            point_value_hundredths=10,
            commission_bps=1000,
            rule_set=_toy_rule_set(max_points=20),
        )
    )
    table_id = opened.table_id
    rules = world.app.projection.tables[table_id].rule_set
    assert (rules.variant, rules.seats, rules.hand_size, rules.max_loss_points) == (
        TOY_NAME,
        2,
        5,
        20,
    )
    players = {"alice": world.player("alice"), "bob": world.player("bob")}
    seats = {
        name: p.TakeSeat(api.TakeSeatRequest(table_id=table_id, client_request_id=name)).seat
        for name, p in players.items()
    }
    world.clock[0] += 1_000
    (hand_id,) = world.app.tick()
    lock_seeds(world, table_id, hand_id, b"toy server seed")
    _deal(world, table_id, hand_id, low_seat=seats["alice"])

    # Turn 1: the seat on turn draws and discards the card it drew (the generic commands).
    view = world.app.view("alice", table_id)
    assert view.phase == api.HAND_PHASE_PLAYING and not view.HasField("wild_cut")
    first = next(n for n, s in seats.items() if s == view.turn_seat)
    second = next(n for n in seats if n != first)
    drawn = players[first].DrawCard(
        api.DrawCardRequest(
            table_id=table_id,
            hand_id=hand_id,
            turn_no=view.turn_no,
            client_request_id="d1",
            source=pb.DRAW_SOURCE_STOCK,
        )
    )
    players[first].DiscardCard(
        api.DiscardCardRequest(
            table_id=table_id,
            hand_id=hand_id,
            turn_no=view.turn_no,
            client_request_id="x1",
            card=drawn.card,
        )
    )
    view = world.app.view(second, table_id)
    assert view.turn_seat == seats[second] and view.turn_no == 2

    # Bad commands are INVALID_ARGUMENT, and nothing is appended.
    before = len(world.recorded(table_id))
    malformed = api.PlayRequest().command
    malformed.type_url = "type.googleapis.com/rummy.toy.v1.Knock"
    malformed.value = b"\xff\xff\xff"
    for command, says in (
        (cards_pb2.Card(index=1), "unknown command type 'rummy.common.v1.Card'"),
        (indian_pb.Declare(), "a command of variant 'indian-points'"),
        (malformed, "not a valid rummy.toy.v1.Knock"),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            players[second].Play(_play(view, table_id, command))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert says in (refused.value.details() or "")
    with pytest.raises(grpc.RpcError) as refused:
        players[second].Declare(
            api.DeclareRequest(
                table_id=table_id, hand_id=hand_id, turn_no=2, client_request_id="dec"
            )
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "has no Declare" in (refused.value.details() or "")
    assert len(world.recorded(table_id)) == before

    # Turn 2: the toy's own command, through Play, ends the hand; the answer is the toy's.
    reply = players[second].Play(_play(view, table_id, toy_pb2.Knock()))
    answer = toy_pb2.KnockAnswer()
    assert reply.answer.Unpack(answer)
    assert answer.winner_seat == seats["alice"]
    assert answer.points == (20 if second == "bob" else 0)

    result = (
        players["alice"]
        .GetHandResult(api.GetHandResultRequest(table_id=table_id, hand_id=hand_id))
        .result
    )
    assert result.winner_seat == seats["alice"]
    points = {r.seat: r.points for r in result.results}
    assert points == {seats["alice"]: 0, seats["bob"]: 20}  # 50 - 15 = 35, capped at 20
    amounts = {line.seat: line.amount_hundredths for line in result.settlement}
    assert amounts[seats["bob"]] == -200  # 20 points x 10 hundredths
    assert amounts[seats["alice"]] + result.commission_hundredths == 200

    # The stream holds the toy's own event under its own type; replayed through rummy_game it
    # gives the table's state.
    recorded = world.recorded(table_id)
    assert "rummy.toy.v1.Knocked" in [e.type for e in recorded]
    replayed = HeldTable.opened_from(recorded[0])
    for envelope in recorded[1:]:
        replayed.apply(envelope)
    live = world.app.projection.tables[table_id]
    assert replayed.hand == live.hand
    assert replayed.results[hand_id] == result
    assert replayed.variant.is_over(replayed.hand)


def test_no_host_code_names_the_toy_variant() -> None:
    found = subprocess.run(
        ["git", "grep", "-n", "-i", "-E", "toy", "--", "services/*/src", "libs/*/src"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 1, found.stdout  # 1: no match
