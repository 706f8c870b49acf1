"""A table hosts a match format: a pool 101 match played to its end through the public API (an
elimination, a rejoin), a deals match with a tie-break deal, a best of 3, a leave mid-deal, a deal
aborted and replayed, a close mid-match, a rejected entry; bad options and bad match commands
refused with nothing appended; the table rebuilt from its stream shows the same match."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
import table_calls
from google.protobuf.message import Message
from match_world import (
    hold_money,
    last,
    match_payloads,
    next_step,
    open_match_table,
    play_deal,
    seat_all,
)
from test_table_service import table_events
from test_table_snapshot import PARTITIONS, assert_same, fold, table_records
from world import World

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from rummy_platform.eventlog.partitioner import partition_for
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS
from rummy_table.adapters import snapshot
from rummy_table.application.projection import Projection

POOL_101 = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=500, rejoin=True))


def _names(payloads: Iterable[Message]) -> list[str]:
    return [type(p).__name__ for p in payloads]


def _command(world: World, table_id: str, account: str, message: Message) -> api.PlayResponse:
    request = api.PlayRequest(table_id=table_id, client_request_id=world.request_id())
    request.command.Pack(message)
    return table_calls.play(world.app, account, request)


def _started_match(
    world: World, options: mpb.MatchOptions, accounts: tuple[str, ...], **kw: int
) -> str:
    table_id = open_match_table(world, options, seats=len(accounts), **kw)
    seat_all(world, table_id, accounts)
    next_step(world, table_id)  # MatchStarted + the entries asked
    if any(isinstance(p, mpb.MoneyReserved) for p in table_events(world, table_id)):
        hold_money(world, table_id)
        next_step(world, table_id)  # the first deal
    return table_id


def _deal_seats(world: World, table_id: str) -> list[int]:
    return sorted(s.seat for s in last(world, table_id, pb.HandStarted).seats)


def test_a_pool_101_match_plays_to_its_end_with_an_elimination_and_a_rejoin() -> None:
    world = World()
    table_id = open_match_table(world, POOL_101, seats=3, commission_bps=1000)
    seat_all(world, table_id, ("ann", "bob", "cat"))
    next_step(world, table_id)
    assert _names(match_payloads(world, table_id)) == ["MatchStarted"] + ["MoneyReserved"] * 3
    assert next_step(world, table_id) == []  # no deal before the entries are held
    hold_money(world, table_id)
    next_step(world, table_id)
    started = last(world, table_id, pb.HandStarted)
    assert started.point_value_hundredths == 0
    assert started.shoe.decks == 2 and started.shoe.printed_jokers == 4
    assert last(world, table_id, mpb.DealStarted).hand_id == started.hand_id

    for _ in range(2):  # totals 0 / 80 / 40
        play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})
        next_step(world, table_id)
    play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})  # bob 120: out
    view = world.view(table_id, "bob").match
    assert [(s.status, s.total) for s in view.seats] == [("in", 0), ("eliminated", 120), ("in", 60)]
    assert view.seats[1].rejoin_total == 61
    answer = mpb.MatchCommandAnswer()
    assert _command(world, table_id, "bob", mpb.AcceptRejoin()).answer.Unpack(answer)
    assert answer.total == 61
    assert last(world, table_id, mpb.MoneyReserved).purpose == "rejoin"
    assert next_step(world, table_id) == []  # the rejoin's entry is held first
    hold_money(world, table_id, "rejoin")
    next_step(world, table_id)
    assert _deal_seats(world, table_id) == [0, 1, 2]

    play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})  # bob 101 again: out
    assert world.view(table_id, None).match.seats[1].status == "eliminated"
    assert not world.view(table_id, None).match.seats[1].HasField("rejoin_total")  # once only
    next_step(world, table_id)
    assert _deal_seats(world, table_id) == [0, 2]  # bob stays seated, not dealt in
    assert world.view(table_id, "bob").my_seat == 1
    play_deal(world, table_id, {0: "win", 2: "middle"})  # cat 120: ann is the last left
    ended = last(world, table_id, mpb.MatchEnded)
    assert list(ended.winners) == [0] and ended.reason == "last_left"
    # Pool 4 x 500 = 2000, 10% = 200; ann 2000 - 200 - 500.
    money = ended.settlement
    assert (money.pool_hundredths, money.commission_hundredths) == (2000, 200)
    assert [(ln.seat, ln.held_hundredths, ln.amount_hundredths) for ln in money.lines] == [
        (0, 500, 1300),
        (1, 1000, -1000),
        (2, 500, -500),
    ]
    names = _names(table_events(world, table_id))
    scored = len(names) - 1 - names[::-1].index("DealScored")
    assert names[scored - 1] == "HandEnded"  # the deal's result follows its hand
    view = world.view(table_id, None).match
    assert view.phase == "ended" and view.WhichOneof("result") == "ended"


def test_the_next_match_starts_when_the_seats_are_full_again_with_a_new_id() -> None:
    world = World()
    options = mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=2))
    table_id = _started_match(world, options, ("ann", "bob"))
    first = world.view(table_id, None).match.match_id
    play_deal(world, table_id, {0: "win", 1: "first"})
    next_step(world, table_id)
    play_deal(world, table_id, {0: "win", 1: "first"})
    assert world.view(table_id, None).match.phase == "ended"
    next_step(world, table_id)  # a free table: the next match and its first deal at once
    view = world.view(table_id, None).match
    assert view.match_id != first and view.phase == "in_deal"
    assert _names(match_payloads(world, table_id))[-2:] == ["MatchStarted", "DealStarted"]


def test_a_deals_match_tied_after_its_deals_plays_a_tie_break_deal() -> None:
    world = World()
    options = mpb.MatchOptions(deals=mpb.DealsOptions(deals=2, entry_fee_hundredths=1000))
    table_id = _started_match(world, options, ("ann", "bob"), commission_bps=1500)
    play_deal(world, table_id, {0: "win", 1: "first"})
    next_step(world, table_id)
    play_deal(world, table_id, {0: "first", 1: "win"})
    view = world.view(table_id, None).match
    assert [s.chips for s in view.seats] == [160, 160]
    assert view.deals_left == 0 and view.next_seats_limited
    assert isinstance(last(world, table_id, mpb.TieBreakDue), mpb.TieBreakDue)
    next_step(world, table_id)
    assert last(world, table_id, mpb.DealStarted).tie_break
    play_deal(world, table_id, {0: "win", 1: "middle"})
    ended = last(world, table_id, mpb.MatchEnded)
    assert list(ended.winners) == [0] and ended.reason == "most_chips"
    # Pool 2000, 15% = 300: ann 2000 - 300 - 1000.
    assert [ln.amount_hundredths for ln in ended.settlement.lines] == [700, -1000]


def _play_best_of_3(world: World, table_id: str) -> None:
    """Three deals of a best of 3 of three seats: ann wins the first and the last."""
    for i, plan in enumerate(
        (
            {0: "win", 1: "first", 2: "middle"},
            {0: "first", 1: "win", 2: "first"},
            {0: "win", 1: "middle", 2: "first"},
        )
    ):
        if i:
            next_step(world, table_id)
        play_deal(world, table_id, plan)


def test_a_best_of_3_goes_to_the_lowest_total() -> None:
    world = World()
    options = mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=3, entry_fee_hundredths=300))
    table_id = _started_match(world, options, ("ann", "bob", "cat"), commission_bps=500)
    _play_best_of_3(world, table_id)
    assert [s.total for s in world.view(table_id, None).match.seats] == [20, 60, 80]
    ended = last(world, table_id, mpb.MatchEnded)
    assert list(ended.winners) == [0] and ended.reason == "lowest_total"
    # Pool 900, 5% = 45: ann 900 - 45 - 300 = 555.
    assert [ln.amount_hundredths for ln in ended.settlement.lines] == [555, -300, -300]


def test_a_seat_that_leaves_mid_deal_is_scored_its_middle_drop_and_is_out() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=500))
    table_id = _started_match(world, options, ("ann", "bob", "cat"))
    world.prepare(table_id, world.view(table_id, None).hand_id)
    table_calls.leave_table(
        world.app, "cat", api.LeaveTableRequest(table_id=table_id, client_request_id="x1")
    )
    left = last(world, table_id, mpb.SeatLeft)
    assert (left.seat, left.mid_deal) == (2, True)
    ended = play_deal(world, table_id, {0: "win", 1: "first"})
    assert {r.seat: r.points for r in ended.results}[2] == 40
    assert _names(match_payloads(world, table_id)).count("SeatLeft") == 1
    assert [s.status for s in world.view(table_id, None).match.seats] == ["in", "in", "left"]
    next_step(world, table_id)
    assert _deal_seats(world, table_id) == [0, 1]
    play_deal(world, table_id, {0: "first", 1: "win"})
    table_calls.leave_table(
        world.app, "bob", api.LeaveTableRequest(table_id=table_id, client_request_id="x2")
    )
    ended_match = last(world, table_id, mpb.MatchEnded)
    assert list(ended_match.winners) == [0]
    # Pool 1500, 10% = 150: ann 1500 - 150 - 500 = 850; the others forfeit their entries.
    assert [ln.amount_hundredths for ln in ended_match.settlement.lines] == [850, -500, -500]


def test_a_hand_aborted_mid_match_voids_the_deal_and_deals_it_again_to_the_same_seats() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=500))
    table_id = _started_match(world, options, ("ann", "bob", "cat"))
    play_deal(world, table_id, {0: "win", 1: "first", 2: "first"})
    next_step(world, table_id)
    hand_id = world.view(table_id, None).hand_id
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.StakeRejected(hand_id=hand_id, seat=1, account_id="bob"),
    )
    voided = last(world, table_id, mpb.DealVoided)
    assert (voided.deal_no, voided.hand_id) == (2, hand_id)
    assert [s.held_hundredths for s in world.view(table_id, None).match.seats] == [500] * 3
    next_step(world, table_id)
    again = last(world, table_id, mpb.DealStarted)
    assert (again.deal_no, list(again.seats)) == (2, [0, 1, 2])
    assert again.hand_id != hand_id
    play_deal(world, table_id, {0: "first", 1: "win", 2: "first"})
    assert world.view(table_id, None).match.deals_scored == 2


def test_closing_a_table_mid_deal_aborts_the_match_once_the_deal_ends() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=201, entry_fee_hundredths=250))
    table_id = _started_match(world, options, ("ann", "bob", "cat"))
    world.prepare(table_id, world.view(table_id, None).hand_id)
    table_calls.close_table(
        world.app,
        "op",
        api.CloseTableRequest(table_id=table_id, client_request_id="c1", reason="maint"),
    )
    assert not any(isinstance(p, mpb.MatchAborted) for p in table_events(world, table_id))
    play_deal(world, table_id, {0: "win", 1: "first", 2: "first"})
    tail = _names(table_events(world, table_id))
    at = tail.index("MatchAborted")
    assert tail[at - 1] == "DealScored" and tail[-1] == "TableClosed"
    aborted = last(world, table_id, mpb.MatchAborted)
    assert [(p.seat, p.points) for p in aborted.released] == [(0, 250), (1, 250), (2, 250)]
    assert "closed by an operator" in aborted.reason


def test_closing_a_table_between_deals_aborts_the_match_at_once() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=100))
    table_id = _started_match(world, options, ("ann", "bob"))
    play_deal(world, table_id, {0: "win", 1: "first"})
    table_calls.close_table(
        world.app, "op", api.CloseTableRequest(table_id=table_id, client_request_id="c1")
    )
    assert _names(table_events(world, table_id))[-5:] == [
        "TableClosing",
        "MatchAborted",
        "TablePlayerLeft",
        "TablePlayerLeft",
        "TableClosed",
    ]


def _reject_bobs_entry(world: World, reason: int) -> str:
    """A pool 101 table of ann and bob whose match asked for the entries, and the ledger's
    rejection of bob's (``reason``: its StakeRejectionReason number) fed to it; its id."""
    table_id = open_match_table(world, POOL_101, seats=2)
    seat_all(world, table_id, ("ann", "bob"))
    next_step(world, table_id)
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.MatchMoneyRejected(
            match_id=world.view(table_id, None).match.match_id,
            purpose="entry",
            seat=1,
            account_id="bob",
            reason=reason,  # type: ignore[arg-type]  # any number, as the log may carry
            available_hundredths=100,
            required_hundredths=500,
        ),
    )
    return table_id


