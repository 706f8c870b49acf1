"""TakeSeat asks the ledger about the player's own limits through the table's port
(``rummy_table.application.seat_limits``; docs/rules/responsible-play.md): a seat above the stake
limit, on a break or excluded is FAILED_PRECONDITION naming the reason, at free tables too; the
ledger not answering is UNAVAILABLE; either way nothing is appended."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from world import World

from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy_platform.errors import FailedPrecondition, Unavailable
from rummy_platform.topics import TABLE_EVENTS
from rummy_table.application.held_table import HeldTable
from rummy_table.application.seat_limits import (
    LimitsUnavailable,
    SeatCheck,
    seat_stake_hundredths,
)


@dataclass
class FakeLedger:
    """The ledger's CheckSeat: refuses the accounts in ``refused`` (reason, sentence); answers
    nothing while ``down``."""

    refused: dict[str, tuple[str, str]] = field(default_factory=dict)
    down: bool = False
    asked: list[tuple[str, int]] = field(default_factory=list)

    def check(self, account_id: str, amount_hundredths: int) -> SeatCheck:
        self.asked.append((account_id, amount_hundredths))
        if self.down:
            raise LimitsUnavailable("DEADLINE_EXCEEDED")
        if account_id in self.refused:
            reason, detail = self.refused[account_id]
            return SeatCheck(False, reason, detail)
        return SeatCheck(True)


def world_with(ledger: FakeLedger) -> World:
    world = World()
    world.app.seat_limits = ledger
    return world


def appended(world: World, table_id: str) -> int:
    return len(world.log.read_stream(TABLE_EVENTS, table_id))


def test_a_player_on_a_break_is_refused_a_seat_naming_the_break_and_nothing_is_appended() -> None:
    ledger = FakeLedger({"bob": ("break", "a break until 2026-03-05T12:00:00+00:00")})
    world = world_with(ledger)
    table_id = world.open_table(point_value=100)
    assert world.sit(table_id, "alice") == 0
    before = appended(world, table_id)
    with pytest.raises(FailedPrecondition, match="a break until 2026-03-05"):
        world.sit(table_id, "bob")
    assert appended(world, table_id) == before
    assert ledger.asked == [("alice", 130 * 100), ("bob", 130 * 100)]  # the hand's max loss


def test_a_free_table_asks_too_so_an_exclusion_bars_it() -> None:
    ledger = FakeLedger({"carol": ("self_exclusion", "a self-exclusion")})
    world = world_with(ledger)
    table_id = world.open_table(point_value=0)
    with pytest.raises(FailedPrecondition, match="self-exclusion"):
        world.sit(table_id, "carol")
    assert ledger.asked == [("carol", 0)]


def test_the_ledger_not_answering_fails_take_seat_closed() -> None:
    ledger = FakeLedger(down=True)
    world = world_with(ledger)
    table_id = world.open_table()
    before = appended(world, table_id)
    with pytest.raises(Unavailable, match="ledger did not answer"):
        world.sit(table_id, "alice")
    assert appended(world, table_id) == before


def test_a_seated_player_retrying_is_not_asked_again() -> None:
    ledger = FakeLedger()
    world = world_with(ledger)
    table_id = world.open_table()
    world.sit(table_id, "alice")
    ledger.down = True
    with pytest.raises(FailedPrecondition, match="already sit"):
        world.sit(table_id, "alice")
    assert len(ledger.asked) == 1


@pytest.mark.parametrize(
    ("options", "stake"),
    [
        (
            match_pb2.MatchOptions(
                pool=match_pb2.PoolOptions(target=101, entry_fee_hundredths=1001)
            ),
            1001,
        ),
        (
            match_pb2.MatchOptions(deals=match_pb2.DealsOptions(deals=2, entry_fee_hundredths=500)),
            500,
        ),
        (
            match_pb2.MatchOptions(
                game_to=match_pb2.GameToOptions(
                    target=100, games=1, point_value_hundredths=5, max_game_points=200
                )
            ),
            1000,
        ),
        (
            match_pb2.MatchOptions(
                hollywood=match_pb2.HollywoodOptions(
                    target=100, point_value_hundredths=5, max_game_points=200
                )
            ),
            3000,
        ),
    ],
)
def test_a_match_tables_one_reservation_is_its_entry_or_its_games_cap(
    options: match_pb2.MatchOptions, stake: int
) -> None:
    world = World()
    opened = pb.TableOpened()
    opened.CopyFrom(world.app.projection.tables[world.open_table()].opened)
    opened.match.CopyFrom(options)
    table = HeldTable.of_opened(opened, None)
    assert seat_stake_hundredths(table) == stake
