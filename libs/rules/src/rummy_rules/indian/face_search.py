"""The costs both solver searches share, and the general search over every face.

A search minimises a cost ``points * SCALE + loose cards`` (so points are minimal and a zero means
every card is in a meld) over groupings with at least two sequences, one of them pure; it tracks
flags (has a pure sequence, sequences so far capped at 2) as
``rummy_rules.indian.arrangement`` explains.
``FaceSearch`` is exact for any hand: a memoised search that takes the first face left and either
leaves one copy loose or uses a meld (``melds.enumerate_melds``, every stand-in named) whose first
face it is. It is the fallback of the faster ``token_search.TokenSearch``.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from rummy_rules.cards import Card
from rummy_rules.melds import JOKER_FACE, Meld, MeldKind, MeldOptions, MeldShape, enumerate_melds
from rummy_rules.wild import rank_points

SCALE = 1 << 16  # cost = points * SCALE + loose cards
INF = 1 << 60
PURE, ONE_SEQ, TWO_SEQ = 1, 2, 4  # flags: has pure; sequences 1; sequences >= 2
DONE = PURE | TWO_SEQ


def next_flags(flags: int, kind: MeldKind) -> int:
    """Flags after a meld of this kind joins a grouping with these flags."""
    if kind is MeldKind.SET:
        return flags
    seqs = TWO_SEQ if flags & (ONE_SEQ | TWO_SEQ) else ONE_SEQ
    pure = PURE if kind is MeldKind.PURE_SEQUENCE else flags & PURE
    return pure | seqs


LOOSE, AS_TOKEN, IN_PLACE = 0, 1, 2  # search choices other than a meld
FLAG_TABLE = {(f, k): next_flags(f, k) for f in range(8) for k in MeldKind}
NEXT_FLAGS_BY_KIND = [tuple(next_flags(f, k) for f in range(8)) for k in MeldKind]  # by kind


def face_points(face: int, wild: int | None) -> int:
    """Points of a face (0 for a printed joker or a card of the wild rank)."""
    if face == JOKER_FACE or face % 13 + 1 == wild:
        return 0
    return rank_points(face % 13 + 1)  # type: ignore[arg-type]


POINTS = [
    [face_points(f, w) for f in range(JOKER_FACE + 1)] for w in (None, *range(1, 14))
]  # POINTS[wild or 0][face]


class FaceSearch:
    """The memoised search over one hand's multiset of faces (shared by every sub-hand of it)."""

    dead_cost = 0  # every card stays in the state

    def __init__(self, counts: dict[int, int], wild: int | None, options: MeldOptions) -> None:
        self.wild = wild

        def order(f: int) -> tuple[int, int]:
            if f == JOKER_FACE:
                return (2, f)
            return (1 if f % 13 + 1 == wild else 0, f)

        faces = sorted(counts, key=order)
        self.faces = faces
        self.width = width = max(counts.values()).bit_length() + 1
        self.field = field = {f: i for i, f in enumerate(faces)}
        # the top bit of every field: 1 + 2**width + 2**(2 width) + ... shifted up
        self.guard = ((1 << (width * len(faces))) - 1) // ((1 << width) - 1) << (width - 1)
        self.loose_cost = [face_points(f, wild) * SCALE + 1 for f in faces]
        self.state = sum(c << (width * field[f]) for f, c in counts.items())
        self.shapes = enumerate_melds(counts, wild, options)
        by_low: list[list[tuple[int, MeldKind, MeldShape]]] = [[] for _ in faces]
        best_pure: tuple[int, MeldShape] | None = None
        sizes: dict[int, int] = {}
        for key, shape in self.shapes.items():
            vec = 0
            for f in key:
                vec += 1 << (width * field[f])
            by_low[min(field[f] for f in key)].append((vec, shape.kind, shape))
            sizes[vec] = len(key)
            if shape.kind is MeldKind.PURE_SEQUENCE:
                value = sum(face_points(f, wild) for f in key)
                if best_pure is None or value > best_pure[0]:
                    best_pure = (value, shape)
        self.pure_value = None if best_pure is None else best_pure[0]  # the best pure sequence
        self._pure_shape = None if best_pure is None else best_pure[1]
        for melds in by_low:  # big melds first: a zero-cost grouping shows up sooner
            melds.sort(key=lambda m: (-sizes[m[0]], m[1]))
        self.by_low = by_low
        self.memo: dict[int, int] = {}

    def pure_shape(self) -> MeldShape:
        """The most valuable pure sequence (``pure_value`` is not ``None``)."""
        return self._pure_shape  # type: ignore[return-value]

    def one_of(self, face: int) -> int:
        """The state value of one card of this face."""
        return 1 << (self.width * self.field[face])

    def best(self, state: int, flags: int, budget: int = INF) -> int:
        """Least cost (points * SCALE + loose cards) of a tier-1 grouping of state, or INF.

        Always exact (``budget`` is accepted for the interface of ``TokenSearch.best``).
        """
        if not state:
            return 0 if flags & DONE == DONE else INF
        key = state << 3 | flags
        memo = self.memo
        got = memo.get(key)
        if got is not None:
            return got
        width = self.width
        low = (state & -state).bit_length() - 1
        i = low // width
        result = self.best(state - (1 << (width * i)), flags) + self.loose_cost[i]
        guarded = state | self.guard
        guard = self.guard
        table = FLAG_TABLE
        for vec, kind, _shape in self.by_low[i]:
            if (guarded - vec) & guard == guard:
                cost = self.best(state - vec, table[flags, kind])
                if cost < result:
                    result = cost
                    if not cost:
                        break
        memo[key] = result
        return result

    def walk(
        self, hand: list[Card], faces: list[int], cost: int
    ) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
        """Melds and deadwood of a least-cost tier-1 grouping of the whole hand (cost is finite)."""
        melds: list[MeldShape] = []
        state, flags = self.state, 0
        width, guard = self.width, self.guard
        while state:
            target = self.best(state, flags)
            i = ((state & -state).bit_length() - 1) // width
            one = 1 << (width * i)
            if self.best(state - one, flags) + self.loose_cost[i] == target:
                state -= one
                continue
            for vec, kind, shape in self.by_low[i]:
                if (state | guard) - vec & guard == guard:
                    nflags = FLAG_TABLE[flags, kind]
                    if self.best(state - vec, nflags) == target:
                        melds.append(shape)
                        state -= vec
                        flags = nflags
                        break
            else:  # pragma: no cover - best() found this cost, so some branch reaches it
                raise AssertionError("arrangement walk lost its way")
        return deal_out(hand, faces, melds)