def test_a_rejection_whose_reason_the_ledgers_enum_does_not_name_is_ignored_not_appended() -> None:
    world = World()
    table_id = _reject_bobs_entry(world, 99)  # a number a newer ledger might send
    assert [type(p) for p in table_events(world, table_id)][-1] is mpb.MoneyReserved
    match = world.app.projection.tables[table_id].match
    assert match is not None and match.awaiting  # the entries are still awaited


def test_an_entry_the_ledger_cannot_hold_aborts_the_match_and_that_seat_sits_out() -> None:
    world = World()
    table_id = _reject_bobs_entry(world, ledger_pb.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE)
    match_id = world.view(table_id, None).match.match_id
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.MatchMoneyRejected(
            match_id=match_id, purpose="entry", seat=0, account_id="ann", required_hundredths=500
        ),
    )
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.MatchMoneyHeld(match_id=match_id, purpose="entry"),  # nobody's held
    )
    (aborted,) = [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchAborted)]
    assert "seat 1" in aborted.reason
    view = world.view(table_id, None)
    assert ["could not cover" in s.sitting_out_reason for s in view.seats] == [True, True]
    table_calls.leave_table(
        world.app, "ann", api.LeaveTableRequest(table_id=table_id, client_request_id="l0")
    )
    world.sit(table_id, "ann", seat=0)
    assert next_step(world, table_id) == []  # no match until the seat is taken again
    table_calls.leave_table(
        world.app, "bob", api.LeaveTableRequest(table_id=table_id, client_request_id="l")
    )
    world.sit(table_id, "dan", seat=1)
    next_step(world, table_id)
    assert world.view(table_id, None).match.match_id == f"{table_id}/2"


