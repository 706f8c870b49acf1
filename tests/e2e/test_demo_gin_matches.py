"""``rummy demo --game gin|oklahoma|hollywood`` against the whole backend: each gin demo table's
bots play its match to its end through the public API; the match's winner is the one the format's
rules name (the seat that reached the target, docs/rules/formats.md#game-to-n), the score sheets
the demo prints are the match view's, every sheet's points, boxes and bonus follow from the
recorded hands, the money moved is the game stakes' settlement
(docs/rules/formats.md#money-by-format: each loser pays min(winner's total - loser's total, cap) x
point value, the house takes the commission, rounded down, off the winner's take; Hollywood: the
sum of the three columns' capped nets, settled once), and the demo's replay proves every hand and
the match clean."""

from __future__ import annotations

import pytest

from rummy_ops.demo import DemoOptions
from rummy_ops.demo.plans import games, tables_of
from rummy_ops.demo.report import sheet_lines, summary
from rummy_ops.demo.verify import replay_verdict
from rummy_testing.demo_runs import ended_match
from rummy_testing.stacks import RunningStack

GRANT = 500_00


@pytest.mark.parametrize("game", ["gin", "oklahoma", "hollywood"])
def test_a_gin_demo_table_plays_its_match_to_the_end_settles_by_its_format_and_replays_clean(
    rummy_stack: RunningStack, game: str
) -> None:
    (plan,) = games()[game]
    assert plan.match is not None and plan.variant == "gin"
    fmt = plan.match.WhichOneof("format")
    rules = plan.match.hollywood if fmt == "hollywood" else plan.match.game_to
    target, value, cap = rules.target, rules.point_value_hundredths, rules.max_game_points
    scoring = rules.scoring
    options = DemoOptions(
        tables=tables_of([game]),
        seed=3,
        turn_seconds=10,
        grant_hundredths=GRANT,
        mischief=0.0,  # no timeouts: every hand is won by a knock, gin or undercut
        timeout_seconds=300,
    )
    report, view = ended_match(rummy_stack, options, plan.name)
    (winner,) = view.ended.winners

    # The hands as recorded: who won each, and what it scored (the loser's points).
    hands = [h.result for h in report.ended if h.result is not None]
    assert len(hands) == view.deals_scored
    won: list[tuple[int, int]] = []
    for result in hands:
        if all(r.points == 0 for r in result.results):
            continue  # a wall: no score
        scored = sum(r.points for r in result.results if r.seat != result.winner_seat)
        won.append((result.winner_seat, scored))

    # The sheets by the format's rules, from the hands alone.
    columns = 3 if fmt == "hollywood" else 1
    points = [{0: 0, 1: 0} for _ in range(columns)]
    boxes = [{0: 0, 1: 0} for _ in range(columns)]
    running = [True] * columns
    wins = {0: 0, 1: 0}
    for seat, scored in won:
        wins[seat] += 1
        # a player's n-th win is entered in the first min(n, 3) columns still running
        # (docs/rules/formats.md#hollywood: with column 1 ended, a first win goes to column 2)
        entered = [c for c in range(columns) if running[c]][: min(wins[seat], columns)]
        for c in entered:
            points[c][seat] += scored
            boxes[c][seat] += 1
            if points[c][seat] >= target:
                running[c] = False
    assert not any(running)
    sheets = list(view.sheets)
    assert len(sheets) == columns
    net = {0: 0, 1: 0}
    for c, sheet in enumerate(sheets):
        assert not sheet.running
        top = max(points[c], key=lambda s: points[c][s])
        assert sheet.winner == top and points[c][top] >= target
        other = 1 - top
        shutout = points[c][other] == 0
        bonus = {
            s: boxes[c][s] * scoring.box_points
            + (
                (scoring.shutout_bonus_points if shutout else scoring.game_bonus_points)
                if s == top
                else 0
            )
            for s in (0, 1)
        }
        for row in sheet.seats:
            assert (row.points, row.boxes, row.bonus) == (
                points[c][row.seat],
                boxes[c][row.seat],
                bonus[row.seat],
            ), (c, sheet)
            assert row.total == row.points + row.bonus
        totals = {s.seat: s.total for s in sheet.seats}
        capped = min(totals[top] - totals[other], cap) * value
        net[top] += capped
        net[other] -= capped
    # One settlement (game to N here: 1 game; Hollywood: the columns' sum), the commission off
    # the winner's take, rounded down.
    commission = max(net.values()) * plan.commission_bps // 10_000
    # Game to N: the match's winner is the last game's; Hollywood: the most net.
    assert winner == (max(net, key=lambda s: net[s]) if fmt == "hollywood" else sheets[-1].winner)

    # The demo prints the view's sheets and the recorded settlement.
    lines = summary(report, (None, "replay: n/a"))
    for text in sheet_lines(view):
        assert f"    {text}" in lines
    ok, text = replay_verdict(report)
    assert ok, text
    assert "1 matches replayed, 1 fully proven" in text, text
    (money,) = report.game_money[view.match_id]
    assert money.commission_hundredths == commission
    accounts = {seat.seat: seat.account_id for seat in view.seats}
    for seat in (0, 1):
        want = net[seat] - (commission if seat == winner else 0)
        assert dict(money.lines)[seat] == want, money
        assert report.balances[accounts[seat]] - GRANT == want, accounts[seat]
        assert report.reserved.get(accounts[seat], 0) == 0
    assert report.commission_hundredths == commission
    assert report.conserved
    assert any(money.line() in line for line in summary(report, (ok, text)))
