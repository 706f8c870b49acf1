"""A hand whose ledger, fairness or dealer never answers is aborted by the table's tick once the
service deadline passed (docs/rules/hand-flow.md#abort; docs/rules/formats.md#money: a deal
aborted is void and replayed with the same seats, and the match is aborted when no redeal is
possible)."""

from __future__ import annotations

import hashlib

import pytest
from match_world import hold_money, last, next_step, open_match_table, seat_all
from test_table_service import table_events
from world import SERVER_SEED, World, metrics_of, replay_all

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.topics import CLOCK_EVENTS, FAIRNESS_EVENTS, LEDGER_EVENTS

#: RUMMY_TABLE_SERVICE_DEADLINE_SECONDS's default, 60 s (the World's clock speed is 1).
DEADLINE_MS = 60_000


def _stakes(world: World, table_id: str, hand_id: str) -> ledger_pb.StakesReserved:
    table = world.app.projection.tables[table_id]
    assert table.ctx is not None
    return ledger_pb.StakesReserved(
        hand_id=hand_id,
        reservations=[
            ledger_pb.Reservation(seat=s, account_id=a, amount_hundredths=13_000)
            for s, a in sorted(table.ctx.accounts.items())
        ],
    )


def _commitment(hand_id: str) -> fairness_pb.SeedCommitted:
    return fairness_pb.SeedCommitted(
        hand_id=hand_id, commitment_sha256=hashlib.sha256(SERVER_SEED).digest()
    )


def _aborted(world: World, table_id: str) -> list[pb.HandAborted]:
    return [p for p in table_events(world, table_id) if isinstance(p, pb.HandAborted)]


def _assert_replays_clean(world: World) -> None:
    """``rummy replay`` re-derives every hand and match of the stream, the aborts included."""
    replay = pytest.importorskip("rummy_ops.replay")
    sources = pytest.importorskip("rummy_ops.replay.sources")
    run = replay.replay_events(replay_all(world.log), sources.Selection())
    assert run.hands or run.matches
    assert [h.hand_id for h in run.hands if not h.ok] == []
    assert [m.match_id for m in run.matches if not m.ok] == []


def _points_table(world: World) -> tuple[str, str]:
    table_id = world.open_table()
    for account in ("alice", "bob", "carol"):
        world.sit(table_id, account)
    return table_id, world.start_hand(table_id)


def test_a_hand_the_dealer_never_deals_is_aborted_after_the_deadline_and_the_next_starts() -> None:
    world = World()
    table_id, hand_id = _points_table(world)
    world.feed(LEDGER_EVENTS, table_id, _stakes(world, table_id, hand_id))
    world.feed(FAIRNESS_EVENTS, table_id, _commitment(hand_id))
    world.feed(CLOCK_EVENTS, table_id, clock_pb.SeedWindowClosed(hand_id=hand_id))
    assert world.view(table_id, None).phase == api.HAND_PHASE_DEALING
    world.now += DEADLINE_MS - 1
    assert world.app.tick() == []
    assert _aborted(world, table_id) == []
    world.now += 1
    assert world.app.tick() == []  # aborted now; the next hand waits for the start delay
    (aborted,) = _aborted(world, table_id)
    assert aborted.hand_id == hand_id
    assert aborted.reason == "the dealer did not deal within 60 s"
    assert world.view(table_id, "alice").phase == api.HAND_PHASE_ABORTED
    assert metrics_of(world.app).overdue_aborts.labels("hand")._value.get() == 1
    # the deal arriving late changes nothing, and no tick aborts the hand a second time
    count = len(table_events(world, table_id))
    world.deal(table_id, hand_id)
    world.app.abort_overdue_hands(world.now + DEADLINE_MS)
    assert len(table_events(world, table_id)) == count
    next_hand = world.start_hand(table_id)
    assert next_hand != hand_id
    table = world.app.projection.tables[table_id]
    assert table.ctx is not None and sorted(table.ctx.accounts) == [0, 1, 2]
    assert len(_aborted(world, table_id)) == 1
    _assert_replays_clean(world)


