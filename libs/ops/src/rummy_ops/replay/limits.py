"""Replay's re-check of the seats a player's own limits held back (docs/rules/responsible-play.md).

The ledger tells the table only "not dealt in" (``StakeRejected`` / ``MatchMoneyRejected`` with
``NOT_DEALT_IN``) and writes which limit to the player's own key (``ReservationRefusedByLimit``,
caused by the table event that asked for the reservation). :func:`recheck_refusals` pairs each
with the other and re-checks the limit from the log alone, written apart from the ledger's code:

- the limits in force at the asking event's time, folded from the player's ``LimitChanged`` facts
  on the ledger's topic (a set at once; a raise, a removal, a time-zone change, a break's early
  end, a return at its ``effective_at``; a cancellation drops what was pending);
- the period's net losses before that time, from the ``HandSettled`` / ``MatchSettled`` lines on
  the ledger's topic, each at the time of the table event it settled (the period in the player's
  time zone then).

A loss limit refuses when losses + the amount pass it; the ledger also counts what the player
held then (its entry at a pool, holds at other tables), which this check does not re-count: a
refusal only those holds explain is a note (not proven), never a pass. Amounts in hundredths
of a House Token (a problem's text in House Tokens, ``13.00``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from google.protobuf.timestamp_pb2 import Timestamp

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy_ops.money import tokens
from rummy_ops.replay.sources import Selection
from rummy_platform.envelope import Envelope

LimitChange = ledger_pb.LimitChanged
_NOT_DEALT_IN = ledger_pb.STAKE_REJECTION_REASON_NOT_DEALT_IN
_PERIODS = ("day", "week", "month")


@dataclass
class _InForce:
    """A player's limits at one instant, and what waits for its time."""

    loss: dict[str, int] = field(default_factory=dict)  # period -> hundredths
    stake: int | None = None
    zone: str = "UTC"
    break_until: datetime | None = None
    excluded: bool = False
    excluded_until: datetime | None = None
    waiting: dict[str, tuple[datetime, LimitChange]] = field(default_factory=dict)

    def advance(self, to: datetime) -> None:
        """Apply every waiting change whose time has come by ``to``."""
        for what, (when, fact) in sorted(self.waiting.items(), key=lambda item: item[1][0]):
            if when > to:
                continue
            del self.waiting[what]
            if what == "break_end":
                if self.break_until is not None:
                    self.break_until = min(self.break_until, when)
            elif what == "return":
                self.excluded, self.excluded_until = False, None
            elif what == "time_zone":
                self.zone = fact.time_zone
            else:
                self._value(what, fact)

    def _value(self, what: str, fact: LimitChange) -> None:
        amount = fact.amount_hundredths if fact.HasField("amount_hundredths") else None
        if what == "stake":
            self.stake = amount
        elif amount is None:
            self.loss.pop(what, None)
        else:
            self.loss[what] = amount

    def take(self, fact: LimitChange, at: datetime) -> None:
        """Fold one fact asked at ``at``."""
        change, what = fact.change, fact.what
        if change == "set":
            self._value(what, fact)
        elif change == "raise_cancelled":
            self.waiting.pop(what, None)
        elif change.endswith("_pending"):
            self.waiting[what] = (_time(fact.effective_at, at), fact)
        elif change == "break_started":
            self.break_until = _time(fact.until, at)
        elif change == "excluded":
            self.excluded = True
            self.excluded_until = _time(fact.until, at) if fact.HasField("until") else None


def _time(stamp: Timestamp, fallback: datetime) -> datetime:
    """``stamp`` as an aware datetime (``fallback``'s zone); ``fallback`` when unset."""
    return stamp.ToDatetime(tzinfo=fallback.tzinfo) if stamp.seconds or stamp.nanos else fallback


def _period_start(period: str, at: datetime, zone: str) -> date:
    local = at.astimezone(ZoneInfo(zone)).date()
    if period == "week":
        return local - timedelta(days=local.isoweekday() - 1)
    if period == "month":
        return date(local.year, local.month, 1)
    return local


@dataclass(frozen=True)
class LimitRecheck:
    """One seat held back by its own limits: where (table, hand or match id, seat), whose, at
    what time, the limit the ledger named, and the re-check's verdict (``ok``) or why it could
    not be proven (``note``) or what disagrees (``problem``)."""

    table_id: str
    correlation_id: str
    seat: int
    account_id: str
    at: datetime | None
    reason: str
    required_hundredths: int
    problem: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem and not self.note

    def line(self) -> str:
        where = f"{self.table_id} {self.correlation_id} seat {self.seat} ({self.account_id})"
        return f"{where}: {self.reason}: " + (self.problem or self.note or "re-checked")


