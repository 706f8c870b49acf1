"""Ops replay on a real short run: the demo's hands are exported from Kafka and replay clean (from
Kafka and from the file, against the ledger's journal), and each tamper of the exported file (a
card of the deal, a discard, a score, a settlement amount, the revealed seed) or of the journal
(a row in a scratch copy of the real rows) is caught at the event it altered."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from rummy_ops.cli import main
from rummy_ops.demo import DemoReport, verify_demo
from rummy_testing.service_process import drop_database
from rummy_testing.stacks import RunningStack


def rummy(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def kafka_args(stack: RunningStack) -> list[str]:
    return ["--bootstrap", stack.kafka_bootstrap, "--topic-prefix", stack.topic_prefix]


@pytest.fixture(scope="module")
def exported(
    rummy_stack: RunningStack, short_demo: DemoReport, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    assert short_demo.ended, "the short demo ended no hand"
    assert verify_demo(short_demo)[0]  # waits until the last seeds are revealed and hands settled
    path = tmp_path_factory.mktemp("replay") / "demo.jsonl"
    code, output = rummy("export", "--all", *kafka_args(rummy_stack), "-o", str(path))
    assert code == 0, output
    return path


@pytest.fixture(scope="module")
def paid_hand(short_demo: DemoReport) -> str:
    """A hand that moved tokens (a table with a point value, a loser who paid)."""
    for record in short_demo.ended:
        result = record.result
        assert result is not None
        if any(line.amount_hundredths < 0 for line in result.settlement):
            return record.hand_id
    pytest.fail("no hand of the short demo moved tokens")


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def tampered(
    exported: Path, tmp_path: Path, hand: str, type_suffix: str, change: Any, nth: int = 0
) -> tuple[Path, dict[str, Any]]:
    objs = lines_of(exported)
    target = [
        o for o in objs if o["type"].endswith(type_suffix) and o["payload"].get("hand_id") == hand
    ][nth]
    change(target["payload"])
    path = tmp_path / "tampered.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path, target


def first_mismatch(path: Path, hand: str, *extra: str) -> dict[str, Any]:
    code, output = rummy("replay", "--from-file", str(path), "--hand", hand, "--json", *extra)
    assert code == 1, output
    mismatch: dict[str, Any] = json.loads(output)["first_mismatch"]
    return mismatch


def assert_names(first: dict[str, Any], line: dict[str, Any], check: str) -> None:
    assert (first["stream_version"], first["event_id"], first["check"]) == (
        line["stream_version"],
        line["event_id"],
        check,
    ), first


def test_every_hand_of_the_run_replays_clean_from_kafka_against_the_journal(
    rummy_stack: RunningStack, exported: Path
) -> None:
    code, output = rummy(
        "replay",
        "--all",
        *kafka_args(rummy_stack),
        "--database-url",
        rummy_stack.database_url,
        "--quiet",
    )
    assert code == 0, output
    assert "MISMATCH" not in output and "replay: OK" in output
    print(output.splitlines()[-1])  # the replay rate (events/s)


def test_the_exported_file_replays_clean_offline(rummy_stack: RunningStack, exported: Path) -> None:
    code, output = rummy(
        "replay",
        "--all",
        "--from-file",
        str(exported),
        "--database-url",
        rummy_stack.database_url,
        "--json",
    )
    doc = json.loads(output)
    assert code == 0 and doc["ok"], [h["first_mismatch"] for h in doc["hands"] if not h["ok"]]
    assert all(
        {"rules", "commitment", "deal", "ledger"} <= set(h["checked"])
        for h in doc["hands"]
        if h["outcome"] == "ended"
    )
    print(f"replayed {doc['events']} events at {doc['events_per_second']:,.0f} events/s")


def test_a_changed_card_in_the_deal_is_caught(
    exported: Path, paid_hand: str, tmp_path: Path
) -> None:
    def swap(p: dict[str, Any]) -> None:
        p["hands"][0]["cards"][0], p["stock"][-1] = p["stock"][-1], p["hands"][0]["cards"][0]

    path, line = tampered(exported, tmp_path, paid_hand, ".HandDealt", swap)
    assert_names(first_mismatch(path, paid_hand), line, "deal")


def test_a_changed_discard_is_caught(exported: Path, paid_hand: str, tmp_path: Path) -> None:
    dealt = next(
        o
        for o in lines_of(exported)
        if o["type"].endswith(".HandDealt") and o["payload"]["hand_id"] == paid_hand
    )
    cut = dealt["payload"]["wild_cut"]  # out of play: no seat holds it

    path, line = tampered(
        exported, tmp_path, paid_hand, ".CardDiscarded", lambda p: p.update(card=cut)
    )
    assert_names(first_mismatch(path, paid_hand), line, "rules")


def test_a_changed_score_is_caught(exported: Path, paid_hand: str, tmp_path: Path) -> None:
    def change(p: dict[str, Any]) -> None:
        loser = max(p["results"], key=lambda r: r.get("points", 0))
        loser["points"] = loser["points"] - 1

    path, line = tampered(exported, tmp_path, paid_hand, ".HandEnded", change)
    assert_names(first_mismatch(path, paid_hand), line, "rules")


def test_a_changed_settlement_amount_is_caught(
    exported: Path, paid_hand: str, tmp_path: Path
) -> None:
    def change(p: dict[str, Any]) -> None:
        line = next(x for x in p["settlement"] if int(x.get("amount_hundredths", "0")) < 0)
        line["amount_hundredths"] = str(int(line["amount_hundredths"]) + 1)

    path, line = tampered(exported, tmp_path, paid_hand, ".HandEnded", change)
    assert_names(first_mismatch(path, paid_hand), line, "rules")


def test_a_changed_revealed_seed_is_caught(exported: Path, paid_hand: str, tmp_path: Path) -> None:
    def change(p: dict[str, Any]) -> None:
        seed = bytearray(base64.b64decode(p["server_seed"]))
        seed[-1] ^= 0x80
        p["server_seed"] = base64.b64encode(bytes(seed)).decode()

    path, line = tampered(exported, tmp_path, paid_hand, ".SeedRevealed", change)
    assert_names(first_mismatch(path, paid_hand), line, "commitment")


@pytest.fixture()
def scratch_journal(rummy_stack: RunningStack, database_url: str) -> Iterator[str]:
    """A scratch database holding a copy of the real journal rows (schema ``ledger``, the two
    tables replay reads, without the ledger's append-only triggers so a row can be altered)."""
    name = f"replay_scratch_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlsplit(database_url)._replace(path=f"/{name}").geturl()
    try:
        with psycopg.connect(rummy_stack.database_url) as real, psycopg.connect(url) as scratch:
            scratch.execute("CREATE SCHEMA ledger")
            scratch.execute(
                "CREATE TABLE ledger.journal_transactions "
                "(id text PRIMARY KEY, kind text, hand_id text, table_id text)"
            )
            scratch.execute(
                "CREATE TABLE ledger.journal_entries (id bigint PRIMARY KEY, transaction_id text, "
                "account_id text, amount bigint, line_kind text, seat integer, points integer)"
            )
            with scratch.cursor() as cur:
                cur.executemany(
                    "INSERT INTO ledger.journal_transactions VALUES (%s, %s, %s, %s)",
                    real.execute(
                        "SELECT id, kind, hand_id, table_id FROM ledger.journal_transactions"
                    ).fetchall(),
                )
                cur.executemany(
                    "INSERT INTO ledger.journal_entries VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    real.execute(
                        "SELECT id, transaction_id, account_id, amount, line_kind, seat, points "
                        "FROM ledger.journal_entries"
                    ).fetchall(),
                )
            scratch.commit()
        yield url
    finally:
        drop_database(database_url, name)


