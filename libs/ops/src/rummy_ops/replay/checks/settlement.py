"""The money checks of a hand: ``ledger-event`` (the ledger's HandSettled re-recorded in the
stream), ``settlement-refused`` and ``ledger`` (the journal rows in PostgreSQL, read by
:mod:`rummy_ops.replay.ledger`) against the HandEnded's settlement."""

from __future__ import annotations

from datetime import datetime

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy_game import stream_payloads
from rummy_ops.money import tokens
from rummy_ops.replay.checks.mismatch import clip
from rummy_ops.replay.checks.record import (
    HandReplay,
    LedgerFetch,
    LedgerRows,
    Recorded,
    ended_of,
    finding,
    payloads_of,
)
from rummy_rules import events as ev
from rummy_rules.settlement import Settlement


def check_ledger_event(
    report: HandReplay, ctx: stream_payloads.HandContext, recorded: list[Recorded]
) -> None:
    """The ledger's HandSettled, re-recorded by the table, against HandEnded (net per account)."""
    ended = ended_of(recorded)
    for settled in payloads_of(report, ledger_pb.HandSettled):
        if ended is None:
            report.findings.append(
                finding(settled, "ledger-event", "settled a hand that did not end")
            )
            return
        s = ended.event.settlement  # type: ignore[attr-defined]
        want: dict[str, int] = {}
        for line in s.lines:
            account = ctx.accounts.get(line.seat, f"seat {line.seat}")
            want[account] = want.get(account, 0) + line.amount_hundredths
        got: dict[str, int] = {}
        for line in settled.payload.lines:  # type: ignore[attr-defined]
            got[line.account_id] = got.get(line.account_id, 0) + line.amount_hundredths
        for account, amount in sorted(want.items()):
            if got.get(account, 0) != amount:
                report.findings.append(
                    finding(
                        settled,
                        "ledger-event",
                        f"{account} moved {tokens(got.get(account, 0), True)} in the "
                        f"ledger's HandSettled, HandEnded says {tokens(amount, True)}",
                    )
                )
                return
        commission = settled.payload.commission_hundredths  # type: ignore[attr-defined]
        if commission != s.commission_hundredths:
            report.findings.append(
                finding(
                    settled,
                    "ledger-event",
                    f"commission {tokens(commission)} in HandSettled, "
                    f"HandEnded says {tokens(s.commission_hundredths)}",
                )
            )
            return
        report.checked.append("ledger-event")


def check_refusal(report: HandReplay) -> None:
    """A SettlementRefused the table recorded: the ledger refused the hand's settlement, so the
    hand is void (its holds released, nothing moved). Reported as a failure with the reason."""
    for refused in payloads_of(report, ledger_pb.SettlementRefused):
        report.outcome = "voided"
        reason = refused.payload.reason  # type: ignore[attr-defined]
        message = "the ledger refused the settlement (the hand is void, its holds released): "
        report.findings.append(finding(refused, "settlement-refused", message + clip(reason)))


def journal_difference(rows: LedgerRows, s: Settlement) -> str:
    """What the journal rows of a hand say differently from its settlement ("" if nothing;
    amounts in House Tokens)."""
    tx = f"journal {rows.transaction_id}"
    for line in s.lines:
        net = rows.net_by_seat.get(line.seat, 0)
        if net != line.amount_hundredths:
            return (
                f"{tx}: seat {line.seat} moved {tokens(net, True)}, the log says "
                f"{tokens(line.amount_hundredths, True)}"
            )
        charged = rows.points_by_seat.get(line.seat, 0)
        if line.seat not in s.winner_seats and charged != line.points:
            return f"{tx}: seat {line.seat} charged {charged} points, the log says {line.points}"
    extra = set(rows.net_by_seat) - {line.seat for line in s.lines}
    if extra:
        return f"{tx} moves seats {sorted(extra)} that the log does not settle"
    if rows.commission_hundredths != s.commission_hundredths:
        return (
            f"{tx}: commission {tokens(rows.commission_hundredths)}, the log says "
            f"{tokens(s.commission_hundredths)}"
        )
    return ""


def check_ledger_rows(
    report: HandReplay,
    recorded: list[Recorded],
    ledger: LedgerFetch,
    grace_s: float,
    now: datetime,
) -> None:
    ended = ended_of(recorded)
    rows = ledger(report.hand_id)
    refused = payloads_of(report, ledger_pb.SettlementRefused)
    if ended is None or refused:
        if rows is not None:
            why = "the ledger refused its settlement" if refused else "the hand did not end"
            message = f"the journal settles it ({rows.transaction_id}) but {why}"
            report.findings.append(finding(report.envelopes[-1], "ledger", message))
        return
    if rows is None:
        waited = (now - ended.envelope.occurred_at).total_seconds()
        if waited > grace_s:
            message = (
                f"the hand ended {waited:.0f} s ago and the journal has no settlement for it "
                f"(grace {grace_s:g} s)"
            )
            report.findings.append(finding(ended.envelope, "ledger", message))
        else:
            report.notes.append(
                f"ledger: no settlement in the journal yet (the hand ended {waited:.0f} s ago; "
                f"a failure after {grace_s:g} s)"
            )
        return
    settled = payloads_of(report, ledger_pb.HandSettled)
    anchor = settled[0] if settled else ended.envelope
    assert isinstance(ended.event, ev.HandEnded)
    problem = journal_difference(rows, ended.event.settlement)
    if problem:
        report.findings.append(finding(anchor, "ledger", problem))
    else:
        report.checked.append("ledger")
