"""Responsible play's rules, pure (``rummy_ledger.domain.limits``): the limits, periods and
cooling-off of docs/rules/responsible-play.md#limits."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from rummy_ledger.domain.accounts import InvalidCommand
from rummy_ledger.domain.limits import (
    COOLING_OFF,
    DAY,
    MONTH,
    STAKE,
    WEEK,
    AskToReturn,
    EndBreak,
    FactKind,
    LimitCommand,
    LimitRefused,
    PlayerLimits,
    Reason,
    SelfExclude,
    SetLossLimit,
    SetStakeLimit,
    SetTimeZone,
    StartBreak,
    apply,
    decide,
    in_force,
    period_end,
    period_start,
    refusal,
)

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)  # a Wednesday
HOUR = timedelta(hours=1)


def act(limits: PlayerLimits, command: LimitCommand, now: datetime = NOW) -> PlayerLimits:
    state = in_force(limits, now)
    for fact in decide(state, command, now):
        state = apply(state, fact)
    return state


def fresh() -> PlayerLimits:
    return PlayerLimits("player-1")


def test_starting_a_loss_limit_applies_at_once() -> None:
    limits = act(fresh(), SetLossLimit(DAY, 5_000))
    assert limits.loss_limit(DAY) == 5_000
    assert limits.pending == ()


def test_lowering_a_limit_applies_at_once_and_cancels_the_pending_raise() -> None:
    limits = act(fresh(), SetLossLimit(DAY, 5_000))
    limits = act(limits, SetLossLimit(DAY, 9_000), NOW + HOUR)
    assert limits.loss_limit(DAY) == 5_000 and limits.pending_of(DAY) is not None
    facts = decide(in_force(limits, NOW + 2 * HOUR), SetLossLimit(DAY, 4_000), NOW + 2 * HOUR)
    assert [f.kind for f in facts] == [FactKind.RAISE_CANCELLED, FactKind.SET]
    limits = act(limits, SetLossLimit(DAY, 4_000), NOW + 2 * HOUR)
    assert limits.loss_limit(DAY) == 4_000 and limits.pending == ()
    assert in_force(limits, NOW + 3 * COOLING_OFF).loss_limit(DAY) == 4_000


def test_a_raise_takes_effect_only_24_hours_after_it_was_asked() -> None:
    limits = act(fresh(), SetStakeLimit(1_000))
    limits = act(limits, SetStakeLimit(3_000))
    pending = limits.pending_of(STAKE)
    assert pending is not None and pending.effective_at == NOW + COOLING_OFF
    just_before = NOW + COOLING_OFF - timedelta(seconds=1)
    assert in_force(limits, just_before).stake_limit_hundredths == 1_000
    assert in_force(limits, NOW + COOLING_OFF).stake_limit_hundredths == 3_000


def test_removing_a_limit_waits_24_hours() -> None:
    limits = act(fresh(), SetLossLimit(WEEK, 10_000))
    limits = act(limits, SetLossLimit(WEEK, None))
    assert in_force(limits, NOW + 23 * HOUR).loss_limit(WEEK) == 10_000
    assert in_force(limits, NOW + COOLING_OFF).loss_limit(WEEK) is None


def test_a_time_zone_change_waits_24_hours() -> None:
    limits = act(fresh(), SetTimeZone("Asia/Kolkata"))
    assert in_force(limits, NOW + 23 * HOUR).time_zone == "UTC"
    assert in_force(limits, NOW + COOLING_OFF).time_zone == "Asia/Kolkata"


@pytest.mark.parametrize(
    "command",
    [
        SetLossLimit(DAY, -1),
        SetLossLimit("fortnight", 100),
        SetLossLimit(STAKE, 100),
        SetStakeLimit(-5),
        SetTimeZone("Mars/Olympus"),
        SetTimeZone(""),
        StartBreak(0),
        StartBreak(100 * 7 * 86_400),
        StartBreak(86_399),
        SelfExclude(5),
        SelfExclude(61),
    ],
)
def test_bad_input_is_invalid_and_changes_nothing(command: LimitCommand) -> None:
    with pytest.raises(InvalidCommand):
        decide(fresh(), command, NOW)


def test_a_break_closes_play_at_once_until_its_end() -> None:
    limits = act(fresh(), StartBreak(86_400))
    held_back = refusal(in_force(limits, NOW + HOUR), NOW + HOUR, 0, 0, {})
    assert held_back is not None and held_back.reason is Reason.BREAK
    assert held_back.until == NOW + COOLING_OFF
    later = NOW + COOLING_OFF
    assert refusal(in_force(limits, later), later, 0, 0, {}) is None


def test_a_break_cancels_a_pending_raise() -> None:
    limits = act(act(fresh(), SetLossLimit(DAY, 100)), SetLossLimit(DAY, 900))
    limits = act(limits, StartBreak(7 * 86_400))
    assert limits.pending == ()


def test_ending_a_break_early_takes_24_hours() -> None:
    limits = act(fresh(), StartBreak(6 * 7 * 86_400))
    limits = act(limits, EndBreak(), NOW + HOUR)
    assert refusal(in_force(limits, NOW + 20 * HOUR), NOW + 20 * HOUR, 0, 0, {}) is not None
    reopened = NOW + HOUR + COOLING_OFF
    assert refusal(in_force(limits, reopened), reopened, 0, 0, {}) is None


def test_an_exclusion_never_ends_early_and_needs_a_return_after_its_end() -> None:
    limits = act(fresh(), SelfExclude(6))
    assert limits.excluded_until == datetime(2026, 9, 4, 12, 0, tzinfo=UTC)
    with pytest.raises(LimitRefused):
        decide(limits, AskToReturn(), NOW + timedelta(days=30))
    extended = act(limits, SelfExclude(6), NOW + timedelta(days=31))  # 6 from 4 April
    assert extended.excluded_until == datetime(2026, 10, 4, 12, 0, tzinfo=UTC)
    ended = datetime(2026, 10, 5, tzinfo=UTC)
    still_closed = refusal(in_force(extended, ended), ended, 0, 0, {})
    assert still_closed is not None and still_closed.reason is Reason.SELF_EXCLUSION
    returning = act(extended, AskToReturn(), ended)
    assert refusal(in_force(returning, ended + 23 * HOUR), ended + 23 * HOUR, 0, 0, {})
    assert refusal(in_force(returning, ended + COOLING_OFF), ended + COOLING_OFF, 0, 0, {}) is None


def test_an_indefinite_exclusion_has_no_return() -> None:
    limits = act(fresh(), SelfExclude(None))
    with pytest.raises(LimitRefused):
        decide(limits, AskToReturn(), NOW + timedelta(days=3_650))
    assert act(limits, SelfExclude(6)).excluded_until is None  # never shortened


def test_a_loss_limit_counts_every_reservation_held_and_the_period_losses() -> None:
    limits = act(fresh(), SetLossLimit(DAY, 10_000))
    assert refusal(limits, NOW, 4_000, 3_000, {DAY: 3_000}) is None  # exactly at the limit
    refused = refusal(limits, NOW, 4_001, 3_000, {DAY: 3_000})
    assert refused is not None and refused.reason is Reason.LOSS_LIMIT and refused.what == DAY
    assert refused.until == datetime(2026, 3, 5, tzinfo=UTC)
    assert refusal(limits, NOW, 4_001, 3_000, {DAY: -5_000}) is None  # up on the day


def test_the_stake_limit_bounds_one_reservation() -> None:
    limits = act(fresh(), SetStakeLimit(2_600))
    assert refusal(limits, NOW, 2_600, 50_000, {}) is None
    refused = refusal(limits, NOW, 2_601, 0, {})
    assert refused is not None and refused.reason is Reason.STAKE_LIMIT


def test_periods_are_calendar_day_iso_week_and_month_in_the_players_zone() -> None:
    at = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)  # Sunday in UTC, Monday 01:30 in Kolkata
    assert period_start(DAY, at, "UTC") == date(2026, 3, 1)
    assert period_start(WEEK, at, "UTC") == date(2026, 2, 23)
    assert period_start(DAY, at, "Asia/Kolkata") == date(2026, 3, 2)
    assert period_start(WEEK, at, "Asia/Kolkata") == date(2026, 3, 2)
    assert period_start(MONTH, datetime(2026, 2, 28, 20, tzinfo=UTC), "Asia/Kolkata") == date(
        2026, 3, 1
    )
    assert period_end(MONTH, at, "UTC") == datetime(2026, 4, 1, tzinfo=UTC)


def test_a_day_across_a_daylight_saving_change_is_23_hours() -> None:
    zone = "Europe/Berlin"  # clocks go forward on 29 March 2026, 02:00 -> 03:00
    morning = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # 01:30 local (CET)
    ends = period_end(DAY, morning, zone)
    assert ends == datetime(2026, 3, 29, 22, 0, tzinfo=UTC)  # local midnight, CEST
    starts = period_end(DAY, morning - timedelta(days=1), zone)
    assert ends - starts == timedelta(hours=23)
    assert period_start(DAY, datetime(2026, 3, 29, 21, 59, tzinfo=UTC), zone) == date(2026, 3, 29)
    assert period_start(DAY, datetime(2026, 3, 29, 22, 0, tzinfo=UTC), zone) == date(2026, 3, 30)


def test_limits_survive_their_json() -> None:
    limits = act(
        act(act(fresh(), SetLossLimit(DAY, 100)), SetLossLimit(DAY, 900)), StartBreak(86_400)
    )
    limits = act(limits, SetTimeZone("Asia/Kolkata"))
    assert PlayerLimits.from_json(limits.to_json()) == limits
