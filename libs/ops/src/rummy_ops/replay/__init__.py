"""``rummy replay`` and ``rummy export``: ops rebuild any hand from the table stream and check it.

- :mod:`.sources`: the events (Kafka, or an exported JSONL file) and which hands to replay;
- :mod:`.jsonl`: the export format;
- :mod:`.checks`: the replay of one hand and its checks (rules, commitment, deal, reshuffles,
  settlement, ledger);
- :mod:`.ledger`: the hand's journal rows in PostgreSQL;
- :mod:`.limits`: the seats a player's own limits held back, re-checked from the ledger's topic;
- :mod:`.render`: timeline and JSON;
- :mod:`.command`: the click commands.

The demo's replay step (``rummy_ops.demo.verify``) uses :func:`replay_events`; nothing here
knows the demo.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from rummy_ops.replay.checks import (
    DEFAULT_SETTLE_GRACE_S,
    Finding,
    HandReplay,
    LedgerFetch,
    replay_hand,
)
from rummy_ops.replay.checks.match import MatchReplay, matches_of, replay_match
from rummy_ops.replay.sources import Selection, select, streams
from rummy_platform.envelope import Envelope

__all__ = ["MatchReplay", "ReplayRun", "Selection", "replay_events"]


@dataclass
class ReplayRun:
    """The replay of the selected hands and matches: each hand's result, each match's (one
    verdict per match beside its hands'), how many events were replayed and how long the replay
    (decoding, fold and checks; not reading) took, in seconds."""

    hands: list[HandReplay] = field(default_factory=list)
    matches: list[MatchReplay] = field(default_factory=list)
    events: int = 0
    seconds: float = 0.0
    #: Events the read skipped because this build does not know their payload type (a newer
    #: writer's): type name -> how many (``rummy_platform.skips``).
    skipped_types: dict[str, int] = field(default_factory=dict)

    @property
    def unverifiable(self) -> list[HandReplay]:
        """The hands this build cannot verify (a variant or rules version it does not know)."""
        return [h for h in self.hands if h.unverifiable]

    @property
    def ok(self) -> bool:
        return all(h.ok for h in self.hands) and all(m.ok for m in self.matches)

    @property
    def first(self) -> tuple[HandReplay, Finding] | None:
        """The first mismatching hand (in replay order) and its first differing event."""
        for hand in self.hands:
            if hand.first is not None:
                return hand, hand.first
        return None

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0


def replay_events(
    envelopes: Iterable[Envelope],
    selection: Selection,
    ledger: LedgerFetch | None = None,
    settle_grace_s: float = DEFAULT_SETTLE_GRACE_S,
) -> ReplayRun:
    """Replay every selected hand of ``envelopes`` (any order; grouped by table and ordered by
    stream version here) and, unless one hand is selected, every match of the selected tables
    (:mod:`rummy_ops.replay.checks.match`). ``settle_grace_s``: seconds after a hand or match
    ended before a missing journal settlement is a failure. Raises SourceError if a named hand
    or table has no events."""
    run = ReplayRun()
    envelopes = list(envelopes)
    chosen = select(envelopes, selection)
    began = time.perf_counter()
    for table_id, hand_id, events in chosen:
        run.hands.append(
            replay_hand(table_id, hand_id, events, ledger, settle_grace_s=settle_grace_s)
        )
        run.events += len(events)
    if not selection.hand_id:
        by_id = {h.hand_id: h for h in run.hands}
        for table_id, stream in streams(envelopes).items():
            if selection.table_id and table_id != selection.table_id:
                continue
            for match_id, events in matches_of(stream).items():
                run.matches.append(
                    replay_match(
                        table_id, match_id, stream, by_id, ledger, settle_grace_s=settle_grace_s
                    )
                )
                run.events += len(events)
    run.seconds = time.perf_counter() - began
    return run
