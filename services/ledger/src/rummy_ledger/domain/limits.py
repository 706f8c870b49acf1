"""Responsible play: the limits a player sets for itself, pure (no I/O, no clock of its own).

docs/rules/responsible-play.md. A player's :class:`PlayerLimits` holds its loss limits per
:data:`PERIODS` (net losses in hundredths of a House Token over the period), its stake limit
(the most one table may reserve from it, hundredths), its limits' time zone (an IANA name,
``UTC`` by default), a break and a self-exclusion, and the changes waiting their 24 hours.

- :func:`decide` ``(limits, command, now) -> facts``: what a player's command changes, as
  :class:`LimitFact` s (past-tense facts the ledger writes to its topic); raises
  :class:`~rummy_ledger.domain.accounts.InvalidCommand` for bad input (a negative amount, an
  unknown period or time zone, a break outside 24 h .. 6 weeks, an exclusion outside 6 .. 60
  months) and :class:`LimitRefused` for a command the player's state does not allow now (ending
  an exclusion, returning before its end): nothing changes either way.
- :func:`apply` ``(limits, fact) -> limits`` moves the state; :func:`in_force` ``(limits, at)``
  applies what waited until ``at`` (raises, removals, a time zone, a break's early end, a return).
- :func:`refusal` ``(limits, at, amount, reserved, losses) -> Refusal | None``: why a reservation
  of ``amount`` hundredths may not be held at ``at`` (event time), given what the player already
  holds at every table and its net losses in each period so far.
- :func:`period_start` ``(period, at, zone)``: the local calendar date a period starts on (a day;
  the Monday of an ISO week; the 1st of a month), the key the period totals are kept under.

Rules: lowering (or starting) a limit, starting a break or an exclusion applies at once and
cancels every pending raise; raising or removing a limit, changing the time zone, ending a
break early take effect :data:`COOLING_OFF` after they were asked; an exclusion never ends
early, and at its end play stays closed until the player asks to return, effective
:data:`COOLING_OFF` later.
"""

from __future__ import annotations

import calendar
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from rummy_ledger.domain.accounts import InvalidCommand, LedgerError

DAY, WEEK, MONTH = "day", "week", "month"
#: The loss limits' periods: a calendar day, an ISO week (Monday to Sunday), a calendar month,
#: in the player's time zone.
PERIODS = (DAY, WEEK, MONTH)
#: What a raise, a removal, a time-zone change, a break's early end or a return waits.
COOLING_OFF = timedelta(hours=24)
MIN_BREAK = timedelta(hours=24)
MAX_BREAK = timedelta(weeks=6)
MIN_EXCLUSION_MONTHS = 6
MAX_EXCLUSION_MONTHS = 60
DEFAULT_TIME_ZONE = "UTC"
#: A limit a player may set (hundredths): up to int64, so no sum over it overflows a bigint twice.
MAX_LIMIT_HUNDREDTHS = 2**62

STAKE = "stake"
TIME_ZONE = "time_zone"
BREAK_END = "break_end"
RETURN = "return"


class LimitRefused(LedgerError):
    """The player's state does not allow the command now (an exclusion cannot end early; no
    return before its end): FAILED_PRECONDITION at the API."""


class Reason(enum.Enum):
    """Why a reservation was refused by a limit (the player's and operators' to read)."""

    LOSS_LIMIT = "loss_limit"
    STAKE_LIMIT = "stake_limit"
    BREAK = "break"
    SELF_EXCLUSION = "self_exclusion"


# ------------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class SetLossLimit:
    """Set the loss limit of ``period`` (day, week, month) to ``amount_hundredths`` (>= 0);
    None removes it."""

    period: str
    amount_hundredths: int | None


@dataclass(frozen=True)
class SetStakeLimit:
    """Set the stake limit (the most one table may reserve, hundredths >= 0); None removes it."""

    amount_hundredths: int | None


@dataclass(frozen=True)
class SetTimeZone:
    """The IANA time zone the periods are counted in (e.g. ``Asia/Kolkata``)."""

    time_zone: str


@dataclass(frozen=True)
class StartBreak:
    """A break of ``seconds`` (24 hours .. 6 weeks) from now."""

    seconds: int


