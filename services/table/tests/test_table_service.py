"""The table service's handlers on the in-memory event log, with the other services' events fed
by the test (see world.py)."""

from __future__ import annotations

import pytest
import table_calls
from google.protobuf.message import Message
from world import SERVER_SEED, World, replay_all

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_game import stream_payloads
from rummy_platform.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)
from rummy_platform.topics import CLOCK_EVENTS, FAIRNESS_EVENTS, LEDGER_EVENTS, TABLE_EVENTS
from rummy_rules import registry
from rummy_rules.events import Event, HandEnded, SeatResult
from rummy_rules.settlement import settle_shared
from rummy_table.entrypoints.views import player_view


def table_events(world: World, table_id: str) -> list[Message]:
    return [r.envelope.payload for r in world.log.read_stream(TABLE_EVENTS, table_id)]


def playing_table(world: World, players: tuple[str, ...] = ("alice", "bob")) -> tuple[str, str]:
    table_id = world.open_table()
    for account in players:
        world.sit(table_id, account)
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    return table_id, hand_id


def on_turn(world: World, table_id: str) -> tuple[str, api.PlayerView]:
    view = world.view(table_id, None)
    account = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
    return account, world.view(table_id, account)


def draw(
    world: World, table_id: str, account: str, view: api.PlayerView, rid: str = ""
) -> api.DrawCardResponse:
    return table_calls.draw(
        world.app,
        account,
        api.DrawCardRequest(
            table_id=table_id,
            hand_id=view.hand_id,
            turn_no=view.turn_no,
            client_request_id=rid or world.request_id(),
            source=pb.DRAW_SOURCE_STOCK,
        ),
    )


def discard_last(world: World, table_id: str, account: str) -> None:
    """``account`` (on turn, having drawn) discards the last card of its hand."""
    held = world.view(table_id, account)
    table_calls.discard(
        world.app,
        account,
        world.turn_request(api.DiscardCardRequest, table_id, held, card=held.my_cards[-1]),
    )


# -- seating -------------------------------------------------------------------------------


def test_a_player_takes_the_seat_named_or_else_the_first_free_one() -> None:
    world = World()
    table_id = world.open_table()
    assert world.sit(table_id, "alice", seat=2) == 2
    assert world.sit(table_id, "bob") == 0
    assert world.sit(table_id, "carol") == 1


def test_an_account_takes_one_seat_per_table() -> None:
    world = World()
    table_id = world.open_table()
    world.sit(table_id, "alice")
    with pytest.raises(FailedPrecondition, match="already sit"):
        world.sit(table_id, "alice")


def test_a_taken_seat_or_a_seat_off_the_table_is_refused_and_appends_nothing() -> None:
    world = World()
    table_id = world.open_table()
    world.sit(table_id, "alice", seat=1)
    before = len(table_events(world, table_id))
    with pytest.raises(FailedPrecondition, match="taken"):
        world.sit(table_id, "bob", seat=1)
    with pytest.raises(InvalidArgument):
        world.sit(table_id, "bob", seat=4)
    assert len(table_events(world, table_id)) == before


def test_a_table_opens_only_with_a_seat_count_its_shoes_have_a_shoe_for() -> None:
    world = World()
    with pytest.raises(InvalidArgument, match="seat_count must be one of 2/3/4/5/6/8 .*, got 7"):
        world.open_table(seats=7)
    world.open_table(seats=5)  # on the rulebook's shoe (108 cards)


def test_retrying_open_table_with_the_same_request_id_opens_one_table() -> None:
    world = World()
    request = api.OpenTableRequest(client_request_id="open-1", seat_count=6)
    assert table_calls.open_table(world.app, "op", request) == table_calls.open_table(
        world.app, "op", request
    )
    assert len(table_calls.list_tables(world.app)) == 1


# -- starting hands ------------------------------------------------------------------------


