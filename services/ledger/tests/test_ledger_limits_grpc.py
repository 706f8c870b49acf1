"""The responsible-play RPCs through a real ServiceHost in-process, on the in-memory unit of work
and an advanceable ledger clock: a player acts only for its own account, bad input is
INVALID_ARGUMENT and changes nothing, the answers say when a change applies, and the table's
CheckSeat is the service role's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from ledger_support import ServedLedger, TestClock, serving, status_of

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_platform.auth import Role

NOON = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


class Served(ServedLedger):
    def __init__(self) -> None:
        clock = TestClock(NOON)
        self.memory = InMemoryUnitOfWork(clock=clock)
        super().__init__(self.memory, clock)

    def outbox_size(self) -> int:
        return len(self.memory.state.outbox)


@pytest.fixture()
def served() -> Iterator[Served]:
    with serving(Served()) as s:
        yield s


def test_a_player_sets_reads_and_raises_its_own_limits_and_is_told_when_each_applies(
    served: Served,
) -> None:
    alice = served.stub("alice")
    day = pb.LIMIT_PERIOD_DAY
    alice.SetLossLimit(pb.SetLossLimitRequest(period=day, amount_hundredths=5_000))
    raised = alice.SetLossLimit(pb.SetLossLimitRequest(period=day, amount_hundredths=9_000))
    assert raised.effective_at.ToDatetime(UTC) == NOON + timedelta(hours=24)
    limits = alice.GetLimits(pb.GetLimitsRequest()).limits
    [today, _week, _month] = limits.periods
    assert (today.period, today.limit_hundredths, today.net_loss_hundredths) == (day, 5_000, 0)
    assert today.period_ends_at.ToDatetime(UTC) == datetime(2026, 3, 5, tzinfo=UTC)
    [pending] = limits.pending
    assert (pending.what, pending.amount_hundredths) == ("day", 9_000)
    assert limits.time_zone == "UTC"
    served.clock.advance(timedelta(hours=24))
    limits = alice.GetLimits(pb.GetLimitsRequest(account_id="alice")).limits
    assert (limits.periods[0].limit_hundredths, len(limits.pending)) == (9_000, 0)


def test_a_break_answers_when_it_ends_and_a_seat_check_names_that_end_to_the_service(
    served: Served,
) -> None:
    alice = served.stub("alice")
    taken = alice.StartBreak(pb.StartBreakRequest(duration_seconds=86_400))
    assert taken.until.ToDatetime(UTC) == NOON + timedelta(hours=24)
    table = served.stub("table", Role.SERVICE)
    answer = table.CheckSeat(pb.CheckSeatRequest(account_id="alice", amount_hundredths=0))
    assert (answer.allowed, answer.reason) == (False, pb.PLAY_CLOSED_REASON_BREAK)
    assert answer.until == taken.until


def test_a_player_cannot_read_or_change_another_players_limits(served: Served) -> None:
    bob = served.stub("bob")
    before = served.outbox_size()
    assert status_of(lambda: bob.GetLimits(pb.GetLimitsRequest(account_id="alice"))) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    request = pb.StartBreakRequest(account_id="alice", duration_seconds=86_400)
    assert status_of(lambda: bob.StartBreak(request)) == grpc.StatusCode.PERMISSION_DENIED
    ops = served.stub("ops", Role.OPERATOR)
    assert status_of(lambda: ops.StartBreak(request)) == grpc.StatusCode.PERMISSION_DENIED
    assert ops.GetLimits(pb.GetLimitsRequest(account_id="alice")).limits.account_id == "alice"
    assert served.outbox_size() == before


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.SetLossLimit(
            pb.SetLossLimitRequest(period=pb.LIMIT_PERIOD_WEEK, amount_hundredths=-1)
        ),
        lambda s: s.SetLossLimit(pb.SetLossLimitRequest(amount_hundredths=100)),
        lambda s: s.SetLossLimit(
            pb.SetLossLimitRequest(period=pb.LimitPeriod.ValueType(17), amount_hundredths=100)
        ),
        lambda s: s.SetStakeLimit(pb.SetStakeLimitRequest(amount_hundredths=-5)),
        lambda s: s.StartBreak(pb.StartBreakRequest(duration_seconds=0)),
        lambda s: s.StartBreak(pb.StartBreakRequest(duration_seconds=100 * 7 * 86_400)),
        lambda s: s.SelfExclude(pb.SelfExcludeRequest(months=5)),
        lambda s: s.SetLimitsTimeZone(pb.SetLimitsTimeZoneRequest(time_zone="Mars/Olympus")),
    ],
    ids=[
        "negative",
        "no-period",
        "unknown-period",
        "negative-stake",
        "break-0",
        "break-100-weeks",
        "exclusion-5-months",
        "zone",
    ],
)
def test_bad_input_is_invalid_argument_and_changes_nothing(
    served: Served, call: Callable[[pb_grpc.LedgerServiceStub], object]
) -> None:
    alice = served.stub("alice")
    before = (alice.GetLimits(pb.GetLimitsRequest()), served.outbox_size())
    assert status_of(lambda: call(alice)) == grpc.StatusCode.INVALID_ARGUMENT
    assert (alice.GetLimits(pb.GetLimitsRequest()), served.outbox_size()) == before


def test_an_exclusion_cannot_be_ended_early_and_check_seat_names_it_to_the_service_only(
    served: Served,
) -> None:
    alice = served.stub("alice")
    excluded = alice.SelfExclude(pb.SelfExcludeRequest(months=6))
    assert excluded.until.ToDatetime(UTC) == datetime(2026, 9, 4, 12, tzinfo=UTC)
    assert status_of(lambda: alice.AskToReturn(pb.AskToReturnRequest())) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    check = pb.CheckSeatRequest(account_id="alice", amount_hundredths=0)
    assert status_of(lambda: alice.CheckSeat(check)) == grpc.StatusCode.PERMISSION_DENIED
    table = served.stub("table", Role.SERVICE)
    answer = table.CheckSeat(check)
    assert (answer.allowed, answer.reason) == (False, pb.PLAY_CLOSED_REASON_SELF_EXCLUSION)
    assert answer.until == excluded.until  # closed until the exclusion ends
    assert table.CheckSeat(pb.CheckSeatRequest(account_id="bob")).allowed
    alice.SetStakeLimit(pb.SetStakeLimitRequest(amount_hundredths=100))  # allowed while excluded
    bob = served.stub("bob")
    bob.SetStakeLimit(pb.SetStakeLimitRequest(amount_hundredths=100))
    over = table.CheckSeat(pb.CheckSeatRequest(account_id="bob", amount_hundredths=101))
    assert (over.allowed, over.reason) == (False, pb.PLAY_CLOSED_REASON_STAKE_LIMIT)