def test_a_money_answer_for_another_match_is_ignored() -> None:
    world = World()
    table_id = open_match_table(world, POOL_101, seats=2)
    seat_all(world, table_id, ("ann", "bob"))
    next_step(world, table_id)
    before = len(table_events(world, table_id))
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.MatchMoneyHeld(match_id="another", purpose="entry"),
    )
    assert len(table_events(world, table_id)) == before


@pytest.mark.parametrize(
    ("options", "seats", "point_value", "says"),
    [
        (mpb.MatchOptions(pool=mpb.PoolOptions(target=150)), 3, 0, "match.pool.target must be"),
        (mpb.MatchOptions(deals=mpb.DealsOptions(deals=5)), 3, 0, "match.deals.deals must be"),
        (
            mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=-5)),
            3,
            0,
            "match.pool.entry_fee_hundredths",
        ),
        (mpb.MatchOptions(pool=mpb.PoolOptions(target=101)), 3, 10, "point_value_hundredths must"),
        (  # the Indian pool's 2-6 seats are the variant's (its deal rule set refuses 8)
            mpb.MatchOptions(pool=mpb.PoolOptions(target=101)),
            8,
            0,
            r"does not play the deals of a pool-101 match \(seat_count must be 2\.\.6",
        ),
        (mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=1)), 3, 0, "match.best_of.deals must"),
    ],
)
def test_bad_format_options_are_refused_and_open_nothing(
    options: mpb.MatchOptions, seats: int, point_value: int, says: str
) -> None:
    world = World()
    with pytest.raises(InvalidArgument, match=says):
        open_match_table(world, options, seats=seats, point_value=point_value)
    assert table_calls.list_tables(world.app) == []


