"""``rummy tables`` and table names (rummy_ops.tables_command, rummy_ops.table_names): each
table's line and JSON from its ListTables summary (money read through its format), and a name or
an id resolved to one table id, or refused."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner

from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.money import stakes_of
from rummy_ops.table_names import TableNameError, is_table_id, matching, resolve
from rummy_ops.tables_command import aligned, table_json, table_row, tables

GOLD = str(uuid.uuid5(uuid.NAMESPACE_URL, "gold"))
POOL = str(uuid.uuid5(uuid.NAMESPACE_URL, "pool"))
OLD_GOLD = str(uuid.uuid5(uuid.NAMESPACE_URL, "old-gold"))


def points_table(
    table_id: str = GOLD,
    name: str = "gold-8",
    state: api.TableState.ValueType = api.TABLE_STATE_OPEN,
) -> api.TableSummary:
    return api.TableSummary(
        table_id=table_id,
        name=name,
        variant="indian-points",
        seat_count=6,
        seats_taken=3,
        point_value_hundredths=1300,
        commission_bps=500,
        state=state,
        match_format="single",
        hands_played=12,
    )


def pool_table() -> api.TableSummary:
    table = points_table(POOL, "pool", api.TABLE_STATE_CLOSED)
    table.point_value_hundredths, table.commission_bps, table.hands_played = 0, 1250, 7
    table.match_format = "pool-101"
    table.match.pool.CopyFrom(mpb.PoolOptions(target=101, entry_fee_hundredths=1000))
    return table


def test_a_points_table_plays_for_its_point_value_and_an_entry_format_for_its_entry() -> None:
    points = stakes_of(None, 500, 1300)
    assert (points.format_name, points.text()) == ("single", "point 13.00")
    assert points.entry_fee_hundredths is None
    single = stakes_of(mpb.MatchOptions(single=mpb.SingleOptions()), 500, 25)
    assert (single.format_name, single.text()) == ("single", "point 0.25")
    pool = stakes_of(pool_table().match, 1250, 0)
    assert (pool.format_name, pool.text()) == ("pool-101", "entry 10.00")
    assert pool.point_value_hundredths is None


def test_a_game_format_plays_for_its_point_value_a_game_point_not_the_tables() -> None:
    options = mpb.MatchOptions(
        game_to=mpb.GameToOptions(
            target=100, games=1, point_value_hundredths=5, max_game_points=100
        )
    )
    stakes = stakes_of(options, 1000, 0)
    assert (stakes.format_name, stakes.text()) == ("game-to-100", "point 0.05")
    assert (stakes.point_value_hundredths, stakes.entry_fee_hundredths) == (5, None)


def test_a_tables_line_shows_money_in_tokens_the_commission_in_percent_and_its_state() -> None:
    assert table_row(points_table()) == [
        GOLD, "gold-8", "indian-points", "single", "3/6", "point 13.00", "5.00%", "open", "12",
    ]  # fmt: skip
    pool = ["pool-101", "3/6", "entry 10.00", "12.50%", "closed", "7"]
    assert table_row(pool_table())[3:] == pool
    assert table_row(points_table(name=""))[1] == "-"


def test_the_listing_aligns_every_column_under_its_header() -> None:
    lines = aligned([table_row(points_table()), table_row(pool_table())])
    header, *rows = lines
    assert header.split() == [
        "ID", "NAME", "VARIANT", "FORMAT", "SEATS", "STAKES", "COMMISSION", "STATE", "HANDS",
    ]  # fmt: skip
    for column in ("NAME", "FORMAT", "STAKES", "STATE"):  # left-aligned: starts line up
        at = header.index(column)
        assert all(row[at - 1] == " " and row[at] != " " for row in rows)
    for column in ("SEATS", "COMMISSION", "HANDS"):  # right-aligned: ends line up
        end = header.index(column) + len(column)
        assert all(row[end - 1] != " " and (len(row) == end or row[end] == " ") for row in rows)
    assert rows[0].endswith("12") and rows[1].endswith(" 7")


def test_json_keeps_integer_hundredths_and_basis_points() -> None:
    assert table_json(pool_table()) == {
        "table_id": POOL,
        "name": "pool",
        "variant": "indian-points",
        "format": "pool-101",
        "seats_taken": 3,
        "seat_count": 6,
        "point_value_hundredths": None,
        "entry_fee_hundredths": 1000,
        "commission_bps": 1250,
        "state": "closed",
        "hands_played": 7,
    }
    assert table_json(points_table())["point_value_hundredths"] == 1300


def test_only_a_uuid_in_its_canonical_form_is_a_table_id() -> None:
    assert is_table_id(GOLD)
    assert not is_table_id(GOLD.upper())
    assert not is_table_id("gold-8")
    assert not is_table_id("")


def test_an_id_passes_through_without_listing_the_tables() -> None:
    def no_listing() -> list[api.TableSummary]:
        raise AssertionError("an id needs no listing")

    unknown = str(uuid.uuid4())
    assert resolve(unknown, no_listing) == unknown


def test_a_name_resolves_to_the_one_table_of_that_name_closed_ones_included() -> None:
    listed = [points_table(), pool_table()]
    assert resolve("gold-8", lambda: listed) == GOLD
    assert resolve("pool", lambda: listed) == POOL  # closed


def test_an_unknown_name_is_an_error_naming_it() -> None:
    with pytest.raises(TableNameError, match="no table named 'silver'"):
        resolve("silver", lambda: [points_table()])
    with pytest.raises(TableNameError, match="no table named 'GOLD-8'"):  # exact, case and all
        resolve("GOLD-8", lambda: [points_table()])


def test_an_ambiguous_name_is_refused_listing_every_candidate_id() -> None:
    listed = [
        points_table(),
        pool_table(),
        points_table(OLD_GOLD, state=api.TABLE_STATE_CLOSED),
    ]
    with pytest.raises(TableNameError) as refused:
        resolve("gold-8", lambda: listed)
    message = refused.value.format_message()
    assert message.startswith("2 tables are named 'gold-8'")
    assert f"{GOLD} (open)" in message and f"{OLD_GOLD} (closed)" in message
    assert POOL not in message
    assert [t.table_id for t in matching("gold-8", listed)] == [GOLD, OLD_GOLD]
    assert [t.table_id for t in matching(POOL, listed)] == [POOL]


def test_a_table_service_that_does_not_answer_is_an_error_naming_its_address() -> None:
    result = CliRunner().invoke(
        tables, ["--address", "127.0.0.1:1", "--token", "t"], catch_exceptions=False
    )
    assert result.exit_code == 1
    assert "Error: cannot reach the table service at 127.0.0.1:1: connection refused" in (
        result.output
    )
