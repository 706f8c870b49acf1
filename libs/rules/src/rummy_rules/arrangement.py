"""The exact best arrangement of a hand, whether it is a valid declaration, and valid discards.

Points of a hand (``shared/seeds/000`` "What a card is worth"; DESIGN.md rulings) are the minimum,
over every way of grouping it, of:

1. two or more sequences of which one is pure: the loose cards (deadwood) count;
2. a pure sequence but no second sequence: every card counts except that one run (sets don't help);
3. no pure sequence: every card counts.

Printed jokers and wild-rank cards are worth 0 wherever they sit. Points are uncapped here (a cap is
a scoring rule). A hand is a valid declaration when some grouping puts every card in a meld with at
least two sequences, one of them pure. Any hand size works (13 to judge a show, 14 before a discard).

Method (exact): ``melds.enumerate_melds`` lists every candidate meld as a multiset of faces; identical
faces (two 7H of two decks, printed jokers) are interchangeable, so the state is a multiset packed into
one int (a few bits per distinct face, with a guard bit per field to test "contains" in one
subtraction). A memoised search takes the first face left and either leaves one copy loose or uses a
meld whose first face it is, tracking (has a pure sequence, sequences so far capped at 2). The cost
minimised is (points, number of loose cards), so points are minimal and a zero means a valid show.
Hands without three same-suit neighbours skip the search (no pure sequence is possible).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rummy_rules.cards import Card
from rummy_rules.melds import (
    DEFAULT_MELD_OPTIONS,
    JOKER_FACE,
    Meld,
    MeldKind,
    MeldOptions,
    MeldShape,
    enumerate_melds,
    face_counts,
    face_of,
)
from rummy_rules.wild import WildRank, card_points, rank_points


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A hand's best arrangement.

    ``melds``: the groups that count (tier 1: all melds; tier 2: the one pure sequence discounted;
    tier 3: none). ``deadwood``: every card that counts. ``points``: the sum of the deadwood's points,
    uncapped. ``valid``: the hand is a valid declaration (then ``points`` is 0 and ``deadwood`` empty).
    """

    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int
    valid: bool


_SCALE = 1 << 16  # cost = points * _SCALE + loose cards
_INF = 1 << 60
_PURE, _ONE_SEQ, _TWO_SEQ = 1, 2, 4  # flags: has pure; sequences 1; sequences >= 2
_DONE = _PURE | _TWO_SEQ


def _next_flags(flags: int, kind: MeldKind) -> int:
    if kind is MeldKind.SET:
        return flags
    seqs = _TWO_SEQ if flags & (_ONE_SEQ | _TWO_SEQ) else _ONE_SEQ
    pure = _PURE if kind is MeldKind.PURE_SEQUENCE else flags & _PURE
    return pure | seqs


_FLAG_TABLE = {(f, k): _next_flags(f, k) for f in range(8) for k in MeldKind}


def _has_pure_neighbours(counts: dict[int, int], ace_high: bool) -> bool:
    """Cheap test: does some suit hold three consecutive positions (a pure sequence is possible)?"""
    for s in range(4):
        m = 0
        for r in range(13):
            if counts.get(s * 13 + r, 0):
                m |= 1 << (r + 1)
        if ace_high and m & 2:
            m |= 1 << 14
        if m & (m >> 1) & (m >> 2):
            return True
    return False


