"""The exact best arrangement of a hand, whether it is a valid declaration, and valid discards.

Points of a hand (``shared/seeds/000`` "What a card is worth"; DESIGN.md rulings) are the minimum,
over every way of grouping it, of:

1. two or more sequences of which one is pure: the loose cards (deadwood) count;
2. a pure sequence but no second sequence: every card counts except that one run (sets don't help);
3. no pure sequence: every card counts.

Printed jokers and wild-rank cards are worth 0 wherever they sit. Points are uncapped here (a cap is
a scoring rule). A hand is a valid declaration when some grouping puts every card in a meld with at
least two sequences, one of them pure. Any hand size works (13 to judge a show, 14 before a
discard).

Method (exact): ``melds.enumerate_melds`` lists every candidate meld as a multiset of faces;
identical faces (two 7H of two decks, printed jokers) are interchangeable, so the state is a
multiset packed into one int (a few bits per distinct face, with a guard bit per field to test
"contains" in one subtraction). A memoised search takes the first face left and either leaves one
copy loose or uses a meld whose first face it is, tracking (has a pure sequence, sequences so far
capped at 2). The cost minimised is (points, number of loose cards), so points are minimal and a
zero means a valid show. Hands without three same-suit neighbours skip the search (no pure
sequence is possible).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rummy_rules.cards import SUITS, Card, Rank, Suit
from rummy_rules.melds import (
    DEFAULT_MELD_OPTIONS,
    JOKER_FACE,
    Meld,
    MeldKind,
    MeldOptions,
    MeldShape,
    classify_group,
    enumerate_melds,
    face_of,
)
from rummy_rules.wild import WildRank, rank_points


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A hand's best arrangement.

    ``melds``: the groups that count (tier 1: all melds; tier 2: the one pure sequence discounted;
    tier 3: none). ``deadwood``: every card that counts. ``points``: the sum of the deadwood's
    points, uncapped. ``valid``: the hand is a valid declaration (then ``points`` is 0 and
    ``deadwood`` empty).
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


def _face_points(face: int, wild: int | None) -> int:
    if face == JOKER_FACE or face % 13 + 1 == wild:
        return 0
    return rank_points(face % 13 + 1)  # type: ignore[arg-type]


_FACE: dict[tuple[Rank | None, Suit | None], int] = {
    (r, s): face_of(Card(r, s)) for r in Rank for s in SUITS
} | {(None, None): JOKER_FACE}
_POINTS = [
    [_face_points(f, w) for f in range(JOKER_FACE + 1)] for w in (None, *range(1, 14))
]  # _POINTS[wild or 0][face]


def _profile(
    hand: list[Card], wild: int | None, ace_high: bool
) -> tuple[dict[int, int], int, bool]:
    """(face counts, total points, whether some suit holds three consecutive positions)."""
    counts: dict[int, int] = {}
    for c in hand:
        f = _FACE[c.rank, c.suit]
        counts[f] = counts.get(f, 0) + 1
    points = _POINTS[wild or 0]
    total = 0
    masks = [0, 0, 0, 0]
    for f, n in counts.items():
        total += points[f] * n
        if f != JOKER_FACE:
            masks[f // 13] |= 2 << (f % 13)
    neighbours = False
    for m in masks:
        if ace_high and m & 2:
            m |= 1 << 14
        if m & (m >> 1) & (m >> 2):
            neighbours = True
            break
    return counts, total, neighbours


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
        self.loose_cost = [_face_points(f, wild) * _SCALE + 1 for f in faces]
        self.state = sum(c << (width * field[f]) for f, c in counts.items())
        self.shapes = enumerate_melds(counts, wild, options)
        by_low: list[list[tuple[int, MeldKind, MeldShape]]] = [[] for _ in faces]
        self.best_pure: tuple[int, MeldShape] | None = None
        sizes: dict[int, int] = {}
        for key, shape in self.shapes.items():
            vec = 0
            for f in key:
                vec += 1 << (width * field[f])
            by_low[min(field[f] for f in key)].append((vec, shape.kind, shape))
            sizes[vec] = len(key)
            if shape.kind is MeldKind.PURE_SEQUENCE:
                value = sum(_face_points(f, wild) for f in key)
                if self.best_pure is None or value > self.best_pure[0]:
                    self.best_pure = (value, shape)
        for melds in by_low:  # big melds first: a zero-cost grouping shows up sooner
            melds.sort(key=lambda m: (-sizes[m[0]], m[1]))
        self.by_low = by_low
        self.memo: dict[int, int] = {}

    def one_of(self, face: int) -> int:
        """The state value of one card of this face."""
        return 1 << (self.width * self.field[face])

    def best(self, state: int, flags: int) -> int:
        """Least cost (points * _SCALE + loose cards) of a tier-1 grouping of state, or _INF."""
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
                    if not cost:
                        break
        memo[key] = result
        return result

    def walk(self, hand: list[Card]) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
        """Melds and deadwood of a least-cost tier-1 grouping of the whole hand (must be finite)."""
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
                    nflags = _FLAG_TABLE[flags, kind]
                    if self.best(state - vec, nflags) == target:
                        melds.append(shape)
                        state -= vec
                        flags = nflags
                        break
            else:  # pragma: no cover - best() found this cost, so some branch reaches it
                raise AssertionError("arrangement walk lost its way")
        return _deal_out(hand, melds)


class _TokenSearch:
    """The faster exact search, used when jokers are interchangeable.

    Printed jokers and wild-rank cards chosen as stand-ins become anonymous tokens (one field of the
    state), and melds are listed with the fewest tokens only. That is exact when no two stand-ins
    can clash: the lenient duplicate rule, or no wild face held twice (a token's face then never
    meets the same face in its group). Wild-rank cards come first in the search order, and each copy
    either sits in its natural place in a meld or turns into a token. Spare tokens at the end join a
    sequence (always room when the hand has at most 16 cards) or form a jokers-only group.
    """

    def __init__(self, counts: dict[int, int], wild: int | None, options: MeldOptions) -> None:
        self.wild = wild
        self.wild_rank = None if wild is None else Rank(wild)
        self.options = options
        self.jokers_only = options.jokers_only_group_is_sequence
        printed = counts.get(JOKER_FACE, 0)
        # Fields: one "undecided" field per wild face (first, so every wild card is decided before
        # any meld is chosen), then every face in its natural role, then the tokens.
        wild_faces = sorted(f for f in counts if f != JOKER_FACE and f % 13 + 1 == wild)
        natural = sorted(f for f in counts if f != JOKER_FACE)
        faces = wild_faces + natural + [JOKER_FACE]
        tokens = printed + sum(counts[f] for f in wild_faces)
        self.faces = faces
        self.nwild = len(wild_faces)
        self.width = width = max(max(counts.values()), tokens).bit_length() + 1
        self.field = field = {f: self.nwild + i for i, f in enumerate(natural)}
        self.field[JOKER_FACE] = len(faces) - 1
        self.keep = [1 << (width * field[f]) for f in wild_faces]
        self.undecided = {f: i for i, f in enumerate(wild_faces)}
        self.tshift = width * (len(faces) - 1)
        self.token = 1 << self.tshift
        self.natural_mask = self.token - 1
        self.guard = sum(1 << (width * i + width - 1) for i in range(len(faces)))
        self.loose_cost = [_face_points(f, wild) * _SCALE + 1 for f in faces]
        self.state = (
            sum(counts[f] << (width * i) for i, f in enumerate(wild_faces))
            + sum(counts[f] << (width * field[f]) for f in natural if f not in wild_faces)
            + (printed << self.tshift)
        )
        made = {f: counts[f] for f in natural}
        if tokens:
            made[JOKER_FACE] = tokens
        shapes = enumerate_melds(made, None, options, pad=False)
        by_low: list[list[tuple[int, MeldKind, MeldShape]]] = [[] for _ in faces]
        self.best_pure: tuple[int, MeldShape] | None = None
        sizes: dict[int, int] = {}
        for key, shape in shapes.items():
            vec = 0
            for f in key:
                vec += 1 << (width * field[f])
            by_low[min(field[f] for f in key)].append((vec, shape.kind, shape))
            sizes[vec] = len(key)
            if shape.kind is MeldKind.PURE_SEQUENCE:
                value = sum(_face_points(f, wild) for f in key)
                if self.best_pure is None or value > self.best_pure[0]:
                    self.best_pure = (value, shape)
        for melds in by_low:  # big melds first: a zero-cost grouping shows up sooner
            melds.sort(key=lambda m: (-sizes[m[0]], m[1]))
        self.by_low = by_low
        self.memo: dict[int, int] = {}

    def _spare_ok(self, spare: int, flags: int) -> bool:
        """Can ``spare`` tokens left at the end join the grouping and finish tier 1?"""
        if flags & _DONE == _DONE:
            return True
        return (
            self.jokers_only
            and 3 <= spare <= 13
            and _FLAG_TABLE[flags, MeldKind.IMPURE_SEQUENCE] & _DONE == _DONE
        )

    def one_of(self, face: int) -> int:
        """The state value of one card of this face as dealt (wild cards not yet decided)."""
        if face == JOKER_FACE:
            return self.token
        if face in self.undecided:
            return 1 << (self.width * self.undecided[face])
        return 1 << (self.width * self.field[face])

    def best(self, state: int, flags: int) -> int:
        """Least cost (points * _SCALE + loose cards) of a tier-1 grouping of state, or _INF."""
        if not state & self.natural_mask:
            return 0 if self._spare_ok(state >> self.tshift, flags) else _INF
        key = state << 3 | flags
        memo = self.memo
        got = memo.get(key)
        if got is not None:
            return got
        width = self.width
        i = ((state & -state).bit_length() - 1) // width
        one = 1 << (width * i)
        if i < self.nwild:  # a wild card: a token, or a card in its natural place
            result = min(
                self.best(state - one + self.token, flags),
                self.best(state - one + self.keep[i], flags),
            )
            memo[key] = result
            return result
        result = self.best(state - one, flags) + self.loose_cost[i]
        guarded = state | self.guard
        guard = self.guard
        table = _FLAG_TABLE
        for vec, kind, _shape in self.by_low[i]:
            if (guarded - vec) & guard == guard:
                cost = self.best(state - vec, table[flags, kind])
                if cost < result:
                    result = cost
                    if not cost:
                        break
        memo[key] = result
        return result

    def walk(self, hand: list[Card]) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
        """Melds and deadwood of a least-cost tier-1 grouping of the whole hand (must be finite)."""
        state, flags = self.state, 0
        shapes: list[MeldShape] = []
        to_tokens: list[int] = []
        width, guard = self.width, self.guard
        while state & self.natural_mask:
            target = self.best(state, flags)
            i = ((state & -state).bit_length() - 1) // width
            one = 1 << (width * i)
            if i < self.nwild:
                if self.best(state - one + self.keep[i], flags) == target:
                    state += self.keep[i] - one
                else:
                    to_tokens.append(self.faces[i])
                    state += self.token - one
                continue
            for vec, kind, shape in self.by_low[i]:
                if (state | guard) - vec & guard == guard:
                    nflags = _FLAG_TABLE[flags, kind]
                    if self.best(state - vec, nflags) == target:
                        shapes.append(shape)
                        state -= vec
                        flags = nflags
                        break
            else:
                state -= one
        pool = _pool(hand)
        tokens = pool.pop(JOKER_FACE, [])
        for f in to_tokens:
            tokens.append(pool[f].pop(0))
        melds = [
            Meld(
                s.kind,
                tuple(pool[f].pop(0) if f != JOKER_FACE else tokens.pop(0) for f in s.layout),
            )
            for s in shapes
        ]
        if tokens:
            if flags & _DONE == _DONE:
                self._absorb(melds, shapes, tokens)
            else:
                melds.append(Meld(MeldKind.IMPURE_SEQUENCE, tuple(tokens)))
        if self.nwild:
            # Report each meld's best kind: a wild card may read better in another role.
            melds = [self._best_kind(m) for m in melds]
        used = {id(c) for m in melds for c in m.cards}
        return tuple(melds), tuple(c for c in hand if id(c) not in used)

    def _best_kind(self, meld: Meld) -> Meld:
        """The meld with its best kind when it holds a wild-rank card (it may play either role)."""
        if meld.kind is MeldKind.PURE_SEQUENCE or all(
            c.rank is None or c.rank != self.wild_rank for c in meld.cards
        ):
            return meld
        kind = classify_group(meld.cards, self.wild_rank, self.options)
        return meld if kind is None else Meld(kind, meld.cards)

    def _absorb(self, melds: list[Meld], shapes: list[MeldShape], spare: list[Card]) -> None:
        """Extend a sequence with the spare tokens: an impure one, else one of two pure ones."""
        seqs = [j for j, m in enumerate(melds) if m.kind.is_sequence]
        impure = [j for j in seqs if melds[j].kind is MeldKind.IMPURE_SEQUENCE]
        j = impure[0] if impure else seqs[0]
        top = shapes[j].top if j < len(shapes) else 0
        room = max(0, 14 - top) if top else len(spare)
        after, before = spare[:room], spare[room:]
        melds[j] = Meld(MeldKind.IMPURE_SEQUENCE, tuple(before) + melds[j].cards + tuple(after))


def _pool(cards: list[Card]) -> dict[int, list[Card]]:
    pool: dict[int, list[Card]] = {}
    for c in cards:
        pool.setdefault(face_of(c), []).append(c)
    return pool


def _deal_out(
    cards: list[Card], shapes: list[MeldShape]
) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
    """Give physical cards to the melds' faces (first copies first); the rest is deadwood."""
    pool = _pool(cards)
    melds = tuple(Meld(s.kind, tuple(pool[f].pop(0) for f in s.layout)) for s in shapes)
    used = {id(c) for m in melds for c in m.cards}
    return melds, tuple(c for c in cards if id(c) not in used)