def test_a_hand_starts_only_after_the_start_delay_with_two_players_seated() -> None:
    world = World()
    table_id = world.open_table()
    world.sit(table_id, "alice")
    world.now += 60_000
    assert world.app.tick() == []  # one player
    world.sit(table_id, "bob")
    world.now += 4_999
    assert world.app.tick() == []  # the 5 s delay since the last seat change has not passed
    world.now += 1
    assert len(world.app.tick()) == 1


def test_hand_started_carries_the_seats_rule_set_shoe_and_reservation() -> None:
    world = World()
    table_id = world.open_table(seats=4, point_value=100)
    world.sit(table_id, "alice", seat=1)
    world.sit(table_id, "bob", seat=3)
    world.start_hand(table_id)
    started = [p for p in table_events(world, table_id) if isinstance(p, pb.HandStarted)][0]
    assert [(s.seat, s.account_id) for s in started.seats] == [(1, "alice"), (3, "bob")]
    assert started.reservation_hundredths == 130 * 100
    assert (started.shoe.decks, started.shoe.printed_jokers) == (2, 2)
    assert started.rule_set.turn_seconds == 30 and started.hand_no == 1
    assert started.seat_count == 4


def test_the_dealer_button_moves_one_seat_each_hand() -> None:
    world = World()
    table_id = world.open_table()
    for account in ("alice", "bob", "carol"):
        world.sit(table_id, account)
    dealers = []
    for _ in range(3):
        hand_id = world.start_hand(table_id)
        ctx = world.app.projection.tables[table_id].ctx
        assert ctx is not None
        dealers.append(ctx.dealer_seat)
        world.feed(
            LEDGER_EVENTS,
            table_id,
            ledger_pb.StakeRejected(hand_id=hand_id, seat=9, account_id="nobody"),
        )  # aborts the hand (seat 9 is nobody's: nobody sits out)
    assert dealers == [0, 1, 2]


# -- playing -------------------------------------------------------------------------------


def test_a_command_for_a_past_turn_is_rejected_and_appends_nothing() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    before = len(table_events(world, table_id))
    stale = api.PlayerView()
    stale.CopyFrom(view)
    stale.turn_no = view.turn_no - 1 if view.turn_no > 1 else view.turn_no + 5
    with pytest.raises(FailedPrecondition, match="turn"):
        draw(world, table_id, account, stale)
    assert len(table_events(world, table_id)) == before


def test_a_retried_request_id_returns_the_first_answer_without_acting_twice() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    first = draw(world, table_id, account, view, rid="draw-1")
    count = len(table_events(world, table_id))
    again = draw(world, table_id, account, view, rid="draw-1")
    assert again == first
    assert len(table_events(world, table_id)) == count
    assert len(world.view(table_id, account).my_cards) == 14


def test_a_retried_request_id_is_answered_from_the_log_after_a_restart() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    first = draw(world, table_id, account, view, rid="draw-1")
    world.app = world.new_app()  # a restarted instance: replay only
    assert draw(world, table_id, account, view, rid="draw-1") == first
    assert len(world.view(table_id, account).my_cards) == 14


def test_a_discard_sent_with_the_request_id_of_an_earlier_draw_is_already_exists() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    draw(world, table_id, account, view, rid="move-1")
    held = world.view(table_id, account)
    count = len(table_events(world, table_id))
    discard = api.DiscardCardRequest(
        table_id=table_id,
        hand_id=view.hand_id,
        turn_no=view.turn_no,
        client_request_id="move-1",
        card=held.my_cards[0],
    )
    with pytest.raises(AlreadyExists, match="request id 'move-1' was used for a different request"):
        table_calls.discard(world.app, account, discard)
    assert len(table_events(world, table_id)) == count
    assert len(world.view(table_id, account).my_cards) == 14
    world.app = world.new_app()  # the digest is rebuilt from the log
    with pytest.raises(AlreadyExists):
        table_calls.discard(world.app, account, discard)
    discard.client_request_id = "move-2"
    table_calls.discard(world.app, account, discard)
    assert len(world.view(table_id, account).my_cards) == 13


