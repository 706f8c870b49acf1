"""The Rummy 500 bot strategy (``RUMMY500.bot``): it only plays listed moves, finishes rounds,
digs when the deepest card's meld is worth the cards above it, lays off and melds before it
discards, keeps pairs, and outscores random play (docs/rules/rummy500.md)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from rummy500_rounds import Round, cards, table

from rummy_rules.bot import Situation
from rummy_rules.commands import Command, Discard, DrawFromStock
from rummy_rules.events import HandEnded
from rummy_rules.rummy500 import play
from rummy_rules.rummy500.bot import RUMMY500_BOT
from rummy_rules.rummy500.melds import TableMeld
from rummy_rules.rummy500.play import Rummy500LayOff, Rummy500Meld, Rummy500TakeFromPile
from rummy_rules.rummy500.rules import rummy500_rule_set
from rummy_rules.rummy500.variant import RUMMY500


def situation(state: play.Rummy500Play, seat: int = 0) -> Situation:
    return Situation(
        seat=seat,
        cards=state.hand_of(seat),
        discard_top=state.pile[-1] if state.pile else None,
        has_drawn=state.phase is play.Phase.PLAY,
        discard_pile=state.pile,
    )


def choose(state: play.Rummy500Play) -> Command:
    return RUMMY500_BOT.choose(situation(state), play.legal_commands(state, 0))


def test_it_digs_when_the_deepest_cards_meld_is_worth_the_cards_above() -> None:
    s = table(["KH KS 4C", "2C 3D"], pile="9D KD 5S", stock="2H")
    chosen = choose(s)
    assert isinstance(chosen, Rummy500TakeFromPile) and chosen.depth == 2


def test_it_draws_from_the_stock_when_a_dig_costs_more_than_it_melds() -> None:
    s = table(["3H 3S 9C", "2C 3D"], pile="3D KD QS JC AH", stock="2H")
    assert isinstance(choose(s), DrawFromStock)


def test_it_lays_off_then_melds_before_it_discards() -> None:
    s = replace(
        table(["JH 7C 8C 9C 2D", "2C 3D"]),
        phase=play.Phase.PLAY,
        melds=(TableMeld(1, 1, "run", cards("8H 9H 10H")),),
    )
    assert isinstance(choose(s), Rummy500LayOff)
    s = replace(s, melds=())
    chosen = choose(s)
    assert isinstance(chosen, Rummy500Meld) and chosen.groups == (cards("7C 8C 9C"),)


def test_it_discards_the_highest_loose_card_and_keeps_pairs() -> None:
    s = replace(table(["KH KS 4C 9D", "2C 3D"], pile="2S"), phase=play.Phase.PLAY)
    chosen = choose(s)
    assert isinstance(chosen, Discard) and chosen.card == cards("9D")[0]


def test_it_does_not_feed_the_pile_top_a_partner_when_it_can_help_it() -> None:
    s = replace(table(["QD 9C 2S", "2C 3D"], pile="QS KD"), phase=play.Phase.PLAY)
    chosen = choose(s)  # QD (10) next to KD would start a run to dig for: 9C goes instead
    assert isinstance(chosen, Discard) and chosen.card == cards("9C")[0]


def _round_with(seats: int, seed: int, bots: set[int]) -> HandEnded:
    r = Round(rummy500_rule_set(seats), seats=seats, dealer=seed % seats)
    r.deal_seeded(seed.to_bytes(32, "big"))
    rng = random.Random(seed)
    while not RUMMY500.is_over(r.state):
        seat = r.play.turn_seat
        assert seat is not None
        legal = RUMMY500.legal_commands(r.state, seat)
        if seat in bots:
            move = RUMMY500_BOT.choose(situation(r.play, seat), legal)
            assert move in legal
        else:
            move = rng.choice(legal)
        r.run(move)
    ended = r.state.result
    assert isinstance(ended, HandEnded)
    return ended


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_bots_finish_whole_rounds_with_listed_moves(seats: int) -> None:
    for seed in range(6):
        ended = _round_with(seats, seed, set(range(seats)))
        assert sorted(r.seat for r in ended.results) == list(range(seats))  # every seat scored


def test_the_bot_outscores_random_play() -> None:
    bot, rnd = 0, 0
    for seed in range(30):
        ended = _round_with(2, seed, {seed % 2})
        for r in ended.results:
            if r.seat == seed % 2:
                bot += r.score
            else:
                rnd += r.score
    assert bot > rnd