def _wild_int(wild_rank: WildRank) -> int | None:
    return None if wild_rank is None else int(wild_rank)


_TOKEN_SEARCH_MAX_CARDS = 16


def _search(
    counts: dict[int, int], wild: int | None, options: MeldOptions
) -> _Search | _TokenSearch:
    """The token search when it is exact for this hand, else the general one."""
    size = sum(counts.values())
    duplicated_wild = any(
        c > 1 for f, c in counts.items() if f != JOKER_FACE and f % 13 + 1 == wild
    )
    if size <= _TOKEN_SEARCH_MAX_CARDS and not (options.strict_duplicate_faces and duplicated_wild):
        return _TokenSearch(counts, wild, options)
    return _Search(counts, wild, options)


def best_arrangement(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> Arrangement:
    """The arrangement of least points of a hand of any size, and whether it is a valid declaration.

    Points are uncapped (at most 10 per card). Cards are physical cards (duplicates across decks are
    fine). Raises nothing for any list of cards; an empty hand scores 0 and is not valid.
    """
    hand = list(cards)
    wild = _wild_int(wild_rank)
    counts, total, neighbours = _profile(hand, wild, options.ace_high)
    if not neighbours:
        return Arrangement((), tuple(hand), total, False)
    search = _search(counts, wild, options)
    if search.best_pure is None:  # pragma: no cover - neighbours always make a pure run
        return Arrangement((), tuple(hand), total, False)
    tier2 = total - search.best_pure[0]
    cost = search.best(search.state, 0)
    if cost < _INF and cost // _SCALE <= tier2:
        melds, deadwood = search.walk(hand)
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
    wild = _wild_int(wild_rank)
    counts, _total, neighbours = _profile(hand, wild, options.ace_high)
    if len(hand) < 2 or not neighbours:
        return ()
    search = _search(counts, wild, options)
    ok: dict[int, bool] = {}
    for f in counts:
        state = search.state
        state -= search.one_of(f)
        ok[f] = search.best(state, 0) == 0
    return tuple(c for c in hand if ok[face_of(c)])


__all__ = ["Arrangement", "best_arrangement", "valid_discards"]
