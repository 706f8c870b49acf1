"""A draw that takes nothing: a variant whose empty stock ends the round (Rummy 500,
docs/rules/rummy500.md#empty-stock) records the draw and ends the hand; DrawCard answers with no
card, and the same request sent again gets the same answer."""

from __future__ import annotations

import hashlib

import table_calls
from test_table_service import discard_last
from world import SERVER_SEED, World, hand_dealt

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.common.v1 import cards_pb2
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.topics import CLOCK_EVENTS, DEALER_EVENTS, FAIRNESS_EVENTS, LEDGER_EVENTS
from rummy_rules.shuffle import ShuffleInputs, deal


def _deal_as_the_variant_does(world: World, table_id: str, hand_id: str) -> None:
    """Stakes held, the commitment, the seed window closed with no client seed, and the deal of
    SERVER_SEED in the hand's variant's layout (``Variant.deal_layout``)."""
    table = world.app.projection.tables[table_id]
    ctx = table.ctx
    assert ctx is not None
    reservations = [
        ledger_pb.Reservation(seat=s, account_id=a, amount_hundredths=20_000)
        for s, a in sorted(ctx.accounts.items())
    ]
    reserved = ledger_pb.StakesReserved(hand_id=hand_id, reservations=reservations)
    world.feed(LEDGER_EVENTS, table_id, reserved)
    commitment = hashlib.sha256(SERVER_SEED).digest()
    world.feed(
        FAIRNESS_EVENTS,
        table_id,
        fairness_pb.SeedCommitted(hand_id=hand_id, commitment_sha256=commitment),
    )
    world.feed(CLOCK_EVENTS, table_id, clock_pb.SeedWindowClosed(hand_id=hand_id))
    layout = table.variant.deal_layout(ctx.rule_set)
    seats = sorted(ctx.accounts)
    inputs = ShuffleInputs.of(SERVER_SEED, hand_id, dict.fromkeys(seats, b""))
    dealt = deal(inputs, layout.shoe, seats, ctx.dealer_seat, layout.hand_size, layout.shape)
    world.feed(DEALER_EVENTS, table_id, hand_dealt(hand_id, dealt, ctx.shoe))


def test_a_draw_from_the_empty_stock_is_answered_without_a_card_and_ends_the_hand() -> None:
    world = World()
    table_id = world.open_table(seats=2, rules=cards_pb2.RuleSet(variant="rummy500"))
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    hand_id = world.start_hand(table_id)
    _deal_as_the_variant_does(world, table_id, hand_id)
    accounts = {s.seat: s.account_id for s in world.view(table_id, None).seats}
    while True:
        view = world.view(table_id, None)
        assert view.phase == api.HAND_PHASE_PLAYING
        account = accounts[view.turn_seat]
        request = api.DrawCardRequest(
            table_id=table_id,
            hand_id=hand_id,
            turn_no=view.turn_no,
            client_request_id=world.request_id(),
            source=pb.DRAW_SOURCE_STOCK,
        )
        if view.stock_count == 0:
            break
        assert table_calls.draw(world.app, account, request).HasField("card")
        discard_last(world, table_id, account)
    answer = table_calls.draw(world.app, account, request)
    assert not answer.HasField("card")
    assert world.view(table_id, None).phase == api.HAND_PHASE_ENDED
    assert world.app.get_hand_result(None, table_id, hand_id).hand_id == hand_id
    again = table_calls.draw(world.app, account, request)  # answered from its first events
    assert not again.HasField("card")
