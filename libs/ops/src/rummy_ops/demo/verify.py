"""The demo's last steps: the replay of every hand it played (:func:`verify_demo`, its verdict
:func:`replay_verdict`) and their proof bundles (:func:`write_demo_proofs`). The demo uses the
replay and proof tools; they know nothing of the demo."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rummy_ops.demo.report import DemoReport, GameMoney
from rummy_ops.proof import OPEN_HINT, write_proofs
from rummy_ops.replay import Selection, replay_events
from rummy_ops.replay.checks.match import MatchReplay
from rummy_ops.replay.ledger import JournalReader
from rummy_ops.replay.limits import recheck_refusals
from rummy_ops.replay.sources import SourceError, read_kafka, read_topic
from rummy_platform.envelope import Envelope
from rummy_platform.topics import LEDGER_EVENTS

#: ``verify(report) -> (ok, summary)``: replays the report's hands (``report.hands``: table id,
#: hand id) from the event log at ``report.endpoints`` (Kafka, topic prefix, PostgreSQL) and checks
#: them (:func:`verify_demo`).
ReplayCheck = Callable[[DemoReport], tuple[bool, str]]


def _table_events(report: DemoReport) -> list[Envelope]:
    """Every event of the report's tables in the event log at ``report.endpoints``."""
    endpoints = report.endpoints
    assert endpoints is not None
    envelopes: list[Envelope] = []
    for table_id in sorted({h.table_id for h in report.hands}):
        envelopes += read_kafka(endpoints.kafka_bootstrap_servers, endpoints.topic_prefix, table_id)
    return envelopes


def verify_demo(report: DemoReport, attempts: int = 10, pause_s: float = 1.0) -> tuple[bool, str]:
    """The demo's replay step: replay every hand and match of the report's tables from Kafka and
    check each against the journal in PostgreSQL (a match: one verdict beside its hands'). Waits
    (up to ``attempts`` reads, ``pause_s`` apart) for the last seeds to be revealed and the last
    hands and matches settled. Returns ``(ok, summary)``."""
    endpoints = report.endpoints
    if endpoints is None or not endpoints.kafka_bootstrap_servers:
        return False, "no event log to replay from"
    if not endpoints.database_url:
        return False, "no ledger database to check the settlements against"
    wanted = {h.hand_id for h in report.hands}
    reader = JournalReader(endpoints.database_url)
    try:
        for attempt in range(attempts):
            events = _table_events(report)
            run = replay_events(events, Selection(), reader)
            run.hands = [h for h in run.hands if h.hand_id in wanted]
            pending = any(h.ok and h.notes and h.outcome != "running" for h in run.hands) or any(
                m.ok and m.notes for m in run.matches
            )
            if not pending or not run.ok or attempt == attempts - 1:
                break
            time.sleep(pause_s)
    finally:
        reader.close()
    _count_match_money(report, run.matches)
    ledger = read_topic(endpoints.kafka_bootstrap_servers, endpoints.topic_prefix + LEDGER_EVENTS)
    report.limit_rechecks = recheck_refusals(events, ledger)
    proven = sum(1 for h in run.hands if h.ok and not h.notes)
    text = (
        f"{len(run.hands)} hands replayed ({run.events} events, "
        f"{run.events_per_second:,.0f} events/s), {proven} fully proven"
    )
    if run.matches:
        settled = sum(1 for m in run.matches if m.ok and not m.notes)
        text += f"; {len(run.matches)} matches replayed, {settled} fully proven"
    if report.limit_rechecks:
        clean = sum(1 for c in report.limit_rechecks if c.ok)
        text += f"; {len(report.limit_rechecks)} limit refusals re-checked, {clean} clean"
        bad = next((c for c in report.limit_rechecks if not c.ok), None)
        if bad is not None:
            return False, text + f"; first limit refusal not re-checked clean: {bad.line()}"
    missing = wanted - {h.hand_id for h in run.hands}
    if missing:
        return False, text + f"; {len(missing)} hands missing from the log"
    found = run.first
    if found is not None:
        hand, finding = found
        return False, text + f"; first mismatch: hand {hand.hand_id} {finding.line()}"
    bad_match = next((m for m in run.matches if not m.ok), None)
    if bad_match is not None:
        return False, text + f"; first match mismatch: {bad_match.line()}"
    if proven < len(run.hands):
        unproven = next(h for h in run.hands if h.notes)
        return False, text + f"; not all proven, e.g. hand {unproven.hand_id}: {unproven.notes[0]}"
    return True, text


def _count_match_money(report: DemoReport, matches: Sequence[MatchReplay]) -> None:
    """Record in ``report.game_money`` (by match id) the replayed matches' money the watches did
    not count, and add its commission to the report's, once per match: each game's settlement
    of a format that settles each game (``GameEnded``), and the match-end settlement
    (``MatchEnded``, game 0) of a match no watch recorded (``report.matches``). Every match of a
    table counts: after a match ends, the next starts once the start delay has passed with every
    seat taken (docs/rules/formats.md#table), so one can begin before the bots' leaves reach the
    table; their leaves end it (the last seat left wins a pool; a game of it may have settled),
    and its money is in the house account too."""
    watched = {m.view.match_id for m in report.matches}
    for match in matches:
        if match.match_id in report.game_money:
            continue
        money = [
            GameMoney(
                g.game_no,
                g.winner,
                g.settlement.pool_hundredths,
                g.settlement.commission_hundredths,
                tuple((x.seat, x.amount_hundredths) for x in g.settlement.lines),
            )
            for g in match.games
        ]
        ended = match.settlement
        if ended is not None and match.match_id not in watched:
            money.append(
                GameMoney(
                    0,
                    ended.winners[0] if ended.winners else -1,
                    ended.pool_hundredths,
                    ended.commission_hundredths,
                    tuple((x.seat, x.amount_hundredths) for x in ended.lines),
                )
            )
        if not money:
            continue
        report.game_money[match.match_id] = money
        if match.match_id not in watched:
            report.unwatched[match.match_id] = match.table_id
        report.commission_hundredths += sum(g.commission_hundredths for g in money)


def replay_verdict(report: DemoReport, check: ReplayCheck | None = None) -> tuple[bool, str]:
    """The replay verdict of the report's hands: ``(ok, summary)`` with the time the replay step
    took. ``check`` defaults to :func:`verify_demo`."""
    began = time.monotonic()
    ok, text = (check or verify_demo)(report)
    return ok, f"{text} (replay step {time.monotonic() - began:.1f} s)"


def write_demo_proofs(report: DemoReport, directory: Path) -> str:
    """The demo's last step: one bundle per ended hand of ``report`` into ``directory``, read
    from Kafka. Returns the line to print (how many, where, how to open the page)."""
    endpoints = report.endpoints
    if endpoints is None or not endpoints.kafka_bootstrap_servers:
        return "proofs: no event log to build them from"
    try:
        envelopes = _table_events(report)
    except SourceError as error:
        return f"proofs: {error}"
    written = write_proofs(envelopes, [h.hand_id for h in report.hands], directory)
    return (
        f"proofs: {written} of {len(report.ended)} ended hands written to {directory}/; "
        f"to check one, {OPEN_HINT}"
    )
