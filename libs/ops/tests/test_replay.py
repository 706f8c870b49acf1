"""``rummy replay`` / ``rummy export`` on synthetic table streams: hands played with the rules
library (INDIAN_POINTS, a deal from a fixed seed and fixed hand ids by ``rummy_rules.shuffle``, so
every run records the same hands), encoded through the
table's ``stream_payloads`` into envelopes as the table service records them, exported to JSONL and
replayed. A clean log replays with exit status 0; each tamper is caught at the first event where
replay and record differ. The ledger tests post the settlement with the ledger's own code into a
real PostgreSQL database."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from click.testing import CliRunner
from google.protobuf.message import Message
from psycopg import sql

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import stream_payloads
from rummy_ops.cli import main
from rummy_ops.money import tokens
from rummy_ops.replay import Selection, replay_events
from rummy_ops.replay.jsonl import read_jsonl, write_jsonl
from rummy_platform.envelope import Envelope
from rummy_rules import commands as cmd
from rummy_rules import events as ev
from rummy_rules.cards import Card
from rummy_rules.indian import INDIAN_POINTS, DeclarationRejected, Declare, Drop
from rummy_rules.indian.rules import bombay_baazi
from rummy_rules.rules import RuleSet
from rummy_rules.settlement import reservation_hundredths, settle
from rummy_rules.shuffle import ShuffleInputs, commitment, deal, reshuffle
from rummy_testing.service_process import drop_database

SEED = bytes(range(32))
START_MS = 1_780_000_000_000
RULES = bombay_baazi(4, point_value_hundredths=50, commission_bps=1000)
#: A table id as the table service makes them (a UUID: `--table` takes it as an id, not a name).
SYNTHETIC_TABLE_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "table-synthetic"))


@dataclass
class SyntheticTable:
    """Records hands the way the table service does: decide each command, apply, encode each
    event through stream_payloads into an envelope stamped with the command's time."""

    table_id: str = SYNTHETIC_TABLE_ID
    envelopes: list[Envelope] = field(default_factory=list)
    at_ms: int = START_MS
    hand_no: int = 0
    settlements: dict[str, ev.HandEnded] = field(default_factory=dict)
    #: The hands' rule set (a match's deals: the format's deal rule set, played free).
    rules: RuleSet = RULES

    def record(self, payload: Message, hand_id: str, causation: str = "") -> Envelope:
        envelope = Envelope.new(
            payload,
            stream_id=self.table_id,
            stream_version=len(self.envelopes) + 1,
            occurred_at=stream_payloads.ms_to_datetime(self.at_ms),
            correlation_id=hand_id,
            causation_id=causation,
        )
        self.envelopes.append(envelope)
        return envelope

    def play(
        self,
        seats: dict[int, str],
        dealer: int,
        script: str,
        seed: bytes = SEED,
        hand_id: str = "",
    ) -> str:
        """Play a hand (commands are stamped with the table's clock, ``at_ms=0`` in the script
        is replaced). ``script``: ``"long"`` (draw and discard past a stock reshuffle, with a
        timed-out turn, then a wrong declare and a middle drop) or ``"drop"`` (first drops until
        one seat is left: one drop heads-up).
        ``hand_id``: the hand's id (default: ``hand-<n>``, n the table's hand number). The deal
        derives from the seed and the hand id, so a fixed id records the same hand every run
        (with a random one, about 1 deal in 2,000 gave the declaring seat a valid show)."""
        self.hand_no += 1
        hand_id = hand_id or f"hand-{self.hand_no}"
        rules = self.rules
        state = INDIAN_POINTS.initial_state()
        (started,) = INDIAN_POINTS.decide(
            state,
            cmd.StartHand(
                hand_id=hand_id,
                seats=tuple(ev.SeatAccount(s, a) for s, a in sorted(seats.items())),
                dealer_seat=dealer,
                rule_set=rules,
                at_ms=self.at_ms,
            ),
        )
        assert isinstance(started, ev.HandStarted)
        self.record(stream_payloads.hand_started_to_pb(started, self.hand_no), hand_id)
        ctx = stream_payloads.hand_context(self.envelopes[-1].payload)  # type: ignore[arg-type]
        state = INDIAN_POINTS.apply(state, started)

        def run(command: cmd.Command) -> tuple[ev.Event, ...]:
            nonlocal state
            self.at_ms += 1000
            assert is_dataclass(command) and not isinstance(command, type)
            events = INDIAN_POINTS.decide(state, replace(command, at_ms=self.at_ms))
            automatic = False
            for event in events:
                state = INDIAN_POINTS.apply(state, event)
                automatic = isinstance(event, ev.TurnTimedOut) or (
                    automatic and not isinstance(event, ev.TurnStarted)
                )
                public = INDIAN_POINTS.view(state, -1)
                self.record(
                    stream_payloads.to_payload(
                        event,
                        ctx,
                        top_discard=public.discard_pile[-1] if public.discard_pile else None,
                        automatic=automatic and isinstance(event, ev.CardDrawn | ev.CardDiscarded),
                        wild_cut=public.wild_cut,
                    ),
                    hand_id,
                )
            return events

        for seat in sorted(seats):
            run(
                cmd.RecordStakeReserved(
                    seat=seat, amount_hundredths=reservation_hundredths(rules), at_ms=0
                )
            )
        run(cmd.RecordSeedCommitment(commitment=commitment(seed), at_ms=0))
        client = {s: hashlib.sha256(f"client {s}".encode()).digest()[:16] for s in sorted(seats)}
        for seat in sorted(seats)[:-1]:
            run(cmd.ContributeClientSeed(seat=seat, seed_hex=client[seat].hex(), at_ms=0))
        run(cmd.TurnTimeout(turn_no=0, at_ms=0))  # the last seat sends nothing
        client[sorted(seats)[-1]] = b""
        inputs = ShuffleInputs.of(seed, hand_id, client)
        dealt = deal(inputs, rules.shoe, seats, dealer, rules.hand_size)
        assert dealt.wild_cut is not None and dealt.first_open is not None
        run(
            cmd.Deal(
                hands=dealt.hands,
                wild_cut=dealt.wild_cut,
                first_open=dealt.first_open,
                stock=dealt.stock,
                at_ms=0,
            )
        )
        if script == "drop":  # every seat on turn first-drops until one is left
            while INDIAN_POINTS.result(state) is None:
                assert state.turn_seat is not None
                run(Drop(seat=state.turn_seat, turn_no=state.turn_no, at_ms=0))
        else:
            for _ in range(len(dealt.stock) + 6):
                assert state.turn_seat is not None
                seat, turn = state.turn_seat, state.turn_no
                if turn == 3:
                    events = run(cmd.TurnTimeout(turn_no=turn, at_ms=0))
                else:
                    (drawn, *more) = run(cmd.DrawFromStock(seat=seat, turn_no=turn, at_ms=0))
                    assert isinstance(drawn, ev.CardDrawn) and drawn.card is not None
                    events = tuple(more) + run(
                        cmd.Discard(seat=seat, turn_no=turn, card=drawn.card, at_ms=0)
                    )
                for event in events:
                    if isinstance(event, ev.StockExhausted):
                        new = reshuffle(inputs, rules.shoe, event.cards, event.reshuffle_no)
                        run(
                            cmd.RecordStockReshuffled(
                                reshuffle_no=event.reshuffle_no, stock=new, at_ms=0
                            )
                        )
            assert state.reshuffles >= 1
            assert state.turn_seat is not None
            seat, turn = state.turn_seat, state.turn_no
            (drawn, *_) = run(cmd.DrawFromStock(seat=seat, turn_no=turn, at_ms=0))
            assert isinstance(drawn, ev.CardDrawn) and drawn.card is not None

            def wrong(card: Card) -> bool:  # decide is pure: nothing is applied or recorded
                probe = Declare(seat=seat, turn_no=turn, face_down=card, at_ms=self.at_ms)
                return isinstance(INDIAN_POINTS.decide(state, probe)[0], DeclarationRejected)

            # The wrong declare: the drawn card face down, unless the other 13 are a valid show;
            # then the first card whose laying down leaves an invalid one (wrong whatever the deal).
            held = state.seat_state(seat)
            assert held is not None
            face_down = next((c for c in (drawn.card, *held.cards) if wrong(c)), None)
            assert face_down is not None, f"every card of seat {seat} leaves a valid show"
            declared = run(Declare(seat=seat, turn_no=turn, face_down=face_down, at_ms=0))
            assert isinstance(declared[0], DeclarationRejected)
            assert state.turn_seat is not None
            run(Drop(seat=state.turn_seat, turn_no=state.turn_no, at_ms=0))
        result = INDIAN_POINTS.result(state)
        assert isinstance(result, ev.HandEnded)
        self.settlements[hand_id] = result
        ended = self.envelopes[-1]
        self.at_ms += 1000
        self.record(
            fairness_pb.SeedRevealed(
                hand_id=hand_id, server_seed=seed, commitment_sha256=bytes.fromhex(commitment(seed))
            ),
            hand_id,
            causation=str(uuid.uuid4()),
        )
        s = result.settlement
        lines = [
            ledger_pb.JournalLine(account_id=seats[x.seat], amount_hundredths=x.amount_hundredths)
            for x in s.lines
        ] + [
            ledger_pb.JournalLine(
                account_id="house:commission", amount_hundredths=s.commission_hundredths
            )
        ]
        self.record(
            ledger_pb.HandSettled(
                hand_id=hand_id,
                journal_transaction_id=f"settlement:{hand_id}",
                lines=lines,
                commission_hundredths=s.commission_hundredths,
            ),
            hand_id,
            causation=ended.event_id,
        )
        return hand_id


