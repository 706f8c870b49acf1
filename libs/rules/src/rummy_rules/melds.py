"""Melds: pure sequences, impure sequences and sets, and the enumeration of every meld a hand holds.

Rules (``shared/seeds/000`` "Sequences & sets" and the DESIGN.md rulings), with the options of
``MeldOptions``:

- A **sequence** is 3 or more cards of one suit on consecutive positions. The ace sits low (A-2-3,
  position 1) or high (Q-K-A, position 14, unless ``ace_high`` is off) but never both in one run and
  never round the corner (K-A-2, 10-J-Q-K-A-2 are not sequences), so a run is at most 13 long.
- A **joker** is a printed joker or a card of the wild rank. A joker may stand in for any missing
  card; a wild-rank card may also sit in its own natural place, where it is not a stand-in.
- A **pure sequence** has no stand-in. An **impure sequence** has at least one.
- A **set** is 3 or 4 cards of one rank in distinct suits; jokers may complete it.
- The same face (rank and suit) never appears twice in one group, even when one copy is a stand-in
  (``strict_duplicate_faces``; when off, only the cards in their natural places must differ).
- A group made only of stand-ins counts as an impure sequence of 3..13 cards when
  ``jokers_only_group_is_sequence`` is on, and is no meld when it is off.
- A group that fits several kinds is the best of them: pure, then impure, then set.

Internally a face is an int: ``suit_index * 13 + rank - 1`` for 0..51 and ``JOKER_FACE`` (52) for a
printed joker; suits in the order of ``cards.SUITS``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from itertools import combinations

from rummy_rules.cards import SUITS, Card
from rummy_rules.wild import WildRank

JOKER_FACE = 52
MAX_RUN_LENGTH = 13
MAX_SET_SIZE = 4
MIN_MELD_SIZE = 3
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}


class MeldKind(IntEnum):
    """Kinds of meld, best first (a lower value is a better kind)."""

    PURE_SEQUENCE = 0
    IMPURE_SEQUENCE = 1
    SET = 2

    @property
    def is_sequence(self) -> bool:
        return self is not MeldKind.SET


@dataclass(frozen=True, slots=True)
class MeldOptions:
    """Options of meld-making that differ between rule sets.

    ``jokers_only_group_is_sequence``: a group made only of stand-ins is an impure sequence (on at
    Bombay Baazi) or no meld (off). ``strict_duplicate_faces``: no face twice in a group even when one
    copy is a stand-in (on) or only among natural cards (off). ``ace_high``: Q-K-A is a sequence (on)
    or the ace only runs low (off).
    """

    jokers_only_group_is_sequence: bool = True
    strict_duplicate_faces: bool = True
    ace_high: bool = True


DEFAULT_MELD_OPTIONS = MeldOptions()


@dataclass(frozen=True, slots=True)
class Meld:
    """A group of cards and its kind; a sequence's cards are in run order, stand-ins in their gaps."""

    kind: MeldKind
    cards: tuple[Card, ...]


def face_of(card: Card) -> int:
    """The internal face int of a card (its copy dropped)."""
    if card.rank is None or card.suit is None:
        return JOKER_FACE
    return _SUIT_INDEX[card.suit] * 13 + int(card.rank) - 1


def face_rank(face: int) -> int | None:
    """Rank (1..13) of an internal face, ``None`` for a printed joker."""
    return None if face == JOKER_FACE else face % 13 + 1


@dataclass(frozen=True, slots=True)
class MeldShape:
    """One candidate meld as faces: ``layout`` in display order (run order for sequences)."""

    kind: MeldKind
    layout: tuple[int, ...]