class _Search:
    """The memoised search over one hand's multiset of faces (shared by every sub-hand of it)."""

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
        self.guard = sum(1 << (width * i + width - 1) for i in range(len(faces)))
        self.loose_cost = [self._points(f) * _SCALE + 1 for f in faces]
        self.state = sum(c << (width * field[f]) for f, c in counts.items())
        self.shapes = enumerate_melds(counts, wild, options)
        by_low: list[list[tuple[int, MeldKind, MeldShape]]] = [[] for _ in faces]
        self.best_pure: tuple[int, MeldShape] | None = None
        for key, shape in self.shapes.items():
            vec = 0
            for f in key:
                vec += 1 << (width * field[f])
            by_low[min(field[f] for f in key)].append((vec, shape.kind, shape))
            if shape.kind is MeldKind.PURE_SEQUENCE:
                value = sum(self._points(f) for f in key)
                if self.best_pure is None or value > self.best_pure[0]:
                    self.best_pure = (value, shape)
        self.by_low = by_low
        self.memo: dict[int, int] = {}

    def _points(self, face: int) -> int:
        if face == JOKER_FACE or face % 13 + 1 == self.wild:
            return 0
        return rank_points(face % 13 + 1)  # type: ignore[arg-type]

    def best(self, state: int, flags: int) -> int:
        """Least cost (points * _SCALE + loose cards) of a tier-1 grouping of ``state``; _INF if none."""
        if not state:
            return 0 if flags & _DONE == _DONE else _INF
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
        table = _FLAG_TABLE
        for vec, kind, _shape in self.by_low[i]:
            if (guarded - vec) & guard == guard:
                cost = self.best(state - vec, table[flags, kind])
                if cost < result:
                    result = cost
        memo[key] = result
        return result

    def walk(self, state: int) -> tuple[list[MeldShape], list[int]]:
        """The melds and loose faces of a least-cost tier-1 grouping of ``state`` (must be finite)."""
        melds: list[MeldShape] = []
        loose: list[int] = []
        flags = 0
        width, guard = self.width, self.guard
        while state:
            target = self.best(state, flags)
            i = ((state & -state).bit_length() - 1) // width
            one = 1 << (width * i)
            if self.best(state - one, flags) + self.loose_cost[i] == target:
                loose.append(self.faces[i])
                state -= one
                continue
            for vec, kind, shape in self.by_low[i]:
                if (state | guard) - vec & guard == guard:
                    nflags = _FLAG_TABLE[flags, kind]
                    if self.best(state - vec, nflags) == target:
                        melds.append(shape)
                        state -= vec
                        flags = nflags
                        break
            else:  # pragma: no cover - best() found this cost, so some branch reaches it
                raise AssertionError("arrangement walk lost its way")
        return melds, loose


def _deal_out(cards: list[Card], shapes: list[MeldShape]) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
    """Give physical cards to the melds' faces (first copies first); the rest is deadwood."""
    pool: dict[int, list[Card]] = {}
    for c in cards:
        pool.setdefault(face_of(c), []).append(c)
    melds = tuple(Meld(s.kind, tuple(pool[f].pop(0) for f in s.layout)) for s in shapes)
    used = {id(c) for m in melds for c in m.cards}
    return melds, tuple(c for c in cards if id(c) not in used)


def _wild_int(wild_rank: WildRank) -> int | None:
    return None if wild_rank is None else int(wild_rank)


def best_arrangement(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> Arrangement:
    """The arrangement of least points of a hand of any size, and whether it is a valid declaration.

    Points are uncapped (at most 10 per card). Cards are physical cards (duplicates across decks are
    fine). Raises nothing for any list of cards; an empty hand scores 0 and is not valid.
    """
    hand = list(cards)
    total = sum(card_points(c, wild_rank) for c in hand)
    counts = dict(face_counts(hand))
    if not hand or not _has_pure_neighbours(counts, options.ace_high):
        return Arrangement((), tuple(hand), total, False)
    search = _Search(counts, _wild_int(wild_rank), options)
    if search.best_pure is None:  # pragma: no cover - neighbours always make a pure run
        return Arrangement((), tuple(hand), total, False)
    tier2 = total - search.best_pure[0]
    cost = search.best(search.state, 0)
    if cost < _INF and cost // _SCALE <= tier2:
        shapes, _loose = search.walk(search.state)
        melds, deadwood = _deal_out(hand, shapes)
        return Arrangement(melds, deadwood, cost // _SCALE, cost == 0)
    melds, deadwood = _deal_out(hand, [search.best_pure[1]])
    return Arrangement(melds, deadwood, tier2, False)


def valid_discards(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> tuple[Card, ...]:
    """The cards whose discard leaves a valid declaration, in hand order (every physical copy).

    Typically called with 14 cards (draw done, one to lay face down); any size works. Empty when no
    discard leaves a valid show.
    """
    hand = list(cards)
    counts = dict(face_counts(hand))
    if len(hand) < 2 or not _has_pure_neighbours(counts, options.ace_high):
        return ()
    search = _Search(counts, _wild_int(wild_rank), options)
    ok: dict[int, bool] = {}
    for f in counts:
        state = search.state - (1 << (search.width * search.field[f]))
        ok[f] = search.best(state, 0) == 0
    return tuple(c for c in hand if ok[face_of(c)])


__all__ = ["Arrangement", "best_arrangement", "valid_discards"]