def test_a_points_table_is_single_and_writes_no_match_event() -> None:
    world = World()
    table_id = world.open_table()
    opened = table_events(world, table_id)[0]
    assert not opened.HasField("match")
    (summary,) = table_calls.list_tables(world.app)
    assert summary.match_format == "single" and not summary.HasField("match")
    world.sit(table_id, "ann")
    with pytest.raises(FailedPrecondition, match="hosts no match"):
        _command(world, table_id, "ann", mpb.RequestSplit())


def test_bad_match_commands_are_refused_and_append_nothing() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, rejoin=True))
    table_id = _started_match(world, options, ("ann", "bob", "cat"))
    (summary,) = table_calls.list_tables(world.app)
    assert summary.match_format == "pool-101" and summary.match == options
    before = len(table_events(world, table_id))
    with pytest.raises(FailedPrecondition, match="cannot rejoin while a deal is being played"):
        _command(world, table_id, "ann", mpb.AcceptRejoin())
    play_deal(world, table_id, {0: "win", 1: "first", 2: "first"})
    before = len(table_events(world, table_id))
    with pytest.raises(FailedPrecondition, match="no open rejoin offer"):
        _command(world, table_id, "ann", mpb.AcceptRejoin())
    with pytest.raises(InvalidArgument, match="no split"):
        _command(world, table_id, "ann", mpb.RequestSplit())
    with pytest.raises(PermissionDenied):
        _command(world, table_id, "zed", mpb.DeclineRejoin())
    request = api.PlayRequest(table_id=table_id, client_request_id="bad")
    request.command.type_url = "type.googleapis.com/rummy.match.v1.AcceptRejoin"
    request.command.value = b"\xff\xff"
    with pytest.raises(InvalidArgument, match="not a valid"):
        table_calls.play(world.app, "ann", request)
    assert len(table_events(world, table_id)) == before


