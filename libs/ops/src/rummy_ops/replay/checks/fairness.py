"""The ``commitment``, ``deal`` and ``reshuffle`` checks: the revealed server seed against the
commitment recorded before the deal, and the deal and each reshuffle recomputed from the seeds
(``rummy_rules.shuffle``)."""

from __future__ import annotations

import hashlib

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy_game import stream_payloads
from rummy_ops.replay.checks.mismatch import show
from rummy_ops.replay.checks.record import (
    HandReplay,
    Recorded,
    finding,
    of_type,
    payloads_of,
)
from rummy_rules import events as ev
from rummy_rules.shuffle import Deal, ShuffleInputs, deal, reshuffle


def check_fairness(
    report: HandReplay, ctx: stream_payloads.HandContext, recorded: list[Recorded]
) -> None:
    committed = of_type(recorded, ev.SeedCommitted)
    dealt = of_type(recorded, ev.HandDealt)
    locked = of_type(recorded, ev.SeedsLocked)
    revealed = payloads_of(report, fairness_pb.SeedRevealed)
    if dealt and (
        not committed or committed[0].envelope.stream_version > dealt[0].envelope.stream_version
    ):
        report.findings.append(
            finding(
                dealt[0].envelope, "commitment", "dealt before any seed commitment was recorded"
            )
        )
        return
    if not committed:
        return
    if not revealed:
        report.notes.append("seed not revealed yet: commitment and deal not checked")
        return
    reveal = revealed[0]
    seed = bytes(reveal.payload.server_seed)  # type: ignore[attr-defined]
    commitment = committed[0].event.commitment  # type: ignore[attr-defined]
    if hashlib.sha256(seed).hexdigest() != commitment:
        report.findings.append(
            finding(
                reveal,
                "commitment",
                f"SHA-256 of the revealed seed is {hashlib.sha256(seed).hexdigest()[:16]}..., "
                f"the commitment recorded at v{committed[0].envelope.stream_version} is "
                f"{commitment[:16]}... (deal not recomputed from an unproven seed)",
            )
        )
        return
    report.checked.append("commitment")
    if not dealt or not locked:
        return
    seeds = {s.seat: bytes.fromhex(s.seed_hex) for s in locked[0].event.client_seeds}  # type: ignore[attr-defined]
    try:
        inputs = ShuffleInputs.of(seed, ctx.hand_id, seeds)
        layout = ctx.rule_set.layout
        expected = deal(inputs, ctx.shoe, seeds, ctx.dealer_seat, layout.hand_size, layout.shape)
    except ValueError as exc:
        report.findings.append(finding(dealt[0].envelope, "deal", f"cannot be recomputed: {exc}"))
        return
    got: ev.HandDealt = dealt[0].event  # type: ignore[assignment]
    problem = _deal_difference(got, expected)
    if problem:
        report.findings.append(finding(dealt[0].envelope, "deal", problem))
        return
    report.checked.append("deal")
    set_aside = {r.event.reshuffle_no: r.event.cards for r in of_type(recorded, ev.StockExhausted)}  # type: ignore[attr-defined]
    for item in of_type(recorded, ev.StockReshuffled):
        number = item.event.reshuffle_no  # type: ignore[attr-defined]
        cards = set_aside.get(number, ())
        try:
            want = reshuffle(inputs, ctx.shoe, cards, number)
        except ValueError as exc:
            report.findings.append(
                finding(item.envelope, "reshuffle", f"cannot be recomputed: {exc}")
            )
            return
        if want != item.event.stock:  # type: ignore[attr-defined]
            k = next(
                (k for k, (a, b) in enumerate(zip(item.event.stock, want, strict=False)) if a != b),  # type: ignore[attr-defined]
                min(len(want), len(item.event.stock)),  # type: ignore[attr-defined]
            )
            report.findings.append(
                finding(
                    item.envelope,
                    "reshuffle",
                    f"reshuffle {number} stock[{k}] differs from the reshuffle/{number} sub-stream",
                )
            )
            return


def _deal_difference(got: ev.HandDealt, expected: Deal) -> str:
    want_hands = {h.seat: h.cards for h in expected.hands}
    for hand in got.hands:
        want = want_hands.get(hand.seat)
        if want is None:
            return f"seat {hand.seat} is dealt a hand the recomputed deal does not give"
        if hand.cards != want:
            k = next(
                (k for k, (a, b) in enumerate(zip(hand.cards, want, strict=False)) if a != b),
                min(len(hand.cards), len(want)),
            )
            a = hand.cards[k].face if k < len(hand.cards) else "-"
            b = want[k].face if k < len(want) else "-"
            return f"seat {hand.seat} card {k + 1}: recorded {a}, recomputed {b}"
    if got.wild_cut != expected.wild_cut:
        return f"wild cut: recorded {show(got.wild_cut)}, recomputed {show(expected.wild_cut)}"
    if got.first_open != expected.first_open:
        recomputed = show(expected.first_open)
        return f"first open card: recorded {show(got.first_open)}, recomputed {recomputed}"
    if got.stock != expected.stock:
        return "the stock order differs from the recomputed deal"
    return ""
