"""``rummy replay`` of a whole match: a table stream of a 101 pool (four seats, entry 10.00, 10%)
built with the rules library and the wire as the table service records it (TableOpened with
the format, the match's events through ``rummy_game.match_payloads``, each deal a real hand through
``stream_payloads``, the ledger's MatchSettled re-recorded), replayed with one verdict per match
beside the hands' (and a 201 pool with a rejoin); a tampered total, prize, ledger answer, hand
and rejoin are each caught at the event they are about."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.protobuf.message import Message
from test_replay import SyntheticTable

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import match_payloads
from rummy_ops.cli import main
from rummy_ops.replay import ReplayRun, Selection, replay_events
from rummy_ops.replay.checks import LedgerRows
from rummy_ops.replay.checks.match import match_journal_difference
from rummy_ops.replay.jsonl import write_jsonl
from rummy_platform.envelope import Envelope
from rummy_rules.commands import Command
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import MatchFormat, MatchState, deal_result
from rummy_rules.formats import messages as fm
from rummy_rules.formats.money import MatchSettlement
from rummy_rules.indian.rules import IndianShoes, match_deal_rule_set

SEATS = {0: "acct-ana", 1: "acct-bo", 2: "acct-cy", 3: "acct-di"}
OPTIONS = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=10_00))
COMMISSION_BPS = 1000
MATCH_ID = "match-1"
HOUSE = "house:commission"


@dataclass
class MatchOnTable:
    """Match ``match_id`` of ``fmt`` recorded on ``table`` as the table service records it:
    each command a second after the last on the table's clock, its events through the match
    wire."""

    table: SyntheticTable
    fmt: MatchFormat
    match_id: str
    state: MatchState = field(init=False)

    def __post_init__(self) -> None:
        self.state = self.fmt.initial_state()

    def do(self, make: Callable[[int], Command], hand_id: str = "") -> tuple[Event, ...]:
        """Decide ``make(at_ms)``, record its events (correlated to ``hand_id``, "" for none)
        and fold them into :attr:`state`. Returns the events."""
        self.table.at_ms += 1000
        events = self.fmt.decide(self.state, make(self.table.at_ms))
        for payload in match_payloads.events_to_pb(events, self.state, hand_id):
            self.table.record(payload, self.match_id)
        self.state = self.fmt.fold(events, self.state)
        return events


def match_settled(
    match_id: str,
    settlement: MatchSettlement,
    accounts: Mapping[int, str],
    transaction_id: str,
    game_no: int = 0,
) -> ledger_pb.MatchSettled:
    """The ledger's MatchSettled of match ``match_id``'s ``settlement`` (a game's when
    ``game_no``, else the match's): each seat's line on its account in ``accounts``, the
    commission to HOUSE."""
    commission = settlement.commission_hundredths
    return ledger_pb.MatchSettled(
        match_id=match_id,
        game_no=game_no,
        journal_transaction_id=transaction_id,
        lines=[
            ledger_pb.JournalLine(
                account_id=accounts[x.seat], amount_hundredths=x.amount_hundredths
            )
            for x in settlement.lines
        ]
        + [ledger_pb.JournalLine(account_id=HOUSE, amount_hundredths=commission)],
        commission_hundredths=commission,
    )


def match_table(
    options: mpb.MatchOptions,
    dealer_of: Callable[[int, tuple[int, ...]], int],
    rejoin_held: bool = True,
) -> tuple[SyntheticTable, MatchSettlement]:
    """A 4-seat table of ``options`` whose every deal is a hand of first drops (every seat on
    turn drops until one is left: the dealer wins it), ``dealer_of(deal number, seats dealt
    in)`` dealing; every rejoin offered is accepted. Returns the table and the match's
    settlement."""
    fmt = match_payloads.format_from_pb(options, COMMISSION_BPS)
    assert fmt.deal_rules is not None
    # the Bombay Baazi shoe at 4 seats: the shoe the wire rebuilds when it names none
    rules = match_deal_rule_set(4, fmt.deal_rules, shoes=IndianShoes.BOMBAY_BAAZI)
    t = SyntheticTable(table_id="table-pool", rules=rules)
    t.record(
        table_pb.TableOpened(
            table_id=t.table_id, seat_count=4, commission_bps=COMMISSION_BPS, match=options
        ),
        "",
    )
    match = MatchOnTable(t, fmt, MATCH_ID)
    do = match.do
    seats = tuple(SeatAccount(s, a) for s, a in sorted(SEATS.items()))
    do(lambda at: fm.StartMatch(match_id=MATCH_ID, seats=seats, at_ms=at))
    deal = 0
    while match.state.result is None:
        deal += 1
        hand_id = f"deal-{deal}"
        do(lambda at: fm.BeginDeal(at_ms=at), hand_id)
        dealt = match.state.deal_seats
        players = {seat: SEATS[seat] for seat in dealt}
        t.play(players, dealer=dealer_of(deal, dealt), script="drop", hand_id=hand_id)
        result = deal_result(t.settlements[hand_id])
        scored = do(lambda at, r=result: fm.RecordDeal(result=r, at_ms=at), hand_id)  # type: ignore[misc]
        for offer in (e for e in scored if isinstance(e, fm.RejoinOffered)):
            do(lambda at, seat=offer.seat: fm.AcceptRejoin(seat=seat, at_ms=at))  # type: ignore[misc]
            if not rejoin_held:  # the ledger cannot hold the entry: the table undoes the rejoin
                t.record(
                    ledger_pb.MatchMoneyRejected(
                        match_id=MATCH_ID, purpose="rejoin", seat=offer.seat,
                        account_id=SEATS[offer.seat], required_hundredths=10_00,
                    ),
                    MATCH_ID,
                )  # fmt: skip
                do(lambda at, seat=offer.seat: fm.RejoinNotHeld(seat=seat, at_ms=at))  # type: ignore[misc]
    ended = match.state.result
    assert isinstance(ended, fm.MatchEnded) and ended.settlement is not None
    t.record(match_settled(MATCH_ID, ended.settlement, SEATS, "settlement:match-1"), MATCH_ID)
    return t, ended.settlement


def pool_table() -> tuple[SyntheticTable, MatchSettlement]:
    """Seat 0 deals (and wins) every deal; seats 1, 2 and 3 first-drop (20 each): all three
    are eliminated at 120 in the 6th deal and seat 0, the last left, wins the pool of 40.00
    less 4.00 commission (net +26.00, the others -10.00 each)."""
    return match_table(OPTIONS, lambda _deal, _seats: 0)


def rejoin_table(rejoin_held: bool = True) -> tuple[SyntheticTable, MatchSettlement]:
    """A 201 pool with rejoin: seats 0, 1 and 2 deal in turn, seat 3 never (it first-drops 25
    every deal): out at 225 in deal 9 while the others stand at 150, it rejoins at 151 for a
    second entry."""
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=201, entry_fee_hundredths=10_00, rejoin=True)
    )

    def dealer(deal: int, seats: tuple[int, ...]) -> int:
        dealers = [s for s in seats if s != 3] or list(seats)
        return dealers[(deal - 1) % len(dealers)]

    return match_table(options, dealer, rejoin_held)


@pytest.fixture(scope="module")
def pool() -> tuple[SyntheticTable, MatchSettlement]:
    return pool_table()


def replay(envelopes: list[Envelope]) -> ReplayRun:
    return replay_events(envelopes, Selection())


def tampered(envelopes: list[Envelope], kind: type[Message], change: Callable[[Message], None],
             nth: int = 0) -> tuple[list[Envelope], int]:  # fmt: skip
    """A copy of ``envelopes`` whose ``nth`` payload of ``kind`` is changed; its stream version."""
    out, seen, version = [], 0, 0
    for e in envelopes:
        if isinstance(e.payload, kind):
            if seen == nth:
                payload = type(e.payload)()
                payload.CopyFrom(e.payload)
                change(payload)
                e = replace(e, payload=payload)
                version = e.stream_version
            seen += 1
        out.append(e)
    assert version, f"no {kind.__name__} #{nth}"
    return out, version


def test_the_hand_worked_pool_settles_as_the_rulebook_says(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    _, s = pool
    # 4 entries of 10.00 = 40.00; 10% = 4.00; seat 0 held 10.00 and receives 36.00: +26.00
    assert (s.pool_hundredths, s.commission_hundredths) == (40_00, 4_00)
    assert [(x.seat, x.held_hundredths, x.amount_hundredths) for x in s.lines] == [
        (0, 10_00, 26_00),
        (1, 10_00, -10_00),
        (2, 10_00, -10_00),
        (3, 10_00, -10_00),
    ]


def test_a_clean_match_replays_with_one_verdict_beside_its_hands(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool
    run = replay(t.envelopes)
    assert run.ok and len(run.hands) == 6 and all(h.ok for h in run.hands)
    (match,) = run.matches
    assert match.ok and match.outcome == "ended" and match.match_format == "pool-101"
    assert [n for n, _ in match.deals] == [1, 2, 3, 4, 5, 6] and match.winners == (0,)
    assert {"match-rules", "match-deal", "match-ledger-event"} <= set(match.checked)
    assert match.settlement is not None and match.settlement.commission_hundredths == 4_00


def test_a_tampered_running_total_is_caught_at_its_deal(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool

    def change(p: Message) -> None:
        p.totals[1].points = 35  # type: ignore[attr-defined]  # seat 1: 40 after deal 2

    envelopes, version = tampered(t.envelopes, mpb.DealScored, change, nth=1)
    (match,) = replay(envelopes).matches
    assert not match.ok and match.first is not None
    assert match.first.version == version and match.first.check == "match-rules"
    assert "totals" in match.first.message and "35" in match.first.message


def test_a_tampered_prize_is_caught_at_the_match_end(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool

    def change(p: Message) -> None:
        p.settlement.lines[0].amount_hundredths += 1  # type: ignore[attr-defined]
        p.settlement.commission_hundredths -= 1  # type: ignore[attr-defined]  # still sums to 0

    envelopes, version = tampered(t.envelopes, mpb.MatchEnded, change)
    run = replay(envelopes)
    (match,) = run.matches
    assert not run.ok and match.first is not None and match.first.version == version
    assert match.first.type == "MatchEnded" and "settlement" in match.first.message


def test_a_ledger_answer_moving_other_amounts_is_caught(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool

    def change(p: Message) -> None:
        p.lines[0].amount_hundredths -= 1  # type: ignore[attr-defined]

    envelopes, version = tampered(t.envelopes, ledger_pb.MatchSettled, change)
    (match,) = replay(envelopes).matches
    assert match.first is not None and match.first.check == "match-ledger-event"
    assert match.first.version == version and "acct-ana moved +25.99" in match.first.message


def test_a_deal_whose_hand_was_tampered_fails_the_match_too(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool

    def change(p: Message) -> None:
        p.results[1].points = 25  # type: ignore[attr-defined]  # a first drop costs 20 here

    envelopes, _ = tampered(t.envelopes, table_pb.HandEnded, change, nth=2)
    run = replay(envelopes)
    assert not run.hands[2].ok
    (match,) = run.matches
    assert not match.ok and match.first is not None
    assert match.first.check in ("match-rules", "match-deal")


def test_a_dealscored_without_its_hand_is_a_finding_not_a_crash(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool
    envelopes = [e for e in t.envelopes if not (
        isinstance(e.payload, table_pb.HandEnded) and e.payload.hand_id == "deal-3")]  # fmt: skip
    (match,) = replay(envelopes).matches
    assert match.first is not None and "deal 3" in match.first.message


def test_a_stream_without_the_tables_format_cannot_be_replayed_as_a_match(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool
    envelopes = [e for e in t.envelopes if not isinstance(e.payload, table_pb.TableOpened)]
    (match,) = replay(envelopes).matches
    assert match.first is not None and "format is unknown" in match.first.message


def test_the_journal_of_a_match_is_compared_to_the_hundredth(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    _, s = pool
    lost = {1: -10_00, 2: -10_00, 3: -10_00}
    right = LedgerRows("settlement:match", {0: 26_00, **lost}, {}, 4_00)
    assert match_journal_difference(right, s) == ""
    off = LedgerRows("settlement:match", {0: 25_99, **lost}, {}, 4_01)
    assert match_journal_difference(off, s) == (
        "journal settlement:match: seat 0 moved +25.99, MatchEnded says +26.00"
    )
    commission = LedgerRows("settlement:match", {0: 26_00, **lost}, {}, 4_01)
    assert "commission 4.01, MatchEnded says 4.00" in match_journal_difference(commission, s)
    extra = LedgerRows("settlement:match", {0: 26_00, **lost, 4: 0}, {}, 4_00)
    assert "seats [4]" in match_journal_difference(extra, s)


def test_rummy_replay_prints_the_match_verdict_and_fails_on_a_tampered_match(
    pool: tuple[SyntheticTable, MatchSettlement], tmp_path: Path
) -> None:
    t, _ = pool
    clean = tmp_path / "clean.jsonl"
    with open(clean, "w", encoding="utf-8") as out:
        write_jsonl(t.envelopes, out)
    result = CliRunner().invoke(main, ["replay", "--from-file", str(clean), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "match match-1 (pool-101, 6 deals): OK ended" in result.output
    assert "6 hands, 1 matches" in result.output

    def change(p: Message) -> None:
        p.totals[0].points = 1  # type: ignore[attr-defined]  # the winner adds 0

    envelopes, _ = tampered(t.envelopes, mpb.DealScored, change)
    bad = tmp_path / "bad.jsonl"
    with open(bad, "w", encoding="utf-8") as out:
        write_jsonl(envelopes, out)
    result = CliRunner().invoke(main, ["replay", "--from-file", str(bad), "--json"])
    assert result.exit_code == 1
    (match,) = json.loads(result.output)["matches"]
    assert not match["ok"] and match["first_mismatch"]["type"] == "DealScored"


@pytest.fixture(scope="module")
def rejoin() -> tuple[SyntheticTable, MatchSettlement]:
    return rejoin_table()


def test_a_match_with_a_rejoin_replays_clean_and_counts_the_second_entry(
    rejoin: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, s = rejoin
    rejoined = [e.payload for e in t.envelopes if isinstance(e.payload, mpb.Rejoined)]
    assert [(r.seat, r.total) for r in rejoined] == [(3, 151)]
    run = replay(t.envelopes)
    (match,) = run.matches
    assert run.ok and match.ok and match.match_format == "pool-201"
    # 4 entries and 1 rejoin of 10.00 = 50.00; 10% = 5.00 to the house
    assert match.settlement == s and (s.pool_hundredths, s.commission_hundredths) == (50_00, 5_00)


def test_a_rejoin_at_a_tampered_total_is_caught(
    rejoin: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = rejoin

    def change(p: Message) -> None:
        p.total = 100  # type: ignore[attr-defined]  # the rulebook's price is 151

    envelopes, version = tampered(t.envelopes, mpb.Rejoined, change)
    (match,) = replay(envelopes).matches
    assert match.first is not None and match.first.version == version
    assert match.first.type == "Rejoined" and "total" in match.first.message


def test_a_match_whose_ledger_settlement_is_not_in_the_stream_says_so(
    pool: tuple[SyntheticTable, MatchSettlement],
) -> None:
    t, _ = pool
    without = [e for e in t.envelopes if not isinstance(e.payload, ledger_pb.MatchSettled)]
    (match,) = replay(without).matches
    assert match.ok and "match-ledger-event" not in match.checked
    assert any("MatchSettled is not in the table's stream" in note for note in match.notes)


def test_a_rejoin_the_ledger_could_not_hold_replays_clean_and_the_seat_stays_out() -> None:
    t, s = rejoin_table(rejoin_held=False)
    refused = [e.payload for e in t.envelopes if isinstance(e.payload, mpb.RejoinRefused)]
    assert [(r.seat, r.total) for r in refused] == [(3, 225)]  # back at its total before
    run = replay(t.envelopes)
    (match,) = run.matches
    assert run.ok and match.ok, match.findings
    # 4 entries of 10.00, no second entry for seat 3 = 40.00; 10% = 4.00 to the house
    assert (s.pool_hundredths, s.commission_hundredths) == (40_00, 4_00)


def test_a_rejoin_undone_without_the_ledgers_refusal_is_caught() -> None:
    t, _ = rejoin_table(rejoin_held=False)
    envelopes = [e for e in t.envelopes if not isinstance(e.payload, ledger_pb.MatchMoneyRejected)]
    (match,) = replay(envelopes).matches
    assert match.first is not None and match.first.type == "RejoinRefused"
    assert "no ledger MatchMoneyRejected" in match.first.message
