"""Proof bundles of gin hands played in-process, for the verifier page's tests.

A gin hand is played through the rules library as a host plays it (the variant found by name in
the registry, ``decide`` and ``apply``, ``legal_commands`` for the moves), dealt by the shuffle as
the variant's deal layout asks, and assembled by the table service's own bundle code
(``rummy_game.proof.bundle``). The moves are a fixed, simple policy: take the upcard or a pile
card only when it lowers the deadwood, knock (or go gin) as soon as it is legal, else discard the
card that leaves the least deadwood. With ``name_melds`` a knocker names its melds: among its
best arrangements the one that leaves the defender the least deadwood after its lay-offs (the
server, arranging, shows the one that leaves the most).
"""

from __future__ import annotations

import hashlib
from typing import Any

from dealt_in_process import Bundle, InProcessHand

from rummy_rules import commands as cmd
from rummy_rules import registry
from rummy_rules.gin.arrangement import best_arrangement, best_arrangements
from rummy_rules.gin.hand import DeclareBigGin, DeclareGin, GinKnock, GinPassUpcard
from rummy_rules.gin.layoffs import best_layoffs
from rummy_rules.gin.rules import GIN_VARIANT, gin_rule_set


def _deadwood(cards: tuple[Any, ...]) -> int:
    return best_arrangement(cards).deadwood


def _after_best_discard(cards: tuple[Any, ...]) -> int:
    return min(_deadwood(tuple(c for c in cards if c != d)) for d in cards)


def gin_hand(
    name: str,
    *,
    point_value_hundredths: int = 10,
    commission_bps: int = 500,
    knock: bool = True,
    sleeper: int | None = None,
    name_melds: bool = False,
) -> tuple[Bundle, Any]:
    """The bundle of one gin hand dealt from the server seed SHA-256(``name``) (and the variant's
    final state). ``knock`` False plays on to the wall (never knocks); ``sleeper`` a seat whose
    every turn times out (the clock's TurnTimeout), so it forfeits at the rule set's limit;
    ``name_melds``: a knocker names its melds (the module's text)."""
    variant = registry.lookup(GIN_VARIANT)
    rules = gin_rule_set(point_value_hundredths, commission_bps)
    seats, dealer = (0, 1), 1
    seeds = {0: hashlib.sha256(b"c0" + name.encode()).digest()[:8], 1: b"\x33" * 4}
    hand = InProcessHand(
        variant,
        rules,
        hand_id=f"gin-{name}",
        server_seed=hashlib.sha256(name.encode()).digest(),
        seats=seats,
        dealer=dealer,
        seeds=seeds,
        account_prefix="acct-gin",
        stake_hundredths=1000,
    )
    while not variant.is_over(hand.state):
        play = hand.state.play
        seat = play.turn_seat
        legal = variant.legal_commands(hand.state, seat)
        mine = play.hand_of(seat)
        top = play.pile[-1] if play.pile else None
        helps = top is not None and _after_best_discard((*mine, top)) < _deadwood(mine)
        kinds = {type(c): c for c in legal}
        if seat == sleeper:
            hand.run(cmd.TurnTimeout(turn_no=play.turn_no, at_ms=hand.at()))
            continue
        if GinPassUpcard in kinds:
            chosen = kinds[cmd.DrawFromDiscardPile] if helps else kinds[GinPassUpcard]
        elif cmd.DrawFromStock in kinds:
            take = cmd.DrawFromDiscardPile in kinds and helps
            chosen = kinds[cmd.DrawFromDiscardPile] if take else kinds[cmd.DrawFromStock]
        elif knock and (DeclareBigGin in kinds):
            chosen = kinds[DeclareBigGin]
        elif knock and any(isinstance(c, DeclareGin | GinKnock) for c in legal):
            gins = [c for c in legal if isinstance(c, DeclareGin)]
            chosen = gins[0] if gins else next(c for c in legal if isinstance(c, GinKnock))
            if name_melds and isinstance(chosen, GinKnock):
                ten = tuple(c for c in mine if c != chosen.face_down)
                other = play.hand_of(next(s for s in seats if s != seat))
                fewest = min(
                    best_arrangements(ten),
                    key=lambda a: best_layoffs(other, a.melds).deadwood,
                )
                melds = tuple(m.cards for m in fewest.melds)
                chosen = GinKnock(**{**chosen.__dict__, "melds": melds})
        else:
            discards = [c for c in legal if isinstance(c, cmd.Discard)]
            chosen = min(discards, key=lambda c: _deadwood(tuple(x for x in mine if x != c.card)))
        hand.play(chosen)
    return hand.bundle("table-gin"), hand.state