def selected(rechecks: Iterable[LimitRecheck], selection: Selection) -> list[LimitRecheck]:
    """The re-checks at what ``selection`` replays: a hand's (``selection.hand_id``: the seats
    held back from that hand), a table's (``selection.table_id``), or every one (neither). The
    re-check itself reads the whole log (the limits in force and the losses before a refusal
    come from other tables' settlements too); only what is reported is narrowed."""
    if selection.hand_id:
        return [c for c in rechecks if c.correlation_id == selection.hand_id]
    if selection.table_id:
        return [c for c in rechecks if c.table_id == selection.table_id]
    return list(rechecks)


def scope(selection: Selection) -> str:
    """Where the re-checks of ``selection`` are (:func:`selected`), as ``rummy replay`` says it:
    ``hand h-1``, ``table t-1`` or ``all tables``."""
    if selection.hand_id:
        return f"hand {selection.hand_id}"
    if selection.table_id:
        return f"table {selection.table_id}"
    return "all tables"


def recheck_refusals(
    table_envelopes: Iterable[Envelope], ledger_envelopes: Iterable[Envelope]
) -> list[LimitRecheck]:
    """Every "not dealt in" seat of the tables in ``table_envelopes`` (their events), re-checked
    against ``ledger_envelopes`` (the ledger's topic), in log order. A seat not dealt in with no
    limit refusal on the player's key, or a refusal the limits in force then do not explain, is
    a ``problem``."""
    table_events = list(table_envelopes)
    times = {e.event_id: e.occurred_at for e in table_events}
    tables = {e.stream_id for e in table_events}
    ledger = list(ledger_envelopes)
    facts: dict[str, list[Envelope]] = {}
    settled: dict[str, list[tuple[datetime, int]]] = {}
    private: dict[tuple[str, str], Envelope] = {}
    held_back: list[tuple[Envelope, int, str, int]] = []
    for envelope in ledger:
        p = envelope.payload
        if isinstance(p, ledger_pb.LimitChanged):
            facts.setdefault(p.account_id, []).append(envelope)
        elif isinstance(p, ledger_pb.HandSettled | ledger_pb.MatchSettled):
            at = times.get(envelope.causation_id, envelope.occurred_at)
            for line in p.lines:
                settled.setdefault(line.account_id, []).append((at, -line.amount_hundredths))
        elif isinstance(p, ledger_pb.ReservationRefusedByLimit):
            private[(envelope.causation_id, p.account_id)] = envelope
        elif (
            isinstance(p, ledger_pb.StakeRejected | ledger_pb.MatchMoneyRejected)
            and p.reason == _NOT_DEALT_IN
            and envelope.causation_id in times
        ):
            held_back.append((envelope, p.seat, p.account_id, p.required_hundredths))
    out = []
    for envelope, seat, account, required in held_back:
        refusal = private.get((envelope.causation_id, account))
        at = times[envelope.causation_id]
        table_id = next(
            (e.stream_id for e in table_events if e.event_id == envelope.causation_id), ""
        )
        if table_id not in tables:
            continue
        base = (table_id, envelope.correlation_id, seat, account, at)
        if refusal is None:
            out.append(LimitRecheck(*base, "?", required, problem="no limit refusal on its key"))
            continue
        payload = refusal.payload
        assert isinstance(payload, ledger_pb.ReservationRefusedByLimit)
        reason = ledger_pb.LimitReason.Name(payload.reason).removeprefix("LIMIT_REASON_").lower()
        state = _InForce()
        for fact in facts.get(account, []):
            if fact.occurred_at > at:
                break
            state.advance(fact.occurred_at)
            assert isinstance(fact.payload, ledger_pb.LimitChanged)
            state.take(fact.payload, fact.occurred_at)
        state.advance(at)
        losses = {
            period: sum(
                loss
                for when, loss in settled.get(account, [])
                if when < at
                and _period_start(period, when, state.zone) == _period_start(period, at, state.zone)
            )
            for period in _PERIODS
        }
        out.append(
            LimitRecheck(*base, reason, required, *_verdict(state, at, reason, required, losses))
        )
    return out


def _verdict(
    state: _InForce, at: datetime, reason: str, required: int, losses: Mapping[str, int]
) -> tuple[str, str]:
    """``(problem, note)`` of re-checking ``reason`` for ``required`` at ``at``."""
    if reason == "self_exclusion":
        return ("", "") if state.excluded else ("no self-exclusion in force", "")
    if reason == "break":
        running = state.break_until is not None and at < state.break_until
        return ("", "") if running else ("no break running", "")
    if reason == "stake_limit":
        over = state.stake is not None and required > state.stake
        if over:
            return "", ""
        limit = "none" if state.stake is None else tokens(state.stake)
        return f"{tokens(required)} is within the stake limit {limit}", ""
    if reason == "loss_limit":
        if not state.loss:
            return "no loss limit in force", ""
        if any(losses[p] + required > limit for p, limit in state.loss.items()):
            return "", ""
        return "", "explained only by what the player held then (not re-counted from the log)"
    return f"unknown limit reason {reason!r}", ""