def enumerate_melds(
    counts: Mapping[int, int], wild_rank: int | None, options: MeldOptions
) -> dict[tuple[int, ...], MeldShape]:
    """Every meld that can be formed from a multiset of faces (face -> count available).

    Returns a map from the meld's sorted faces (with repeats) to its best kind and a layout. Melds are
    found structurally: runs from same-suit positions plus a number of stand-ins, sets from one rank
    plus stand-ins, and jokers-only groups; stand-ins are drawn from the printed jokers and the
    wild-rank cards not used in their natural place.
    """
    out: dict[tuple[int, ...], MeldShape] = {}
    printed = counts.get(JOKER_FACE, 0)
    wild_faces = (
        [f for f in sorted(counts) if f != JOKER_FACE and f % 13 + 1 == wild_rank and counts[f] > 0]
        if wild_rank is not None
        else []
    )
    jokers_total = printed + sum(counts[f] for f in wild_faces)
    strict = options.strict_duplicate_faces

    def add(naturals: list[int], standins: tuple[int, ...], kind: MeldKind, layout: tuple[int, ...]) -> None:
        key = tuple(sorted(naturals + list(standins)))
        old = out.get(key)
        if old is None or kind < old.kind:
            out[key] = MeldShape(kind, layout)

    def standin_choices(k: int, naturals: list[int]) -> Iterator[tuple[int, ...]]:
        """Multisets of k stand-ins (printed jokers first, then wild faces) compatible with naturals."""
        if k == 0:
            yield ()
            return
        used = Counter(naturals)
        pool: list[tuple[int, int]] = []  # (face, how many may stand in)
        for f in wild_faces:
            left = counts[f] - used[f]
            if strict:
                left = 0 if used[f] else min(left, 1)
            if left > 0:
                pool.append((f, left))
        yield from _multisets(pool, k, printed)

    # Sequences with at least one natural card.
    top = 14 if options.ace_high else 13
    for s in range(4):
        avail = [False] * 15
        for p in range(1, top + 1):
            avail[p] = counts.get(s * 13 + (p - 1) % 13, 0) > 0
        for lo in range(1, top + 1):
            if not avail[lo]:
                continue
            for hi in range(lo, min(top, lo + MAX_RUN_LENGTH - 1) + 1):
                if not avail[hi]:
                    continue
                span = hi - lo + 1
                inner = [p for p in range(lo + 1, hi) if avail[p]]
                missing = span - 2 - len(inner) if hi > lo else 0
                if missing > jokers_total:
                    break
                for ndrop in range(0, min(len(inner), jokers_total - missing) + 1):
                    for dropped in combinations(inner, ndrop):
                        positions = [lo] + [p for p in inner if p not in dropped] + ([hi] if hi > lo else [])
                        naturals = [s * 13 + (p - 1) % 13 for p in positions]
                        gaps = span - len(positions)
                        for length in range(max(span, MIN_MELD_SIZE), MAX_RUN_LENGTH + 1):
                            k = gaps + length - span
                            if k > jokers_total:
                                break
                            kind = MeldKind.PURE_SEQUENCE if k == 0 else MeldKind.IMPURE_SEQUENCE
                            for standins in standin_choices(k, naturals):
                                add(naturals, standins, kind, _run_layout(s, positions, length, standins, top))

    # Sets with at least one natural card.
    for r in range(1, 14):
        suits = [s for s in range(4) if counts.get(s * 13 + r - 1, 0) > 0]
        for n in range(1, len(suits) + 1):
            for chosen in combinations(suits, n):
                naturals = [s * 13 + r - 1 for s in chosen]
                for k in range(max(0, MIN_MELD_SIZE - n), MAX_SET_SIZE - n + 1):
                    if k > jokers_total:
                        break
                    for standins in standin_choices(k, naturals):
                        add(naturals, standins, MeldKind.SET, tuple(naturals) + standins)

    # Groups made only of stand-ins.
    if options.jokers_only_group_is_sequence:
        for k in range(MIN_MELD_SIZE, min(jokers_total, MAX_RUN_LENGTH) + 1):
            for standins in standin_choices(k, []):
                add([], standins, MeldKind.IMPURE_SEQUENCE, standins)
    return out


def _multisets(pool: list[tuple[int, int]], k: int, printed: int) -> Iterator[tuple[int, ...]]:
    """Multisets of size k: up to ``printed`` printed jokers plus faces from pool (face, max count)."""
    for j in range(min(printed, k), -1, -1):
        for rest in _pool_multisets(pool, 0, k - j):
            yield (JOKER_FACE,) * j + rest


def _pool_multisets(pool: list[tuple[int, int]], i: int, k: int) -> Iterator[tuple[int, ...]]:
    if k == 0:
        yield ()
        return
    if i == len(pool):
        return
    face, cap = pool[i]
    for c in range(min(cap, k), -1, -1):
        for rest in _pool_multisets(pool, i + 1, k - c):
            yield (face,) * c + rest


def _run_layout(
    suit: int, positions: list[int], length: int, standins: tuple[int, ...], top: int
) -> tuple[int, ...]:
    """Run order: window of ``length`` starting at the lowest natural (shifted down if it must be)."""
    start = min(positions[0], top - length + 1)
    fill = list(standins)
    at = set(positions)
    return tuple(suit * 13 + (p - 1) % 13 if p in at else fill.pop() for p in range(start, start + length))


def face_counts(cards: Iterable[Card]) -> Counter[int]:
    """Multiset of internal faces of the cards."""
    return Counter(face_of(c) for c in cards)


def classify_group(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> MeldKind | None:
    """The best kind of meld the cards form as one group (pure, then impure, then set), or ``None``.

    Any number of cards; fewer than 3 is never a meld.
    """
    group = list(cards)
    if len(group) < MIN_MELD_SIZE:
        return None
    counts = face_counts(group)
    key = tuple(sorted(counts.elements()))
    shape = enumerate_melds(counts, None if wild_rank is None else int(wild_rank), options).get(key)
    return None if shape is None else shape.kind


__all__ = [
    "DEFAULT_MELD_OPTIONS",
    "JOKER_FACE",
    "Meld",
    "MeldKind",
    "MeldOptions",
    "MeldShape",
    "classify_group",
    "enumerate_melds",
    "face_counts",
    "face_of",
    "face_rank",
]
