"""The exact deadwood search on bitmasks of one 52-card deck (``docs/rules/gin.md#deadwood``).

A hand is an ``int`` with bit ``suit_position * 13 + rank - 1`` set for each card it holds (the
canonical order of ``docs/rules/gin.md#deck``: clubs, diamonds, hearts, spades, ace to king). The
search rests on two facts:

- Sets cross suits, runs do not. At most one set per rank (four suits), so a hand's possible set
  choices are few: for each rank held three or four times, no set, each set of three, or (held four
  times) the set of four. Ranks held fewer than three times take no choice at all.
- Once the sets are chosen, each suit's remaining cards are independent, and the best runs of a
  suit cover exactly its maximal blocks of three or more consecutive ranks (a block is one run;
  splitting it never covers more). So a suit's deadwood is a table lookup on its 13-bit mask.

The deadwood of a hand is the minimum over its set choices of the four suits' table values
(``docs/rules/gin.md#deadwood``). For eleven cards the minimum over every discard is the minimum,
over the set choices, of that sum less the highest deadwood card left (0 when nothing is left:
eleven melded cards hold a meld of four or more, whose end can go)
(``docs/rules/gin.md#eleven-cards``). Both are exact; no randomness, no state.
"""

from __future__ import annotations

from collections.abc import Iterator

SUIT_BITS = 13
SUIT_MASK = (1 << SUIT_BITS) - 1
FULL_DECK = (1 << 52) - 1
#: Value of the card of rank index r (0 = ace .. 12 = king): ace 1, face cards 10.
RANK_VALUES: tuple[int, ...] = tuple(min(r + 1, 10) for r in range(SUIT_BITS))


def _blocks(suit_mask: int) -> list[tuple[int, int]]:
    """Maximal runs of consecutive set bits, as (lowest rank index, highest rank index)."""
    out = []
    r = 0
    while r < SUIT_BITS:
        if suit_mask >> r & 1:
            lo = r
            while r + 1 < SUIT_BITS and suit_mask >> (r + 1) & 1:
                r += 1
            out.append((lo, r))
        r += 1
    return out


def _tables() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    loose_points, loose_max, loose_masks = [], [], []
    for m in range(1 << SUIT_BITS):
        loose = 0
        for lo, hi in _blocks(m):
            if hi - lo < 2:
                for r in range(lo, hi + 1):
                    loose |= 1 << r
        ranks = [r for r in range(SUIT_BITS) if loose >> r & 1]
        loose_points.append(sum(RANK_VALUES[r] for r in ranks))
        loose_max.append(max((RANK_VALUES[r] for r in ranks), default=0))
        loose_masks.append(loose)
    return tuple(loose_points), tuple(loose_max), tuple(loose_masks)


#: For a 13-bit suit mask: the points of its cards in no run, the highest of those values, and
#: those cards as a mask.
LOOSE_POINTS, LOOSE_MAX, LOOSE_MASK = _tables()
#: For a 13-bit suit mask: its runs (maximal blocks of three or more), as masks, lowest first.
RUN_MASKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(((1 << (hi - lo + 1)) - 1) << lo for lo, hi in _blocks(m) if hi - lo >= 2)
    for m in range(1 << SUIT_BITS)
)


def run_blocks(suit_mask: int) -> list[tuple[int, int]]:
    """The runs the best arrangement makes of one suit's cards: each maximal block of three or more
    consecutive ranks, as (lowest, highest) rank index (0 = ace), lowest first."""
    return [(lo, hi) for lo, hi in _blocks(suit_mask) if hi - lo >= 2]


def set_ranks(c: int, d: int, h: int, s: int) -> int:
    """The ranks (a 13-bit mask) held in at least three of the four suit masks."""
    return (c & d & (h | s)) | (h & s & (c | d))


def deadwood(hand: int) -> int:
    """The exact minimum deadwood (points) of the cards of ``hand`` (any number of cards)."""
    c = hand & SUIT_MASK
    d = (hand >> 13) & SUIT_MASK
    h = (hand >> 26) & SUIT_MASK
    s = hand >> 39
    t = (c & d & (h | s)) | (h & s & (c | d))
    if not t:
        return LOOSE_POINTS[c] + LOOSE_POINTS[d] + LOOSE_POINTS[h] + LOOSE_POINTS[s]
    return _deadwood_sets(c, d, h, s, t)


def _deadwood_sets(c: int, d: int, h: int, s: int, t: int) -> int:
    b = t & -t
    t ^= b
    if t:
        best = _deadwood_sets(c, d, h, s, t)
    else:
        best = LOOSE_POINTS[c] + LOOSE_POINTS[d] + LOOSE_POINTS[h] + LOOSE_POINTS[s]
    for cc, dd, hh, ss in _set_options(c, d, h, s, b):
        if t:
            v = _deadwood_sets(cc, dd, hh, ss, t)
        else:
            v = LOOSE_POINTS[cc] + LOOSE_POINTS[dd] + LOOSE_POINTS[hh] + LOOSE_POINTS[ss]
        if v < best:
            best = v
    return best


