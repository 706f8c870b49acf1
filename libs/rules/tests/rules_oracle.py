"""A brute-force oracle for hand points and validity, written plainly and apart from the solver.

It imports nothing from ``rummy_rules`` but the card types (for parsing and fields). It checks one
group by trying every role of every wild-rank card (in its natural place or standing in) against
every window of positions; it finds every group of a hand by growing subsets of the physical cards;
and it scores every packing of the hand into groups and loose cards by the three tiers of
``docs/rules/declaration.md#points-of-a-hand``.
Slow on purpose: each step should be obviously right.
"""

from __future__ import annotations

from functools import cache
from itertools import product

from rummy_rules.cards import Card, Rank

PURE, IMPURE, SET = "pure", "impure", "set"


def oracle_points(card: Card, wild: Rank | None) -> int:
    """Seed table: jokers and the wild rank 0; A, K, Q, J, 10 are 10; 2..9 face value."""
    if card.rank is None or card.rank == wild:
        return 0
    if card.rank == Rank.ACE or int(card.rank) >= 10:
        return 10
    return int(card.rank)


def oracle_group_kind(
    cards: list[Card] | tuple[Card, ...],
    wild: Rank | None,
    jokers_only_is_sequence: bool = True,
    strict_duplicates: bool = True,
    ace_high: bool = True,
) -> str | None:
    """'pure', 'impure', 'set' or None for one group, by trying every role and every window."""
    n = len(cards)
    if n < 3:
        return None
    faces = [(c.rank, c.suit) for c in cards if c.rank is not None]
    if strict_duplicates and len(set(faces)) != len(faces):
        return None  # the same face twice, whatever role each copy plays
    wild_positions = [i for i, c in enumerate(cards) if c.rank is not None and c.rank == wild]
    kinds: set[str] = set()
    for roles in product((True, False), repeat=len(wild_positions)):
        natural_wild = {i for i, keep in zip(wild_positions, roles, strict=True) if keep}
        naturals = [
            c
            for i, c in enumerate(cards)
            if c.rank is not None and (c.rank != wild or i in natural_wild)
        ]
        standins = n - len(naturals)
        if not naturals:
            if jokers_only_is_sequence and n <= 13:
                kinds.add(IMPURE)
            continue
        # A sequence: one suit, a window of n consecutive positions in 1..14 (ace = 1 or 14; 1..13
        # when the ace may not run high) that does not hold both 1 and 14, every natural card on
        # its own distinct position.
        top = 14 if ace_high else 13
        if len({c.suit for c in naturals}) == 1 and n <= 13:
            for start in range(1, top - n + 2):
                window = range(start, start + n)
                spots = []
                for c in naturals:
                    rank = c.rank
                    assert rank is not None  # a natural card has a rank
                    places = [
                        p
                        for p in window
                        if p == int(rank) or (ace_high and rank == Rank.ACE and p == 14)
                    ]
                    if not places:
                        break
                    spots.append(places[0])
                else:
                    if len(set(spots)) == len(spots):
                        kinds.add(PURE if standins == 0 else IMPURE)
        # A set: 3 or 4 cards, the natural ones of one rank and distinct suits.
        same_rank = len({c.rank for c in naturals}) == 1
        distinct_suits = len({c.suit for c in naturals}) == len(naturals)
        if 3 <= n <= 4 and same_rank and distinct_suits:
            kinds.add(SET)
    for kind in (PURE, IMPURE, SET):
        if kind in kinds:
            return kind
    return None


def oracle_groups(hand: list[Card], wild: Rank | None, **options: bool) -> list[tuple[int, str]]:
    """Every (bitmask of hand indices, kind) that forms a group.

    Subsets are grown index by index and a branch is cut only when no superset can be a group:
    its non-wild cards repeat a face or share neither one suit nor one rank, its cards repeat a face
    under the strict rule, or it is longer than 13.
    """
    strict = options.get("strict_duplicates", True)
    out: list[tuple[int, str]] = []

    def dead(chosen: list[int]) -> bool:
        if len(chosen) > 13:
            return True
        plain = [hand[i] for i in chosen if hand[i].rank is not None and hand[i].rank != wild]
        plain_faces = [(c.rank, c.suit) for c in plain]
        if len(set(plain_faces)) != len(plain_faces):
            return True
        if len({c.suit for c in plain}) > 1 and len({c.rank for c in plain}) > 1:
            return True
        if strict:
            faces = [(hand[i].rank, hand[i].suit) for i in chosen if hand[i].rank is not None]
            if len(set(faces)) != len(faces):
                return True
        return False

    def grow(chosen: list[int], nxt: int) -> None:
        if len(chosen) >= 3:
            kind = oracle_group_kind([hand[i] for i in chosen], wild, **options)
            if kind is not None:
                out.append((sum(1 << i for i in chosen), kind))
        for j in range(nxt, len(hand)):
            chosen.append(j)
            if not dead(chosen):
                grow(chosen, j + 1)
            chosen.pop()

    grow([], 0)
    return out


def oracle_score(hand: list[Card], wild: Rank | None, **options: bool) -> tuple[int, bool]:
    """(points, valid) of a hand: the least points over every packing, and whether a full packing
    with two sequences, one of them pure, exists."""
    groups = oracle_groups(hand, wild, **options)
    value = [oracle_points(c, wild) for c in hand]
    total = sum(value)

    @cache
    def packings(mask: int) -> dict[tuple[bool, int, bool], int]:
        """Cards in mask: (has pure, sequences capped at 2, all grouped) -> least loose points."""
        if mask == 0:
            return {(False, 0, True): 0}
        first = (mask & -mask).bit_length() - 1
        results: dict[tuple[bool, int, bool], int] = {}

        def keep(key: tuple[bool, int, bool], pts: int) -> None:
            if key not in results or pts < results[key]:
                results[key] = pts

        for (pure, seqs, _full), pts in packings(mask & ~(1 << first)).items():
            keep((pure, seqs, False), pts + value[first])
        for gmask, kind in groups:
            if gmask & (1 << first) and gmask & mask == gmask:
                for (pure, seqs, full), pts in packings(mask & ~gmask).items():
                    new_seqs = min(2, seqs + (kind in (PURE, IMPURE)))
                    keep((pure or kind == PURE, new_seqs, full), pts)
        return results

    outcomes = packings((1 << len(hand)) - 1)
    best = total  # tier 3: every card counts
    for gmask, kind in groups:  # tier 2: one pure sequence comes off
        if kind == PURE:
            best = min(best, total - sum(value[i] for i in range(len(hand)) if gmask >> i & 1))
    valid = False
    for (pure, seqs, full), pts in outcomes.items():  # tier 1: loose cards only
        if pure and seqs == 2:
            best = min(best, pts)
            valid = valid or full
    return best, valid
