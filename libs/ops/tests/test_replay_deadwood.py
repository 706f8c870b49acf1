"""``rummy replay``'s ``rules`` check of a HandEnded's deadwood points (what each seat's deadwood
is worth, by the hand's variant): a gin and a Rummy 500 hand recorded by today's table verify;
so do the same hands as a table wrote them before the variant counted them (Indian card values
for every variant: a gin ace 10, a Rummy 500 ace 10; ``rummy_game.upcast.hand_payload``); a value
no writer gave is caught at the HandEnded. The hands are dealt from a script, not the seeds,
so only the ``rules`` check is read here."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rummy.table.v1 import events_pb2 as pb
from rummy_ops.replay.checks.hand import replay_hand
from rummy_platform.envelope import Envelope
from rummy_testing.scripted_hands import Recorded, gin_knock, rummy500_round

#: Each hand, and its seats' deadwood points as the writer before counted them: the gin knocker's
#: AD 10 and the defender's AH, AS, KC, KD, QS, JH 10 and 9H (69); Rummy 500's seat 0 holding
#: AH AS KC QD 10 each, 5D 6H 2S (53).
HANDS = {"gin": (gin_knock, {0: 10, 1: 69}), "rummy500": (rummy500_round, {0: 53})}


def recorded_with(hand: Recorded, points: dict[int, int]) -> list[Envelope]:
    """The hand's envelopes, its HandEnded's seats' deadwood points replaced by ``points``."""
    out = []
    for envelope in hand.envelopes():
        if isinstance(envelope.payload, pb.HandEnded):
            ended = pb.HandEnded()
            ended.CopyFrom(envelope.payload)
            for r in ended.results:
                r.arrangement.deadwood_points = points.get(r.seat, r.arrangement.deadwood_points)
            envelope = replace(envelope, payload=ended)
        out.append(envelope)
    return out


def rules_findings(envelopes: list[Envelope]) -> tuple[list[str], list[str]]:
    """The ``rules`` check's findings of the hand (lines) and every check it passed."""
    report = replay_hand("table-scripted", "h-scripted", envelopes, None)
    return [f.line() for f in report.findings if f.check == "rules"], report.checked


@pytest.mark.parametrize("game", sorted(HANDS))
def test_a_hand_recorded_today_verifies(game: str) -> None:
    make, _ = HANDS[game]
    findings, checked = rules_findings(make().envelopes())
    assert findings == [] and "rules" in checked


@pytest.mark.parametrize("game", sorted(HANDS))
def test_a_hand_recorded_in_indian_values_before_verifies(game: str) -> None:
    make, before = HANDS[game]
    findings, checked = rules_findings(recorded_with(make(), before))
    assert findings == [] and "rules" in checked


@pytest.mark.parametrize("game", sorted(HANDS))
def test_a_deadwood_value_no_writer_gave_is_caught_at_hand_ended(game: str) -> None:
    make, before = HANDS[game]
    seat = max(before)
    findings, _ = rules_findings(recorded_with(make(), {seat: before[seat] + 1}))
    assert len(findings) == 1 and "HandEnded" in findings[0] and "deadwood_points" in findings[0]
