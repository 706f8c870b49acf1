"""The gin solver agrees with the brute-force oracle (``gin_oracle``) on random and meld-dense
hands: deadwood of ten and eleven cards, knock legality, lay-offs and hand scores
(docs/rules/gin.md). The oracle imports nothing from ``rummy_rules``."""

from __future__ import annotations

from collections import Counter

import gin_oracle as oracle
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rummy_rules.cards import RANKS, SUITS, Card, parse_cards
from rummy_rules.gin.arrangement import (
    best_arrangement,
    best_arrangements,
    can_knock,
    classify_meld,
    evaluate_eleven,
)
from rummy_rules.gin.layoffs import best_layoffs, knocker_arrangement
from rummy_rules.gin.scoring import HandRules, IllegalKnock, score_knock
from rummy_testing.profiles import examples

#: slow: the lay-off and score oracles search every subset (about a minute under CI's counts);
#: the dev profile runs a fraction (rummy_testing.profiles, docs/testing.md#tests).
pytestmark = pytest.mark.slow

#: An arrangement as (its sets, the cards its runs cover).
Normal = tuple[frozenset[frozenset[oracle.OCard]], frozenset[oracle.OCard]]
#: The rules case GS08: the defender breaks its sevens to lay off on two runs and undercuts.
BROKEN_SEVENS = (
    list(parse_cards("4H 5H 6H 8D 9D 10D QS QC QH 10C")),
    list(parse_cards("3S 3C 3D 3H 7H 7D 7C 8H 6D AC")),
)
DECK: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in RANKS)


def o(cards: list[Card] | tuple[Card, ...]) -> list[oracle.OCard]:
    """Cards as the oracle's (rank, suit letter) pairs."""
    return [(int(c.rank), c.suit.value) for c in cards if c.rank is not None and c.suit is not None]


@st.composite
def dense_cards(draw: st.DrawFn, n: int, taken: frozenset[Card] = frozenset()) -> list[Card]:
    """``n`` distinct cards (none of ``taken``) built mostly from runs and sets, with some
    random cards: the hands where arrangements compete."""
    chosen: list[Card] = []
    for _ in range(12):
        if len(chosen) >= n:
            break
        kind = draw(st.sampled_from(["run", "run", "set", "card"]))
        if kind == "run":
            suit = draw(st.sampled_from(SUITS))
            lo = draw(st.integers(0, 10))
            length = draw(st.integers(3, 6))
            group = [Card(RANKS[r], suit) for r in range(lo, min(lo + length, 13))]
        elif kind == "set":
            rank = draw(st.sampled_from(RANKS))
            suits = draw(st.permutations(SUITS))[: draw(st.integers(3, 4))]
            group = [Card(rank, s) for s in suits]
        else:
            group = [draw(st.sampled_from(DECK))]
        chosen += [c for c in group if c not in chosen and c not in taken]
    rest = [c for c in DECK if c not in chosen and c not in taken]
    chosen += draw(st.permutations(rest))[: max(0, n - len(chosen))]
    return chosen[:n]


def random_cards(n: int) -> st.SearchStrategy[list[Card]]:
    return st.permutations(DECK).map(lambda deck: list(deck[:n]))


def hands(n: int) -> st.SearchStrategy[list[Card]]:
    return st.one_of(random_cards(n), dense_cards(n))


@st.composite
def two_hands(draw: st.DrawFn) -> tuple[list[Card], list[Card]]:
    """A knocker's ten and a defender's ten: from one meld-dense pool dealt between them (melds
    split across the hands make lay-offs), or each dense on its own, or random."""
    how = draw(st.sampled_from(["pool", "each", "random"]))
    if how == "pool":
        pool = draw(st.permutations(draw(dense_cards(20))))
        return list(pool[:10]), list(pool[10:])
    if how == "each":
        knocker = draw(dense_cards(10))
        return knocker, draw(dense_cards(10, frozenset(knocker)))
    twenty = draw(random_cards(20))
    return twenty[:10], twenty[10:]