def cards_by_face(cards: list[Card], faces: list[int]) -> dict[int, list[Card]]:
    """The cards by face, each list last copy first (so pop() hands out the first copy first)."""
    pool: dict[int, list[Card]] = {}
    for c, f in zip(reversed(cards), reversed(faces), strict=True):
        copies = pool.get(f)
        if copies is None:
            pool[f] = [c]
        else:
            copies.append(c)
    return pool


def deal_out(
    cards: list[Card], faces: list[int], shapes: list[MeldShape]
) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
    """Give physical cards to the melds' faces (first copies first); the rest is deadwood."""
    pool = cards_by_face(cards, faces)
    melds = tuple(Meld(s.kind, tuple(pool[f].pop() for f in s.layout)) for s in shapes)
    return melds, left_over(cards, [m.cards for m in melds])


def left_over(cards: list[Card], groups: Iterable[Iterable[Card]]) -> tuple[Card, ...]:
    """The cards (in order) that no group holds; a card object listed twice counts twice."""
    taken = list(map(id, chain.from_iterable(groups)))
    held = set(taken)
    if len(held) == len(taken) and len(set(map(id, cards))) == len(cards):  # no object twice
        return tuple([c for c in cards if id(c) not in held])
    used: dict[int, int] = {}
    for key in taken:
        used[key] = used.get(key, 0) + 1
    out = []
    for c in cards:
        n = used.get(id(c))
        if n:
            used[id(c)] = n - 1
        else:
            out.append(c)
    return tuple(out)
