"""``rummy limits ACCOUNT``: what it prints of a player's limits, and a ledger that refuses."""

from __future__ import annotations

from datetime import UTC, datetime

from click.testing import CliRunner

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy_ops.limits_command import describe, limits


def test_it_prints_each_periods_limit_and_losses_the_break_and_each_pending_change() -> None:
    message = pb.Limits(account_id="alice", time_zone="Asia/Kolkata", excluded=False)
    day = message.periods.add(period=pb.LIMIT_PERIOD_DAY, net_loss_hundredths=1_500)
    day.limit_hundredths = 5_000
    day.period_ends_at.FromDatetime(datetime(2026, 3, 4, 18, 30, tzinfo=UTC))
    message.periods.add(period=pb.LIMIT_PERIOD_WEEK, net_loss_hundredths=-200)
    message.break_until.FromDatetime(datetime(2026, 3, 5, 12, tzinfo=UTC))
    message.closed_reason = pb.PLAY_CLOSED_REASON_BREAK
    pending = message.pending.add(what="day", amount_hundredths=9_000)
    pending.effective_at.FromDatetime(datetime(2026, 3, 5, 12, tzinfo=UTC))
    assert describe(message) == [
        "account alice  time zone Asia/Kolkata",
        "  day    limit 50.00  losses 15.00  ends 2026-03-04T18:30:00Z",
        "  week   limit none  losses 0.00 (won 2.00)  ends 1970-01-01T00:00:00Z",
        "  stake limit none",
        "  on a break until 2026-03-05T12:00:00Z",
        "  play closed: break",
        "  pending day -> 90.00  applies 2026-03-05T12:00:00Z",
    ]


def test_a_ledger_that_does_not_answer_exits_1_with_the_status() -> None:
    result = CliRunner().invoke(
        limits, ["alice", "--address", "127.0.0.1:1", "--token", "t"], catch_exceptions=False
    )
    assert result.exit_code == 1
    assert "Error: cannot reach the ledger service at 127.0.0.1:1: connection refused" in (
        result.output
    ), result.output