def _set_options(c: int, d: int, h: int, s: int, b: int) -> list[tuple[int, int, int, int]]:
    """The four suit masks after each set of rank bit ``b`` (held three or four times) is taken."""
    nb = ~b
    if c & d & h & s & b:
        return [
            (c & nb, d & nb, h & nb, s & nb),  # the set of four
            (c, d & nb, h & nb, s & nb),  # sets of three: the one card left may run
            (c & nb, d, h & nb, s & nb),
            (c & nb, d & nb, h, s & nb),
            (c & nb, d & nb, h & nb, s),
        ]
    return [(c & nb, d & nb, h & nb, s & nb)]


def after_discard(hand: int) -> tuple[int, int]:
    """``(best, full)`` for an eleven-card hand: ``best`` the minimum deadwood of the ten cards left
    over every discard, ``full`` the deadwood of all eleven (0: big gin). Exact
    (``docs/rules/gin.md#eleven-cards``)."""
    c = hand & SUIT_MASK
    d = (hand >> 13) & SUIT_MASK
    h = (hand >> 26) & SUIT_MASK
    s = hand >> 39
    t = (c & d & (h | s)) | (h & s & (c | d))
    if not t:
        full = LOOSE_POINTS[c] + LOOSE_POINTS[d] + LOOSE_POINTS[h] + LOOSE_POINTS[s]
        if not full:
            return 0, 0
        top = max(LOOSE_MAX[c], LOOSE_MAX[d], LOOSE_MAX[h], LOOSE_MAX[s])
        return full - top, full
    return _after_discard_sets(c, d, h, s, t)


def _after_discard_sets(c: int, d: int, h: int, s: int, t: int) -> tuple[int, int]:
    best, full = 999, 999
    for cc, dd, hh, ss in _leaves(c, d, h, s, t):
        f = LOOSE_POINTS[cc] + LOOSE_POINTS[dd] + LOOSE_POINTS[hh] + LOOSE_POINTS[ss]
        if f < full:
            full = f
        if f:
            f -= max(LOOSE_MAX[cc], LOOSE_MAX[dd], LOOSE_MAX[hh], LOOSE_MAX[ss])
        if f < best:
            best = f
    return best, full


def _leaves(c: int, d: int, h: int, s: int, t: int) -> Iterator[tuple[int, int, int, int]]:
    """The suit masks left by every set choice on the ranks of ``t``."""
    if not t:
        yield c, d, h, s
        return
    b = t & -t
    rest = t ^ b
    yield from _leaves(c, d, h, s, rest)
    for cc, dd, hh, ss in _set_options(c, d, h, s, b):
        yield from _leaves(cc, dd, hh, ss, rest)


def set_choices(hand: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Every set choice of ``hand``: ``(sets, rest)``, each set a card mask, ``rest`` the cards no
    set takes (which the runs of ``run_blocks`` and the deadwood share). In a fixed order: on the
    lowest rank first, no set before the set of four before the sets of three."""
    c = hand & SUIT_MASK
    d = (hand >> 13) & SUIT_MASK
    h = (hand >> 26) & SUIT_MASK
    s = hand >> 39
    t = set_ranks(c, d, h, s)
    yield from _choices(hand, t, ())


def _choices(rest: int, t: int, sets: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], int]]:
    if not t:
        yield sets, rest
        return
    b = t & -t
    t ^= b
    r = b.bit_length() - 1
    rank_cards = [1 << (k * 13 + r) for k in range(4) if rest >> (k * 13 + r) & 1]
    yield from _choices(rest, t, sets)
    full = sum(rank_cards)
    if len(rank_cards) == 4:
        yield from _choices(rest & ~full, t, (*sets, full))
        for keep in rank_cards:
            yield from _choices(rest & ~(full ^ keep), t, (*sets, full ^ keep))
    else:
        yield from _choices(rest & ~full, t, (*sets, full))


def runs_of(rest: int) -> tuple[int, ...]:
    """The runs the best arrangement makes of ``rest`` (after the sets): card masks, one per
    maximal block of three or more consecutive ranks of a suit, clubs first, lowest first."""
    return (
        RUN_MASKS[rest & SUIT_MASK]
        + tuple(m << 13 for m in RUN_MASKS[(rest >> 13) & SUIT_MASK])
        + tuple(m << 26 for m in RUN_MASKS[(rest >> 26) & SUIT_MASK])
        + tuple(m << 39 for m in RUN_MASKS[rest >> 39])
    )


def loose_of(rest: int) -> int:
    """The cards of ``rest`` (after the sets) in no run: the deadwood, as a mask."""
    out = 0
    for k in range(4):
        out |= LOOSE_MASK[(rest >> (k * 13)) & SUIT_MASK] << (k * 13)
    return out


def loose_points(rest: int) -> int:
    """The deadwood (points) of ``rest`` (the cards no set takes) under its best runs."""
    return (
        LOOSE_POINTS[rest & SUIT_MASK]
        + LOOSE_POINTS[(rest >> 13) & SUIT_MASK]
        + LOOSE_POINTS[(rest >> 26) & SUIT_MASK]
        + LOOSE_POINTS[rest >> 39]
    )


def points_of(cards: int) -> int:
    """The summed values of the cards of a mask."""
    total = 0
    for k in range(4):
        m = (cards >> (k * 13)) & SUIT_MASK
        while m:
            b = m & -m
            total += RANK_VALUES[b.bit_length() - 1]
            m ^= b
    return total
