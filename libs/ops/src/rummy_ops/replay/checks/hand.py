"""Replaying one hand (:func:`replay_hand`): the fold under the variant the hand pinned and
every check of :mod:`rummy_ops.replay.checks` in turn."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import stream_payloads, upcast
from rummy_ops.replay.checks.fairness import check_fairness
from rummy_ops.replay.checks.record import (
    DEFAULT_SETTLE_GRACE_S,
    HandReplay,
    LedgerFetch,
    Recorded,
    finding,
)
from rummy_ops.replay.checks.rules import rederive
from rummy_ops.replay.checks.settlement import check_ledger_event, check_ledger_rows, check_refusal
from rummy_platform.envelope import Envelope
from rummy_platform.skips import SKIPPED
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.rules import RuleSetError
from rummy_rules.variant import Variant


def _pinned_variant(report: HandReplay, started: Envelope) -> Variant[Any] | None:
    """The variant the hand's HandStarted pinned (its rule set's variant and the envelope's
    rules version), or None when this build does not know it: the hand is then *unverifiable*
    (``report.unverifiable`` says why; not OK, and no mismatch either), and an unknown variant
    is counted as a skip (``rummy_platform.skips``)."""
    payload = started.payload
    assert isinstance(payload, table_pb.HandStarted)
    pinned = upcast.variant_of(payload.rule_set)
    try:
        return registry.lookup(pinned, started.rules_version)
    except registry.UnknownVariant as exc:
        report.outcome = "unverifiable"
        report.unverifiable = f"this build cannot verify it: {exc}"
        SKIPPED.lookup_or_skip(  # a skip when the variant itself is unknown (not its rules)
            registry.lookup,
            pinned,
            type_name=started.type,
            table_id=report.table_id,
            hand_id=report.hand_id,
            consumer="replay",
            log=False,  # the replay's report says it (UNVERIFIABLE)
        )
        return None


def replay_hand(
    table_id: str,
    hand_id: str,
    envelopes: Sequence[Envelope],
    ledger: LedgerFetch | None = None,
    *,
    settle_grace_s: float = DEFAULT_SETTLE_GRACE_S,
    now: datetime | None = None,
) -> HandReplay:
    """Replay one hand from its events (stream order) and run every check; never raises for a
    bad record (each problem becomes a Finding). ``settle_grace_s``: seconds after HandEnded
    (by ``now``, default the current time) before a missing journal settlement is a failure."""
    report = HandReplay(table_id, hand_id, list(envelopes))
    for before, after in zip(envelopes, envelopes[1:], strict=False):
        if after.stream_version <= before.stream_version:
            message = f"stream version {after.stream_version} after {before.stream_version}"
            report.findings.append(finding(after, "stream", message))
            return report
    started = next((e for e in envelopes if isinstance(e.payload, table_pb.HandStarted)), None)
    if started is None:
        first = envelopes[0]
        report.findings.append(finding(first, "rules", "the hand has no HandStarted before it"))
        return report
    report.hand_no = started.payload.hand_no  # type: ignore[attr-defined]
    variant = _pinned_variant(report, started)
    if variant is None:
        return report
    try:
        ctx = stream_payloads.hand_context(started.payload)  # type: ignore[arg-type]
    except RuleSetError as exc:
        refused = stream_payloads.wire_message(exc, variant.name)
        message = f"the rules refuse the hand's options: {refused}"
        report.findings.append(finding(started, "rules", message))
        return report
    report.hand_no = ctx.hand_no
    recorded: list[Recorded] = []
    for envelope in envelopes:
        payload = envelope.payload
        at_ms = stream_payloads.datetime_to_ms(envelope.occurred_at)
        try:
            if isinstance(payload, table_pb.HandStarted):
                recorded.append(
                    Recorded(envelope, stream_payloads.hand_started_from_pb(payload, at_ms))
                )
            elif stream_payloads.is_hand_payload(payload):
                recorded += [
                    Recorded(envelope, e) for e in stream_payloads.from_payload(payload, ctx, at_ms)
                ]
        except (stream_payloads.StreamPayloadError, ValueError, KeyError) as exc:
            report.findings.append(finding(envelope, "rules", f"cannot be decoded: {exc}"))
            return report
    state = rederive(report, ctx, recorded, variant)
    result = variant.result(state)
    if isinstance(result, ev.HandEnded):
        report.outcome = "ended"
    elif isinstance(result, ev.HandAborted):
        report.outcome = "aborted"
    check_fairness(report, ctx, recorded)
    check_ledger_event(report, ctx, recorded)
    check_refusal(report)
    if ledger is None:
        report.notes.append("ledger not checked: no database given")
    else:
        check_ledger_rows(report, recorded, ledger, settle_grace_s, now or datetime.now(UTC))
    report.findings.sort(key=lambda f: f.version)
    return report