def test_a_split_asked_by_every_seat_left_ends_a_pool_201_match() -> None:
    world = World()
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=201, entry_fee_hundredths=333, split=True)
    )
    table_id = _started_match(world, options, ("ann", "bob", "cat"), commission_bps=1000)
    play_deal(world, table_id, {0: "win", 1: "first", 2: "middle"})  # 0 / 25 / 50
    _command(world, table_id, "ann", mpb.RequestSplit())
    _command(world, table_id, "bob", mpb.RequestSplit())
    assert world.view(table_id, None).match.seats[1].asked_split
    _command(world, table_id, "cat", mpb.RequestSplit())
    ended = last(world, table_id, mpb.MatchEnded)
    assert ended.reason == "split" and list(ended.winners) == [0, 1, 2]
    # Pool 999, 10% = 99: 900 shared, 300 each; each line 300 - 333.
    assert [ln.amount_hundredths for ln in ended.settlement.lines] == [-33, -33, -33]


def test_a_table_rebuilt_from_its_stream_shows_the_same_match() -> None:
    world = World()
    table_id = _started_match(world, POOL_101, ("ann", "bob", "cat"))
    for plan in ({0: "win", 1: "middle", 2: "first"},) * 3:
        play_deal(world, table_id, plan)
        next_step(world, table_id)
    live = world.view(table_id, "bob")
    rebuilt = world.new_app("table-writer-2")
    assert rebuilt.view("bob", table_id).match == live.match
    assert live.match.deals_scored == 3


