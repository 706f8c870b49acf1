"""The gin bundle (``rummy_game.gin``, entry point ``rummy.variants:gin``) played end to end by the
product's own hosts, which were never told about it: the five services as processes finding it by
its entry point, the product's bot host (``rummy_ops.demo.play``) driving gin's bot strategy
(``rummy_rules.gin.bot``) over the public gRPC API (OpenTable with the gin rule set, TakeSeat,
ContributeSeed, DrawCard / DiscardCard, and gin's PassUpcard / Knock / Gin / BigGin through
Play), the ledger settling each hand, and ``rummy replay`` verifying every hand.

One two-seat Gin Rummy table at 10 hundredths a point and 10% commission: each hand's loser pays
the hand's score (docs/rules/gin.md#hand-score) x 10, the wall moves nothing. (A gin table plays
games in the product, house plan "Gin family"; a hand's own stake is what the generic hosts
settle, so it is what this test can hold while the gin match formats go on the wire.)
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import psycopg
import pytest

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gpb
from rummy.gin.v1 import rules_pb2 as gin_rules_pb
from rummy_ops.demo import DemoReport, TablePlan
from rummy_testing.demo_runs import (
    assert_books_follow_the_settlements,
    hands_ended,
    replay_once_settled,
    variant_demo,
)
from rummy_testing.stacks import once_per_hand

#: tests/e2e/conftest.py's RunningStack (conftest modules are not importable by name)
RunningStack = Any

POINT_VALUE, COMMISSION_BPS, HANDS = 10, 1000, 3
GRANT = 10_000  # covers a seat losing every hand at the most a gin hand can cost (129 x 10 x 3)
OUTCOMES = {"knock", "undercut", "gin", "big_gin", "lost", "drawn", "won", "timed_out", "left"}


def gin_rule_set() -> cards_pb2.RuleSet:
    rule_set = cards_pb2.RuleSet(variant="gin")
    rule_set.other_variant.Pack(gin_rules_pb.GinOptions(big_gin=True))
    return rule_set


@pytest.fixture(scope="module")
def gin_run(rummy_stack: RunningStack) -> DemoReport:
    report = variant_demo(
        rummy_stack,
        TablePlan("gin-2", 2, POINT_VALUE, COMMISSION_BPS),
        gin_rule_set(),
        hands=HANDS,
        seed=27,
        grant=GRANT,
        timeout_seconds=240,
    )
    print(
        f"{len(hands_ended(report))} gin hands in {report.wall_seconds:.1f} s;"
        f" outcomes: {Counter(r.outcome for h in hands_ended(report) for r in h.results)}"
    )
    return report


def scores(rummy_stack: RunningStack, table_id: str) -> dict[str, gpb.GinHandScored]:
    """Gin's GinHandScored events of the table stream, by hand."""
    return once_per_hand(rummy_stack, table_id, gpb.GinHandScored)


def test_bots_play_gin_hands_to_their_end_and_each_loser_pays_the_score(
    rummy_stack: RunningStack, gin_run: DemoReport
) -> None:
    assert gin_run.finished, gin_run.stopped_because
    assert gin_run.bot_errors == [] and gin_run.refused_actions == 0
    # the table's plan names no variant: its hands are the demo rule set's, gin's (their
    # outcome words are gin's in the report)
    assert {h.variant for h in gin_run.hands} == {"gin"}
    results = hands_ended(gin_run)
    assert len(results) >= HANDS
    scored = scores(rummy_stack, gin_run.tables["gin-2"])
    for result in results:
        assert [r.seat for r in result.results] == [0, 1]
        assert {r.outcome for r in result.results} <= OUTCOMES
        amounts = {line.seat: line.amount_hundredths for line in result.settlement}
        if all(r.outcome == "drawn" for r in result.results):
            assert set(amounts.values()) == {0}
            continue
        score = scored[result.hand_id]
        loser = 1 - score.winner_seat
        assert result.winner_seat == score.winner_seat
        pot = score.points * POINT_VALUE
        commission = pot * COMMISSION_BPS // 10_000
        assert amounts == {loser: -pot, score.winner_seat: pot - commission}
        assert result.commission_hundredths == commission
        # both hands are public with the result: ten cards each (the knocker's face-down too)
        assert all(len(r.cards) >= 10 for r in result.results)


def test_the_ledger_balances_move_by_the_settlements(gin_run: DemoReport) -> None:
    assert_books_follow_the_settlements(gin_run, GRANT)


def test_the_ledger_journals_each_scored_gin_hand_once(
    rummy_stack: RunningStack, gin_run: DemoReport
) -> None:
    with psycopg.connect(rummy_stack.database_url) as conn:
        for result in hands_ended(gin_run):
            if all(r.outcome == "drawn" for r in result.results):
                continue
            rows = conn.execute(
                "SELECT id FROM ledger.journal_transactions"
                " WHERE hand_id = %s AND kind = 'settlement'",
                (result.hand_id,),
            ).fetchall()
            assert len(rows) == 1, result.hand_id


def test_rummy_replay_verifies_every_gin_hand(
    rummy_stack: RunningStack, gin_run: DemoReport
) -> None:
    table_id = gin_run.tables["gin-2"]
    code, doc, hands = replay_once_settled(rummy_stack, table_id)
    assert code == 0 and doc["ok"], doc["first_mismatch"]
    assert doc["unverifiable"] == [] and doc["skipped_unknown_types"] == {}
    for hand in hands:
        assert hand["ok"] and hand["findings"] == [], hand