def test_a_request_id_reused_with_another_body_or_at_another_table_is_already_exists() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    draw(world, table_id, account, view, rid="d-1")
    other = api.DrawCardRequest(
        table_id=table_id,
        hand_id=view.hand_id,
        turn_no=view.turn_no,
        client_request_id="d-1",
        source=pb.DRAW_SOURCE_DISCARD_PILE,
    )
    with pytest.raises(AlreadyExists):
        table_calls.draw(world.app, account, other)
    second = world.open_table()
    with pytest.raises(AlreadyExists):
        table_calls.take_seat(
            world.app, account, api.TakeSeatRequest(table_id=second, client_request_id="d-1")
        )
    assert world.view(second, account).seats == []


def test_open_table_retried_with_another_name_is_already_exists_and_opens_nothing() -> None:
    world = World()
    request = api.OpenTableRequest(client_request_id="open-1", seat_count=4, name="first")
    table_id = table_calls.open_table(world.app, "op", request)
    assert table_calls.open_table(world.app, "op", request) == table_id
    renamed = api.OpenTableRequest(client_request_id="open-1", seat_count=4, name="second")
    with pytest.raises(AlreadyExists, match="was used for a different request"):
        table_calls.open_table(world.app, "op", renamed)
    assert [t.name for t in table_calls.list_tables(world.app)] == ["first"]


def test_list_tables_lists_in_table_id_order_from_a_position_on() -> None:
    world = World()
    opened = sorted(world.open_table() for _ in range(5))
    assert [t.table_id for t in table_calls.list_tables(world.app, 2)] == opened[:2]
    assert [t.table_id for t in table_calls.list_tables(world.app, after=opened[1])] == opened[2:]


def test_a_player_cannot_act_on_another_seats_turn_or_at_a_table_where_it_does_not_sit() -> None:
    world = World()
    table_id, _ = playing_table(world)
    account, view = on_turn(world, table_id)
    other = "bob" if account == "alice" else "alice"
    with pytest.raises(FailedPrecondition, match="seat"):
        draw(world, table_id, other, view)
    with pytest.raises(PermissionDenied):
        draw(world, table_id, "mallory", view)


def test_a_player_sees_its_own_cards_and_a_spectator_sees_none() -> None:
    world = World()
    table_id, _ = playing_table(world)
    alice = world.view(table_id, "alice")
    spectator = world.view(table_id, None)
    assert len(alice.my_cards) == 13 and alice.my_seat == 0
    assert list(spectator.my_cards) == [] and not spectator.HasField("my_seat")
    assert [s.card_count for s in spectator.seats] == [13, 13]
    assert alice.stock_count == spectator.stock_count == 104 + 2 - 26 - 2


def test_a_view_owns_its_cards_so_changing_one_view_leaves_the_next_views_alone() -> None:
    world = World()
    table_id, _ = playing_table(world)
    first = world.view(table_id, "alice")
    cards = [(c.index, c.face) for c in first.my_cards]
    pile = [(c.index, c.face) for c in first.discard_pile]
    for card in [*first.my_cards, *first.discard_pile, first.wild_cut]:
        card.index, card.face = 9999, "XX"
    again = world.view(table_id, "alice")
    assert [(c.index, c.face) for c in again.my_cards] == cards
    assert [(c.index, c.face) for c in again.discard_pile] == pile
    assert again.wild_cut.face != "XX"
    bob = world.view(table_id, "bob")
    assert all(c.face != "XX" for c in [*bob.my_cards, *bob.discard_pile])