SEATS = {0: "acct-ana", 1: "acct-bo", 2: "acct-cy"}


@pytest.fixture(scope="module")
def table() -> SyntheticTable:
    t = SyntheticTable()
    t.play(SEATS, dealer=0, script="long")
    t.play({1: "acct-bo", 2: "acct-cy"}, dealer=1, script="drop")
    return t


@pytest.fixture()
def exported(table: SyntheticTable, tmp_path: Path) -> Path:
    path = tmp_path / "table.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl(table.envelopes, out)
    return path


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, objs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


def replay_file(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["replay", "--from-file", str(path), "--all", "--json", *extra]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.output)


def card_json(index: int) -> dict[str, Any]:
    return {"index": index, "face": RULES.shoe.index_to_card(index).face}


def test_export_into_a_missing_directory_is_an_error_without_a_traceback() -> None:
    result = CliRunner().invoke(
        main, ["export", "--hand", "h-1", "-o", "/nonexistent/dir/x.jsonl", "--bootstrap", "x:1"]
    )
    assert result.exit_code == 1
    assert "Error: cannot write /nonexistent/dir/x.jsonl" in result.output
    assert "Traceback" not in result.output


def test_a_file_replay_without_a_selector_replays_every_hand_in_the_file(
    exported: Path, table: SyntheticTable
) -> None:
    result = CliRunner().invoke(main, ["replay", "--from-file", str(exported), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {h["hand_id"] for h in doc["hands"]} == set(table.settlements)


def test_an_empty_file_is_no_hands_found_not_a_clean_verdict(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = CliRunner().invoke(main, ["replay", "--from-file", str(empty)])
    assert result.exit_code == 1
    assert "no hands found" in result.output and "OK" not in result.output


# -- the export format ---------------------------------------------------------------------------


def test_an_exported_file_reads_back_as_the_same_envelopes(
    table: SyntheticTable, exported: Path
) -> None:
    assert list(read_jsonl(exported)) == table.envelopes


def test_each_exported_line_carries_the_envelope_fields_and_the_typed_payload_as_json(
    exported: Path,
) -> None:
    first = lines_of(exported)[0]
    assert first["type"] == "rummy.table.v1.HandStarted"
    assert first["stream_version"] == 1 and first["stream_id"] == SYNTHETIC_TABLE_ID
    assert int(first["payload"]["hand_no"]) == 1  # 64-bit integers are JSON strings
    assert {"event_id", "occurred_at", "correlation_id", "causation_id"} <= set(first)


# -- a clean log -----------------------------------------------------------------------------------


def test_a_clean_log_replays_with_every_check_passing(table: SyntheticTable) -> None:
    run = replay_events(table.envelopes, Selection())
    assert run.ok, [f.line() for h in run.hands for f in h.findings]
    assert [h.outcome for h in run.hands] == ["ended", "ended"]
    assert {"rules", "commitment", "deal", "ledger-event"} <= set(run.hands[0].checked)
    assert run.events == len(table.envelopes)


def test_the_replay_command_exits_zero_on_a_clean_file_and_reports_its_rate(exported: Path) -> None:
    result = CliRunner().invoke(main, ["replay", "--from-file", str(exported), "--all"])
    assert result.exit_code == 0, result.output
    assert "replay: OK: 2 hands" in result.output
    assert "events/s" in result.output
    assert "ledger not checked: no database given" in result.output


def test_the_timeline_shows_private_cards_to_ops(exported: Path, table: SyntheticTable) -> None:
    hand = next(iter(table.settlements))
    result = CliRunner().invoke(main, ["replay", "--from-file", str(exported), "--hand", hand])
    dealt = next(line for line in result.output.splitlines() if "HandDealt" in line)
    first_card = table.envelopes[
        [e.type for e in table.envelopes].index("rummy.dealer.v1.HandDealt")
    ]
    assert first_card.payload.hands[0].cards[0].face in dealt  # type: ignore[attr-defined]


def test_the_timeline_shows_money_in_tokens(exported: Path, table: SyntheticTable) -> None:
    """Every amount of the human timeline in House Tokens with two decimals (a net signed, the
    commission a percent), each as the recorded hand says; none in hundredths or basis points."""
    hand = next(iter(table.settlements))
    result = CliRunner().invoke(main, ["replay", "--from-file", str(exported), "--hand", hand])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()

    def line_of(event: str) -> str:
        return next(line for line in lines if f" {event} " in line)

    # RULES: 0.50 a point, 10% commission
    assert "point value 0.50 commission 10.00% [" in line_of("HandStarted")
    held = tokens(reservation_hundredths(RULES))
    reserved = [line for line in lines if " StakesReserved " in line]
    assert [line.split()[-2:] for line in reserved] == [
        [f"s{seat}", held] for seat in sorted(SEATS)
    ]
    s = table.settlements[hand].settlement
    nets = " ".join(f"s{x.seat}:{tokens(x.amount_hundredths, True)}" for x in s.lines)
    assert line_of("HandEnded").endswith(f"[{nets}] commission {tokens(s.commission_hundredths)}")
    assert s.commission_hundredths > 0 and any(x.amount_hundredths < 0 for x in s.lines)
    assert f"{SEATS[s.lines[0].seat]}:{tokens(s.lines[0].amount_hundredths, True)}" in line_of(
        "HandSettled"
    )
    for line in lines:
        assert "bps" not in line and "hundredths" not in line, line
        assert not re.search(r"commission -?\d+(\s|$)", line), line


def test_a_match_event_in_the_timeline_shows_its_money_fields_in_tokens() -> None:
    from rummy.match.v1 import match_pb2 as match_pb
    from rummy_ops.replay.render import describe

    text = describe(match_pb.MoneyReserved(seat=2, amount_hundredths=1300, purpose="entry"))
    assert text == 'seat: 2 amount: 13.00 purpose: "entry"'
    settled = describe(
        match_pb.MatchSettlement(
            pool_hundredths=4000, commission_bps=1000, commission_hundredths=400
        )
    )
    assert settled == "pool: 40.00 commission: 10.00% commission: 4.00"


def test_an_unknown_hand_is_an_error_not_a_clean_verdict(exported: Path) -> None:
    result = CliRunner().invoke(main, ["replay", "--from-file", str(exported), "--hand", "nope"])
    assert result.exit_code != 0 and "no events of hand nope" in result.output


# -- tampers ---------------------------------------------------------------------------------------


def tamper(path: Path, type_suffix: str, change: Any, nth: int = 0) -> dict[str, Any]:
    """Apply ``change(payload)`` to the ``nth`` line whose type ends with ``type_suffix``; returns
    that line."""
    objs = lines_of(path)
    target = [o for o in objs if o["type"].endswith(type_suffix)][nth]
    change(target["payload"])
    write_lines(path, objs)
    return target


def assert_first_mismatch(
    path: Path, line: dict[str, Any], check: str | None = None
) -> dict[str, Any]:
    code, doc = replay_file(path)
    assert code == 1
    first = doc["first_mismatch"]
    assert (first["stream_version"], first["event_id"]) == (
        line["stream_version"],
        line["event_id"],
    )
    assert first["type"] == line["type"].rsplit(".", 1)[1]
    if check is not None:
        assert first["check"] == check, first
    assert isinstance(first, dict)
    return first


def test_a_changed_card_in_the_deal_is_caught_at_hand_dealt(exported: Path) -> None:
    def swap(payload: dict[str, Any]) -> None:  # still a whole shoe, so only the seed can tell
        hand_card, stock_card = payload["hands"][0]["cards"][0], payload["stock"][10]
        payload["hands"][0]["cards"][0], payload["stock"][10] = stock_card, hand_card

    line = tamper(exported, ".HandDealt", swap)
    first = assert_first_mismatch(exported, line, check="deal")
    assert "card 1" in first["message"]


def test_a_changed_discard_is_caught_at_that_discard(exported: Path, table: SyntheticTable) -> None:
    dealt = next(e for e in table.envelopes if e.type.endswith(".HandDealt")).payload
    cut = dealt.wild_cut.index  # type: ignore[attr-defined]

    def change(payload: dict[str, Any]) -> None:
        payload["card"] = card_json(cut)  # out of play: nobody holds it

    line = tamper(exported, ".CardDiscarded", change, nth=4)
    first = assert_first_mismatch(exported, line, check="rules")
    assert "refuse" in first["message"]


def test_a_changed_score_is_caught_at_hand_ended(exported: Path) -> None:
    def change(payload: dict[str, Any]) -> None:
        loser = next(r for r in payload["results"] if r.get("points"))
        loser["points"] = loser["points"] - 5

    line = tamper(exported, ".HandEnded", change)
    first = assert_first_mismatch(exported, line, check="rules")
    assert "results" in first["message"]


def test_a_mismatch_line_names_the_differing_field_with_cards_in_the_notation(
    exported: Path, table: SyntheticTable
) -> None:
    def change(payload: dict[str, Any]) -> None:
        result = next(r for r in payload["results"] if r.get("cards"))
        result["cards"][0], result["cards"][1] = result["cards"][1], result["cards"][0]

    line = tamper(exported, ".HandEnded", change)
    first = assert_first_mismatch(exported, line, check="rules")
    message = first["message"]
    assert message.startswith("results[0].cards: recorded ")
    shown = line["payload"]["results"][0]["cards"]
    assert " ".join(c["face"] for c in shown[:3]) in message
    assert "Card(" not in message and "rank=" not in message
    assert len(message) < 300


def test_a_dropped_seat_charged_other_points_is_caught_at_the_drop(exported: Path) -> None:
    line = tamper(exported, ".PlayerDropped", lambda p: p.update(points=p["points"] - 20))
    first = assert_first_mismatch(exported, line, check="rules")
    assert "points" in first["message"]


def test_a_changed_settlement_amount_is_caught_at_hand_ended(exported: Path) -> None:
    def change(payload: dict[str, Any]) -> None:
        line = payload["settlement"][0]
        line["amount_hundredths"] = str(int(line.get("amount_hundredths", "0")) - 100)

    line = tamper(exported, ".HandEnded", change)
    first = assert_first_mismatch(exported, line, check="rules")
    assert "settlement" in first["message"]
    # the amounts named in tokens: the recorded (changed) and the replayed net of that seat
    amount = int(line["payload"]["settlement"][0].get("amount_hundredths", "0"))
    assert f"pt/{tokens(amount, True)} " in first["message"], first["message"]
    assert f"pt/{tokens(amount + 100, True)} " in first["message"], first["message"]


def test_a_changed_revealed_seed_fails_its_commitment(exported: Path) -> None:
    import base64

    def change(payload: dict[str, Any]) -> None:
        seed = bytearray(base64.b64decode(payload["server_seed"]))
        seed[0] ^= 1
        payload["server_seed"] = base64.b64encode(bytes(seed)).decode()

    line = tamper(exported, ".SeedRevealed", change)
    first = assert_first_mismatch(exported, line, check="commitment")
    assert "commitment" in first["message"]


def test_a_timed_out_seats_discard_recorded_as_its_own_play_is_caught(exported: Path) -> None:
    objs = lines_of(exported)
    line = next(
        o for o in objs if o["type"].endswith(".CardDiscarded") and o["payload"].get("automatic")
    )
    del line["payload"]["automatic"]
    write_lines(exported, objs)
    first = assert_first_mismatch(exported, line, check="rules")
    assert "automatic" in first["message"]


def test_a_settlement_line_naming_another_account_is_caught(exported: Path) -> None:
    def change(payload: dict[str, Any]) -> None:
        payload["settlement"][0]["account_id"] = "acct-mallory"

    line = tamper(exported, ".HandEnded", change)
    first = assert_first_mismatch(exported, line, check="rules")
    assert "account_id" in first["message"]


def test_an_event_recorded_twice_is_caught_at_its_repeated_stream_version(exported: Path) -> None:
    objs = lines_of(exported)
    line = next(o for o in objs if o["type"].endswith(".CardDiscarded"))
    write_lines(exported, [*objs, line])
    assert_first_mismatch(exported, line, check="stream")


def test_a_reshuffle_not_from_its_sub_stream_is_caught(exported: Path) -> None:
    def swap(payload: dict[str, Any]) -> None:
        payload["stock"][0], payload["stock"][1] = payload["stock"][1], payload["stock"][0]

    line = tamper(exported, ".StockReshuffled", swap)
    assert_first_mismatch(exported, line, check="reshuffle")


# -- the ledger in PostgreSQL ----------------------------------------------------------------------


@pytest.fixture()
def ledger_url(database_url: str) -> Iterator[str]:
    """A fresh database with the ledger's schema (its own migrations), dropped afterwards."""
    from rummy_ledger.adapters.db import apply_migrations

    name = f"replay_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlsplit(database_url)._replace(path=f"/{name}").geturl()
    try:
        apply_migrations(url)
        yield url
    finally:
        drop_database(database_url, name)


def post_with_the_ledger(url: str, table: SyntheticTable, settlements: dict[str, Any]) -> None:
    """Grant, reserve and settle each hand with the ledger service's own application code."""
    from rummy_ledger.adapters.postgres import PostgresUnitOfWork
    from rummy_ledger.application import accounts as app
    from rummy_ledger.domain import accounts as domain

    with psycopg.connect(url, options="-c search_path=ledger") as conn:
        uow = PostgresUnitOfWork.joining(conn)
        for account in SEATS.values():
            app.grant(uow, domain.Grant("ops", account, 1000_00, f"grant-{account}"))
        for hand_id, settlement in settlements.items():
            started = next(
                e.payload
                for e in table.envelopes
                if isinstance(e.payload, table_pb.HandStarted) and e.payload.hand_id == hand_id
            )
            app.reserve_stakes(
                uow,
                domain.ReserveStakes(
                    hand_id,
                    table.table_id,
                    tuple(
                        domain.SeatStake(s.seat, s.account_id, started.reservation_hundredths)
                        for s in started.seats
                    ),
                ),
            )
            app.settle_hand(
                uow, domain.SettleHand.from_settlement(hand_id, table.table_id, settlement)
            )
        conn.commit()


def test_a_settlement_that_agrees_with_the_journal_passes_the_ledger_check(
    table: SyntheticTable, exported: Path, ledger_url: str
) -> None:
    post_with_the_ledger(ledger_url, table, {h: e.settlement for h, e in table.settlements.items()})
    code, doc = replay_file(exported, "--database-url", ledger_url)
    assert code == 0, doc
    assert all("ledger" in h["checked"] for h in doc["hands"])


def test_a_journal_row_that_disagrees_with_the_log_is_caught(
    table: SyntheticTable, exported: Path, ledger_url: str
) -> None:
    hand_id, ended = next(iter(table.settlements.items()))
    points = {x.seat: x.points for x in ended.settlement.lines}
    loser = next(s for s, p in points.items() if p > 0)
    points[loser] -= 1  # the journal charges one point less than the log
    other = settle(RULES, ended.winner_seat, points)
    post_with_the_ledger(ledger_url, table, {hand_id: other})
    code, doc = replay_file(exported, "--database-url", ledger_url)
    assert code == 1
    first = doc["first_mismatch"]
    settled = next(
        e
        for e in table.envelopes
        if isinstance(e.payload, ledger_pb.HandSettled) and e.payload.hand_id == hand_id
    )
    assert (first["hand_id"], first["stream_version"], first["check"]) == (
        hand_id,
        settled.stream_version,
        "ledger",
    )
    assert f"seat {loser}" in first["message"]


# -- the table stream in Kafka ---------------------------------------------------------------------


def test_export_and_replay_read_the_table_stream_from_kafka(
    kafka_bootstrap: str, table: SyntheticTable, tmp_path: Path
) -> None:
    from rummy_platform.eventlog.kafka_log import KafkaEventLog
    from rummy_platform.topics import TABLE_EVENTS, event_topic_specs

    prefix = f"replay-{uuid.uuid4().hex[:8]}-"
    with KafkaEventLog(kafka_bootstrap) as log:
        log.ensure_topics(event_topic_specs(partitions=3, prefix=prefix))
        for envelope in table.envelopes:
            log.append(prefix + TABLE_EVENTS, envelope)
    kafka = ["--bootstrap", kafka_bootstrap, "--topic-prefix", prefix]
    runner = CliRunner(env={"DATABASE_URL": ""})
    path = tmp_path / "from-kafka.jsonl"
    exported = runner.invoke(main, ["export", "--table", table.table_id, *kafka, "-o", str(path)])
    assert exported.exit_code == 0, exported.output
    assert list(read_jsonl(path)) == table.envelopes
    hand = next(iter(table.settlements))
    replayed = runner.invoke(main, ["replay", "--hand", hand, *kafka, "--quiet"])
    assert replayed.exit_code == 0, replayed.output
    assert "replay: OK: 1 hands" in replayed.output


# -- hands the ledger did not settle ---------------------------------------------------------------


def test_a_hand_ended_without_a_settlement_in_the_journal_fails_once_the_grace_has_passed(
    table: SyntheticTable, exported: Path, ledger_url: str
) -> None:
    # Issue 12: a hand whose settlement the ledger never posted replayed as OK ("ledger: no
    # settlement in the journal yet") however long ago it ended.
    settled, unsettled = list(table.settlements)
    post_with_the_ledger(ledger_url, table, {settled: table.settlements[settled].settlement})
    code, doc = replay_file(exported, "--database-url", ledger_url)
    assert code == 1
    hand = next(h for h in doc["hands"] if h["hand_id"] == unsettled)
    assert hand["first_mismatch"]["check"] == "ledger"
    assert "the journal has no settlement for it (grace 60 s)" in hand["first_mismatch"]["message"]
    assert next(h for h in doc["hands"] if h["hand_id"] == settled)["ok"]

    # Within the grace (the hands ended long ago here, so a grace longer than that) it is a note.
    code, doc = replay_file(exported, "--database-url", ledger_url, "--settle-grace", "1e10")
    assert code == 0, doc
    hand = next(h for h in doc["hands"] if h["hand_id"] == unsettled)
    assert any("no settlement in the journal yet" in note for note in hand["notes"])


def test_a_settlement_the_ledger_refused_is_reported_as_refused_with_its_reason(
    table: SyntheticTable, tmp_path: Path
) -> None:
    hand_id = list(table.settlements)[-1]
    reason = f"hand {hand_id}: seat 1 would pay 1500 hundredths, more than the 1300 reserved"
    envelopes = [
        Envelope.new(
            ledger_pb.SettlementRefused(hand_id=hand_id, reason=reason),
            stream_id=e.stream_id,
            stream_version=e.stream_version,
            occurred_at=e.occurred_at,
            correlation_id=hand_id,
            causation_id=e.causation_id,
        )
        if isinstance(e.payload, ledger_pb.HandSettled) and e.payload.hand_id == hand_id
        else e
        for e in table.envelopes
    ]
    path = tmp_path / "refused.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl(envelopes, out)
    code, doc = replay_file(path)
    assert code == 1
    hand = next(h for h in doc["hands"] if h["hand_id"] == hand_id)
    assert (hand["outcome"], hand["first_mismatch"]["check"]) == ("voided", "settlement-refused")
    assert reason in hand["first_mismatch"]["message"]
    text = CliRunner().invoke(main, ["replay", "--from-file", str(path), "--all", "--quiet"])
    assert text.exit_code == 1
    assert "REFUSED at" in text.output and "1 with the settlement refused" in text.output


def test_a_hand_started_with_options_the_rules_refuse_is_a_finding_not_a_crash(
    table: SyntheticTable, tmp_path: Path
) -> None:
    hand_id = list(table.settlements)[0]
    envelopes = []
    for e in table.envelopes:
        if isinstance(e.payload, table_pb.HandStarted) and e.payload.hand_id == hand_id:
            started = table_pb.HandStarted()
            started.CopyFrom(e.payload)
            started.rule_set.first_drop_points = 150
            e = Envelope.new(
                started,
                stream_id=e.stream_id,
                stream_version=e.stream_version,
                occurred_at=e.occurred_at,
                correlation_id=hand_id,
            )
        envelopes.append(e)
    path = tmp_path / "refused-options.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl(envelopes, out)
    code, doc = replay_file(path)
    assert code == 1
    first = next(h for h in doc["hands"] if h["hand_id"] == hand_id)["first_mismatch"]
    assert first["check"] == "rules"
    assert "rule_set.first_drop_points must be 0..130" in first["message"]


def _pinned(table: SyntheticTable, hand_id: str, rules_version: str) -> list[Envelope]:
    """The table's envelopes with those of ``hand_id`` stamped with ``rules_version``."""
    return [
        replace(e, rules_version=rules_version) if e.correlation_id == hand_id else e
        for e in table.envelopes
    ]


@pytest.mark.parametrize(
    ("rules_version", "verdict"),
    [("bombay-baazi/1", None), ("bombay-baazi/9", "does not play rules 'bombay-baazi/9'")],
)
def test_replay_plays_a_hand_by_the_variant_and_rules_version_it_pinned(
    table: SyntheticTable, tmp_path: Path, rules_version: str, verdict: str | None
) -> None:
    hand_id = list(table.settlements)[0]
    path = tmp_path / "pinned.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl(_pinned(table, hand_id, rules_version), out)
    code, doc = replay_file(path)
    hand = next(h for h in doc["hands"] if h["hand_id"] == hand_id)
    if verdict is None:
        assert code == 0 and hand["first_mismatch"] is None
    else:
        # rules this build does not play: unverifiable (not OK, exit 1), and no mismatch either
        assert code == 1
        assert hand["ok"] is False and hand["first_mismatch"] is None
        assert verdict in hand["unverifiable"]


def _recorded_before_variant_options(table: SyntheticTable) -> list[Envelope]:
    """The table's envelopes as a writer before ``RuleSet.variant_options`` recorded them: every
    rule set with its flat fields only."""
    out = []
    for e in table.envelopes:
        if "rule_set" in type(e.payload).DESCRIPTOR.fields_by_name:
            old = type(e.payload)()
            old.CopyFrom(e.payload)
            old.rule_set.ClearField("variant_options")  # type: ignore[attr-defined]  # checked above
            e = replace(e, payload=old)
        out.append(e)
    return out


def test_a_hand_recorded_before_the_per_variant_options_existed_still_verifies(
    table: SyntheticTable,
) -> None:
    old = _recorded_before_variant_options(table)
    assert any(
        e.payload.rule_set.WhichOneof("variant_options") is None
        for e in old
        if isinstance(e.payload, table_pb.HandStarted)
    )
    run = replay_events(old, Selection())
    assert run.ok, [f.line() for h in run.hands for f in h.findings]
    assert [h.outcome for h in run.hands] == ["ended", "ended"]


def test_a_changed_flat_option_in_a_record_of_the_older_shape_is_still_caught(
    table: SyntheticTable,
) -> None:
    old = _recorded_before_variant_options(table)
    for e in old:
        if isinstance(e.payload, table_pb.HandStarted):
            e.payload.rule_set.middle_drop_points += 1
            break
    run = replay_events(old, Selection())
    assert not run.ok


def _recorded_before_seeds_locked_named_the_variant(table: SyntheticTable) -> list[Envelope]:
    """The table's envelopes as a writer before ``SeedsLocked.variant`` recorded them (33 such
    hands were on the shared broker)."""
    out = []
    for e in table.envelopes:
        if isinstance(e.payload, table_pb.SeedsLocked):
            old = table_pb.SeedsLocked()
            old.CopyFrom(e.payload)
            old.ClearField("variant")
            e = replace(e, payload=old)
        out.append(e)
    return out


def test_a_hand_recorded_before_seeds_locked_named_its_variant_still_verifies(
    table: SyntheticTable,
) -> None:
    old = _recorded_before_seeds_locked_named_the_variant(table)
    assert any(isinstance(e.payload, table_pb.SeedsLocked) for e in old)
    run = replay_events(old, Selection())
    assert run.ok, [f.line() for h in run.hands for f in h.findings]


def test_a_seeds_locked_naming_another_variant_than_its_hand_is_still_caught(
    table: SyntheticTable,
) -> None:
    old = _recorded_before_seeds_locked_named_the_variant(table)
    for e in old:
        if isinstance(e.payload, table_pb.SeedsLocked):
            e.payload.variant = "gin"
            break
    run = replay_events(old, Selection())
    assert not run.ok


def test_replay_skips_an_event_of_a_type_this_build_does_not_know_and_says_so(
    exported: Path, tmp_path: Path
) -> None:
    # A newer build wrote an event of a type this one has never heard of into the stream.
    objs = lines_of(exported)
    new = dict(objs[-1], type="rummy.table.v1.MeldLaidOff", payload={"hand_id": "x"})
    new["event_id"] = str(uuid.uuid4())
    new["stream_version"] = objs[-1]["stream_version"] + 1
    path = write_lines(tmp_path / "newer.jsonl", [*objs[:5], new, *objs[5:]])
    code, doc = replay_file(path)
    assert code == 0 and doc["ok"] is True
    assert doc["skipped_unknown_types"] == {"rummy.table.v1.MeldLaidOff": 1}
    # every hand of the file replayed as without the newer event
    assert [h["hand_id"] for h in doc["hands"]] == [
        h["hand_id"] for h in replay_file(exported)[1]["hands"]
    ]
    text = CliRunner().invoke(main, ["replay", "--from-file", str(path), "--all", "--quiet"])
    assert text.exit_code == 0, text.output
    assert "skipped: unknown type rummy.table.v1.MeldLaidOff (1 event;" in text.output


def test_a_hand_of_a_variant_this_build_does_not_know_is_unverifiable_not_ok_and_no_crash(
    exported: Path, table: SyntheticTable, tmp_path: Path
) -> None:
    hand_id = list(table.settlements)[0]
    objs = lines_of(exported)
    hand_no = None
    for obj in objs:
        if obj["type"] == "rummy.table.v1.HandStarted" and obj["payload"]["hand_id"] == hand_id:
            obj["payload"]["rule_set"] = {"variant": "gin-rummy"}
            hand_no = int(obj["payload"]["hand_no"])
    code, doc = replay_file(write_lines(tmp_path / "gin.jsonl", objs))
    assert code == 1 and doc["ok"] is False
    assert doc["unverifiable"] == [hand_id]
    hand = next(h for h in doc["hands"] if h["hand_id"] == hand_id)
    assert hand["ok"] is False and hand["outcome"] == "unverifiable"
    assert hand["first_mismatch"] is None and "no variant 'gin-rummy'" in hand["unverifiable"]
    assert hand_no is not None and hand["hand_no"] == hand_no  # its number, though unverifiable
    assert all(h["ok"] for h in doc["hands"] if h["hand_id"] != hand_id)
    text = CliRunner().invoke(
        main, ["replay", "--from-file", str(tmp_path / "gin.jsonl"), "--all", "--quiet"]
    )
    assert text.exit_code == 1
    assert "UNVERIFIABLE: this build cannot verify it: no variant 'gin-rummy'" in text.output
    assert "replay: UNVERIFIABLE: 1 hand(s) of rules this build does not know" in text.output


# -- a pot several winners share ---------------------------------------------------------------


def _shared_pot_ended() -> table_pb.HandEnded:
    """Seats 2 and 0 share the pot (in that order) of 250 + 100 less 35: 158 and 157."""
    return table_pb.HandEnded(
        hand_id="h-shared",
        winner_seat=2,
        co_winner_seats=[0],
        settlement=[
            table_pb.SettlementLine(seat=0, points=0, amount_hundredths=157),
            table_pb.SettlementLine(seat=1, points=25, amount_hundredths=-250),
            table_pb.SettlementLine(seat=2, points=0, amount_hundredths=158),
            table_pb.SettlementLine(seat=3, points=10, amount_hundredths=-100),
        ],
        commission_hundredths=35,
    )


def test_the_timeline_names_every_winner_of_a_shared_pot_and_one_winner_as_before() -> None:
    from rummy_ops.replay.render import describe

    shared = _shared_pot_ended()
    assert describe(shared) == (
        "winners s2+s0 [] [s0:+1.57 s1:-2.50 s2:+1.58 s3:-1.00] commission 0.35"
    )
    shared.ClearField("co_winner_seats")
    assert describe(shared).startswith("winner s2 [] [s0:+1.57")


def test_the_journal_check_compares_every_winners_share_of_a_shared_pot(ledger_url: str) -> None:
    from rummy_ledger.adapters.postgres import PostgresUnitOfWork
    from rummy_ledger.application import accounts as app
    from rummy_ledger.domain import accounts as domain
    from rummy_ops.replay.checks.settlement import journal_difference
    from rummy_ops.replay.ledger import JournalReader
    from rummy_rules.settlement import settle_shared

    rules = bombay_baazi(4, point_value_hundredths=10, commission_bps=1000)
    accounts = [f"shared-{s}" for s in range(4)]
    posted = settle_shared(rules, (2, 0), {1: 25, 3: 10})
    with psycopg.connect(ledger_url, options="-c search_path=ledger") as conn:
        uow = PostgresUnitOfWork.joining(conn)
        for hand_id in ("h-right", "h-swapped"):
            for a in accounts:
                app.grant(uow, domain.Grant("ops", a, 5000, f"grant-{hand_id}-{a}"))
            stakes = tuple(domain.SeatStake(s, a, 1300) for s, a in enumerate(accounts))
            app.reserve_stakes(uow, domain.ReserveStakes(hand_id, "t", stakes))
        app.settle_hand(uow, domain.SettleHand.from_settlement("h-right", "t", posted))
        # the same pot with the remainder hundredth given to the other winner
        swapped = settle_shared(rules, (0, 2), {1: 25, 3: 10})
        app.settle_hand(uow, domain.SettleHand.from_settlement("h-swapped", "t", swapped))
        conn.commit()
    with JournalReader(ledger_url) as journal:
        right, wrong = journal("h-right"), journal("h-swapped")
    assert right is not None and wrong is not None
    assert right.net_by_seat == {0: 157, 1: -250, 2: 158, 3: -100}
    assert journal_difference(right, posted) == ""
    assert journal_difference(wrong, posted) == (
        f"journal {wrong.transaction_id}: seat 0 moved +1.58, the log says +1.57"
    )
