"""The exact best arrangement of a hand, whether it is a valid declaration, and valid discards.

Points of a hand (``docs/rules/declaration.md#points-of-a-hand``) are the minimum, over every way
of grouping it, of:

1. two or more sequences of which one is pure: the loose cards (deadwood) count;
2. a pure sequence but no second sequence: every card counts except that one run (sets don't help);
3. no pure sequence: every card counts.

Printed jokers and wild-rank cards are worth 0 wherever they sit. Points are uncapped here (a cap is
a scoring rule). A hand is a valid declaration (``docs/rules/declaration.md#valid-declaration``)
when some grouping puts every card in a meld with at least two sequences, one of them pure. Any
hand size works (13 to judge a show, 14 before a discard).

Method (exact). Identical faces (two 7H of two decks, printed jokers) are interchangeable, so a
hand is a multiset of faces packed into one int (bit fields with a guard bit each, to test
"contains" in one subtraction). Quick exits first: no three same-suit neighbours means no pure
sequence (tier 3); at most one joker and too few cards that could sit in sequences means no second
sequence (tier 2, the most valuable natural run). Otherwise a memoised search takes the first
face left and either leaves one copy loose or uses a meld whose first face it is, tracking (has a
pure sequence, sequences so far capped at 2). The cost minimised is (points, number of loose
cards), so points are minimal and a zero means a valid show. The search is branch and bound: it
only needs costs that beat tier 2, and a branch stops as soon as it cannot beat the best found so
far; a state that still lacks a pure sequence (or a second sequence) is dropped once the search
has passed the last face where such a meld can start; cards that no meld can hold are set aside
as loose before it starts.

Hands of up to 16 cards with at most 3 copies of a face (printed jokers aside) use
``token_search.TokenSearch`` (stand-ins as anonymous tokens, melds
with the fewest tokens, runs listed once per cluster of places and kept); under the strict
duplicate rule with a wild face held twice its least cost is a lower bound, and it is the answer
whenever the winning grouping can be dealt out without a clash, else the general
``face_search.FaceSearch`` over every face decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from operator import or_

from rummy_rules.cards import Card
from rummy_rules.indian import token_search
from rummy_rules.indian.face_search import INF, POINTS, SCALE, FaceSearch, deal_out
from rummy_rules.indian.token_search import TokenSearch, token_search_exact, token_search_fits
from rummy_rules.melds import (
    ACE_PLACES,
    DEFAULT_MELD_OPTIONS,
    JOKER_FACE,
    MAX_RUN_LENGTH,
    MIN_MELD_SIZE,
    PLACE_BITS,
    Meld,
    MeldKind,
    MeldOptions,
    MeldShape,
    face_of,
)
from rummy_rules.wild import WildRank


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A hand's best arrangement (``docs/rules/declaration.md#best-arrangement``).

    ``melds``: the groups that count (tier 1: all melds; tier 2: the one pure sequence discounted;
    tier 3: none). ``deadwood``: every card that counts. ``points``: the sum of the deadwood's
    points, uncapped. ``valid``: the hand is a valid declaration (then ``points`` is 0 and
    ``deadwood`` empty).
    """

    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int
    valid: bool


_Profile = tuple[dict[int, int], int, tuple[int, ...]]  # see _profile


def _profile(faces: list[int], wild: int | None, ace_high: bool) -> _Profile | None:
    """(face counts, total points, positions held by suit and copies), or ``None`` (tier 3).

    Positions: entry ``copies * 4 + suit`` has bit p set when the suit holds position p (1..13,
    and 14 for a high ace) more than ``copies`` times (``copies`` 0..2: up to three decks); empty
    when a face is held more than three times. ``None`` when no suit holds three consecutive
    positions: no pure sequence, so every card counts.
    """
    # every suit's places in one int (melds.PLACE_BITS: 16 bits a suit; a printed joker is none)
    lanes = reduce(or_, map(PLACE_BITS.__getitem__, faces), 0)
    if ace_high:
        lanes |= (lanes & ACE_PLACES) << 13
    if not lanes & (lanes >> 1) & (lanes >> 2):  # lanes never meet: bits 0 and 15 stay clear
        return None
    counts: dict[int, int] = {}
    for f in faces:
        counts[f] = counts.get(f, 0) + 1
    total = sum(map(POINTS[wild or 0].__getitem__, faces))
    held = [lanes & 0xFFFF, lanes >> 16 & 0xFFFF, lanes >> 32 & 0xFFFF, lanes >> 48] + [0] * 8
    if len(counts) < len(faces):  # some face held twice or more
        top = 1 << 14 if ace_high else 0
        for f, n in counts.items():
            if n > 1 and f != JOKER_FACE:
                if n > 3:  # no real shoe: no quick test
                    return counts, total, ()
                bit, suit = 2 << (f % 13), f // 13
                held[4 + suit] |= bit | (top if bit == 2 else 0)
                if n > 2:
                    held[8 + suit] |= bit | (top if bit == 2 else 0)
    return counts, total, tuple(held)