def test_a_first_drop_ends_a_two_seat_hand_and_the_result_shows_the_money() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    answer = table_calls.drop(
        world.app,
        account,
        world.turn_request(api.DropRequest, table_id, view, hand_id=hand_id),
    )
    assert (answer.kind, answer.points) == (pb.DROP_KIND_FIRST, 20)
    result = world.app.get_hand_result(None, table_id, hand_id)
    loser = next(line for line in result.settlement if line.account_id == account)
    winner = next(line for line in result.settlement if line.account_id != account)
    assert (loser.points, loser.amount_hundredths) == (20, -2000)
    assert winner.amount_hundredths == 1800 and result.commission_hundredths == 200
    assert all(len(r.cards) == 13 for r in result.results)
    assert world.view(table_id, None).phase == api.HAND_PHASE_ENDED


def test_a_view_says_which_seats_of_the_last_hand_are_still_taken() -> None:
    # The seats of the hand shown keep its players' accounts after the hand; ``seated`` says
    # who still sits at the table (a watcher waits for an empty table by it).
    world = World()
    table_id, _hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    table_calls.drop(
        world.app,
        account,
        world.turn_request(api.DropRequest, table_id, view),
    )
    ended = world.view(table_id, None)
    assert ended.phase == api.HAND_PHASE_ENDED
    assert [(s.account_id, s.seated) for s in ended.seats] == [("alice", True), ("bob", True)]
    request = api.LeaveTableRequest(table_id=table_id, client_request_id=world.request_id())
    table_calls.leave_table(world.app, account, request)
    after = world.view(table_id, None)
    assert after.phase == api.HAND_PHASE_ENDED
    shown = {s.account_id: s.seated for s in after.seats}
    other = ({"alice", "bob"} - {account}).pop()
    assert shown == {account: False, other: True}


def test_the_result_of_a_hand_still_running_is_not_given() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    with pytest.raises(FailedPrecondition):
        world.app.get_hand_result(None, table_id, hand_id)
    with pytest.raises(NotFound):
        world.app.get_hand_result(None, table_id, "no-such-hand")


# -- inputs from other services ------------------------------------------------------------


def test_a_turn_deadline_plays_the_turn_for_the_seat_and_a_stale_one_is_ignored() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    account, view = on_turn(world, table_id)
    deadline = clock_pb.TurnDeadlinePassed(hand_id=hand_id, turn_no=view.turn_no)
    world.feed(CLOCK_EVENTS, table_id, deadline)
    after = world.view(table_id, account)
    assert after.turn_no == view.turn_no + 1 and len(after.my_cards) == 13
    mine = next(s for s in after.seats if s.account_id == account)
    assert mine.missed_turns_in_a_row == 1
    count = len(table_events(world, table_id))
    world.feed(CLOCK_EVENTS, table_id, deadline)  # a second deadline for the same past turn
    assert len(table_events(world, table_id)) == count


def test_a_redelivered_input_is_dropped_by_its_event_id() -> None:
    world = World()
    table_id, hand_id = playing_table(world)
    _, view = on_turn(world, table_id)
    deadline = clock_pb.TurnDeadlinePassed(hand_id=hand_id, turn_no=view.turn_no)
    world.feed(CLOCK_EVENTS, table_id, deadline, event_id="deadline-1")
    count = len(table_events(world, table_id))
    turn = world.view(table_id, None).turn_no
    world.feed(
        CLOCK_EVENTS,
        table_id,
        clock_pb.TurnDeadlinePassed(hand_id=hand_id, turn_no=turn),
        event_id="deadline-1",
    )
    assert len(table_events(world, table_id)) == count


def first_drop(world: World, table_id: str, hand_id: str) -> None:
    account, view = on_turn(world, table_id)
    table_calls.drop(
        world.app,
        account,
        world.turn_request(api.DropRequest, table_id, view, hand_id=hand_id),
    )


