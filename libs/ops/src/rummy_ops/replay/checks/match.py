"""Replaying a whole match (pool, deals, best of N, game to N, Hollywood) from the table stream:
its events folded through the table's format (``rummy_rules.formats``, decoded by
``rummy_game.match_payloads``), each re-decided from the input it records, as the table does.

Checks (a :class:`~.record.Finding` names the match event's stream version, id and type):

- ``match-rules``: every recorded match event is what the format decides for the command it
  records (StartMatch, BeginDeal, RecordDeal, RecordDealAborted, LeaveMatch, AcceptRejoin,
  DeclineRejoin, RequestSplit, AbortMatch): a DealScored is re-derived from the HandEnded of its
  hand (``rummy_rules.formats.deal_result``), so the deal's points and winners, the totals or
  chips, eliminations, rejoin offers, tie-breaks, the end and its settlement (prize, commission,
  every seat's line) all follow from the hands. A game's end (``GameEnded``) is re-derived the
  same way under the table's options: its totals after the game-end scoring (game bonus or
  shutout, boxes; Hollywood: the sum of its columns' capped nets, each column re-scored from the
  deals), its winner and its settlement of the game's stakes; a drawn deal (gin's wall) is a
  deal scored for nobody.
- ``match-deal``: the hand that played each scored deal replays clean by the hand checks
  (:mod:`.hand`); a hand with a finding or one this build cannot verify fails its deal.
- ``match-ledger-event``: the ledger's MatchSettled (re-recorded in the stream by the table) moves
  what each settlement says, account by account, and its commission: MatchEnded's (game 0) and
  every GameEnded's (its game number: a game to N's games, Hollywood's one); not there (yet) is
  a note.
- ``match-ledger``: the journal rows of each settlement in PostgreSQL (the ledger's key,
  ``rummy_ledger.contract.match_settlement_key`` with the game number) equal it to the
  hundredth, seat by seat and the commission; missing after the grace (``settle_grace_s``) is a
  failure, before it a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import match_payloads, stream_payloads
from rummy_ledger.contract import match_settlement_key
from rummy_ops.money import tokens
from rummy_ops.replay.checks.hand import replay_hand
from rummy_ops.replay.checks.mismatch import difference
from rummy_ops.replay.checks.record import (
    DEFAULT_SETTLE_GRACE_S,
    Finding,
    HandReplay,
    LedgerFetch,
    LedgerRows,
    finding,
)
from rummy_ops.replay.sources import hands_of
from rummy_platform.envelope import Envelope
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.commands import Command
from rummy_rules.errors import RuleViolation
from rummy_rules.formats import MatchFormat, deal_result
from rummy_rules.formats import messages as fm
from rummy_rules.formats.money import MatchSettlement
from rummy_rules.rules import RuleSetError


@dataclass
class MatchReplay:
    """The replay of one match: its format, its deals (deal number, hand id), what failed
    (``findings``), what could not be checked yet (``notes``) and which checks passed;
    ``games``: each game's end re-derived (a game to N's games, Hollywood's one: its winner,
    totals after the game-end scoring and its settlement); ``settlement``: MatchEnded's."""

    table_id: str
    match_id: str
    match_format: str = ""
    outcome: str = "running"  # ended / aborted / running
    deals: list[tuple[int, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    winners: tuple[int, ...] = ()
    settlement: MatchSettlement | None = None
    games: list[fm.GameEnded] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def first(self) -> Finding | None:
        return min(self.findings, key=lambda f: f.version) if self.findings else None

    def line(self) -> str:
        """One line: the match, its format and deals, its verdict and the first finding."""
        head = f"match {self.match_id} ({self.match_format or '?'}, {len(self.deals)} deals)"
        if self.first is not None:
            return f"{head}: MISMATCH {self.first.line()}"
        return f"{head}: OK {self.outcome}" + (f" ({'; '.join(self.notes)})" if self.notes else "")


@dataclass
class _Recorded:
    envelope: Envelope
    event: fm.MatchEvent


def _is_match(envelope: Envelope) -> bool:
    return match_payloads.is_match_payload(envelope.payload)


def matches_of(stream: Sequence[Envelope]) -> dict[str, list[Envelope]]:
    """The match events of one table's stream (stream order) by match id (correlation id)."""
    out: dict[str, list[Envelope]] = {}
    for envelope in stream:
        if _is_match(envelope):
            out.setdefault(envelope.correlation_id, []).append(envelope)
    return out


def replay_match(
    table_id: str,
    match_id: str,
    stream: Sequence[Envelope],
    hands: Mapping[str, HandReplay] | None = None,
    ledger: LedgerFetch | None = None,
    *,
    settle_grace_s: float = DEFAULT_SETTLE_GRACE_S,
    now: datetime | None = None,
) -> MatchReplay:
    """Replay match ``match_id`` of the table whose whole stream is ``stream`` (stream order:
    its TableOpened, the match's events, its hands' events, the ledger's answers) and run every
    check; never raises for a bad record. ``hands``: the hand replays by hand id (the hands of
    ``stream`` are replayed here when absent)."""
    report = MatchReplay(table_id, match_id)
    events = [e for e in stream if _is_match(e) and e.correlation_id == match_id]
    if not events:
        report.notes.append("no match events")
        return report
    fmt = _format(report, stream, events[0])
    if fmt is None:
        return report
    report.match_format = fmt.name
    recorded: list[_Recorded] = []
    for envelope in events:
        at_ms = stream_payloads.datetime_to_ms(envelope.occurred_at)
        try:
            event = match_payloads.event_from_pb(envelope.payload, at_ms)
        except (stream_payloads.StreamPayloadError, ValueError, KeyError) as exc:
            report.findings.append(finding(envelope, "match-rules", f"cannot be decoded: {exc}"))
            return report
        recorded.append(_Recorded(envelope, event))  # type: ignore[arg-type]
    by_hand = _hands(stream)
    state = _rederive(report, fmt, recorded, by_hand, _rejoins_not_held(stream, match_id))
    if report.findings:
        return report
    report.checked.append("match-rules")
    _check_deals(report, stream, by_hand, hands)
    result = state.result
    if isinstance(result, fm.MatchAborted):
        report.outcome = "aborted"
    elif isinstance(result, fm.MatchEnded):
        report.outcome = "ended"
        report.winners, report.settlement = result.winners, result.settlement
    report.games = [r.event for r in recorded if isinstance(r.event, fm.GameEnded)]
    accounts = {s.seat: s.account_id for s in state.seats}
    settled = _settlements(recorded)
    for game_no, settlement, _ in settled:
        _check_ledger_event(report, stream, settlement, accounts, game_no)
    if settled and ledger is None:
        report.notes.append("ledger not checked: no database given")
    elif ledger is not None:
        for game_no, settlement, ended in settled:
            waited = ((now or datetime.now(UTC)) - ended.occurred_at).total_seconds()
            rows = ledger(match_settlement_key(table_id, match_id, game_no))
            _check_journal(report, rows, settlement, ended, waited, settle_grace_s, game_no)
    report.findings.sort(key=lambda f: f.version)
    return report


def _settlements(recorded: Sequence[_Recorded]) -> list[tuple[int, MatchSettlement, Envelope]]:
    """Every settlement the (re-derived) match recorded: each GameEnded's (its game number) and
    MatchEnded's (game 0, when it moves money), with the envelope that carries it."""
    out: list[tuple[int, MatchSettlement, Envelope]] = []
    for item in recorded:
        event = item.event
        if isinstance(event, fm.GameEnded):
            out.append((event.game_no, event.settlement, item.envelope))
        elif isinstance(event, fm.MatchEnded) and event.settlement is not None:
            out.append((0, event.settlement, item.envelope))
    return out


def _what(game_no: int) -> str:
    """What a settlement of ``game_no`` is called in a finding."""
    return "MatchEnded" if game_no == 0 else f"GameEnded (game {game_no})"


def _passed(report: MatchReplay, check: str) -> None:
    if check not in report.checked:
        report.checked.append(check)


def _format(report: MatchReplay, stream: Sequence[Envelope], first: Envelope) -> MatchFormat | None:
    """The format the table was opened with (its TableOpened's ``match`` and commission)."""
    opened = next((e for e in stream if isinstance(e.payload, table_pb.TableOpened)), None)
    if opened is None:
        message = "the table's TableOpened is not in the stream: its format is unknown"
        report.findings.append(finding(first, "match-rules", message))
        return None
    payload = opened.payload
    assert isinstance(payload, table_pb.TableOpened)
    try:
        return match_payloads.format_from_pb(payload.match, payload.commission_bps)
    except RuleSetError as exc:
        refusal = match_payloads.option_message(exc, payload.match)
        message = f"the rules refuse the table's format: {refusal}"
        report.findings.append(finding(opened, "match-rules", message))
        return None


@dataclass
class _Hand:
    """A hand of the stream as the match reads it: its HandStarted and HandEnded envelopes."""

    started: Envelope | None = None
    ended: Envelope | None = None


def _hands(stream: Sequence[Envelope]) -> dict[str, _Hand]:
    out: dict[str, _Hand] = {}
    for envelope in stream:
        payload = envelope.payload
        if isinstance(payload, table_pb.HandStarted):
            out.setdefault(payload.hand_id, _Hand()).started = envelope
        elif isinstance(payload, table_pb.HandEnded):
            out.setdefault(payload.hand_id, _Hand()).ended = envelope
    return out


def _hand_ended(hand: _Hand | None) -> tuple[ev.HandEnded, int] | str:
    """The rules HandEnded of ``hand`` (decoded as the table writes it) and the most its rule
    set charges one seat (its variant's ``max_loss_points``, what the table bounded the deal's
    result by), or why there is none."""
    if hand is None or hand.started is None:
        return "its hand is not in the stream"
    if hand.ended is None:
        return "its hand has no HandEnded in the stream"
    try:
        ctx = stream_payloads.hand_context(hand.started.payload)  # type: ignore[arg-type]
        at_ms = stream_payloads.datetime_to_ms(hand.ended.occurred_at)
        decoded = stream_payloads.from_payload(hand.ended.payload, ctx, at_ms)
        most = registry.lookup(ctx.rule_set.variant).max_loss_points(ctx.rule_set)
    except (stream_payloads.StreamPayloadError, RuleSetError, ValueError, LookupError) as exc:
        return f"its hand's HandEnded cannot be decoded: {exc}"
    ended = next((e for e in decoded if isinstance(e, ev.HandEnded)), None)
    return (ended, most) if ended is not None else "its hand's HandEnded holds no result"


def _rejoins_not_held(stream: Sequence[Envelope], match_id: str) -> frozenset[int]:
    """The seats whose rejoin entry the ledger could not hold in match ``match_id`` (its
    MatchMoneyRejected of purpose ``rejoin``, re-recorded on the table's stream)."""
    return frozenset(
        e.payload.seat
        for e in stream
        if isinstance(e.payload, ledger_pb.MatchMoneyRejected)
        and e.payload.match_id == match_id
        and e.payload.purpose == "rejoin"
    )


def _command_for(
    item: _Recorded, by_hand: Mapping[str, _Hand], not_held: frozenset[int] = frozenset()
) -> Command | str:
    """The command a recorded match event answers (the first event of what the command caused),
    or why none does; ``not_held``: the seats whose rejoin entry the ledger refused."""
    event, payload = item.event, item.envelope.payload
    at_ms = stream_payloads.datetime_to_ms(item.envelope.occurred_at)
    if isinstance(event, fm.MatchStarted):
        return fm.StartMatch(match_id=event.match_id, seats=event.seats, at_ms=at_ms)
    if isinstance(event, fm.DealStarted | fm.GameStarted):
        return fm.BeginDeal(at_ms=at_ms)
    if isinstance(event, fm.DealScored):
        hand_id = getattr(payload, "hand_id", "")
        ended = _hand_ended(by_hand.get(hand_id))
        if isinstance(ended, str):
            return f"deal {event.deal_no} (hand {hand_id or '?'}): {ended}"
        hand_ended, most = ended
        return fm.RecordDeal(result=deal_result(hand_ended), at_ms=at_ms, most_points=most)
    if isinstance(event, fm.DealVoided):
        return fm.RecordDealAborted(reason=event.reason, at_ms=at_ms)
    if isinstance(event, fm.SeatLeft):
        return fm.LeaveMatch(seat=event.seat, at_ms=at_ms)
    if isinstance(event, fm.Rejoined):
        return fm.AcceptRejoin(seat=event.seat, at_ms=at_ms)
    if isinstance(event, fm.RejoinDeclined):
        return fm.DeclineRejoin(seat=event.seat, at_ms=at_ms)
    if isinstance(event, fm.RejoinRefused):
        if event.seat not in not_held:
            return (
                f"seat {event.seat}'s rejoin is undone, but the stream holds no ledger "
                "MatchMoneyRejected of its rejoin entry"
            )
        return fm.RejoinNotHeld(seat=event.seat, at_ms=at_ms)
    if isinstance(event, fm.SplitRequested):
        return fm.RequestSplit(seat=event.seat, at_ms=at_ms)
    if isinstance(event, fm.MatchAborted):
        return fm.AbortMatch(reason=event.reason, at_ms=at_ms)
    return (
        f"{type(event).__name__} follows from no recorded input here "
        "(the format derives no such event at this point)"
    )


def _rederive(
    report: MatchReplay,
    fmt: MatchFormat,
    recorded: list[_Recorded],
    by_hand: Mapping[str, _Hand],
    not_held: frozenset[int] = frozenset(),
) -> Any:
    """Fold the match by re-deciding each recorded input; stops at the first difference."""
    state = fmt.initial_state()
    i = 0
    while i < len(recorded):
        item = recorded[i]
        command = _command_for(item, by_hand, not_held)
        if isinstance(command, str):
            report.findings.append(finding(item.envelope, "match-rules", command))
            return state
        try:
            derived = fmt.decide(state, command)
        except RuleViolation as exc:
            report.findings.append(
                finding(item.envelope, "match-rules", f"the format refuses it: {exc}")
            )
            return state
        if not derived:
            message = "the format derives no event from it (a stale input)"
            report.findings.append(finding(item.envelope, "match-rules", message))
            return state
        for k, event in enumerate(derived):
            if i + k >= len(recorded):
                message = f"the format gives {type(event).__name__} next, the record ends here"
                report.findings.append(finding(recorded[-1].envelope, "match-rules", message))
                return state
            got = recorded[i + k]
            if got.event != event:
                message = difference(got.event, event)
                report.findings.append(finding(got.envelope, "match-rules", message))
                return state
            if isinstance(event, fm.DealScored):
                report.deals.append((event.deal_no, getattr(got.envelope.payload, "hand_id", "")))
        state = fmt.fold(derived, state)
        i += len(derived)
    return state


def _check_deals(
    report: MatchReplay,
    stream: Sequence[Envelope],
    by_hand: Mapping[str, _Hand],
    hands: Mapping[str, HandReplay] | None,
) -> None:
    """Each scored deal's hand replays clean by the hand checks."""
    for deal_no, hand_id in report.deals:
        replay = (hands or {}).get(hand_id)
        if replay is None:
            replay = replay_hand(report.table_id, hand_id, hands_of(list(stream)).get(hand_id, []))
        anchor = by_hand[hand_id].ended
        assert anchor is not None  # the deal was derived from it
        if replay.unverifiable:
            message = f"deal {deal_no}'s hand {hand_id} cannot be verified: {replay.unverifiable}"
            report.findings.append(finding(anchor, "match-deal", message))
        elif replay.first is not None:
            message = f"deal {deal_no}'s hand {hand_id} does not replay: {replay.first.line()}"
            report.findings.append(finding(anchor, "match-deal", message))
        elif replay.notes:
            report.notes.append(f"deal {deal_no}'s hand {hand_id}: {replay.notes[0]}")
    if report.deals and not report.findings:
        report.checked.append("match-deal")


def _check_ledger_event(
    report: MatchReplay,
    stream: Sequence[Envelope],
    settlement: MatchSettlement,
    accounts: Mapping[int, str],
    game_no: int = 0,
) -> None:
    """The ledger's MatchSettled of the match's end (``game_no`` 0) or of one game,
    re-recorded in the stream, against the settlement: net per account and the commission."""
    says = _what(game_no)
    want: dict[str, int] = {}
    for line in settlement.lines:
        account = accounts.get(line.seat, f"seat {line.seat}")
        want[account] = want.get(account, 0) + line.amount_hundredths
    for settled in stream:
        payload = settled.payload
        if not isinstance(payload, ledger_pb.MatchSettled):
            continue
        if payload.match_id != report.match_id or payload.game_no != game_no:
            continue
        got: dict[str, int] = {}
        for posted in payload.lines:
            got[posted.account_id] = got.get(posted.account_id, 0) + posted.amount_hundredths
        for account, amount in sorted(want.items()):
            if got.get(account, 0) != amount:
                message = (
                    f"{account} moved {tokens(got.get(account, 0), True)} in the ledger's "
                    f"MatchSettled, {says} says {tokens(amount, True)}"
                )
                report.findings.append(finding(settled, "match-ledger-event", message))
                return
        if payload.commission_hundredths != settlement.commission_hundredths:
            message = (
                f"commission {tokens(payload.commission_hundredths)} in MatchSettled, {says} "
                f"says {tokens(settlement.commission_hundredths)}"
            )
            report.findings.append(finding(settled, "match-ledger-event", message))
            return
        _passed(report, "match-ledger-event")
        return
    of = "" if game_no == 0 else f" of game {game_no}"
    report.notes.append(f"the ledger's MatchSettled{of} is not in the table's stream (yet)")


def match_journal_difference(
    rows: LedgerRows, settlement: MatchSettlement, game_no: int = 0
) -> str:
    """What the journal rows of a match's settlement (``game_no`` 0) or of one game's say
    differently from it ("" if nothing): each seat's net and the commission (in House Tokens)."""
    tx, says = f"journal {rows.transaction_id}", _what(game_no)
    for line in settlement.lines:
        net = rows.net_by_seat.get(line.seat, 0)
        if net != line.amount_hundredths:
            return (
                f"{tx}: seat {line.seat} moved {tokens(net, True)}, {says} says "
                f"{tokens(line.amount_hundredths, True)}"
            )
    extra = set(rows.net_by_seat) - {line.seat for line in settlement.lines}
    if extra:
        return f"{tx} moves seats {sorted(extra)} that {says} does not settle"
    if rows.commission_hundredths != settlement.commission_hundredths:
        return (
            f"{tx}: commission {tokens(rows.commission_hundredths)}, {says} says "
            f"{tokens(settlement.commission_hundredths)}"
        )
    return ""


def _check_journal(
    report: MatchReplay,
    rows: LedgerRows | None,
    settlement: MatchSettlement,
    ended: Envelope,
    waited_s: float,
    grace_s: float,
    game_no: int = 0,
) -> None:
    what = "the match" if game_no == 0 else f"game {game_no}"
    if rows is None:
        if waited_s > grace_s:
            message = (
                f"{what} ended {waited_s:.0f} s ago and the journal has no settlement for it "
                f"(grace {grace_s:g} s)"
            )
            report.findings.append(finding(ended, "match-ledger", message))
        else:
            report.notes.append(
                f"ledger: no settlement of {what} in the journal yet (ended {waited_s:.0f} s ago)"
            )
        return
    problem = match_journal_difference(rows, settlement, game_no)
    if problem:
        report.findings.append(finding(ended, "match-ledger", problem))
    else:
        _passed(report, "match-ledger")
