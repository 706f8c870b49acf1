"""Melds: pure sequences, impure sequences and sets, and the enumeration of every meld a hand holds.

Rules (``docs/rules/melds.md``, each point below one of its sections), with the options of
``MeldOptions`` (``docs/rules/melds.md#meld-options``):

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


class MeldKind(IntEnum):
    """Kinds of meld, best first: a lower value is a better kind
    (``docs/rules/melds.md#best-kind``)."""

    PURE_SEQUENCE = 0
    IMPURE_SEQUENCE = 1
    SET = 2

    @property
    def is_sequence(self) -> bool:
        return self is not MeldKind.SET


@dataclass(frozen=True, slots=True)
class MeldOptions:
    """Options of meld-making that differ between rule sets (``docs/rules/melds.md#meld-options``).

    ``jokers_only_group_is_sequence``: a group made only of stand-ins is an impure sequence (on at
    Bombay Baazi) or no meld (off). ``strict_duplicate_faces``: no face twice in a group even when
    one copy is a stand-in (on) or only among natural cards (off). ``ace_high``: Q-K-A is a sequence
    (on) or the ace only runs low (off).
    """

    jokers_only_group_is_sequence: bool = True
    strict_duplicate_faces: bool = True
    ace_high: bool = True


DEFAULT_MELD_OPTIONS = MeldOptions()


@dataclass(frozen=True, slots=True)
class Meld:
    """A group of cards and its kind; a sequence's cards in run order, stand-ins in their gaps."""

    kind: MeldKind
    cards: tuple[Card, ...]


_SUIT_BASE = {s.value: i * 13 - 1 for i, s in enumerate(SUITS)}  # by letter: hashing a str is
# quicker than hashing an Enum member


def face_of(card: Card) -> int:
    """The internal face int of a card (its copy dropped)."""
    rank, suit = card.rank, card.suit
    if rank is None or suit is None:
        return JOKER_FACE
    return _SUIT_BASE[suit._value_] + rank


def face_rank(face: int) -> int | None:
    """Rank (1..13) of an internal face, ``None`` for a printed joker."""
    return None if face == JOKER_FACE else face % 13 + 1


@dataclass(frozen=True, slots=True)
class MeldShape:
    """One candidate meld as faces: the natural cards' faces and the stand-ins' faces.

    For a sequence, ``positions`` are the naturals' positions (1..14) and the window is ``start`` ..
    ``start + length - 1``; a set or a jokers-only group has no positions.
    """

    kind: MeldKind
    naturals: tuple[int, ...]
    standins: tuple[int, ...]
    positions: tuple[int, ...] = ()
    start: int = 0
    length: int = 0

    @property
    def top(self) -> int:
        """Last position of a sequence's window, 0 for a set or a jokers-only group."""
        return self.start + self.length - 1 if self.positions else 0

    @property
    def layout(self) -> tuple[int, ...]:
        """Faces in display order: run order, stand-ins in the gaps; or naturals then stand-ins."""
        return _layout(self.naturals, self.standins, self.positions, self.start, self.length)


def _layout(
    naturals: tuple[int, ...],
    standins: tuple[int, ...],
    positions: tuple[int, ...],
    start: int,
    length: int,
) -> tuple[int, ...]:
    """``MeldShape.layout`` of these fields."""
    if not standins:  # a pure run fills its window; a set or group is its naturals
        return naturals
    if not positions:
        return naturals + standins
    fill = list(standins)
    at = dict(zip(positions, naturals, strict=True))
    return tuple([at[p] if p in at else fill.pop() for p in range(start, start + length)])


def enumerate_melds(
    counts: Mapping[int, int], wild_rank: int | None, options: MeldOptions, pad: bool = True
) -> dict[tuple[int, ...], MeldShape]:
    """Every meld that can be formed from a multiset of faces (face -> count available).

    Returns a map from the meld's sorted faces (with repeats) to its best kind and a layout. Melds
    are found structurally: runs from same-suit positions plus a number of stand-ins, sets from one
    rank plus stand-ins, and jokers-only groups; stand-ins are drawn from the printed jokers and the
    wild-rank cards not used in their natural place. With ``pad`` off, only the fewest stand-ins
    that make each meld (gaps, and up to 3 cards) are listed and jokers-only groups are left out:
    the solver adds spare jokers to a sequence itself.
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

    def add(
        naturals: list[int],
        standins: tuple[int, ...],
        kind: MeldKind,
        positions: tuple[int, ...] = (),
        start: int = 0,
        length: int = 0,
    ) -> None:
        key = tuple(sorted(naturals + list(standins)))
        old = out.get(key)
        if old is None or kind < old.kind:
            out[key] = MeldShape(kind, tuple(naturals), standins, positions, start, length)

    def standin_choices(k: int, naturals: list[int]) -> Iterable[tuple[int, ...]]:
        """Multisets of k stand-ins (printed jokers, then wild faces) that suit the naturals."""
        if k == 0:
            return ((),)
        if not wild_faces:
            return ((JOKER_FACE,) * k,) if k <= printed else ()
        return _wild_standins(k, naturals)

    def _wild_standins(k: int, naturals: list[int]) -> Iterator[tuple[int, ...]]:
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
    highest = 14 if options.ace_high else 13
    held = sorted(f for f, n in counts.items() if n > 0 and f != JOKER_FACE)
    by_suit: list[list[int]] = [[], [], [], []]
    by_rank: dict[int, list[int]] = {}
    for f in held:
        by_suit[f // 13].append(f % 13 + 1)
        by_rank.setdefault(f % 13 + 1, []).append(f // 13)
    for s in range(4):
        places = by_suit[s]
        if places and places[0] == 1 and highest == 14:
            places = [*places, 14]
        for i, lo in enumerate(places):
            for j in range(i, len(places)):
                hi = places[j]
                span = hi - lo + 1
                if span > MAX_RUN_LENGTH:
                    break
                inner = places[i + 1 : j]
                missing = span - (j - i + 1)
                if missing > jokers_total:
                    break
                ends = [lo, hi] if j > i else [lo]
                for ndrop in range(0, min(len(inner), jokers_total - missing) + 1):
                    for dropped in combinations(inner, ndrop):
                        kept = [p for p in inner if p not in dropped] if ndrop else inner
                        positions = [lo, *kept, hi] if j > i else ends
                        naturals = [s * 13 + (p - 1) % 13 for p in positions]
                        gaps = missing + ndrop
                        for length in range(max(span, MIN_MELD_SIZE), MAX_RUN_LENGTH + 1):
                            k = gaps + length - span
                            if k > jokers_total:
                                break
                            kind = MeldKind.PURE_SEQUENCE if k == 0 else MeldKind.IMPURE_SEQUENCE
                            start = min(lo, highest - length + 1)
                            for standins in standin_choices(k, naturals):
                                add(naturals, standins, kind, tuple(positions), start, length)
                            if not pad:
                                break

    # Sets with at least one natural card.
    for r, suits in by_rank.items():
        for n in range(1, len(suits) + 1):
            for chosen in combinations(suits, n):
                naturals = [s * 13 + r - 1 for s in chosen]
                least = max(0, MIN_MELD_SIZE - n)
                for k in range(least, (MAX_SET_SIZE - n if pad else least) + 1):
                    if k > jokers_total:
                        break
                    for standins in standin_choices(k, naturals):
                        add(naturals, standins, MeldKind.SET)

    # Groups made only of stand-ins.
    if options.jokers_only_group_is_sequence and pad:
        for k in range(MIN_MELD_SIZE, min(jokers_total, MAX_RUN_LENGTH) + 1):
            for standins in standin_choices(k, []):
                add([], standins, MeldKind.IMPURE_SEQUENCE)
    return out


MeldRecord = tuple[MeldKind, int, tuple[int, ...], tuple[int, ...], int, int]
"""A meld found by ``cluster_runs`` or ``rank_sets``: (kind, number of stand-ins, natural faces,
positions, start, length); positions, start and length as in ``MeldShape`` (a set has none)."""


def rank_sets(held: tuple[int, ...], tokens: int) -> tuple[MeldRecord, ...]:
    """The sets of one rank held as ``held`` (distinct faces, ascending) with the fewest stand-ins.

    Two or more natural cards, plus one stand-in for a pair when ``tokens`` allows (a single card
    with two stand-ins is a sequence, a better kind, and is listed by ``cluster_runs``).
    """
    out = []
    for n in range(2, len(held) + 1):
        k = MIN_MELD_SIZE - n if n < MIN_MELD_SIZE else 0
        if k > tokens:
            continue
        for chosen in combinations(held, n):
            out.append((MeldKind.SET, k, chosen, (), 0, 0))
    return tuple(out)


PLACE_BITS = [1 << (16 * (f // 13) + f % 13 + 1) for f in range(JOKER_FACE)] + [0]
"""For each face (and ``JOKER_FACE``, 0): its place as a bit, 16 bits a suit (bit ``16 * suit +
rank``). The or of a hand's ``PLACE_BITS`` holds every suit's places; ``ACE_PLACES`` marks the
aces, which run high from bit ``16 * suit + 14`` (``ace_places << 13``)."""
ACE_PLACES = sum(1 << (16 * s + 1) for s in range(4))


def run_clusters(places: int, tokens: int) -> list[int]:
    """One suit's places (bit p: place p, 1..14, 14 for an ace that runs high) split into clusters.

    A run never spans more missing places than ``tokens``, so it lies inside one cluster: a
    stretch of places with at most ``tokens`` missing places between neighbours. Returns each
    cluster's places as bits, lowest first.
    """
    reach = places
    for _ in range(tokens):
        reach |= reach << 1
    clusters = []
    while places:
        low = (places & -places).bit_length() - 1
        x = reach >> low
        cluster = places & ((~x & (x + 1)) - 1) << low  # the stretch of reach from low up
        clusters.append(cluster)
        places ^= cluster
    return clusters


def cluster_runs(cluster: int, tokens: int, highest: int) -> tuple[MeldRecord, ...]:
    """The runs of one cluster of places (bits, from ``run_clusters``) with up to ``tokens`` jokers.

    Faces are of the first suit (rank ``(place - 1) % 13 + 1``, so place 14 is the ace). Each run
    once (the same cards: an ace held sits low or high, not both; when the low ace is in another
    cluster, the high one never runs alone), with its best kind and the fewest stand-ins: a run
    from place ``lo`` to ``hi`` fills the missing places and, when shorter than 3, grows up to 3
    cards (down from ``highest`` when there is no room above). Inner cards may be left out, each
    replaced by a stand-in. With ``rank_sets``, every cluster of every suit gives the same melds as
    ``enumerate_melds(..., pad=False)``, the stand-ins as printed jokers.
    """
    places = tuple(p for p in range(1, 15) if cluster >> p & 1)
    pure, impure = MeldKind.PURE_SEQUENCE, MeldKind.IMPURE_SEQUENCE
    size = len(places)
    faces = tuple((p - 1) % 13 for p in places)
    bits = [1 << a for a in range(size)]
    lone_high_ace = 0
    if places[-1] == 14:
        if places[0] == 1:  # a high ace is the ace held (index 0)
            bits[-1] = 1
        else:
            lone_high_ace = bits[-1]
    found: dict[int, MeldRecord] = {}  # by (cards as a bit set of indices) * 16 + stand-ins
    for i, lo in enumerate(places):
        held = 0
        for j in range(i, size):
            hi = places[j]
            span = hi - lo + 1
            if span > MAX_RUN_LENGTH:
                break
            missing = span - (j - i + 1)
            if missing > tokens:
                break
            held |= bits[j]
            length = span if span >= MIN_MELD_SIZE else MIN_MELD_SIZE
            k = missing + length - span
            start = lo if lo + length - 1 <= highest else highest - length + 1
            # (the same cards with an ace low and high: the low run is kept)
            if k <= tokens and held != lone_high_ace and held * 16 + k not in found:
                kind = pure if k == 0 else impure
                found[held * 16 + k] = (kind, k, faces[i : j + 1], places[i : j + 1], start, length)
            if j - i < 2 or k >= tokens:
                continue
            for ndrop in range(1, min(j - i - 1, tokens - k) + 1):
                kd = k + ndrop
                for dropped in combinations(range(i + 1, j), ndrop):
                    key = held
                    for d in dropped:
                        key -= bits[d]
                    if key * 16 + kd not in found:
                        at = [a for a in range(i, j + 1) if a not in dropped]
                        naturals = tuple(faces[a] for a in at)
                        positions = tuple(places[a] for a in at)
                        found[key * 16 + kd] = (impure, kd, naturals, positions, start, length)
    return tuple(found.values())


def record_layout(record: MeldRecord) -> tuple[int, ...]:
    """The layout (``MeldShape.layout``) of a record's shape, stand-ins as ``JOKER_FACE``."""
    _kind, k, naturals, positions, start, length = record
    return _layout(naturals, (JOKER_FACE,) * k, positions, start, length)


def record_shape(record: MeldRecord) -> MeldShape:
    """The ``MeldShape`` of a ``cluster_runs`` or ``rank_sets`` record (printed-joker stand-ins)."""
    kind, k, naturals, positions, start, length = record
    return MeldShape(kind, naturals, (JOKER_FACE,) * k, positions, start, length)


def _multisets(pool: list[tuple[int, int]], k: int, printed: int) -> Iterator[tuple[int, ...]]:
    """Multisets of size k: up to ``printed`` printed jokers plus faces of pool (face, max)."""
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


def face_counts(cards: Iterable[Card]) -> Counter[int]:
    """Multiset of internal faces of the cards."""
    return Counter(face_of(c) for c in cards)


def classify_group(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> MeldKind | None:
    """The best kind of meld the cards form as one group (pure, then impure, then set), or ``None``
    (``docs/rules/melds.md#best-kind``).

    Any number of cards; fewer than 3 is never a meld.
    """
    return classify_faces([face_of(c) for c in cards], wild_rank, options)


def classify_faces(
    faces: list[int], wild_rank: int | None, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> MeldKind | None:
    """``classify_group`` on internal faces: every role of each wild-rank card is tried.

    A role choice makes some cards naturals (non-wild cards, wild-rank cards kept in their natural
    place) and the rest stand-ins. Then: no naturals -> a jokers-only group (impure sequence, if
    the option is on, up to 13 cards); one suit, distinct positions spanning at most the group's
    length (at most 13) -> a sequence, pure without stand-ins; 3 or 4 cards whose naturals share a
    rank in distinct suits -> a set.
    """
    n = len(faces)
    if n < MIN_MELD_SIZE:
        return None
    plain = [f for f in faces if f != JOKER_FACE]
    if options.strict_duplicate_faces and len(set(plain)) != len(plain):
        return None
    wild = [f for f in plain if f % 13 + 1 == wild_rank]
    fixed = [f for f in plain if f % 13 + 1 != wild_rank]
    best: MeldKind | None = None
    for roles in range(1 << len(wild)):
        naturals = fixed + [f for b, f in enumerate(wild) if roles >> b & 1]
        kind = naturals_kind(naturals, n, options)
        if kind is not None and (best is None or kind < best):
            best = kind
            if best is MeldKind.PURE_SEQUENCE:
                break
    return best


def naturals_kind(naturals: list[int], n: int, options: MeldOptions) -> MeldKind | None:
    """Best kind of a group of n cards whose naturals are these faces (the rest stand in).

    ``naturals``: faces 0..51 (never ``JOKER_FACE``). ``None`` when no kind fits. Every card a
    natural (``len(naturals) == n``): a pure sequence when they are one suit on distinct
    consecutive positions.
    """
    if not naturals:
        ok = options.jokers_only_group_is_sequence and n <= MAX_RUN_LENGTH
        return MeldKind.IMPURE_SEQUENCE if ok else None
    pure_kind = MeldKind.PURE_SEQUENCE if len(naturals) == n else MeldKind.IMPURE_SEQUENCE
    suit = naturals[0] // 13
    if n <= MAX_RUN_LENGTH and all(f // 13 == suit for f in naturals):
        low = sorted(f % 13 + 1 for f in naturals)
        tries = [low]
        if options.ace_high and low[0] == 1:
            tries.append([*low[1:], 14])
        for places in tries:
            if len(set(places)) == len(places) and places[-1] - places[0] < n:
                return pure_kind
    one_rank = len({f % 13 for f in naturals}) == 1
    if n <= MAX_SET_SIZE and one_rank and len({f // 13 for f in naturals}) == len(naturals):
        return MeldKind.SET
    return None


__all__ = [
    "ACE_PLACES",
    "DEFAULT_MELD_OPTIONS",
    "JOKER_FACE",
    "Meld",
    "MeldKind",
    "MeldOptions",
    "MeldRecord",
    "MeldShape",
    "PLACE_BITS",
    "classify_faces",
    "classify_group",
    "cluster_runs",
    "enumerate_melds",
    "face_counts",
    "face_of",
    "face_rank",
    "naturals_kind",
    "record_shape",
    "rank_sets",
    "record_layout",
    "run_clusters",
]