def settled_for(ended: pb.HandEnded) -> ledger_pb.HandSettled:
    """The ledger's HandSettled for a hand's result (the journal lines HandEnded asks for)."""
    return ledger_pb.HandSettled(
        hand_id=ended.hand_id,
        journal_transaction_id=f"tx-{ended.hand_id}",
        lines=[
            ledger_pb.JournalLine(
                account_id=line.account_id, amount_hundredths=line.amount_hundredths
            )
            for line in ended.settlement
        ],
        commission_hundredths=ended.commission_hundredths,
    )


def test_a_reveal_and_settlement_arriving_after_the_next_hand_started_close_the_earlier_hand() -> (
    None
):
    world = World()
    table_id, first = playing_table(world)
    first_drop(world, table_id, first)
    ended = world.app.get_hand_result(None, table_id, first)
    second = world.start_hand(table_id)
    assert second != first
    reveal = fairness_pb.SeedRevealed(hand_id=first, server_seed=SERVER_SEED)
    world.feed(FAIRNESS_EVENTS, table_id, reveal, event_id="reveal-1")
    world.feed(LEDGER_EVENTS, table_id, settled_for(ended), event_id="settled-1")
    stream = [r.envelope for r in world.log.read_stream(TABLE_EVENTS, table_id)]
    started_at = next(
        e.stream_version
        for e in stream
        if isinstance(e.payload, pb.HandStarted) and e.payload.hand_id == second
    )
    closing = [e for e in stream if e.causation_id in ("reveal-1", "settled-1")]
    assert [type(e.payload) for e in closing] == [
        fairness_pb.SeedRevealed,
        ledger_pb.HandSettled,
    ]
    assert all(e.stream_version > started_at and e.correlation_id == first for e in closing)
    table = world.app.projection.tables[table_id]
    assert first in table.revealed and first in table.settled and table.hand_id == second

    world.feed(FAIRNESS_EVENTS, table_id, reveal, event_id="reveal-1")  # redelivered
    world.feed(FAIRNESS_EVENTS, table_id, reveal, event_id="reveal-again")  # a second reveal
    world.feed(
        FAIRNESS_EVENTS, table_id, fairness_pb.SeedRevealed(hand_id="elsewhere"), event_id="r-9"
    )
    assert len(world.log.read_stream(TABLE_EVENTS, table_id)) == len(stream)

    checks = pytest.importorskip("rummy_ops.replay.checks")
    proof = checks.replay_hand(table_id, first, [e for e in stream if e.correlation_id == first])
    assert proof.ok and proof.outcome == "ended"
    assert {"commitment", "deal", "ledger-event"} <= set(proof.checked)


def test_a_settlement_the_ledger_refused_is_recorded_and_the_views_say_the_hand_was_voided() -> (
    None
):
    world = World()
    table_id, hand_id = playing_table(world)
    first_drop(world, table_id, hand_id)
    assert world.view(table_id, "alice").voided_reason == ""
    reason = f"hand {hand_id}: seat 1 would pay 2500 hundredths, more than the 2000 reserved"
    refused = ledger_pb.SettlementRefused(hand_id=hand_id, reason=reason)
    world.feed(LEDGER_EVENTS, table_id, refused, event_id="refused-1")
    stream = [r.envelope for r in world.log.read_stream(TABLE_EVENTS, table_id)]
    recorded = [e for e in stream if e.causation_id == "refused-1"]
    assert [type(e.payload) for e in recorded] == [ledger_pb.SettlementRefused]
    assert recorded[0].correlation_id == hand_id
    for account in ("alice", "bob", None):
        view = world.view(table_id, account)
        assert (view.hand_id, view.voided_reason) == (hand_id, reason)
    assert world.app.voided_reason(table_id, hand_id) == reason
    assert world.app.voided_reason("", hand_id) == reason
    # a later settlement or second refusal of the same hand is not recorded
    count = len(table_events(world, table_id))
    ended = world.app.get_hand_result(None, table_id, hand_id)
    world.feed(LEDGER_EVENTS, table_id, settled_for(ended), event_id="settled-late")
    world.feed(LEDGER_EVENTS, table_id, refused, event_id="refused-2")
    assert len(table_events(world, table_id)) == count
    # the table rebuilt from its stream says the same
    assert world.new_app("table-writer-2").voided_reason(table_id, hand_id) == reason