def test_a_journal_row_that_disagrees_with_the_log_is_caught(
    exported: Path, paid_hand: str, scratch_journal: str
) -> None:
    code, output = rummy(
        "replay",
        "--from-file",
        str(exported),
        "--hand",
        paid_hand,
        "--database-url",
        scratch_journal,
    )
    assert code == 0, output  # the copy agrees with the log as the real journal does
    with psycopg.connect(scratch_journal) as conn:
        changed = conn.execute(
            "UPDATE ledger.journal_entries e SET amount = amount - 1 "
            "FROM ledger.journal_transactions t "
            "WHERE e.transaction_id = t.id AND t.hand_id = %s AND e.line_kind = 'loss' "
            "AND e.id = (SELECT min(e2.id) FROM ledger.journal_entries e2 "
            "WHERE e2.transaction_id = t.id AND e2.line_kind = 'loss') RETURNING e.seat",
            (paid_hand,),
        ).fetchone()
        conn.commit()
    assert changed is not None
    first = first_mismatch(exported, paid_hand, "--database-url", scratch_journal)
    settled = next(
        o
        for o in lines_of(exported)
        if o["type"].endswith(".HandSettled") and o["payload"]["hand_id"] == paid_hand
    )
    assert_names(first, settled, "ledger")
    assert f"seat {changed[0]}" in first["message"]
