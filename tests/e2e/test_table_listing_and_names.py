"""``rummy tables`` and table names against the five services on the real brokers: two tables
opened (a points table, a pool-101 table), listed by the command (human and ``--json``), one
closed by its name and still listed (closed), its events exported by its name.

Tables: 4 seats, point value 10 hundredths a point, commission 500 bps; 3 seats, pool 101 for an
entry of 1000 hundredths, commission 1250 bps.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from rummy.match.v1 import match_pb2 as mpb
from rummy_ops.cli import main
from rummy_platform.auth import Role
from rummy_testing.players import Operator, Table
from rummy_testing.stacks import RunningStack


def rummy(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_rummy_tables_lists_both_tables_and_a_name_closes_and_exports_one(
    operator: Operator, rummy_stack: RunningStack, tmp_path: Path
) -> None:
    address = rummy_stack.endpoints.table
    points = Table(operator, address, 4, 10, 500)
    pool_options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=1000))
    pool = Table(operator, address, 3, 0, 1250, match=pool_options)
    token = operator.authority.issue("ops-tables", Role.OPERATOR, 600)
    service = ("--address", address, "--token", token)
    try:
        points.seated("lister", 1)

        listed = {t["table_id"]: t for t in json.loads(rummy("tables", "--json", *service))}
        mine = listed[points.table_id]
        name = str(mine["name"])
        assert {k: v for k, v in mine.items() if k not in ("table_id", "name")} == {
            "variant": "indian-points",
            "format": "single",
            "seats_taken": 1,
            "seat_count": 4,
            "point_value_hundredths": 10,
            "entry_fee_hundredths": None,
            "commission_bps": 500,
            "state": "open",
            "hands_played": 0,
        }
        theirs = listed[pool.table_id]
        assert (theirs["format"], theirs["entry_fee_hundredths"]) == ("pool-101", 1000)
        assert (theirs["point_value_hundredths"], theirs["commission_bps"]) == (None, 1250)

        lines = rummy("tables", *service).splitlines()
        assert lines[0].split() == [
            "ID", "NAME", "VARIANT", "FORMAT", "SEATS", "STAKES", "COMMISSION", "STATE", "HANDS",
        ]  # fmt: skip
        row = next(line for line in lines if line.startswith(points.table_id))
        assert row.split() == [
            points.table_id, name, "indian-points", "single", "1/4", "point", "0.10", "5.00%",
            "open", "0",
        ]  # fmt: skip
        pool_row = next(line for line in lines if line.startswith(pool.table_id))
        assert "pool-101" in pool_row and "entry 10.00" in pool_row and "12.50%" in pool_row

        # By its name: closed at once (no hand is being played; the seat is stood up), then
        # listed as closed.
        assert f"table {points.table_id} closed" in rummy("close-table", name, *service)
        (closed,) = json.loads(rummy("tables", name, "--json", *service))
        assert (closed["table_id"], closed["state"], closed["seats_taken"]) == (
            points.table_id,
            "closed",
            0,
        )

        # export --table by name writes that table's stream, the same as by its id.
        by_name, by_id = tmp_path / "by-name.jsonl", tmp_path / "by-id.jsonl"
        kafka = ("--bootstrap", rummy_stack.kafka_bootstrap,
                 "--topic-prefix", rummy_stack.topic_prefix)  # fmt: skip
        rummy("export", "--table", name, "--table-address", address, "--token", token, *kafka,
              "-o", str(by_name))  # fmt: skip
        rummy("export", "--table", points.table_id, *kafka, "-o", str(by_id))
        exported = [json.loads(line) for line in by_name.read_text().splitlines()]
        assert exported and {e["stream_id"] for e in exported} == {points.table_id}
        assert by_name.read_text() == by_id.read_text()
        assert exported[-1]["type"] == "rummy.table.v1.TableClosed"
    finally:
        points.close()
        pool.close()
