"""Proof bundles of Rummy 500 rounds played in-process, for the verifier page's tests.

A round is played through the rules library as a host plays it (the variant found by name in the
registry, ``decide`` and ``apply``, ``legal_commands`` for the moves, the variant's own bot
strategy choosing), dealt by the shuffle as the variant's deal layout asks, and assembled by the
table service's own bundle code (``rummy_game.proof.bundle``). ``sleeper``: a seat whose every
turn times out (drawn and discarded for it)."""

from __future__ import annotations

import hashlib
from typing import Any

from dealt_in_process import start_and_deal

from rummy_game import proof
from rummy_rules import commands as cmd
from rummy_rules import registry
from rummy_rules.bot import Situation
from rummy_rules.rummy500.rules import RUMMY500_VARIANT, rummy500_rule_set

Bundle = dict[str, Any]
T0 = 1_800_000_000_000


def rummy500_round(name: str, seats: int = 3, *, sleeper: int | None = None) -> tuple[Bundle, Any]:
    """The bundle of one round at ``seats`` seats dealt from the server seed SHA-256(``name``)
    (and the variant's final state)."""
    variant = registry.lookup(RUMMY500_VARIANT)
    rules = rummy500_rule_set(seats)
    server_seed = hashlib.sha256(name.encode()).digest()
    hand_id = f"r500-{name}"
    numbers, dealer = tuple(range(seats)), seats - 1
    seeds = {s: hashlib.sha256(f"c{s}{name}".encode()).digest()[:8] for s in numbers}
    state = variant.initial_state()
    events: list[tuple[int, Any]] = []
    clock = [T0]

    def run(command: Any) -> None:
        nonlocal state
        for event in variant.decide(state, command):
            state = variant.apply(state, event)
            events.append((len(events) + 1, event))

    def at() -> int:
        clock[0] += 1
        return clock[0]

    start_and_deal(
        variant,
        rules,
        run,
        at,
        hand_id=hand_id,
        seats=numbers,
        dealer=dealer,
        seeds=seeds,
        server_seed=server_seed,
        account_prefix="acct-500",
        stake_hundredths=0,
    )
    bot = variant.bot
    assert bot is not None
    while not variant.is_over(state):
        play = state.play
        seat = play.turn_seat
        if seat == sleeper:
            run(cmd.TurnTimeout(turn_no=play.turn_no, at_ms=at()))
            continue
        situation = Situation(
            seat=seat,
            cards=play.hand_of(seat),
            discard_top=play.pile[-1] if play.pile else None,
            has_drawn=play.phase.value == "play",
            discard_pile=play.pile,
        )
        chosen = bot.choose(situation, variant.legal_commands(state, seat))
        run(chosen.__class__(**{**chosen.__dict__, "at_ms": at()}))
    bundle = proof.bundle(
        "table-500",
        hand_id,
        variant=variant,
        shuffle_version="bb-shuffle-v1",
        rules_version=f"{rules.name}/{rules.version}",
        server_seed=server_seed,
        events=events,
    )
    return bundle, state
