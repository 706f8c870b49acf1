"""Proof bundles of Rummy 500 rounds played in-process, for the verifier page's tests.

A round is played through the rules library as a host plays it (the variant found by name in the
registry, ``decide`` and ``apply``, ``legal_commands`` for the moves, the variant's own bot
strategy choosing), dealt by the shuffle as the variant's deal layout asks, and assembled by the
table service's own bundle code (``rummy_game.proof.bundle``). ``sleeper``: a seat whose every
turn times out (drawn and discarded for it)."""

from __future__ import annotations

import hashlib
from typing import Any

from dealt_in_process import Bundle, InProcessHand

from rummy_rules import commands as cmd
from rummy_rules import registry
from rummy_rules.bot import Situation
from rummy_rules.rummy500.rules import RUMMY500_VARIANT, rummy500_rule_set


def rummy500_round(name: str, seats: int = 3, *, sleeper: int | None = None) -> tuple[Bundle, Any]:
    """The bundle of one round at ``seats`` seats dealt from the server seed SHA-256(``name``)
    (and the variant's final state)."""
    variant = registry.lookup(RUMMY500_VARIANT)
    rules = rummy500_rule_set(seats)
    numbers, dealer = tuple(range(seats)), seats - 1
    seeds = {s: hashlib.sha256(f"c{s}{name}".encode()).digest()[:8] for s in numbers}
    hand = InProcessHand(
        variant,
        rules,
        hand_id=f"r500-{name}",
        server_seed=hashlib.sha256(name.encode()).digest(),
        seats=numbers,
        dealer=dealer,
        seeds=seeds,
        account_prefix="acct-500",
        stake_hundredths=0,
    )
    bot = variant.bot
    assert bot is not None
    while not variant.is_over(hand.state):
        play = hand.state.play
        seat = play.turn_seat
        if seat == sleeper:
            hand.run(cmd.TurnTimeout(turn_no=play.turn_no, at_ms=hand.at()))
            continue
        situation = Situation(
            seat=seat,
            cards=play.hand_of(seat),
            discard_top=play.pile[-1] if play.pile else None,
            has_drawn=play.phase.value == "play",
            discard_pile=play.pile,
        )
        hand.play(bot.choose(situation, variant.legal_commands(hand.state, seat)))
    return hand.bundle("table-500"), hand.state