def test_a_rejected_stake_aborts_the_hand_and_the_seat_sits_out_until_it_sits_again() -> None:
    world = World()
    table_id = world.open_table()
    for account in ("alice", "bob", "carol"):
        world.sit(table_id, account)
    hand_id = world.start_hand(table_id)
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.StakeRejected(
            hand_id=hand_id,
            seat=2,
            account_id="carol",
            reason=ledger_pb.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE,
            available_hundredths=500,
            required_hundredths=13_000,
        ),
    )
    carol = world.view(table_id, "carol")
    assert carol.phase == api.HAND_PHASE_ABORTED
    assert "13000" in next(s for s in carol.seats if s.seat == 2).sitting_out_reason
    world.start_hand(table_id)
    ctx = world.app.projection.tables[table_id].ctx
    assert ctx is not None
    assert sorted(ctx.accounts) == [0, 1]


def test_a_replayed_projection_equals_the_live_one() -> None:
    world = World()
    table_id, hand_id = playing_table(world, ("alice", "bob", "carol"))
    for _ in range(4):
        _, view = on_turn(world, table_id)
        world.feed(
            CLOCK_EVENTS,
            table_id,
            clock_pb.TurnDeadlinePassed(hand_id=hand_id, turn_no=view.turn_no),
        )
    account, view = on_turn(world, table_id)
    draw(world, table_id, account, view)
    live = world.app.projection.tables[table_id]
    replayed = world.new_app().projection.tables[table_id]
    assert replayed.hand == live.hand
    assert (
        replayed.version == live.version
        and replayed.answers.payloads.keys() == live.answers.payloads.keys()
    )
    for who in ("alice", "bob", "carol", None):
        assert player_view(replayed, who) == player_view(live, who)


def test_a_fenced_instance_answers_unavailable_and_appends_nothing() -> None:
    world = World()
    table_id = world.open_table()
    old = world.app
    world.app = world.new_app()  # same writer id: fences the old one
    with pytest.raises(Unavailable):
        table_calls.take_seat(
            old, "alice", api.TakeSeatRequest(table_id=table_id, client_request_id="r1")
        )
    assert old.fenced
    assert world.sit(table_id, "alice") == 0
    assert len(replay_all(world.log)) == 2


def test_a_valid_declare_ends_the_hand_with_the_counted_loser_paying_the_winner() -> None:
    world = World()
    table_id = world.open_table(point_value=100, commission_bps=1000)
    world.sit(table_id, "alice")
    world.sit(table_id, "bob")
    hand_id = world.start_hand(table_id)  # alice (seat 0) deals; bob (seat 1) plays first
    world.prepare_fixed(
        table_id,
        hand_id,
        hands={
            1: "AH 2H 3H 4S 5S 6S 7D 8D 9D 10C JC QC 5D",
            0: "KS KH 9S 9H 7C 7H 3S 3D QD QH 8C 8H 6D",
        },
        cut="2C",
        first_open="4D",
        stock_top="KC",
    )
    view = world.view(table_id, "bob")
    assert view.turn_seat == 1
    drawn = draw(world, table_id, "bob", view)
    assert drawn.card.face == "KC"
    face_down = next(c for c in world.view(table_id, "bob").my_cards if c.face == "5D")
    answer = table_calls.declare(
        world.app,
        "bob",
        world.turn_request(
            api.DeclareRequest, table_id, view, hand_id=hand_id, face_down=face_down
        ),
    )
    assert answer.valid and len(answer.arrangement.melds) == 4
    result = world.app.get_hand_result("alice", table_id, hand_id)
    alice = next(r for r in result.results if r.account_id == "alice")
    # Alice's 7H 8H 9H is a pure sequence; the rest count: K K 9 7 3 3 Q Q 8 6 = 76 points
    assert (alice.outcome, alice.points) == ("counted", 76)
    assert [m.kind for m in alice.arrangement.melds] == ["pure_sequence"]
    lines = {line.account_id: line.amount_hundredths for line in result.settlement}
    # 76 x 100 = 7600 paid; 10 % commission (760) to the house; bob receives 6840
    assert lines == {"alice": -7_600, "bob": 6_840} and result.commission_hundredths == 760
    assert world.view(table_id, None).result.winner_seat == 1


