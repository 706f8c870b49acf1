"""Replay's re-check of the seats a player's own limits held back (rummy_ops.replay.limits): the
limits in force then are folded from the LimitChanged facts, the period's losses from the
settlements before it, and a refusal they do not explain is a problem."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from google.protobuf.message import Message

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_ops.replay.limits import LimitRecheck, recheck_refusals, scope, selected
from rummy_ops.replay.sources import Selection
from rummy_platform.envelope import Envelope

T0 = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
TABLE, BOT = "t-1", "bot-1"
LOSS = ledger_pb.LIMIT_REASON_LOSS_LIMIT


def _env(payload: Message, stream: str, at: datetime, cause: str = "", hand: str = "") -> Envelope:
    return Envelope.new(
        payload,
        stream_id=stream,
        stream_version=1,
        occurred_at=at,
        causation_id=cause,
        correlation_id=hand,
    )


def _day_limit(amount: int, at: datetime, change: str = "set") -> Envelope:
    fact = ledger_pb.LimitChanged(
        account_id=BOT, change=change, what="day", amount_hundredths=amount
    )
    fact.effective_at.FromDatetime(at + (timedelta(hours=24) if change != "set" else timedelta()))
    return _env(fact, BOT, at)


def _scenario(
    limits: list[Envelope],
    lost: int,
    refused_at: datetime,
    reason: ledger_pb.LimitReason.ValueType = LOSS,
) -> tuple[list[Envelope], list[Envelope]]:
    """A hand ended and settled (BOT lost ``lost``), then a HandStarted at ``refused_at`` whose
    reservation of 1300 the ledger refused by ``reason``."""
    ended = _env(table_pb.HandEnded(hand_id="h1"), TABLE, T0 + timedelta(minutes=1))
    started = _env(table_pb.HandStarted(hand_id="h2"), TABLE, refused_at)
    settled = ledger_pb.HandSettled(
        hand_id="h1", lines=[ledger_pb.JournalLine(account_id=BOT, amount_hundredths=-lost)]
    )
    rejected = ledger_pb.StakeRejected(
        hand_id="h2",
        seat=2,
        account_id=BOT,
        reason=ledger_pb.STAKE_REJECTION_REASON_NOT_DEALT_IN,
        required_hundredths=1300,
    )
    private = ledger_pb.ReservationRefusedByLimit(
        account_id=BOT, table_id=TABLE, purpose="hand", reason=reason, required_hundredths=1300
    )
    ledger = [
        *limits,
        _env(settled, TABLE, ended.occurred_at + timedelta(seconds=1), ended.event_id, "h1"),
        _env(private, BOT, refused_at, started.event_id, "h2"),
        _env(rejected, TABLE, refused_at, started.event_id, "h2"),
    ]
    return [ended, started], ledger


def test_a_refusal_the_days_losses_explain_is_re_checked_clean() -> None:
    table, ledger = _scenario([_day_limit(1400, T0)], lost=200, refused_at=T0 + timedelta(hours=1))
    (check,) = recheck_refusals(table, ledger)
    assert (check.table_id, check.correlation_id, check.seat, check.reason) == (
        TABLE,
        "h2",
        2,
        "loss_limit",
    )
    assert check.ok, check.line()


def test_yesterdays_losses_do_not_count_so_the_refusal_is_not_proven() -> None:
    # The loss was on 4 March, the refusal on 5 March: the day's losses are 0, 0 + 1300 <= 1400.
    table, ledger = _scenario([_day_limit(1400, T0)], lost=200, refused_at=T0 + timedelta(days=1))
    (check,) = recheck_refusals(table, ledger)
    assert not check.ok and not check.problem and "held then" in check.note


def test_a_raise_still_waiting_its_24_hours_is_not_in_force() -> None:
    raised = _day_limit(50_000, T0 + timedelta(minutes=2), change="raise_pending")
    table, ledger = _scenario(
        [_day_limit(1400, T0), raised], lost=200, refused_at=T0 + timedelta(hours=1)
    )
    (check,) = recheck_refusals(table, ledger)
    assert check.ok, check.line()


def test_a_lowering_after_the_refusal_does_not_explain_it() -> None:
    later = _day_limit(100, T0 + timedelta(hours=2))
    table, ledger = _scenario([later], lost=200, refused_at=T0 + timedelta(hours=1))
    (check,) = recheck_refusals(table, ledger)
    assert check.problem == "no loss limit in force"


def test_a_limit_reason_with_nothing_in_force_is_a_problem() -> None:
    table, ledger = _scenario([], lost=200, refused_at=T0 + timedelta(hours=1))
    (check,) = recheck_refusals(table, ledger)
    assert check.problem == "no loss limit in force"
    table, ledger = _scenario(
        [_day_limit(1400, T0)],
        lost=200,
        refused_at=T0 + timedelta(hours=1),
        reason=ledger_pb.LIMIT_REASON_BREAK,
    )
    (check,) = recheck_refusals(table, ledger)
    assert check.problem == "no break running"


def test_a_stake_limit_refusal_the_limit_does_not_explain_names_both_amounts_in_tokens() -> None:
    stake = ledger_pb.LimitChanged(
        account_id=BOT, change="set", what="stake", amount_hundredths=5000
    )
    stake.effective_at.FromDatetime(T0)
    table, ledger = _scenario(
        [_env(stake, BOT, T0)],
        lost=0,
        refused_at=T0 + timedelta(hours=1),
        reason=ledger_pb.LIMIT_REASON_STAKE_LIMIT,
    )
    (check,) = recheck_refusals(table, ledger)
    assert check.problem == "13.00 is within the stake limit 50.00"
    table, ledger = _scenario(
        [], lost=0, refused_at=T0 + timedelta(hours=1), reason=ledger_pb.LIMIT_REASON_STAKE_LIMIT
    )
    (check,) = recheck_refusals(table, ledger)
    assert check.problem == "13.00 is within the stake limit none"


def test_a_seat_not_dealt_in_without_a_refusal_on_its_key_is_a_problem() -> None:
    table, ledger = _scenario([_day_limit(1400, T0)], lost=200, refused_at=T0 + timedelta(hours=1))
    ledger = [e for e in ledger if not isinstance(e.payload, ledger_pb.ReservationRefusedByLimit)]
    (check,) = recheck_refusals(table, ledger)
    assert check.problem == "no limit refusal on its key"


def test_a_balance_rejection_is_no_limit_refusal() -> None:
    table, ledger = _scenario([_day_limit(1400, T0)], lost=200, refused_at=T0 + timedelta(hours=1))
    for envelope in ledger:
        if isinstance(envelope.payload, ledger_pb.StakeRejected):
            envelope.payload.reason = ledger_pb.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE
    assert recheck_refusals(table, ledger) == []


def test_a_selection_reports_only_the_refusals_at_its_hand_or_table() -> None:
    def check(table: str, hand: str) -> LimitRecheck:
        return LimitRecheck(table, hand, 1, BOT, T0, "loss limit", 1300)

    here, other_hand, elsewhere = check(TABLE, "h2"), check(TABLE, "h3"), check("t-2", "h9")
    rechecks = [here, other_hand, elsewhere]
    assert selected(rechecks, Selection(hand_id="h2")) == [here]
    assert selected(rechecks, Selection(table_id=TABLE)) == [here, other_hand]
    assert selected(rechecks, Selection()) == rechecks
    assert scope(Selection(hand_id="h2")) == "hand h2"
    assert scope(Selection(table_id=TABLE)) == f"table {TABLE}"
    assert scope(Selection()) == "all tables"