def _lone_pure_run(
    counts: dict[int, int], held: tuple[int, ...], wild: int | None
) -> tuple[int, MeldShape] | None:
    """The best pure run, when no grouping of the hand can hold two sequences; else ``None``.

    A quick necessary test for tier 1 with at most one joker (printed or wild rank): every
    sequence holds 3 natural cards of a run of held positions (no joker) or 2 naturals at most 2
    apart (one joker), so too few such cards rule out a second sequence. Cards are counted with
    their copies (an ace once low and once high: an over-count only makes the test weaker).
    Then the best pure sequence is the most valuable maximal run of held positions of one suit.
    ``held``: positions held, as ``_profile`` gives them (empty: no quick test, ``None``).
    """
    jokers = counts.get(JOKER_FACE, 0)
    if wild is not None:
        jokers += (
            counts.get(wild - 1, 0)
            + counts.get(12 + wild, 0)
            + counts.get(25 + wild, 0)
            + counts.get(38 + wild, 0)
        )
    if jokers > 1 or not held:
        return None
    runs = in_run = paired = 0
    for s in range(4):
        m = held[s]
        win = m & (m >> 1) & (m >> 2)
        covered = win | win << 1 | win << 2
        near = m & ((m >> 1) | (m >> 2) | (m << 1) | (m << 2))
        a = (covered & m).bit_count()
        b = (near & m).bit_count()
        if held[4 + s]:
            a += (covered & held[4 + s]).bit_count() + (covered & held[8 + s]).bit_count()
            b += (near & held[4 + s]).bit_count() + (near & held[8 + s]).bit_count()
        runs += a // 3
        in_run += a
        paired += b
    if runs >= 2 or (jokers == 1 and in_run >= 3 and paired >= 5):
        return None
    points = POINTS[wild or 0]
    best: tuple[int, MeldShape] | None = None
    for s in range(4):
        m = held[s]  # bit p: position p held (1..13, and 14 for a high ace)
        if not m & (m >> 1) & (m >> 2):
            continue
        while m:  # each maximal run of held positions p .. q - 1
            p = (m & -m).bit_length() - 1
            x = m >> p
            q = p + (~x & (x + 1)).bit_length() - 1
            m &= ~((1 << q) - 1)
            if q - p >= MIN_MELD_SIZE:
                hi = min(q - 1, p + MAX_RUN_LENGTH - 1)
                faces = tuple(s * 13 + (r - 1) % 13 for r in range(p, hi + 1))
                value = sum(points[f] for f in faces)
                if best is None or value > best[0]:
                    positions = tuple(range(p, hi + 1))
                    shape = MeldShape(MeldKind.PURE_SEQUENCE, faces, (), positions, p, hi - p + 1)
                    best = (value, shape)
    return best


def _has_run(places: int) -> bool:
    """Whether three consecutive places are held (bit p: place p)."""
    return bool(places & (places >> 1) & (places >> 2))