def test_a_players_command_is_folded_with_the_state_decide_produced_not_decoded_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    table_id, _ = playing_table(world, ("alice", "bob"))
    account, view = on_turn(world, table_id)
    decoded: list[object] = []
    real = stream_payloads.from_payload

    def counting(
        payload: Message, ctx: stream_payloads.HandContext, at_ms: int
    ) -> tuple[Event, ...]:
        decoded.append(payload)
        return real(payload, ctx, at_ms)

    monkeypatch.setattr(stream_payloads, "from_payload", counting)
    draw(world, table_id, account, view)

    assert decoded == []  # the CardDrawn appended was not decoded back into the hand
    monkeypatch.undo()
    live = world.app.projection.tables[table_id]
    assert world.new_app().projection.tables[table_id].hand == live.hand


def _ended(
    winners: tuple[int, ...], points: dict[int, int]
) -> tuple[stream_payloads.HandContext, HandEnded]:
    """A HandEnded of a four-seat Indian table at 0.10 a point and 10% whose pot ``winners``
    share (the codec maps any variant's HandEnded the same way), and its hand's context."""
    rules = registry.lookup("indian-points").house_rule_set(4, 10, 1000)
    settlement = settle_shared(rules, winners, points)
    results = tuple(
        SeatResult(s, f"acct-{s}", "won" if s in winners else "counted", p, (), (), ())
        for s, p in sorted({**points, **dict.fromkeys(winners, 0)}.items())
    )
    ctx = stream_payloads.HandContext("h-shared", 1, rules, {s: f"acct-{s}" for s in range(4)}, 0)
    ended = HandEnded(winner_seat=winners[0], results=results, settlement=settlement, at_ms=5)
    return ctx, ended


def test_hand_ended_carries_every_winner_of_a_shared_pot_through_the_wire() -> None:
    ctx, ended = _ended((2, 0), {1: 25, 3: 10})
    payload = stream_payloads.hand_ended_to_pb(ended, ctx)
    assert (payload.winner_seat, list(payload.co_winner_seats)) == (2, [0])
    # 350 paid, 35 commission, 315 shared: 158 to seat 2 (first in the variant's order), 157
    money = {line.seat: line.amount_hundredths for line in payload.settlement}
    assert money == {0: 157, 1: -250, 2: 158, 3: -100} and payload.commission_hundredths == 35
    decoded = stream_payloads.hand_ended_from_pb(
        pb.HandEnded.FromString(payload.SerializeToString()), ctx, 5
    )
    assert decoded == ended and decoded.winner_seats == (0, 2)


def test_a_one_winner_hand_ended_is_written_as_before_and_an_old_record_decodes_the_same() -> None:
    ctx, ended = _ended((1,), {0: 20, 2: 80, 3: 0})
    payload = stream_payloads.hand_ended_to_pb(ended, ctx)
    # the shared-pot field is absent from a one-winner record: its bytes are those of before
    assert 8 not in [field.number for field, _ in payload.ListFields()]
    old = pb.HandEnded.FromString(payload.SerializeToString())
    decoded = stream_payloads.hand_ended_from_pb(old, ctx, 5)
    assert decoded == ended and decoded.winner_seats == (1,)
    assert decoded.settlement.co_winner_seats == ()
