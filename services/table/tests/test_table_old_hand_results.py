"""GetHandResult of a hand an older table service recorded: before issue 29 a HandEnded counted
every seat's deadwood points in Indian points' card values whatever the variant (a Rummy 500
ace as 10, not 15); the table reads such a record as its variant counts it
(``rummy_game.upcast.hand_payload``), from its recent results and from the log alike."""

from __future__ import annotations

import dataclasses

import table_calls
from test_table_service import discard_last
from world import World, replay_all

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_game.variant_wire import cards_from_pb
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules.wild import hand_points


def _played_round(world: World) -> tuple[str, str]:
    """A 2-seat Rummy 500 round dealt from the test seed, drawn and discarded until the stock
    is empty (the round ends with cards in both hands); its table and hand ids."""
    table_id = world.open_table(seats=2, rules=cards_pb2.RuleSet(variant="rummy500"))
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    accounts = {s.seat: s.account_id for s in world.view(table_id, None).seats}
    while world.view(table_id, None).phase == api.HAND_PHASE_PLAYING:
        view = world.view(table_id, None)
        account = accounts[view.turn_seat]
        request = world.turn_request(
            api.DrawCardRequest, table_id, view, source=pb.DRAW_SOURCE_STOCK
        )
        if table_calls.draw(world.app, account, request).HasField("card"):
            discard_last(world, table_id, account)
    return table_id, hand_id


def test_an_old_rummy500_record_reads_with_its_aces_in_hand_counted_15() -> None:
    played = World()
    table_id, hand_id = _played_round(played)
    today = played.app.get_hand_result(None, table_id, hand_id)
    table = played.app.projection.tables[table_id]
    assert table.ctx is not None
    old = pb.HandEnded()
    old.CopyFrom(today)
    for r in old.results:  # what the writer before counted: Indian values (an ace 10)
        deadwood = cards_from_pb(r.arrangement.deadwood, table.ctx.shoe)
        r.arrangement.deadwood_points = hand_points(deadwood, None)
    assert old != today, "the seeded round leaves an ace in a hand (else this proves nothing)"

    # The same stream, its HandEnded as the older writer recorded it, read by a new service.
    kept = World(now=played.now)
    for envelope in replay_all(played.log):
        payload = old if isinstance(envelope.payload, pb.HandEnded) else envelope.payload
        kept.log.append(TABLE_EVENTS, dataclasses.replace(envelope, payload=payload))
    kept.app = kept.new_app()
    assert kept.app.get_hand_result(None, table_id, hand_id) == today  # its recent results
    assert kept.start_hand(table_id) != hand_id  # the next hand
    kept.app.projection.tables[table_id].results.clear()  # as once the hand is past the window
    assert kept.app.get_hand_result(None, table_id, hand_id) == today  # read back from the log
