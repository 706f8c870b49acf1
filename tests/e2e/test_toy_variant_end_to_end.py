"""The test suite's toy variant (five-card knock, ``toy_variant``) played end to end by the
product's own hosts, which were never told about it: the five services as processes loading it
as a plug-in (``RUMMY_VARIANT_PLUGINS``, the session's ``rummy_stack``), the product's bot host
(``rummy_ops.demo.play`` with its bots, ``rummy_ops.bots``) driving the toy's own bot strategy
(``toy_variant.bot``: knock at 14 points or less, else draw from the stock and discard the
costliest card) over the public gRPC API (OpenTable with the toy's rule set, TakeSeat,
ContributeSeed, DrawCard / DiscardCard and the toy's Knock through Play), the ledger settling
each hand, and ``rummy replay`` (the CLI, a process with the plug-in) verifying every hand.

One 3-seat toy table, 37 hundredths a point, 12.5% commission (so commissions and shares
round), the toy's 25-point maximum loss, 18 turns before the showdown; each bot is granted 5000
hundredths.

A shared pot (two lowest totals tying, the third higher) comes from the deal only: the server
seed is secret until the hand ends, so no strategy can steer to it, and it happens in about 6%
of these hands (a simulation of this strategy). The checks below hold for it whenever it comes;
that the ledger settles a two-winner toy hand once, each winner its share, is held by
``tests/integration/test_variant_plugins.py`` (a fixed deal through the real services).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from importlib import import_module
from typing import Any

import psycopg
import pytest

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_ops.demo import HOUSE_COMMISSION_ACCOUNT, DemoReport, TablePlan
from rummy_platform.config import PLUGINS_VARIABLE
from rummy_rules.cards import parse_card
from rummy_testing.demo_runs import (
    assert_books_follow_the_settlements,
    hands_ended,
    replay_once_settled,
    variant_demo,
)
from rummy_testing.demo_runs import rummy_replay as replay_table
from rummy_testing.service_process import variant_plugin_env
from rummy_testing.stacks import once_per_hand
from toy_variant import TOY_NAME, toy_pb2
from toy_variant.bot import KNOCK_AT, total

# The bot host in this process looks the toy up (its bot strategy, its shoe, its wire).
import_module("toy_variant.plugin")

#: tests/e2e/conftest.py's RunningStack (conftest modules are not importable by name)
RunningStack = Any

SEATS, POINT_VALUE, COMMISSION_BPS = 3, 37, 1250
MAX_POINTS, MAX_TURNS = 25, 18
#: A knock ends about half the hands, so 12 hands hold one but for 1 run in ~4,000 (0.5**12).
HANDS = 12
GRANT = 12_000  # covers a seat losing every hand at the cap (12 x 25 x 37 = 11,100)


def toy_rule_set() -> cards_pb2.RuleSet:
    rule_set = cards_pb2.RuleSet(variant=TOY_NAME)
    rule_set.other_variant.Pack(toy_pb2.ToyOptions(max_turns=MAX_TURNS))
    return rule_set


@pytest.fixture(scope="module")
def toy_run(rummy_stack: RunningStack) -> DemoReport:
    report = variant_demo(
        rummy_stack,
        TablePlan("toy-3", SEATS, POINT_VALUE, COMMISSION_BPS),
        toy_rule_set(),
        hands=HANDS,
        seed=15,
        grant=GRANT,
        timeout_seconds=90,
    )
    winners = Counter(1 + len(r.co_winner_seats) for r in hands_ended(report))
    print(
        f"{sum(winners.values())} toy hands in {report.wall_seconds:.1f} s;"
        f" hands by number of winners: {dict(winners)}"
    )
    return report


def knocks(rummy_stack: RunningStack, table_id: str) -> dict[str, toy_pb2.Knocked]:
    """The toy's Knocked events of the table stream, by hand."""
    return once_per_hand(rummy_stack, table_id, toy_pb2.Knocked)


def expected_money(result: table_events.HandEnded) -> tuple[list[int], dict[int, int], int]:
    """The winners (earliest seat first), each seat's amount (hundredths) and the commission,
    from the seats' shown cards by the toy's rules (lowest totals win and share; losers pay
    min(total - lowest, 25) points)."""
    totals = {
        r.seat: sum(min(int(parse_card(c.face).rank or 0), 10) for c in r.cards)
        for r in result.results
    }
    low = min(totals.values())
    winners = [s for s in sorted(totals) if totals[s] == low]
    if len(winners) == len(totals):
        winners = winners[:1]
    owed = {
        s: min(t - low, MAX_POINTS) * POINT_VALUE for s, t in totals.items() if s not in winners
    }
    pot = sum(owed.values())
    commission = pot * COMMISSION_BPS // 10_000
    share, remainder = divmod(pot - commission, len(winners))
    amounts = {s: -a for s, a in owed.items()}
    amounts.update({s: share + (1 if i < remainder else 0) for i, s in enumerate(winners)})
    return winners, amounts, commission