def test_a_hand_whose_ledger_never_reserves_the_stakes_is_aborted_after_the_deadline() -> None:
    world = World()
    table_id, hand_id = _points_table(world)
    world.now += DEADLINE_MS // 2
    world.feed(FAIRNESS_EVENTS, table_id, _commitment(hand_id))  # the wait counts from here
    world.now += DEADLINE_MS - 1
    world.app.tick()
    assert _aborted(world, table_id) == []
    world.now += 1
    world.app.tick()
    (aborted,) = _aborted(world, table_id)
    assert aborted.reason == "the ledger did not reserve the stakes within 60 s"
    count = len(table_events(world, table_id))
    world.feed(LEDGER_EVENTS, table_id, _stakes(world, table_id, hand_id))
    assert len(table_events(world, table_id)) == count
    assert world.start_hand(table_id) != hand_id
    assert world.view(table_id, None).phase == api.HAND_PHASE_RESERVING


def test_a_hand_no_service_answers_names_both_missing_answers() -> None:
    world = World()
    table_id, _ = _points_table(world)
    world.now += DEADLINE_MS
    world.app.tick()
    (aborted,) = _aborted(world, table_id)
    assert aborted.reason == (
        "the ledger did not reserve the stakes and fairness did not commit the seed within 60 s"
    )


def test_the_service_deadline_is_wall_clock_time_whatever_the_clock_speed() -> None:
    world = World()
    world.app.speed = 10.0  # turns and start delays pass 10x faster; a service's outage does not
    table_id, _ = _points_table(world)
    world.now += DEADLINE_MS // 10
    world.app.tick()
    assert _aborted(world, table_id) == []
    world.now += DEADLINE_MS - DEADLINE_MS // 10
    world.app.tick()
    assert len(_aborted(world, table_id)) == 1


def test_a_pool_deal_no_dealer_deals_is_voided_and_replayed_then_the_match_is_aborted() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=500))
    table_id = open_match_table(world, options, seats=3)
    seat_all(world, table_id, ("ann", "bob", "cat"))
    next_step(world, table_id)  # MatchStarted + the entries asked
    hold_money(world, table_id)
    next_step(world, table_id)  # the first deal
    first = world.view(table_id, None).hand_id
    world.now += DEADLINE_MS
    world.app.tick()
    voided = last(world, table_id, mpb.DealVoided)
    assert (voided.deal_no, voided.hand_id) == (1, first)
    assert "within 60 s" in voided.reason
    view = world.view(table_id, None)
    assert view.match.phase == "between_deals"
    assert [s.held_hundredths for s in view.match.seats] == [500] * 3  # the entries stay held
    assert not [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchAborted)]
    next_step(world, table_id)  # the deal replayed with the same seats
    again = last(world, table_id, mpb.DealStarted)
    assert (again.deal_no, list(again.seats)) == (1, [0, 1, 2])
    second = world.view(table_id, None).hand_id
    assert second != first
    world.now += DEADLINE_MS
    world.app.tick()  # no redeal was possible within the deadline: the match is aborted
    (aborted,) = [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchAborted)]
    assert [(p.seat, p.points) for p in aborted.released] == [(0, 500), (1, 500), (2, 500)]
    assert "no redeal" in aborted.reason
    assert last(world, table_id, mpb.DealVoided).hand_id == second
    assert len(_aborted(world, table_id)) == 2
    _assert_replays_clean(world)


def test_a_match_whose_entries_the_ledger_never_holds_is_aborted_after_the_deadline() -> None:
    world = World()
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=201, entry_fee_hundredths=300))
    table_id = open_match_table(world, options, seats=2)
    seat_all(world, table_id, ("ann", "bob"))
    next_step(world, table_id)  # MatchStarted + the entries asked; the ledger never answers
    world.now += DEADLINE_MS - 1
    world.app.tick()
    assert not [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchAborted)]
    world.now += 1
    world.app.tick()
    (aborted,) = [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchAborted)]
    assert aborted.reason == "no deal could start: the ledger did not hold the entry within 60 s"
    assert not [p for p in table_events(world, table_id) if isinstance(p, pb.HandStarted)]
    assert metrics_of(world.app).overdue_aborts.labels("match")._value.get() == 1
    # the hold arriving late changes nothing; a new match starts when the start delay passed
    count = len(table_events(world, table_id))
    hold_money(world, table_id)
    assert len(table_events(world, table_id)) == count
    next_step(world, table_id)
    started = [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchStarted)]
    assert len(started) == 2
    _assert_replays_clean(world)