def test_a_snapshot_of_a_match_table_at_any_point_plus_the_tail_is_the_full_fold() -> None:
    world = World()
    table_id = _started_match(world, POOL_101, ("ann", "bob", "cat"))
    for plan in ({0: "win", 1: "middle", 2: "first"},) * 3:
        play_deal(world, table_id, plan)
        next_step(world, table_id)
    records = table_records(world)
    full = fold(records)
    assert snapshot.encode_table(full.tables[table_id]) == snapshot.encode_table(
        world.app.projection.tables[table_id]
    )
    mine = [r for r in records if r.envelope.stream_id == table_id]
    for cut in range(1, len(mine) + 1, 7):
        before = fold(mine[:cut])
        part = mine[0].partition
        taken = snapshot.take(before, TABLE_EVENTS, part, lambda t: partition_for(t, PARTITIONS))
        assert taken is not None
        loaded = Projection()
        decoded = snapshot.decode(taken.data, TABLE_EVENTS, part)
        snapshot.load(loaded, {part: decoded}, [r for r in mine if r.offset >= decoded.tail_from])
        assert_same(loaded, fold(mine))


def test_a_game_to_match_holds_each_games_stakes_before_its_first_hand() -> None:
    world = World()
    options = mpb.MatchOptions(
        game_to=mpb.GameToOptions(target=50, games=1, point_value_hundredths=10, max_game_points=60)
    )
    table_id = open_match_table(world, options, seats=2, commission_bps=1000)
    seat_all(world, table_id, ("ann", "bob"))
    next_step(world, table_id)  # a game's stakes are asked at its start, not the match's
    assert _names(match_payloads(world, table_id)) == [
        "MatchStarted",
        "GameStarted",
        "MoneyReserved",
        "MoneyReserved",
        "DealStarted",
    ]
    stake = last(world, table_id, mpb.MoneyReserved)
    assert (stake.purpose, stake.game_no, stake.amount_hundredths) == ("stake", 1, 600)
    assert not any(isinstance(p, pb.HandStarted) for p in table_events(world, table_id))
    hold_money(world, table_id, "stake", 1)
    next_step(world, table_id)
    assert (
        last(world, table_id, pb.HandStarted).hand_id
        == last(world, table_id, mpb.DealStarted).hand_id
    )
    play_deal(world, table_id, {0: "win", 1: "middle"})  # ann 40
    next_step(world, table_id)
    play_deal(world, table_id, {0: "win", 1: "first"})  # ann 60: the game and the match
    game = last(world, table_id, mpb.GameEnded)
    # bob pays min(60 - 0, 60) x 10 = 600, 10% = 60: ann receives 540.
    assert [ln.amount_hundredths for ln in game.settlement.lines] == [540, -600]
    ended = last(world, table_id, mpb.MatchEnded)
    assert ended.reason == "games_played" and not ended.HasField("settlement")


def test_a_variant_without_a_formats_deal_rules_refuses_it_and_plays_game_to_on_its_own() -> None:
    from rummy.common.v1 import cards_pb2
    from toy_variant import TOY_NAME
    from toy_variant.wire import register_toy

    register_toy()
    world = World()
    toy = cards_pb2.RuleSet(variant=TOY_NAME)
    request = api.OpenTableRequest(
        client_request_id="toy-pool",
        seat_count=2,
        rule_set=toy,
        match=mpb.MatchOptions(pool=mpb.PoolOptions(target=101)),
    )
    with pytest.raises(InvalidArgument, match=f"variant '{TOY_NAME}' does not play the deals"):
        table_calls.open_table(world.app, "op", request)
    assert table_calls.list_tables(world.app) == []
    request.client_request_id = "toy-game-to"
    request.match.CopyFrom(
        mpb.MatchOptions(game_to=mpb.GameToOptions(target=100, games=1, max_game_points=50))
    )
    table_id = table_calls.open_table(world.app, "op", request)
    (summary,) = table_calls.list_tables(world.app)
    assert (summary.table_id, summary.match_format) == (table_id, "game-to-100")


