"""The exact solver agrees with the brute-force oracle (``rules_oracle``) on points and validity.

The oracle imports nothing from the solver or the meld code; it shares only the card types.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rules_hands import dense_hands, shoe_hands
from rules_oracle import oracle_group_kind, oracle_score

from rummy_rules.cards import Card, Rank
from rummy_rules.indian.arrangement import best_arrangement, valid_discards
from rummy_rules.melds import DEFAULT_MELD_OPTIONS, MeldKind, MeldOptions, classify_group
from rummy_rules.wild import card_points
from rummy_testing.profiles import examples

#: slow: long property runs under CI (about 100 s here); the dev profile runs a tenth of the
#: examples (rummy_testing.profiles, docs/testing.md#tests).
pytestmark = pytest.mark.slow
#: A hand drawn by rules_hands and its wild rank (None: printed jokers only).
HandAndWild = tuple[list[Card], Rank | None]

KIND_NAMES = {
    MeldKind.PURE_SEQUENCE: "pure",
    MeldKind.IMPURE_SEQUENCE: "impure",
    MeldKind.SET: "set",
}
OPTIONS = st.builds(
    MeldOptions,
    jokers_only_group_is_sequence=st.booleans(),
    strict_duplicate_faces=st.booleans(),
    ace_high=st.booleans(),
)


def _oracle_options(options: MeldOptions) -> dict[str, bool]:
    return {
        "jokers_only_is_sequence": options.jokers_only_group_is_sequence,
        "strict_duplicates": options.strict_duplicate_faces,
        "ace_high": options.ace_high,
    }


def _check(
    hand: list[Card], wild: Rank | None, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> None:
    arrangement = best_arrangement(hand, wild, options)
    assert (arrangement.points, arrangement.valid) == oracle_score(
        hand, wild, **_oracle_options(options)
    )
    # The arrangement itself is honest: each card once, real melds, deadwood worth the points.
    shown = [c for m in arrangement.melds for c in m.cards] + list(arrangement.deadwood)
    assert Counter(shown) == Counter(hand) and len(shown) == len(hand)
    for meld in arrangement.melds:
        assert (
            oracle_group_kind(meld.cards, wild, **_oracle_options(options)) == KIND_NAMES[meld.kind]
        )
    assert sum(card_points(c, wild) for c in arrangement.deadwood) == arrangement.points


@settings(max_examples=examples(ci=2000, dev=200))
@given(shoe_hands())
def test_solver_matches_the_oracle_on_hands_drawn_from_the_shoe(hand_and_wild: HandAndWild) -> None:
    _check(*hand_and_wild)


@settings(max_examples=examples(ci=150, dev=30))
@given(dense_hands())
def test_solver_matches_the_oracle_on_meld_dense_hands(hand_and_wild: HandAndWild) -> None:
    _check(*hand_and_wild)


@settings(max_examples=examples(ci=150, dev=30))
@given(shoe_hands(), OPTIONS)
def test_solver_matches_the_oracle_under_every_meld_option(
    hand_and_wild: HandAndWild, options: MeldOptions
) -> None:
    _check(*hand_and_wild, options)


@settings(max_examples=examples(ci=1500, dev=150))
@given(st.integers(6, 9).flatmap(lambda size: dense_hands(size=size)), OPTIONS)
def test_solver_matches_the_oracle_on_small_meld_dense_hands(
    hand_and_wild: HandAndWild, options: MeldOptions
) -> None:
    # Few cards and many jokers: a spare wild card must find a group without repeating a face
    # (strict rule) and without spoiling the only pure sequence, or stay loose; a wild card in
    # its place may be the only natural card of a run (no jokers-only sequence).
    _check(*hand_and_wild, options)


@settings(max_examples=examples(ci=300, dev=60))
@given(dense_hands(size=5), OPTIONS)
def test_group_kinds_match_the_oracle_classifier(
    hand_and_wild: HandAndWild, options: MeldOptions
) -> None:
    hand, wild = hand_and_wild
    for size in range(1, len(hand) + 1):
        group = hand[:size]
        kind = classify_group(group, wild, options)
        expected = oracle_group_kind(group, wild, **_oracle_options(options))
        assert (None if kind is None else KIND_NAMES[kind]) == expected


@settings(max_examples=examples(ci=60, dev=10))
@given(dense_hands(size=14))
def test_valid_discards_are_exactly_the_cards_whose_discard_leaves_a_valid_show(
    hand_and_wild: HandAndWild,
) -> None:
    hand, wild = hand_and_wild
    expected = [
        c for i, c in enumerate(hand) if best_arrangement(hand[:i] + hand[i + 1 :], wild).valid
    ]
    assert list(valid_discards(hand, wild)) == expected


@settings(max_examples=examples(ci=3, dev=1))
@given(dense_hands(size=14))
def test_valid_discards_match_the_oracle(hand_and_wild: HandAndWild) -> None:
    hand, wild = hand_and_wild
    expected = [c for i, c in enumerate(hand) if oracle_score(hand[:i] + hand[i + 1 :], wild)[1]]
    assert list(valid_discards(hand, wild)) == expected
