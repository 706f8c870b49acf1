"""``rummy demo --game pool101`` against the whole backend: its bots play the 101 pool's match to
its end through the public API, the demo replays every deal and the match clean against the
ledger's journal, and the match's money adds up to the hundredth: the prize pool is the entries
held (10.00 each, rejoins included), the house takes 10% of it, the winner gets the rest and
every bot's balance moved by exactly its line of the settlement."""

from __future__ import annotations

from rummy_ops.demo import DemoOptions
from rummy_ops.demo.plans import games, tables_of
from rummy_ops.demo.verify import replay_verdict
from rummy_testing.demo_runs import ended_match
from rummy_testing.stacks import RunningStack

GRANT = 500_00


def test_the_demos_pool_101_table_plays_its_match_to_the_end_and_replays_clean(
    rummy_stack: RunningStack,
) -> None:
    (plan,) = games()["pool101"]
    assert plan.match is not None
    entry, commission_bps = plan.match.pool.entry_fee_hundredths, plan.commission_bps
    options = DemoOptions(
        tables=tables_of(["pool101"]),
        seed=5,
        turn_seconds=10,
        grant_hundredths=GRANT,
        timeout_seconds=300,
    )
    report, view = ended_match(rummy_stack, options, plan.name)
    settlement = view.ended.settlement
    (winner,) = view.ended.winners  # a pool without split: the last seat left
    # The pool is every entry held: one per seat and one per rejoin, 10.00 each.
    held = {line.seat: line.held_hundredths for line in settlement.lines}
    assert all(amount > 0 and amount % entry == 0 for amount in held.values())
    assert settlement.pool_hundredths == sum(held.values()) >= 3 * entry
    assert settlement.commission_bps == commission_bps
    assert settlement.commission_hundredths == settlement.pool_hundredths * commission_bps // 10_000
    prize = settlement.pool_hundredths - settlement.commission_hundredths
    for line in settlement.lines:
        want = prize - held[line.seat] if line.seat == winner else -held[line.seat]
        assert line.amount_hundredths == want, (line, settlement)
    # Each bot's posted balance moved by its line, nothing left reserved; the books balance.
    accounts = {seat.seat: seat.account_id for seat in view.seats}
    for line in settlement.lines:
        account = accounts[line.seat]
        assert report.balances[account] - GRANT == line.amount_hundredths, account
        assert report.reserved.get(account, 0) == 0, account
    assert report.commission_hundredths == settlement.commission_hundredths
    assert report.conserved
    # Every deal's hand and the match replay clean, the settlement checked against the journal.
    assert len(report.ended) == view.deals_scored
    ok, text = replay_verdict(report)
    assert ok, text
    assert "1 matches replayed, 1 fully proven" in text, text