def test_bots_play_every_toy_hand_to_a_knock_or_the_showdown_through_the_public_api(
    rummy_stack: RunningStack, toy_run: DemoReport
) -> None:
    assert toy_run.finished, toy_run.stopped_because
    assert toy_run.bot_errors == [] and toy_run.refused_actions == 0
    assert [h.aborted_reason for h in toy_run.hands if h.result is None] == []
    results = hands_ended(toy_run)
    assert len(results) >= HANDS
    knocked = knocks(rummy_stack, toy_run.tables["toy-3"])
    assert set(knocked) <= {r.hand_id for r in results}
    assert knocked, "no bot knocked in any hand"  # a knock ends about half the hands
    for result in results:
        assert [r.seat for r in result.results] == list(range(SEATS))
        assert all(len(r.cards) == 5 for r in result.results)  # 5 cards, no jokers, no melds
        assert all(not r.arrangement.melds for r in result.results)
        winners = [result.winner_seat, *result.co_winner_seats]
        assert {r.seat for r in result.results if r.outcome == "won"} == set(winners)
        if result.hand_id in knocked:  # the knocker's cards are those it knocked with
            knocker = next(r for r in result.results if r.seat == knocked[result.hand_id].seat)
            assert total([parse_card(c.face) for c in knocker.cards]) <= KNOCK_AT


def test_each_hand_s_settlement_is_the_toy_s_shared_pot_rule_to_the_hundredth(
    toy_run: DemoReport,
) -> None:
    for result in hands_ended(toy_run):
        winners, amounts, commission = expected_money(result)
        assert [result.winner_seat, *result.co_winner_seats] == winners
        assert {line.seat: line.amount_hundredths for line in result.settlement} == amounts
        assert result.commission_hundredths == commission
        assert (result.point_value_hundredths, result.commission_bps) == (
            POINT_VALUE,
            COMMISSION_BPS,
        )


def journal_lines(result: table_events.HandEnded) -> list[tuple[str, str, int]]:
    """The journal lines the ledger's settlement of ``result`` is made of (account, line kind,
    hundredths), sorted: each loser's ``loss``; a lone winner's ``win`` (the pot) and
    ``commission`` (its minus), or each sharing winner's ``win`` (its share, the commission
    already taken); the house's ``commission``."""
    winners = {result.winner_seat, *result.co_winner_seats}
    account = {line.seat: line.account_id for line in result.settlement}
    amount = {line.seat: line.amount_hundredths for line in result.settlement}
    lines = [(account[s], "loss", amount[s]) for s in amount if s not in winners]
    pot = -sum(m for _a, _k, m in lines)
    if len(winners) == 1:
        lines += [
            (account[result.winner_seat], "win", pot),
            (account[result.winner_seat], "commission", -result.commission_hundredths),
        ]
    else:
        lines += [(account[s], "win", amount[s]) for s in winners]
    lines.append((HOUSE_COMMISSION_ACCOUNT, "commission", result.commission_hundredths))
    return sorted(lines)


def test_the_ledger_settles_each_toy_hand_once_as_its_hand_ended_says(
    rummy_stack: RunningStack, toy_run: DemoReport
) -> None:
    results = hands_ended(toy_run)
    with psycopg.connect(rummy_stack.database_url) as conn:
        for result in results:
            transactions = conn.execute(
                "SELECT id FROM ledger.journal_transactions"
                " WHERE hand_id = %s AND kind = 'settlement'",
                (result.hand_id,),
            ).fetchall()
            assert len(transactions) == 1, result.hand_id
            rows = conn.execute(
                "SELECT account_id, line_kind, amount FROM ledger.journal_entries"
                " WHERE transaction_id = %s",
                (transactions[0][0],),
            ).fetchall()
            assert sorted(rows) == journal_lines(result)
    assert_books_follow_the_settlements(toy_run, GRANT)


def rummy_replay(
    rummy_stack: RunningStack, table_id: str, plugins: bool = True
) -> subprocess.CompletedProcess[str]:
    """``rummy replay --table --json`` as a process, loading the toy plug-in (or, without
    ``plugins``, no plug-in at all)."""
    env = {**os.environ, **variant_plugin_env()}
    if not plugins:
        env[PLUGINS_VARIABLE] = ""
    return replay_table(rummy_stack, table_id, env)


def test_rummy_replay_verifies_every_toy_hand_against_the_stream_and_the_journal(
    rummy_stack: RunningStack, toy_run: DemoReport
) -> None:
    table_id = toy_run.tables["toy-3"]
    wanted = {r.hand_id for r in hands_ended(toy_run)}
    code, doc, ended_hands = replay_once_settled(
        rummy_stack, table_id, {**os.environ, **variant_plugin_env()}
    )
    assert code == 0 and doc["ok"], doc["first_mismatch"]
    assert doc["unverifiable"] == [] and doc["skipped_unknown_types"] == {}
    assert wanted <= {h["hand_id"] for h in ended_hands}
    for hand in ended_hands:
        assert hand["ok"] and hand["findings"] == [] and hand["notes"] == [], hand


def test_rummy_replay_without_the_plug_in_calls_every_toy_hand_unverifiable(
    rummy_stack: RunningStack, toy_run: DemoReport
) -> None:
    done = rummy_replay(rummy_stack, toy_run.tables["toy-3"], plugins=False)
    doc = json.loads(done.stdout)
    assert done.returncode == 1 and not doc["ok"]
    assert {r.hand_id for r in hands_ended(toy_run)} <= set(doc["unverifiable"])
    for hand in doc["hands"]:
        assert f"no variant {TOY_NAME!r} is registered" in hand["unverifiable"]