@settings(max_examples=examples(ci=1500, dev=150))
@given(hands(10))
def test_ten_card_deadwood_is_the_oracles_and_the_arrangement_is_honest(hand: list[Card]) -> None:
    arrangement = best_arrangement(hand)
    assert arrangement.deadwood == oracle.deadwood(o(hand))
    shown = [c for m in arrangement.melds for c in m.cards] + list(arrangement.loose)
    assert Counter(shown) == Counter(hand) and len(shown) == 10
    assert all(oracle.is_meld(o(m.cards)) for m in arrangement.melds)
    assert all(classify_meld(m.cards) is m.shape for m in arrangement.melds)
    assert sum(oracle.value(c) for c in o(arrangement.loose)) == arrangement.deadwood


@settings(max_examples=examples(ci=300, dev=40))
@given(hands(10))
def test_every_best_arrangement_is_listed_once_up_to_how_long_runs_are_cut(
    hand: list[Card],
) -> None:
    # The oracle may cut a run of six into two of three; the solver shows it whole. So both are
    # compared as (their sets, the cards their runs cover).
    def normal(melds: list[frozenset[oracle.OCard]]) -> Normal:
        sets = frozenset(m for m in melds if len({r for r, _ in m}) == 1)
        runs = frozenset(c for m in melds if len({r for r, _ in m}) > 1 for c in m)
        return sets, runs

    solver = [normal([frozenset(o(m.cards)) for m in a.melds]) for a in best_arrangements(hand)]
    assert len(solver) == len(set(solver))
    assert set(solver) == {normal(p) for p in oracle.best_partitions(o(hand))}


@settings(max_examples=examples(ci=600, dev=60))
@given(hands(11), st.integers(0, 12))
def test_eleven_cards_match_the_oracle_over_every_discard(hand: list[Card], limit: int) -> None:
    value = evaluate_eleven(hand)
    best, discards, big_gin = oracle.eleven(o(hand))
    assert (value.best_after_discard, value.big_gin) == (best, big_gin)
    assert sorted(o(value.discards)) == discards
    assert value.knock_legal(limit) == can_knock(hand, limit) == (best <= limit)


@settings(max_examples=examples(ci=300, dev=30))
@given(two_hands())
@example(BROKEN_SEVENS)
def test_the_defenders_lay_offs_match_the_oracle(pair: tuple[list[Card], list[Card]]) -> None:
    knocker, defender = pair
    for arrangement in best_arrangements(knocker):
        result = best_layoffs(defender, arrangement.melds)
        melds = [frozenset(o(m.cards)) for m in arrangement.melds]
        assert result.deadwood == oracle.after_layoffs(o(defender), melds)
        laid = [lay.card for lay in result.layoffs]
        assert oracle.can_lay_off(o(laid), melds)
        assert result.kept.deadwood == oracle.deadwood(o([c for c in defender if c not in laid]))


@settings(max_examples=examples(ci=300, dev=30))
@given(two_hands(), st.integers(0, 12), st.booleans())
@example(BROKEN_SEVENS, 10, False)
def test_hand_scores_match_the_oracle(
    pair: tuple[list[Card], list[Card]], limit: int, doubled: bool
) -> None:
    knocker, defender = pair
    expected = oracle.score(o(knocker), o(defender), limit, doubled)
    try:
        score = score_knock(knocker, defender, HandRules(knock_limit=limit, doubled=doubled))
    except IllegalKnock:
        assert expected is None
        return
    assert (score.winner.value, score.points) == expected
    if score.knocker_deadwood:
        choice = knocker_arrangement(knocker, defender)
        assert choice.knocker == score.knocker


@settings(max_examples=examples(ci=200, dev=20))
@given(two_hands(), st.integers(0, 12), st.data())
def test_hand_scores_with_the_knockers_named_melds_match_the_oracle(
    pair: tuple[list[Card], list[Card]], limit: int, data: st.DataObject
) -> None:
    knocker, defender = pair
    partitions = [melds for melds, _ in oracle.arrangements(o(knocker))]
    named = data.draw(st.sampled_from(partitions))
    expected = oracle.score(o(knocker), o(defender), limit, False, named)
    by_face = {(int(c.rank), c.suit.value): c for c in knocker if c.rank and c.suit}
    melds = [[by_face[x] for x in m] for m in named]
    try:
        score = score_knock(knocker, defender, HandRules(knock_limit=limit), named_melds=melds)
    except IllegalKnock:
        assert expected is None
        return
    assert (score.winner.value, score.points) == expected
