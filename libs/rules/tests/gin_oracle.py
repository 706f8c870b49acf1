"""A brute-force gin oracle that shares no code with ``rummy_rules.gin`` (docs/rules/gin.md).

Cards are plain ``(rank, suit)`` pairs, rank 1 (ace) to 13 (king), suit ``"C" "D" "H" "S"``. Every
subset of three or more cards is judged a meld or not by the rulebook's words; every partition of
the hand into disjoint melds and loose cards is searched; eleven cards try every discard; the
defender's lay-offs try every subset of its cards and every way of giving them to the knocker's
melds (the extended meld must still be a meld). Slow on purpose, and obviously right.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations, product

OCard = tuple[int, str]
Group = frozenset[OCard]


def value(card: OCard) -> int:
    """Ace 1, jack/queen/king 10, others face value."""
    return min(card[0], 10)


def is_meld(cards: Iterable[OCard]) -> bool:
    """Three or four of one rank (distinct suits), or three or more of one suit on consecutive
    ranks, the ace below the two only."""
    group = list(cards)
    if len(group) < 3 or len(set(group)) != len(group):
        return False
    ranks = sorted(r for r, _ in group)
    suits = {s for _, s in group}
    if len(set(ranks)) == 1:
        return len(group) <= 4
    if len(suits) != 1:
        return False
    return all(b == a + 1 for a, b in zip(ranks, ranks[1:], strict=False))


def melds_in(hand: Sequence[OCard]) -> list[Group]:
    """Every subset of the hand that is a meld."""
    return [
        frozenset(group)
        for size in range(3, len(hand) + 1)
        for group in combinations(hand, size)
        if is_meld(group)
    ]


def arrangements(hand: Sequence[OCard]) -> Iterator[tuple[list[Group], list[OCard]]]:
    """Every partition of the hand into disjoint melds and loose cards."""
    melds = melds_in(hand)

    def walk(left: list[OCard], chosen: list[Group]) -> Iterator[tuple[list[Group], list[OCard]]]:
        if not left:
            yield list(chosen), []
            return
        first, rest = left[0], left[1:]
        for partial, loose in walk(rest, chosen):
            yield partial, [first, *loose]
        for meld in melds:
            if first in meld and meld <= set(left):
                yield from walk([c for c in left if c not in meld], [*chosen, meld])

    yield from walk(list(hand), [])


def deadwood(hand: Sequence[OCard]) -> int:
    """The least deadwood over every partition."""
    return min(sum(value(c) for c in loose) for _, loose in arrangements(hand))


def best_partitions(hand: Sequence[OCard]) -> list[list[Group]]:
    """The melds of every partition that reaches the least deadwood."""
    found = [(sum(value(c) for c in loose), melds) for melds, loose in arrangements(hand)]
    least = min(d for d, _ in found)
    return [melds for d, melds in found if d == least]


def eleven(hand: Sequence[OCard]) -> tuple[int, list[OCard], bool]:
    """(least deadwood after a discard, the discards reaching it, all eleven melded)."""
    after = {card: deadwood([c for c in hand if c != card]) for card in hand}
    best = min(after.values())
    return best, sorted(c for c, d in after.items() if d == best), deadwood(hand) == 0


def can_lay_off(cards: Sequence[OCard], melds: Sequence[Group]) -> bool:
    """Whether the cards can all be added to the melds, each meld still a meld."""
    options = [[i for i, m in enumerate(melds) if _related(c, m)] for c in cards]
    for choice in product(*options):
        grown = [set(m) for m in melds]
        for card, i in zip(cards, choice, strict=True):
            grown[i].add(card)
        if all(is_meld(g) for g in grown):
            return True
    return False


def after_layoffs(defender: Sequence[OCard], melds: Sequence[Group]) -> int:
    """The defender's least deadwood over every allowed set of lay-offs onto the melds."""
    fits = [c for c in defender if any(_related(c, m) for m in melds)]
    best = deadwood(defender)
    for size in range(1, len(fits) + 1):
        for laid in combinations(fits, size):
            if can_lay_off(laid, melds):
                best = min(best, deadwood([c for c in defender if c not in laid]))
    return best


def _related(card: OCard, meld: Group) -> bool:
    """The card's rank is the set's, or its suit the run's (a card further out may follow others
    laid off first)."""
    return all(r == card[0] for r, _ in meld) or all(s == card[1] for _, s in meld)


def score(
    knocker: Sequence[OCard],
    defender: Sequence[OCard],
    limit: int,
    doubled: bool,
    named: Sequence[Group] | None = None,
) -> tuple[str, int] | None:
    """(winner, points) of a knock by ``knocker`` (ten cards), None when it is illegal. With
    ``named`` melds the knocker's deadwood is what they leave and the defender lays off onto
    them; without, the knocker's arrangement is the best one that leaves the defender most."""
    factor = 2 if doubled else 1
    if named is None:
        kd = deadwood(knocker)
    else:
        kd = sum(value(c) for c in knocker if not any(c in m for m in named))
    if kd == 0:
        return "knocker", factor * (deadwood(defender) + 25)
    if kd > limit:
        return None
    if named is None:
        dd = max(after_layoffs(defender, melds) for melds in best_partitions(knocker))
    else:
        dd = after_layoffs(defender, named)
    if kd < dd:
        return "knocker", factor * (dd - kd)
    return "defender", factor * (kd - dd + 25)
