"""The demo's bookkeeping: how a hand ended, its one-line report, token amounts, the hands'
shares, the conservation check and the replay seam."""

from __future__ import annotations

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as ev
from rummy_ops.demo.plans import TablePlan, share
from rummy_ops.demo.report import (
    WON_SHOWING_MELDS,
    WON_WITHOUT_MELDS,
    DemoReport,
    HandRecord,
    endings,
    endings_of,
    hand_line,
    succeeded,
    summary,
)
from rummy_ops.demo.run import _stakes, bot_account, opened_line, table_name
from rummy_ops.demo.verify import replay_verdict
from rummy_ops.money import tokens

MELD = cards_pb2.Meld(kind="pure_sequence", cards=[cards_pb2.Card(index=i) for i in (0, 1, 2)])


def ended(winner_declared: bool, *outcomes: str) -> ev.HandEnded:
    """Seat 0 wins; the other seats went out as ``outcomes`` say."""
    winner = ev.SeatResult(seat=0, account_id="a0", outcome="won")
    if winner_declared:
        winner.arrangement.melds.append(MELD)
    results = [winner] + [
        ev.SeatResult(seat=i + 1, account_id=f"a{i + 1}", outcome=o, points=40)
        for i, o in enumerate(outcomes)
    ]
    losers = 40 * len(outcomes) * 10
    return ev.HandEnded(
        hand_id="h1",
        winner_seat=0,
        results=results,
        settlement=[ev.SettlementLine(seat=0, account_id="a0", amount_hundredths=losers - 30)]
        + [
            ev.SettlementLine(seat=i + 1, account_id=f"a{i + 1}", amount_hundredths=-400)
            for i in range(len(outcomes))
        ],
        commission_hundredths=30,
    )


WRONG_DECLARE, TIMEOUT_DROP = "with a wrong declare", "with a timeout auto-drop"


def test_a_declared_win_over_counted_hands_is_a_win_showing_melds() -> None:
    assert endings_of(ended(True, "counted", "counted")) == [WON_SHOWING_MELDS]


def test_a_win_without_melds_shown_is_told_apart() -> None:
    assert endings_of(ended(False, "first_drop", "middle_drop")) == [WON_WITHOUT_MELDS]


def test_the_notable_outcomes_the_variant_declares_are_counted_beside_the_ending() -> None:
    assert endings_of(ended(True, "wrong_declare", "timed_out", "counted")) == [
        WON_SHOWING_MELDS,
        WRONG_DECLARE,
        TIMEOUT_DROP,
    ]
    # every one the report lists: the ways of winning and the installed variants' notables
    assert {WRONG_DECLARE, TIMEOUT_DROP} <= set(endings())


def test_hundredths_print_as_tokens_with_two_decimals() -> None:
    assert tokens(0) == "0.00"
    assert tokens(1205) == "12.05"
    assert tokens(-7) == "-0.07"
    assert tokens(340, signed=True) == "+3.40"


def test_a_hand_line_names_the_table_winner_points_commission_and_net_movement() -> None:
    line = hand_line(HandRecord("gold-8", "t", 3, "h1", ended(True, "counted", "wrong_declare")))
    assert line.startswith("gold-8")
    assert "hand   3" in line and "winner s0" in line
    assert "s1:40" in line and "s2:40wd" in line
    assert "commission 0.30" in line
    assert "s0:+7.70" in line and "s1:-4.00" in line


def test_a_hand_line_names_every_winner_of_a_shared_pot() -> None:
    result = ended(False, "counted", "counted")
    result.results[1].outcome = "won"
    result.co_winner_seats.append(1)
    line = hand_line(HandRecord("toy-3", "t", 1, "h1", result))
    assert "winners s0+s1  points [" in line and "winner s0 " not in line


def test_hands_are_shared_among_tables_with_the_remainder_first() -> None:
    assert share(30, 3) == [10, 10, 10]
    assert share(10, 3) == [4, 3, 3]
    assert sum(share(7, 3)) == 7


def report(balances: dict[str, int], commission: int, granted: int) -> DemoReport:
    r = DemoReport(run_id="x", balances=balances, granted_hundredths=granted)
    r.commission_hundredths = commission
    r.finished = True
    return r


def test_the_books_balance_when_balances_plus_commission_equal_the_grants() -> None:
    assert report({"a": 900, "b": 1070}, 30, 2000).conserved
    assert not report({"a": 900, "b": 1071}, 30, 2000).conserved


def test_the_summary_says_mismatch_and_the_demo_fails_when_tokens_are_not_conserved() -> None:
    bad = report({"a": 900, "b": 1071}, 30, 2000)
    assert any("MISMATCH" in line for line in summary(bad, (None, "replay: n/a")))
    assert not succeeded(bad, (None, "replay: n/a"))
    assert succeeded(report({"a": 970, "b": 1000}, 30, 2000), (None, "replay: n/a"))


def test_a_failed_replay_fails_the_demo() -> None:
    good = report({"a": 970, "b": 1000}, 30, 2000)
    verdict = replay_verdict(good, check=lambda r: (False, "hand h1: deal differs"))
    assert verdict[0] is False and verdict[1].startswith("hand h1: deal differs")
    assert not succeeded(good, verdict)
    assert any("replay: MISMATCH" in line for line in summary(good, verdict))


def test_an_indian_only_summary_lists_only_the_indian_endings() -> None:
    # Before outcome words were per variant, gin's endings were listed at 0 beside Indian ones
    # ("with a undercut 0").
    played = report({"a": 970, "b": 1000}, 30, 2000)
    played.hands.append(HandRecord("t", "t1", 1, "h1", ended(True, "wrong_declare")))
    lines = summary(played, (None, "replay: n/a"))
    assert any(line.strip().startswith(WRONG_DECLARE) for line in lines)
    assert not any("undercut" in line or "big gin" in line for line in lines)


def test_a_gin_hand_is_described_in_gin_words_with_the_right_article() -> None:
    hand = ended(True, "undercut")
    assert endings_of(hand, "gin") == [WON_SHOWING_MELDS, "with an undercut"]
    assert "with an undercut" in endings(["gin"])
    assert WRONG_DECLARE not in endings(["gin"])
    # An outcome word gin does not declare is not a notable gin ending.
    assert endings_of(ended(True, "wrong_declare"), "gin") == [WON_SHOWING_MELDS]
    line = hand_line(HandRecord("gin-2", "t1", 1, "h1", hand, variant="gin"))
    assert "s1:40U" in line and "with an undercut" in line


def test_the_demo_tells_a_points_tables_point_value_and_a_formats_name_and_entry_fee() -> None:
    pool = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=1000))
    assert _stakes(TablePlan("gold-8", 8, 25, 500)) == "point value 0.25"
    assert _stakes(TablePlan("pool101-3", 3, 0, 1000, match=pool)) == "pool-101, entry 10.00"


def test_the_demo_prints_the_names_it_opened_its_tables_and_bots_with() -> None:
    plan = TablePlan("silver-6", 6, 10, 1000)
    name = table_name(plan.name, "b6b94b")
    accounts = [bot_account("b6b94b", plan.name, i) for i in range(6)]
    line = opened_line(plan, name, "t-1", accounts, 10, 100_000)
    assert name == "silver-6-b6b94b"
    assert accounts[0] == "bot-b6b94b-silver-6-1"
    assert line.startswith("opened silver-6-b6b94b (6 seats, point value 0.10, commission 10.00%)")
    assert "6 bots seated (bot-b6b94b-silver-6-1 .. bot-b6b94b-silver-6-6)" in line
