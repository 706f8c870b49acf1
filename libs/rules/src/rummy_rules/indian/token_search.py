"""The fast solver search: stand-ins as anonymous tokens, runs listed once per cluster of places.

Printed jokers and wild-rank cards chosen as stand-ins become anonymous tokens (one field of the
state), and melds are listed with the fewest tokens only (``melds.cluster_runs``,
``melds.rank_sets``). The state is a fixed layout of bit fields, so a meld's state value depends on
its faces alone: runs are listed once per cluster of places (moved down to rank 1 and to the first
suit, then moved back per hand) and kept in caches of at most 4,096 entries each, never keyed by
a whole hand (random hands: about 3,400 clusters after 300,000 hands, at most 195 runs in one,
some 33 MB; about 40 MB once full). Costs
and flags as in ``face_search``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, reduce
from operator import or_
from weakref import ref

from rummy_rules.cards import Card
from rummy_rules.indian.face_search import (
    AS_TOKEN,
    DONE,
    FLAG_TABLE,
    IN_PLACE,
    INF,
    LOOSE,
    NEXT_FLAGS_BY_KIND,
    POINTS,
    SCALE,
    cards_by_face,
    left_over,
)
from rummy_rules.melds import (
    ACE_PLACES,
    JOKER_FACE,
    MAX_RUN_LENGTH,
    MAX_SET_SIZE,
    MIN_MELD_SIZE,
    PLACE_BITS,
    Meld,
    MeldKind,
    MeldOptions,
    MeldRecord,
    MeldShape,
    classify_faces,
    cluster_runs,
    face_of,
    naturals_kind,
    rank_sets,
    record_layout,
    record_shape,
    run_clusters,
)

# The token search's state: a fixed layout of _W-bit fields, each a count (0..3) under a guard bit
# (so "contains" is one subtraction). Fields 0..3: each suit's wild-rank cards not yet decided (a
# stand-in, or a card in its natural place); field _NATURAL + face: that face in its natural
# role; the last, wider field: the stand-in tokens (printed jokers and wild cards turned tokens).
# A meld's state value depends on its faces only, so a cluster's runs are listed once, kept, and
# moved to their suit and ranks per hand by a shift.
_W = 3
_FIELD_MASK = (1 << _W) - 1
_NATURAL = 4
_FIELDS = _NATURAL + JOKER_FACE  # the token field's index
_TSHIFT = _W * _FIELDS
_TOKEN = 1 << _TSHIFT
_ONE = [1 << (_W * i) for i in range(_FIELDS + 1)]  # one card in field i
_SHIFT = [_W * (_NATURAL + f) for f in range(JOKER_FACE + 1)]  # a face's field (a printed joker's:
# the tokens)
_WILD_FACES = [[13 * s + w - 1 for s in range(4)] if w else [] for w in range(14)]
_NATURAL_MASK = _TOKEN - 1
_TOKENS_MASK = ((1 << 6) - 1) << _TSHIFT
_GUARD = sum(1 << (_W * i + _W - 1) for i in range(_FIELDS)) | 1 << (_TSHIFT + 5)  # tokens: 0..31
_KEEP = [
    [1 << (_W * (_NATURAL + s * 13 + w - 1)) for s in range(4)] if w else [] for w in range(14)
]
_LOOSE_COST = [[0] * _NATURAL + [p * SCALE + 1 for p in points] for points in POINTS]
# The same, but a wild card kept in its natural place may not stay loose there: made a token
# instead it costs nothing (spare tokens are free), so that branch never wins. Used while every
# spare token can still join one jokers-only group (fewer than 13 stand-ins in all).
_LOOSE_COST_IN_PLACE = [
    [
        INF if _NATURAL <= i < _FIELDS and (i - _NATURAL) % 13 + 1 == w else c
        for i, c in enumerate(costs)
    ]
    for w, costs in enumerate(_LOOSE_COST)
]
# per flags: 0 when any number of spare tokens can finish (tier 1 done); 1 when 3..13 spare tokens
# must make a jokers-only sequence; 2 when nothing can finish (by jokers_only_group_is_sequence)
_FINISH = [
    [
        0
        if f & DONE == DONE
        else 1
        if jo and FLAG_TABLE[f, MeldKind.IMPURE_SEQUENCE] & DONE == DONE
        else 2
        for f in range(8)
    ]
    for jo in (False, True)
]

_Meld = tuple[int, tuple[int, ...], MeldRecord, int]
# (state value, next flags by flags, record, face offset): runs are listed per cluster in the first
# suit from rank 1 up (a cluster that holds a high ace, place 14, where it is); their faces are
# the record's plus the offset (13 x the suit's index + the
# ranks moved up; see ``_moved``); a set's offset is 0.
_Melds = tuple[_Meld, ...]


def _search_meld(record: MeldRecord) -> _Meld:
    vec = record[1] << _TSHIFT
    for f in record[2]:
        vec += 1 << (_W * (_NATURAL + f))
    return vec, NEXT_FLAGS_BY_KIND[record[0]], record, 0


def _moved(record: MeldRecord, off: int) -> MeldRecord:
    """A listed run's record moved ``off`` faces up (to its suit and ranks).

    A set is never moved (``off`` 0). A run moves to suit ``off // 13`` and ``off % 13`` ranks up
    (its positions too; a cluster holding an ace is never moved up a rank).
    """
    if not off:
        return record
    kind, k, naturals, positions, start, length = record
    up = off % 13
    if up:
        positions = tuple(p + up for p in positions)
        start += up
    return kind, k, tuple(f + off for f in naturals), positions, start, length


def _meld_order(meld: _Meld) -> int:
    """Search order of a meld: big melds first (a zero-cost grouping shows up sooner), then kind."""
    record = meld[2]
    return (-len(record[2]) - record[1]) * 4 + record[0]


@dataclass(frozen=True, slots=True)
class _ClusterRuns:
    """The runs of one cluster of places (``melds.run_clusters``), ready for the search.

    Faces are of the first suit, from rank 1 up or, for a cluster that holds place 14 (a high
    ace), in place (a cluster is moved to its suit and ranks per hand). ``by_field``: (field of
    the first card, runs starting there in search order), for each such field. ``used`` /
    ``pure_used`` / ``lone_used``: union of the state values (naturals only) of the runs / of the
    pure sequences / of the runs with one natural card. ``last_pure`` / ``last_seq``: the last
    field where a pure / any sequence starts (-1: none). ``pure``: the records of the pure
    sequences.
    """

    by_field: tuple[tuple[int, _Melds], ...]
    used: int
    pure_used: int
    lone_used: int
    last_pure: int
    last_seq: int
    pure: tuple[MeldRecord, ...]


@lru_cache(maxsize=1 << 12)
def _cluster_runs(places: int, tokens: int, highest: int) -> _ClusterRuns:
    """``melds.cluster_runs`` in search form, kept per (places, stand-ins, highest place).

    The search lists clusters moved down to start at rank 1 (unless they hold a high ace), with the
    stand-ins capped at what the cluster can use, so a few thousand keys cover every hand.
    """
    runs = sorted(map(_search_meld, cluster_runs(places, tokens, highest)), key=_meld_order)
    by_field: dict[int, list[_Meld]] = {}
    used = pure_used = lone_used = 0
    last_pure = last_seq = -1
    pure = []
    for meld in runs:
        record = meld[2]
        first = _NATURAL + min(record[2])
        by_field.setdefault(first, []).append(meld)
        used |= meld[0] & _NATURAL_MASK
        if len(record[2]) == 1:
            lone_used |= meld[0] & _NATURAL_MASK
        last_seq = max(last_seq, first)
        if record[0] is MeldKind.PURE_SEQUENCE:
            last_pure = max(last_pure, first)
            pure.append(record)
            pure_used |= meld[0] & _NATURAL_MASK
    fields = tuple((at, tuple(melds)) for at, melds in by_field.items())
    return _ClusterRuns(fields, used, pure_used, lone_used, last_pure, last_seq, tuple(pure))


def _add_suit_runs(
    by_low: list[_Melds], suit: int, places: int, tokens: int, highest: int, jokers_only: bool
) -> tuple[int, int, int, int, list[tuple[MeldRecord, int]]]:
    """Put the runs of a suit holding ``places`` (bit p: place p; 14: an ace that runs high) into
    ``by_low`` (by the field of their first card, in search order).

    Each cluster's runs (``_cluster_runs``) are moved to the suit and ranks per hand (a cache of
    whole suit holdings measured no quicker). Returns (union of the runs' state values, the same
    for the runs a wild card in its natural place may need (pure sequences; and runs with one
    natural card unless ``jokers_only``: without it three stand-ins make no sequence), last field
    where a pure / any sequence starts (-1: none), (record as listed, face offset) of each pure
    sequence).
    """
    used = pure_used = 0
    last_pure = last_seq = -1
    pure: list[tuple[MeldRecord, int]] = []
    for cluster in run_clusters(places, tokens):
        if cluster.bit_count() + tokens < MIN_MELD_SIZE:
            continue
        low = (cluster & -cluster).bit_length() - 1
        high = cluster.bit_length() - 1
        up = 0 if high == 14 else low - 1  # a cluster is listed from rank 1 up
        room = highest - high  # room above matters for runs of 3 only
        most = high - low - 1  # the most stand-ins one run of the cluster can use
        listed = _cluster_runs(
            cluster >> up,
            min(tokens, max(most, 2)),
            high - up + min(room, 2),
        )
        if not listed.by_field:
            continue
        off = 13 * suit + up
        shift = _W * off
        for at, melds in listed.by_field:
            if off:  # move the runs to this suit and ranks
                melds = tuple(
                    [
                        (((vec & _NATURAL_MASK) << shift) | (vec & _TOKENS_MASK), n, r, off)
                        for vec, n, r, _off in melds
                    ]
                )
            if by_low[at + off]:  # an ace's runs, high and low: two clusters
                melds = tuple(sorted(by_low[at + off] + melds, key=_meld_order))
            by_low[at + off] = melds
        used |= listed.used << shift
        pure_used |= (
            listed.pure_used if jokers_only else listed.pure_used | listed.lone_used
        ) << shift
        if listed.last_seq + off > last_seq:
            last_seq = listed.last_seq + off
        if listed.pure:
            if listed.last_pure + off > last_pure:
                last_pure = listed.last_pure + off
            pure += [(record, off) for record in listed.pure]
    return used, pure_used, last_pure, last_seq, pure


@lru_cache(maxsize=1 << 12)
def _rank_sets(held: tuple[int, ...], tokens: bool) -> tuple[tuple[int, _Meld], ...]:
    """The sets of one rank (``melds.rank_sets``) in search form: (field of the first card, set)."""
    return tuple((_NATURAL + r[2][0], _search_meld(r)) for r in rank_sets(held, int(tokens)))


class TokenSearch:
    """The faster search: jokers as interchangeable tokens.

    Printed jokers and wild-rank cards chosen as stand-ins become anonymous tokens (one field of the
    state), and melds are listed with the fewest tokens only. That is exact when no two stand-ins
    can clash: the lenient duplicate rule, or no wild face held twice (a token's face then never
    meets the same face in its group). Otherwise it is a relaxation: ``walk`` deals the tokens out
    without a clash or reports that it cannot. Wild-rank cards come first in the search order, and
    each copy either sits in its natural place in a meld or turns into a token. Spare tokens at the
    end join a meld with room or form a jokers-only group.
    """

    def __init__(
        self, counts: dict[int, int], wild: int | None, options: MeldOptions, prune: bool = True
    ) -> None:
        self.wild = wild
        self.options = options
        self.jokers_only = options.jokers_only_group_is_sequence
        printed = counts.get(JOKER_FACE, 0)
        wild_faces = [f for f in _WILD_FACES[wild or 0] if f in counts]
        tokens = printed + sum([counts[f] for f in wild_faces])
        self.keep = _KEEP[wild or 0]
        self.undecided = {f: f // 13 for f in wild_faces}
        costs = _LOOSE_COST_IN_PLACE if tokens < MAX_RUN_LENGTH else _LOOSE_COST
        self.loose_cost = costs[wild or 0]
        state = sum([n << _SHIFT[f] for f, n in counts.items()])
        for f, suit in self.undecided.items():  # wild cards start undecided
            state += (counts[f] << (_W * suit)) - (counts[f] << _SHIFT[f])
        self.state = state
        highest = 14 if options.ace_high else 13
        places = reduce(or_, map(PLACE_BITS.__getitem__, counts), 0)
        if highest == 14:
            places |= (places & ACE_PLACES) << 13
        by_low: list[_Melds] = [()] * _FIELDS
        used = pure_used = 0
        # The last search position where a meld of each sort starts: past it, a state that still
        # lacks a pure sequence (or a second sequence) cannot finish tier 1 (the search takes
        # fields in order, so a meld whose first field is behind it can no longer be used).
        last_pure = last_seq = -1
        pure: tuple[int, MeldRecord, int] | None = None  # points, record, face offset
        points = POINTS[wild or 0]
        for suit in range(4):
            held = places >> (16 * suit) & 0xFFFF
            if held.bit_count() + tokens < MIN_MELD_SIZE:
                continue
            suit_used, suit_pure_used, suit_last_pure, suit_last_seq, suit_pure = _add_suit_runs(
                by_low, suit, held, tokens, highest, self.jokers_only
            )
            used |= suit_used
            pure_used |= suit_pure_used
            if suit_last_seq > last_seq:
                last_seq = suit_last_seq
            if suit_pure:
                if suit_last_pure > last_pure:
                    last_pure = suit_last_pure
                for record, off in suit_pure:
                    value = sum([points[f + off] for f in record[2]])
                    if pure is None or value > pure[0]:
                        pure = (value, record, off)
        suits = [places >> (16 * suit) & 0x3FFE for suit in range(4)]  # ranks 1..13 as bits
        a, b, c, d = suits
        in_sets = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)  # in 2 suits or more
        if not tokens:  # 3 suits or more
            in_sets &= (a & b & (c | d)) | (c & d & (a | b))
        while in_sets:
            rank = (in_sets & -in_sets).bit_length() - 1
            in_sets &= in_sets - 1
            faces = tuple([13 * s + rank - 1 for s in range(4) if suits[s] >> rank & 1])
            for at, meld in _rank_sets(faces, tokens > 0):
                used |= meld[0]
                by_low[at] += (meld,)  # after the runs (a set is the worst kind)
        self._pure_run = pure
        self.pure_value = None if pure is None else pure[0]  # points of the best pure sequence
        if self.jokers_only and tokens >= MIN_MELD_SIZE:
            last_seq = _FIELDS  # spare tokens may make a jokers-only sequence at the end
        # by flags (has pure, one sequence, two or more)
        neither, no_pure, no_second = min(last_pure, last_seq), last_pure, last_seq
        self.last_start = [
            neither,
            no_second,
            neither,
            no_second,
            no_pure,
            _FIELDS,
            no_pure,
            _FIELDS,
        ]
        self.by_low = by_low
        self.dead_cost = 0
        self.pre_tokens: list[int] = []
        if prune:
            self._set_aside_dead_cards(counts, used, pure_used)
        # by flags, then state: least cost (exact) or minus a budget it fails (a lower bound)
        self.memo: list[dict[int, int]] = [{} for _ in range(8)]
        self.choice: list[dict[int, _Meld | int | None]] = [{} for _ in range(8)]  # the best move
        self._best = self._make_best()

    def pure_shape(self) -> MeldShape:
        """The most valuable pure sequence (``pure_value`` is not ``None``)."""
        _value, record, off = self._pure_run  # type: ignore[misc]
        return record_shape(_moved(record, off))

    def _set_aside_dead_cards(self, counts: dict[int, int], used: int, pure_used: int) -> None:
        """Take out of the state the cards that no meld can hold, and decide some wild cards.

        A card no meld can hold is loose in every grouping: its cost is added once
        (``dead_cost``). A wild-rank card whose natural place is in no pure sequence is made a
        token at once: in its place it could only sit in an impure sequence or a set, where the
        same card standing in does as well (runs and sets are listed with a stand-in for any of
        their cards), and a spare token costs nothing (never worse than a loose card worth 0).
        The one exception, a run whose only natural card it is when a jokers-only group is no
        sequence, counts as a pure sequence here. ``used`` / ``pure_used``: the union (bitwise or)
        of every meld's state value / of those of the runs a wild card in place may need.
        """
        for f, n in counts.items():
            if f == JOKER_FACE:
                continue
            shift = _SHIFT[f]
            if f in self.undecided:
                if not pure_used >> shift & _FIELD_MASK:
                    self.state += (n << _TSHIFT) - (n << (_W * self.undecided[f]))
                    self.pre_tokens += [f] * n
            elif not used >> shift & _FIELD_MASK:
                self.state -= n << shift
                self.dead_cost += n * self.loose_cost[_NATURAL + f]

    def one_of(self, face: int) -> int:
        """The state value of one card of this face as dealt (wild cards not yet decided)."""
        if face == JOKER_FACE:
            return _TOKEN
        if face in self.undecided:
            return 1 << (_W * self.undecided[face])
        return 1 << (_W * (_NATURAL + face))

    def best(self, state: int, flags: int, budget: int = INF) -> int:
        """Least cost (points * SCALE + loose cards) of a tier-1 grouping of state, or INF.

        Exact when it is below ``budget``; otherwise only a lower bound that is at least
        ``budget`` (branch and bound: a branch is cut as soon as it cannot beat the best so far).
        """
        if budget <= 0:  # every call it makes has a budget above 0
            return 0
        return self._best(state, flags, budget)

    def _make_best(self) -> Callable[[int, int, int], int]:
        """The recursive search as a closure over its tables (local lookups are quicker).

        It calls itself through a weak reference: a closure that named itself would be a reference
        cycle, and its memos would live on until the next garbage collection.
        """
        natural_mask, tshift, width, token, guard = _NATURAL_MASK, _TSHIFT, _W, _TOKEN, _GUARD
        memos, choices = self.memo, self.choice
        keep, by_low, loose_cost = self.keep, self.by_low, self.loose_cost
        last_start = self.last_start
        finish = _FINISH[self.jokers_only]
        ones = _ONE

        def best(state: int, flags: int, budget: int) -> int:
            if not state & natural_mask:
                end = finish[flags]
                if not end:
                    return 0
                spare = state >> tshift
                return 0 if end == 1 and MIN_MELD_SIZE <= spare <= MAX_RUN_LENGTH else INF
            i = (state & -state).bit_length() // width  # the lowest field held
            if i > last_start[flags]:  # no pure (or second) sequence can start any more
                return INF
            memo = memos[flags]
            got = memo.get(state)
            if got is not None:
                if got >= 0:  # exact
                    return got
                if -got >= budget:  # a lower bound that already fails this budget
                    return -got
            one = ones[i]
            again: Callable[[int, int, int], int] = itself()  # type: ignore[assignment]
            bound = budget
            choice: _Meld | int | None = None
            if i < _NATURAL:  # a wild card: a token, or a card in its natural place
                cost = again(state - one + token, flags, bound)
                if cost < bound:
                    bound, choice = cost, AS_TOKEN
                if bound:
                    cost = again(state - one + keep[i], flags, bound)
                    if cost < bound:
                        bound, choice = cost, IN_PLACE
            else:
                guarded = state | guard
                for meld in by_low[i]:
                    vec = meld[0]
                    if (guarded - vec) & guard == guard:
                        cost = again(state - vec, meld[1][flags], bound)
                        if cost < bound:
                            bound, choice = cost, meld
                            if not cost:
                                break
                loose = loose_cost[i]
                if loose < bound:
                    cost = again(state - one, flags, bound - loose) + loose
                    if cost < bound:
                        bound, choice = cost, LOOSE
            if bound < budget:
                memo[state] = bound
                choices[flags][state] = choice
                return bound
            memo[state] = -budget
            return budget

        itself = ref(best)  # best calls itself through it (a weak reference: no cycle)
        return best

    def walk(
        self, hand: list[Card], faces: list[int], cost: int
    ) -> tuple[tuple[Meld, ...], tuple[Card, ...]] | None:
        """Melds and deadwood of a least-cost tier-1 grouping of the whole hand (cost is finite).

        The tokens are handed out as physical cards so that no group repeats a face when the
        strict duplicate rule is on; ``None`` when this grouping cannot be dealt that way (then the
        caller falls back to the general search).
        """
        state, flags = self.state, 0
        chosen: list[_Meld] = []
        to_tokens: list[int] = list(self.pre_tokens)
        choices = self.choice
        while state & _NATURAL_MASK:
            i = (state & -state).bit_length() // _W
            one = _ONE[i]
            choice = choices[flags][state]  # every state on the best path was solved exactly
            if choice == IN_PLACE:
                state += self.keep[i] - one
            elif choice == AS_TOKEN:
                to_tokens.append(i * 13 + self.wild - 1)  # type: ignore[operator]
                state += _TOKEN - one
            elif choice == LOOSE:
                state -= one
            else:
                meld: _Meld = choice  # type: ignore[assignment]
                chosen.append(meld)
                state -= meld[0]
                flags = meld[1][flags]
        pool = cards_by_face(hand, faces)
        tokens = pool.pop(JOKER_FACE, [])
        token_faces = [JOKER_FACE] * len(tokens) + to_tokens  # in the search's faces, as ``pool``
        for f in to_tokens:
            tokens.append(pool[f].pop())
        strict = self.options.strict_duplicate_faces
        kinds = [meld[2][0] for meld in chosen]
        dealt = _hand_out_tokens(chosen, tokens, token_faces, strict)
        if dealt is None:
            return None
        groups, spare = dealt
        melds: list[list[Card]] = []
        for (_vec, _nexts, record, off), given in zip(chosen, groups, strict=True):
            layout = record_layout(record)
            if given:
                it = iter(given)
                melds.append([pool[f + off].pop() if f != JOKER_FACE else next(it) for f in layout])
            else:
                melds.append([pool[f + off].pop() for f in layout])
        if spare:
            if flags & DONE != DONE:  # the spare tokens are one jokers-only group
                if strict and _clash(spare):
                    return None
                melds.append(spare)
                kinds.append(MeldKind.IMPURE_SEQUENCE)
            else:
                highest = 14 if self.options.ace_high else 13
                shapes = [record_shape(_moved(m[2], m[3])) for m in chosen]
                loose = _absorb(melds, kinds, shapes, spare, strict, highest)
                if loose and cost == 0:
                    return None
        out = []
        wild = self.wild
        for cards, kind in zip(melds, kinds, strict=True):
            if (
                self.undecided
                and kind is not MeldKind.PURE_SEQUENCE
                and any(c.rank == wild for c in cards)
            ):
                # Report each meld's best kind: a wild card may read better in another role. An
                # impure sequence can only become pure: every card natural, all of one suit.
                group = [face_of(c) for c in cards]
                if kind is MeldKind.SET:
                    better = classify_faces(group, wild, self.options)
                    if better is None:  # pragma: no cover - every dealt group is a meld
                        return None
                    kind = better
                elif (
                    JOKER_FACE not in group
                    and naturals_kind(group, len(group), self.options) is MeldKind.PURE_SEQUENCE
                ):
                    kind = MeldKind.PURE_SEQUENCE
            out.append(Meld(kind, tuple(cards)))
        return tuple(out), left_over(hand, [m.cards for m in out])


def _clash(cards: list[Card]) -> bool:
    """Two cards of one face (printed jokers aside)."""
    faces = [face_of(c) for c in cards if c.rank is not None]
    return len(set(faces)) != len(faces)


def _hand_out_tokens(
    chosen: list[_Meld], tokens: list[Card], token_faces: list[int], strict: bool
) -> tuple[list[list[Card]], list[Card]] | None:
    """Physical token cards for each meld's stand-ins and the spare ones, or ``None``.

    ``token_faces``: each token's face as the search numbers faces, like the melds' records (the
    caller may have moved some suits first), never ``face_of`` of the card itself. Under the
    lenient rule any order works. Under the strict rule a stand-in's face must differ from every
    other face of its group: a small backtracking over distinct token faces; ``None`` when no
    clash-free way exists.
    """
    need = [meld[2][1] for meld in chosen]
    if strict:
        named = [f for f in token_faces if f != JOKER_FACE]
        if named:
            natural = {f + meld[3] for meld in chosen for f in meld[2][2]}
            strict = len(set(named)) != len(named) or not natural.isdisjoint(named)
        else:  # printed jokers only
            strict = False
    if not strict:  # no stand-in can meet its own face: any order works
        out, at = [], 0
        for k in need:
            out.append(tokens[at : at + k])
            at += k
        return out, tokens[at:]
    by_face: dict[int, list[Card]] = {}
    for f, c in zip(token_faces, tokens, strict=True):
        by_face.setdefault(f, []).append(c)
    slots = [g for g, k in enumerate(need) for _ in range(k)]
    chosen_cards: list[list[Card]] = [[] for _ in chosen]
    taken: list[set[int]] = [{f + meld[3] for f in meld[2][2]} for meld in chosen]
    if not _place(0, slots, by_face, chosen_cards, taken):
        return None
    return chosen_cards, [c for cards in by_face.values() for c in cards]


def _place(
    n: int,
    slots: list[int],
    by_face: dict[int, list[Card]],
    chosen: list[list[Card]],
    taken: list[set[int]],
) -> bool:
    """Fill stand-in slots n.. (slot: its group's index) from ``by_face``, no face twice a group."""
    if n == len(slots):
        return True
    g = slots[n]
    for f, cards in by_face.items():
        if not cards or (f != JOKER_FACE and f in taken[g]):
            continue
        card = cards.pop()
        chosen[g].append(card)
        taken[g].add(f)
        if _place(n + 1, slots, by_face, chosen, taken):
            return True
        chosen[g].pop()
        if f != JOKER_FACE:
            taken[g].discard(f)
        cards.append(card)
    return False


def _absorb(
    melds: list[list[Card]],
    kinds: list[MeldKind],
    shapes: list[MeldShape],
    spare: list[Card],
    strict: bool,
    highest: int,
) -> list[Card]:
    """Put spare tokens into melds with room (no clash under the strict rule); return the rest.

    A sequence grows up to 13 cards inside positions 1..highest (after its top, then before its
    start); a set up to 4 cards. A pure sequence turns impure when it takes one, so the last pure
    sequence never does (the grouping must keep one), and the others only after every other meld.
    """
    left = []
    for card in spare:
        f = face_of(card)
        pure = [j for j, kind in enumerate(kinds) if kind is MeldKind.PURE_SEQUENCE]
        others = [j for j, kind in enumerate(kinds) if kind is not MeldKind.PURE_SEQUENCE]
        for j in others + (pure if len(pure) > 1 else []):
            cards = melds[j]
            if strict and card.rank is not None and any(face_of(c) == f for c in cards):
                continue
            kind = kinds[j]
            if kind is MeldKind.SET:
                if len(cards) < MAX_SET_SIZE:
                    cards.append(card)
                    break
                continue
            if len(cards) >= MAX_RUN_LENGTH:
                continue
            shape = shapes[j]
            if not shape.positions:
                cards.append(card)
            else:
                grown = len(cards) - shape.length
                if shape.top + grown < highest:
                    cards.append(card)
                elif shape.start > 1:
                    cards.insert(0, card)
                    # the window moved down one place: keep top + grown right
                    shapes[j] = MeldShape(
                        shape.kind,
                        shape.naturals,
                        shape.standins,
                        shape.positions,
                        shape.start - 1,
                        shape.length + 1,
                    )
                else:
                    continue
            kinds[j] = MeldKind.IMPURE_SEQUENCE
            break
        else:
            left.append(card)
    return left


MAX_CARDS = 16  # the token field holds 31; 16 keeps the token hand-out's backtracking small


def token_search_fits(counts: dict[int, int], size: int) -> bool:
    """Whether a hand fits the token search's layout (16 cards at most, 3 copies of a face).

    Printed jokers are tokens: any number of them fits.
    """
    most = max([n for f, n in counts.items() if f != JOKER_FACE], default=0)
    return size <= MAX_CARDS and most <= _FIELD_MASK >> 1


def token_search_exact(counts: dict[int, int], wild: int | None, options: MeldOptions) -> bool:
    """Whether the token search's least cost is the hand's own (no clash between stand-ins).

    Otherwise (strict rule, a wild face held twice) it is a lower bound, exact whenever its
    grouping can be dealt without a clash (``TokenSearch.walk``).
    """
    if not options.strict_duplicate_faces:
        return True
    return not any(c > 1 for f, c in counts.items() if f != JOKER_FACE and f % 13 + 1 == wild)


def clear_caches() -> None:
    """Forget the meld lists kept per cluster of places (rebuilt on demand; for benchmarks)."""
    for cached in (_cluster_runs, _rank_sets):
        cached.cache_clear()