def _suits_first(suits: list[int]) -> list[int] | None:
    """A face map (``JOKER_FACE`` kept) that moves ``suits`` to the front, others after in order."""
    moved = suits + [s for s in range(4) if s not in suits]
    if moved == [0, 1, 2, 3]:
        return None
    to = [moved.index(s) for s in range(4)]
    return [to[f // 13] * 13 + f % 13 for f in range(JOKER_FACE)] + [JOKER_FACE]


# By the bit set of suits that hold a run of three places: the face map that moves them first, or
# None. The search drops a state that still lacks a pure sequence once it is past every field
# where one starts, so taking those suits first drops such states sooner (about a fifth fewer
# states on random hands); points and validity never depend on which suit is which.
_PURE_SUITS_FIRST = [_suits_first([s for s in range(4) if mask >> s & 1]) for mask in range(16)]


def _wild_int(wild_rank: WildRank) -> int | None:
    if wild_rank is None:
        return None
    if isinstance(wild_rank, bool) or not isinstance(wild_rank, int) or not 1 <= wild_rank <= 13:
        raise ValueError(f"the wild rank is a Rank (1..13) or None, not {wild_rank!r}")
    return int(wild_rank)


def best_arrangement(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> Arrangement:
    """The arrangement of least points of a hand of any size, and whether it is a valid declaration
    (``docs/rules/declaration.md#points-of-a-hand``).

    Points are uncapped (at most 10 per card). Cards are physical cards (duplicates across decks are
    fine; the same card object listed twice counts as two cards). Raises nothing for any list of
    cards; an empty hand scores 0 and is not valid. Raises ValueError when ``wild_rank`` is neither
    a ``Rank`` (an int 1..13) nor ``None``.
    """
    hand = list(cards)
    wild = _wild_int(wild_rank)
    faces = list(map(face_of, hand))
    profile = _profile(faces, wild, options.ace_high)
    if profile is None:  # no pure sequence: every card counts
        return Arrangement((), tuple(hand), sum(map(POINTS[wild or 0].__getitem__, faces)), False)
    counts, total, held = profile
    lone = _lone_pure_run(counts, held, wild)
    if lone is not None:
        melds, deadwood = deal_out(hand, faces, [lone[1]])
        return Arrangement(melds, deadwood, total - lone[0], False)
    order = _PURE_SUITS_FIRST[sum(1 << s for s in range(4) if held and _has_run(held[s]))]
    if order is not None:  # suits are alike: the search takes those that hold a pure run first
        faces = list(map(order.__getitem__, faces))
        counts = {order[f]: n for f, n in counts.items()}
    search: FaceSearch | TokenSearch
    if token_search_fits(counts, len(hand)):
        search = TokenSearch(counts, wild, options)
    else:
        search = FaceSearch(counts, wild, options)
    pure_value = search.pure_value
    if pure_value is None:  # pragma: no cover - neighbours always make a pure run
        return Arrangement((), tuple(hand), total, False)
    tier2 = total - pure_value
    dead = search.dead_cost  # cards in no meld: a lower bound of the tier-1 cost
    if dead // SCALE >= tier2 > 0:  # tier 1 cannot beat tier 2
        cost = INF
    else:
        cost = dead + search.best(search.state, 0, (tier2 + 1) * SCALE - dead)
    if cost // SCALE <= tier2:
        found = search.walk(hand, faces, cost)
        if found is None:  # a clash the token search cannot see: search the faces themselves
            search = FaceSearch(counts, wild, options)
            cost = search.best(search.state, 0)
            if cost // SCALE <= tier2:
                found = search.walk(hand, faces, cost)
        if found is not None:
            melds, deadwood = found
            return Arrangement(melds, deadwood, cost // SCALE, cost == 0)
    melds, deadwood = deal_out(hand, faces, [search.pure_shape()])
    return Arrangement(melds, deadwood, tier2, False)


def valid_discards(
    cards: Iterable[Card], wild_rank: WildRank, options: MeldOptions = DEFAULT_MELD_OPTIONS
) -> tuple[Card, ...]:
    """The cards whose discard leaves a valid declaration, in hand order (every physical copy;
    ``docs/rules/declaration.md#valid-discards``).

    Typically called with 14 cards (draw done, one to lay face down); any size works. Empty when no
    discard leaves a valid show. Raises ValueError for a wild rank as ``best_arrangement`` does.
    """
    hand = list(cards)
    wild = _wild_int(wild_rank)
    faces = [face_of(c) for c in hand]
    profile = _profile(faces, wild, options.ace_high)
    if len(hand) < 2 or profile is None:
        return ()
    counts = profile[0]
    search: FaceSearch | TokenSearch
    if token_search_fits(counts, len(hand)):
        search = TokenSearch(counts, wild, options, prune=False)
    else:
        search = FaceSearch(counts, wild, options)
    exact = isinstance(search, FaceSearch) or token_search_exact(counts, wild, options)
    ok: dict[int, bool] = {}
    for at, f in enumerate(faces):
        if f in ok:
            continue
        ok[f] = search.best(search.state - search.one_of(f), 0, 1) == 0
        if ok[f] and not exact:  # the token search may have seen a show that clashes: check it
            ok[f] = best_arrangement(hand[:at] + hand[at + 1 :], wild_rank, options).valid
    return tuple(c for c, f in zip(hand, faces, strict=True) if ok[f])


def clear_caches() -> None:
    """Forget the meld lists kept per cluster of places (rebuilt on demand; for benchmarks)."""
    token_search.clear_caches()


__all__ = ["Arrangement", "best_arrangement", "clear_caches", "valid_discards"]