def test_a_rejoin_the_ledger_cannot_hold_is_undone_and_the_match_plays_on() -> None:
    world = World()
    table_id = _started_match(world, POOL_101, ("ann", "bob", "cat"), commission_bps=1000)
    for _ in range(2):  # totals 0 / 80 / 40
        play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})
        next_step(world, table_id)
    play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})  # bob 120: out, offered 61
    match_id = world.view(table_id, None).match.match_id
    _command(world, table_id, "bob", mpb.AcceptRejoin())
    world.feed(
        LEDGER_EVENTS,
        table_id,
        ledger_pb.MatchMoneyRejected(
            match_id=match_id,
            purpose="rejoin",
            seat=1,
            account_id="bob",
            reason=ledger_pb.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE,
            available_hundredths=0,
            required_hundredths=500,
        ),
    )
    world.feed(
        LEDGER_EVENTS, table_id, ledger_pb.MatchMoneyHeld(match_id=match_id, purpose="rejoin")
    )
    assert not any(isinstance(p, mpb.MatchAborted) for p in table_events(world, table_id))
    refused = last(world, table_id, mpb.RejoinRefused)
    assert (refused.seat, refused.total, refused.entry_fee_hundredths) == (1, 120, 500)
    view = world.view(table_id, None).match
    assert [(s.status, s.total, s.held_hundredths) for s in view.seats] == [
        ("in", 0, 500),
        ("eliminated", 120, 500),
        ("in", 60, 500),
    ]
    next_step(world, table_id)
    assert _deal_seats(world, table_id) == [0, 2]  # the match goes on without bob
    play_deal(world, table_id, {0: "win", 2: "middle"})  # cat 100
    next_step(world, table_id)
    play_deal(world, table_id, {0: "win", 2: "first"})  # cat 120: ann is the last left
    ended = last(world, table_id, mpb.MatchEnded)
    # Pool 3 x 500 = 1500 (bob's one entry), 10% = 150; ann 1500 - 150 - 500 = +850.
    lines = [(ln.held_hundredths, ln.amount_hundredths) for ln in ended.settlement.lines]
    assert lines == [(500, 850), (500, -500), (500, -500)]
    # Rebuilt from its stream, the table shows the same match.
    rebuilt = fold(table_records(world)).tables[table_id]
    assert snapshot.encode_table(rebuilt) == snapshot.encode_table(
        world.app.projection.tables[table_id]
    )


def _settled(match_id: str, game_no: int = 0) -> ledger_pb.MatchSettled:
    return ledger_pb.MatchSettled(
        match_id=match_id,
        game_no=game_no,
        journal_transaction_id="tx-1",
        lines=[ledger_pb.JournalLine(account_id="ann", amount_hundredths=555)],
        commission_hundredths=45,
    )


def test_the_ledgers_match_settlement_is_recorded_on_the_stream_once_the_match_is_over() -> None:
    world = World()
    options = mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=3, entry_fee_hundredths=300))
    table_id = _started_match(world, options, ("ann", "bob", "cat"), commission_bps=500)
    match_id = world.view(table_id, None).match.match_id
    before = len(table_events(world, table_id))
    world.feed(LEDGER_EVENTS, table_id, _settled(match_id))  # the match is still running
    assert len(table_events(world, table_id)) == before
    _play_best_of_3(world, table_id)
    last(world, table_id, mpb.MatchEnded)
    world.feed(LEDGER_EVENTS, table_id, _settled("another"))
    world.feed(LEDGER_EVENTS, table_id, _settled(match_id), event_id="settled-1")
    world.feed(LEDGER_EVENTS, table_id, _settled(match_id), event_id="settled-1")  # redelivered
    recorded = [p for p in table_events(world, table_id) if isinstance(p, ledger_pb.MatchSettled)]
    assert [(p.match_id, p.commission_hundredths) for p in recorded] == [(match_id, 45)]