@dataclass(frozen=True)
class EndBreak:
    """End the running break early: 24 hours from now (or at its end, if sooner)."""


@dataclass(frozen=True)
class SelfExclude:
    """Self-exclusion for ``months`` (6 .. 60) from now; None: indefinite."""

    months: int | None


@dataclass(frozen=True)
class AskToReturn:
    """After an exclusion's end: open play again, 24 hours from now."""


LimitCommand = (
    SetLossLimit | SetStakeLimit | SetTimeZone | StartBreak | EndBreak | SelfExclude | AskToReturn
)


# ---------------------------------------------------------------------------------- state


@dataclass(frozen=True)
class Pending:
    """A change waiting its cooling-off: ``what`` (a period, :data:`STAKE`, :data:`TIME_ZONE`,
    :data:`BREAK_END`, :data:`RETURN`), the value it takes (an amount in hundredths, None for a
    removal; a zone name), when it was asked and when it applies."""

    what: str
    value: int | str | None
    asked_at: datetime
    effective_at: datetime


@dataclass(frozen=True)
class PlayerLimits:
    """One player's limits in force and its pending changes (amounts in hundredths)."""

    account_id: str
    loss_limits: tuple[tuple[str, int], ...] = ()  # (period, hundredths), in PERIODS order
    stake_limit_hundredths: int | None = None
    time_zone: str = DEFAULT_TIME_ZONE
    break_until: datetime | None = None
    excluded_at: datetime | None = None  # an exclusion started (None: never, or returned)
    excluded_until: datetime | None = None  # None with excluded_at: indefinite
    pending: tuple[Pending, ...] = field(default=())

    def loss_limit(self, period: str) -> int | None:
        return dict(self.loss_limits).get(period)

    def pending_of(self, what: str) -> Pending | None:
        return next((p for p in self.pending if p.what == what), None)

    @property
    def has_any(self) -> bool:
        """Whether the player has set anything (a limit, a break or an exclusion)."""
        return bool(
            self.loss_limits
            or self.stake_limit_hundredths is not None
            or self.break_until is not None
            or self.excluded_at is not None
        )

    # -- JSON (the stored row) ---------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "account_id": self.account_id,
            "loss_limits": [list(p) for p in self.loss_limits],
            "stake_limit_hundredths": self.stake_limit_hundredths,
            "time_zone": self.time_zone,
            "break_until": _iso(self.break_until),
            "excluded_at": _iso(self.excluded_at),
            "excluded_until": _iso(self.excluded_until),
            "pending": [
                [p.what, p.value, _iso(p.asked_at), _iso(p.effective_at)] for p in self.pending
            ],
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> PlayerLimits:
        return cls(
            account_id=body["account_id"],
            loss_limits=tuple((str(p), int(a)) for p, a in body["loss_limits"]),
            stake_limit_hundredths=body["stake_limit_hundredths"],
            time_zone=body["time_zone"],
            break_until=_at(body["break_until"]),
            excluded_at=_at(body["excluded_at"]),
            excluded_until=_at(body["excluded_until"]),
            pending=tuple(
                Pending(w, v, _required(_at(a)), _required(_at(e)))
                for w, v, a, e in body["pending"]
            ),
        )


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _at(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _required(at: datetime | None) -> datetime:
    assert at is not None
    return at


# ---------------------------------------------------------------------------------- facts


class FactKind(enum.Enum):
    """What a :class:`LimitFact` says happened (the ledger-events ``LimitChanged.change``)."""

    SET = "set"  # a limit set or lowered, at once (amount None: never, a removal waits)
    RAISE_PENDING = "raise_pending"  # a raise or removal asked; applies at effective_at
    RAISE_CANCELLED = "raise_cancelled"  # a pending raise cancelled by a lowering/break/exclusion
    TIME_ZONE_PENDING = "time_zone_pending"
    BREAK_STARTED = "break_started"
    BREAK_END_PENDING = "break_end_pending"
    EXCLUDED = "excluded"
    RETURN_PENDING = "return_pending"


@dataclass(frozen=True)
class LimitFact:
    """One change of a player's limits: ``kind``, ``what`` it is about (a period,
    :data:`STAKE`, :data:`TIME_ZONE`, :data:`BREAK_END`, :data:`RETURN`, or ``"break"`` /
    ``"self_exclusion"``), the value (hundredths, a zone name, or None), when it was asked and
    when it applies (``until``: a break's or an exclusion's end, None for indefinite)."""

    account_id: str
    kind: FactKind
    what: str
    value: int | str | None
    asked_at: datetime
    effective_at: datetime
    until: datetime | None = None


# -------------------------------------------------------------------------------- decide


def decide(limits: PlayerLimits, command: LimitCommand, now: datetime) -> tuple[LimitFact, ...]:
    """The facts ``command`` causes for ``limits`` (already :func:`in_force` at ``now``).
    Raises InvalidCommand (bad input) or LimitRefused (not allowed now); nothing changes."""
    _aware(now)
    account = limits.account_id
    if isinstance(command, SetLossLimit | SetStakeLimit):
        what = command.period if isinstance(command, SetLossLimit) else STAKE
        if isinstance(command, SetLossLimit) and what not in PERIODS:
            raise InvalidCommand(f"unknown period {what!r}: one of {', '.join(PERIODS)}")
        amount = command.amount_hundredths
        if amount is not None and not 0 <= amount <= MAX_LIMIT_HUNDREDTHS:
            raise InvalidCommand(f"a limit is 0..{MAX_LIMIT_HUNDREDTHS} hundredths, got {amount}")
        current = limits.stake_limit_hundredths if what == STAKE else limits.loss_limit(what)
        tighter = amount is not None and (current is None or amount <= current)
        if tighter:
            return (
                *_cancel(limits, now, (what,)),
                LimitFact(account, FactKind.SET, what, amount, now, now),
            )
        if current is None:  # removing a limit that is not there: nothing to do
            return _cancel(limits, now, (what,))
        return (LimitFact(account, FactKind.RAISE_PENDING, what, amount, now, now + COOLING_OFF),)
    if isinstance(command, SetTimeZone):
        zone = check_time_zone(command.time_zone)
        return (
            LimitFact(account, FactKind.TIME_ZONE_PENDING, TIME_ZONE, zone, now, now + COOLING_OFF),
        )
    if isinstance(command, StartBreak):
        length = timedelta(seconds=command.seconds)
        if not MIN_BREAK <= length <= MAX_BREAK:
            raise InvalidCommand(f"a break is 24 hours to 6 weeks, got {command.seconds} s")
        until = now + length
        if limits.break_until is not None and limits.break_until > until:
            until = limits.break_until  # a break already running longer stays as it is
        return (
            *_cancel(limits, now, (*PERIODS, STAKE, BREAK_END)),
            LimitFact(account, FactKind.BREAK_STARTED, "break", None, now, now, until),
        )
    if isinstance(command, EndBreak):
        if limits.break_until is None or limits.break_until <= now:
            raise LimitRefused("no break is running")
        effective = min(now + COOLING_OFF, limits.break_until)
        return (LimitFact(account, FactKind.BREAK_END_PENDING, BREAK_END, None, now, effective),)
    if isinstance(command, SelfExclude):
        months = command.months
        if months is not None and not MIN_EXCLUSION_MONTHS <= months <= MAX_EXCLUSION_MONTHS:
            raise InvalidCommand(f"a self-exclusion is 6 to 60 months or indefinite, got {months}")
        ends = None if months is None else add_months(now, months)
        if limits.excluded_at is not None:
            set_to = limits.excluded_until
            if set_to is None or (ends is not None and ends < set_to):
                ends = set_to  # an exclusion never ends earlier than it was set to
        return (
            *_cancel(limits, now, (*PERIODS, STAKE, BREAK_END, RETURN)),
            LimitFact(account, FactKind.EXCLUDED, "self_exclusion", months, now, now, ends),
        )
    if isinstance(command, AskToReturn):
        if limits.excluded_at is None:
            raise LimitRefused("no self-exclusion to return from")
        if limits.excluded_until is None:
            raise LimitRefused("an indefinite self-exclusion never ends")
        if now < limits.excluded_until:
            raise LimitRefused(
                f"the self-exclusion ends at {limits.excluded_until.isoformat()}; "
                "it never ends early"
            )
        if limits.pending_of(RETURN) is not None:
            return ()
        return (LimitFact(account, FactKind.RETURN_PENDING, RETURN, None, now, now + COOLING_OFF),)
    raise InvalidCommand(f"unknown limits command {type(command).__name__}")


def _cancel(limits: PlayerLimits, now: datetime, whats: tuple[str, ...]) -> tuple[LimitFact, ...]:
    return tuple(
        LimitFact(limits.account_id, FactKind.RAISE_CANCELLED, p.what, p.value, now, now)
        for p in limits.pending
        if p.what in whats
    )


def check_time_zone(name: str) -> str:
    """``name`` when it is an IANA time zone the standard library knows; raises InvalidCommand."""
    if not name or len(name) > 64 or name not in _zones():
        raise InvalidCommand(f"unknown time zone {name!r}")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise InvalidCommand(f"unknown time zone {name!r}") from error
    return name


_ZONES: frozenset[str] | None = None


def _zones() -> frozenset[str]:
    global _ZONES
    if _ZONES is None:
        _ZONES = frozenset(available_timezones()) | {"UTC"}
    return _ZONES


def add_months(at: datetime, months: int) -> datetime:
    """``at`` plus ``months`` calendar months in UTC (the day clamped to the month's last)."""
    utc = at.astimezone(UTC)
    index = utc.month - 1 + months
    year, month = utc.year + index // 12, index % 12 + 1
    day = min(utc.day, calendar.monthrange(year, month)[1])
    return utc.replace(year=year, month=month, day=day)


# --------------------------------------------------------------------------------- apply


def apply(limits: PlayerLimits, fact: LimitFact) -> PlayerLimits:
    """The state after ``fact`` (never raises on facts :func:`decide` produced)."""
    kind = fact.kind
    if kind is FactKind.SET:
        return _with_value(limits, fact.what, fact.value)
    if kind is FactKind.RAISE_CANCELLED:
        return replace(limits, pending=tuple(p for p in limits.pending if p.what != fact.what))
    if kind in (
        FactKind.RAISE_PENDING,
        FactKind.TIME_ZONE_PENDING,
        FactKind.BREAK_END_PENDING,
        FactKind.RETURN_PENDING,
    ):
        pending = tuple(p for p in limits.pending if p.what != fact.what)
        change = Pending(fact.what, fact.value, fact.asked_at, fact.effective_at)
        return replace(limits, pending=(*pending, change))
    if kind is FactKind.BREAK_STARTED:
        return replace(limits, break_until=fact.until)
    if kind is FactKind.EXCLUDED:
        return replace(
            limits, excluded_at=limits.excluded_at or fact.effective_at, excluded_until=fact.until
        )
    raise AssertionError(f"unknown fact {kind}")


def _with_value(limits: PlayerLimits, what: str, value: int | str | None) -> PlayerLimits:
    if what == STAKE:
        assert value is None or isinstance(value, int)
        return replace(limits, stake_limit_hundredths=value)
    if what == TIME_ZONE:
        assert isinstance(value, str)
        return replace(limits, time_zone=value)
    assert value is None or isinstance(value, int)
    others = {p: a for p, a in limits.loss_limits if p != what}
    if value is not None:
        others[what] = value
    return replace(limits, loss_limits=tuple((p, others[p]) for p in PERIODS if p in others))


def in_force(limits: PlayerLimits, at: datetime) -> PlayerLimits:
    """``limits`` with every pending change whose time has come at ``at`` applied, and a break
    that ended (or an exclusion returned from) cleared."""
    _aware(at)
    state = limits
    for change in sorted(limits.pending, key=lambda p: p.effective_at):
        if change.effective_at > at:
            continue
        state = replace(state, pending=tuple(p for p in state.pending if p != change))
        if change.what == BREAK_END:
            if state.break_until is not None:
                state = replace(state, break_until=min(state.break_until, change.effective_at))
        elif change.what == RETURN:
            state = replace(state, excluded_at=None, excluded_until=None)
        else:
            state = _with_value(state, change.what, change.value)
    if state.break_until is not None and state.break_until <= at:
        state = replace(state, break_until=None)
    return state


# ------------------------------------------------------------------------------ enforce


@dataclass(frozen=True)
class Refusal:
    """Why a reservation was not held: the reason, the limit (a period for a loss limit), its
    amount (hundredths; None for a break or an exclusion) and until when it holds the seat
    back (the period's end, the break's; None: until the player acts)."""

    reason: Reason
    what: str
    limit_hundredths: int | None
    until: datetime | None

    def describe(self) -> str:
        """A sentence for the player and operators (never for other seats)."""
        until = "" if self.until is None else f" until {self.until.isoformat()}"
        if self.reason is Reason.LOSS_LIMIT:
            return f"the {self.what} loss limit of {self.limit_hundredths} hundredths{until}"
        if self.reason is Reason.STAKE_LIMIT:
            return f"the stake limit of {self.limit_hundredths} hundredths"
        if self.reason is Reason.BREAK:
            return f"a break{until}"
        return "a self-exclusion" + (until or " (indefinite, or until the player asks to return)")


def closed_reason(limits: PlayerLimits, at: datetime) -> Refusal | None:
    """Whether play is closed at ``at`` (``limits`` in force then): an exclusion (until its end
    and a return), else a break."""
    if limits.excluded_at is not None:
        ends = limits.excluded_until
        if ends is not None and at >= ends:
            ends = None  # ended: closed until a return
        return Refusal(Reason.SELF_EXCLUSION, "self_exclusion", None, ends)
    if limits.break_until is not None and at < limits.break_until:
        return Refusal(Reason.BREAK, "break", None, limits.break_until)
    return None


def refusal(
    limits: PlayerLimits,
    at: datetime,
    amount_hundredths: int,
    reserved_hundredths: int,
    losses: Mapping[str, int],
) -> Refusal | None:
    """Why a reservation of ``amount_hundredths`` may not be held at ``at``, or None.

    ``limits`` in force at ``at``; ``reserved_hundredths``: what the player holds now at every
    table; ``losses``: its net losses (paid minus received, hundredths; negative when it is up)
    in each period containing ``at``. A loss limit refuses when the period's net losses plus
    everything held plus this amount would pass it; the stake limit when the amount alone does."""
    closed = closed_reason(limits, at)
    if closed is not None:
        return closed
    if (
        limits.stake_limit_hundredths is not None
        and amount_hundredths > limits.stake_limit_hundredths
    ):
        return Refusal(Reason.STAKE_LIMIT, STAKE, limits.stake_limit_hundredths, None)
    for period, limit in limits.loss_limits:
        worst = losses.get(period, 0) + reserved_hundredths + amount_hundredths
        if worst > limit:
            return Refusal(
                Reason.LOSS_LIMIT, period, limit, period_end(period, at, limits.time_zone)
            )
    return None


# ------------------------------------------------------------------------------ periods


def period_start(period: str, at: datetime, zone: str) -> date:
    """The local date ``period`` containing ``at`` starts on in ``zone``: the day itself, the
    Monday of its ISO week, the 1st of its month. Raises InvalidCommand for an unknown period."""
    local = _aware(at).astimezone(ZoneInfo(zone)).date()
    if period == DAY:
        return local
    if period == WEEK:
        return local - timedelta(days=local.weekday())
    if period == MONTH:
        return local.replace(day=1)
    raise InvalidCommand(f"unknown period {period!r}")


def period_end(period: str, at: datetime, zone: str) -> datetime:
    """The instant (UTC) the period containing ``at`` ends: local midnight starting the next
    day, ISO week or month in ``zone`` (a day across a daylight-saving change is 23 or 25 h)."""
    start = period_start(period, at, zone)
    if period == DAY:
        following = start + timedelta(days=1)
    elif period == WEEK:
        following = start + timedelta(weeks=1)
    else:
        following = (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    local = datetime(following.year, following.month, following.day, tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC)


def period_keys(at: datetime, zone: str) -> tuple[tuple[str, date], ...]:
    """``((period, start date), ...)`` of every period containing ``at`` in ``zone``."""
    return tuple((p, period_start(p, at, zone)) for p in PERIODS)


def _aware(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise InvalidCommand("a limit's time must carry its time zone")
    return at
