"""Whether a recorded HandEnded's arrangements are legitimate alternatives to the re-derived ones
(Indian points; replay asks through the variant's bundle, ``VariantBundle.equivalent_results``).

The solver picks one of several equally good arrangements of a hand; which one may change between
versions of the rules library. A dispute tool must stay valid across such changes, so a recorded
grouping that differs from today's choice is accepted ("equivalent arrangement") when, seat by
seat, everything else in HandEnded is identical (outcome, points, cards, settlement: compared by
the caller) and the recorded grouping is itself legitimate:

- every meld is a group of the kind it states (``rummy_rules.melds.classify_group`` under the
  hand's wild rank and meld options reports exactly that kind);
- the melds plus the deadwood are exactly the seat's cards (as a multiset);
- the grouping is one the tiers allow (tier 1: a pure sequence and a second sequence, every meld
  counts; tier 2: the one pure sequence alone; tier 3: no meld), and its deadwood points equal the
  points of the re-derived best arrangement (so the recorded points are that grouping's scoring);
- it is a valid declaration exactly when the re-derived one is (tier 1 with no deadwood).
"""

from __future__ import annotations

from collections import Counter

from .. import events as ev
from ..melds import MeldKind, MeldOptions, classify_group
from ..wild import WildRank, hand_points
from .rules import indian_rules
from .state import HandState

_KINDS = {k.name.lower(): k for k in MeldKind}


def _faces(cards: tuple[object, ...]) -> str:
    return " ".join(str(getattr(c, "face", c)) for c in cards)


def _tier(kinds: list[MeldKind]) -> int | None:
    """The tier a grouping with melds of these kinds scores in, or None if no tier allows it."""
    if not kinds:
        return 3
    sequences = sum(1 for k in kinds if k.is_sequence)
    if MeldKind.PURE_SEQUENCE in kinds and sequences >= 2:
        return 1
    if kinds == [MeldKind.PURE_SEQUENCE]:
        return 2
    return None


def arrangement_problem(
    recorded: ev.SeatResult, derived: ev.SeatResult, wild_rank: WildRank, options: MeldOptions
) -> str:
    """Why ``recorded``'s melds and deadwood are not an equally good arrangement of its cards
    (compared with the re-derived ``derived``), or ``""`` if they are. Only the arrangement is
    judged; outcome, points and cards are the caller's to compare."""
    seat = f"seat {recorded.seat}"
    if not derived.melds and not derived.deadwood:
        return f"{seat} is charged a fixed penalty, yet an arrangement is recorded"
    kinds: list[MeldKind] = []
    for k, meld in enumerate(recorded.melds):
        kind = _KINDS.get(meld.kind)
        actual = classify_group(meld.cards, wild_rank, options)
        if actual is None:
            return f"{seat} meld {k + 1} ({_faces(meld.cards)}) is no valid group"
        if kind is not actual:
            return (
                f"{seat} meld {k + 1} ({_faces(meld.cards)}) is labelled {meld.kind!r}, "
                f"it is a {actual.name.lower()}"
            )
        kinds.append(kind)
    grouped = Counter(c for m in recorded.melds for c in m.cards) + Counter(recorded.deadwood)
    if grouped != Counter(recorded.cards):
        extra = grouped - Counter(recorded.cards)
        missing = Counter(recorded.cards) - grouped
        return (
            f"{seat} melds + deadwood are not its cards (extra: {_faces(tuple(extra.elements()))}"
            f"; missing: {_faces(tuple(missing.elements()))})"
        )
    tier = _tier(kinds)
    if tier is None:
        shown = ", ".join(k.name.lower() for k in kinds)
        return f"{seat} melds ({shown}) are a grouping no scoring tier allows"
    points = hand_points(recorded.deadwood, wild_rank)
    best = hand_points(derived.deadwood, wild_rank)
    if points != best:
        return f"{seat} arrangement scores {points} points, the best arrangement {best}"
    valid = tier == 1 and not recorded.deadwood
    best_valid = bool(derived.melds) and not derived.deadwood
    if valid != best_valid:
        return f"{seat} arrangement is {'a' if valid else 'no'} valid declaration, the best is " + (
            "one" if best_valid else "not"
        )
    return ""


def equivalent_seats(
    recorded: ev.HandEnded, derived: ev.HandEnded, wild_rank: WildRank, options: MeldOptions
) -> tuple[list[int], str]:
    """The seats whose recorded arrangement differs from the re-derived one but is equally good,
    and ``""``; or ``([], why)`` when the two HandEnded differ in anything else (winner, outcome,
    points, cards, settlement) or a recorded arrangement is not legitimate. ``why`` is ``""`` for
    a difference outside the arrangements (the caller reports it field by field)."""
    if (
        recorded.winner_seat != derived.winner_seat
        or recorded.settlement != derived.settlement
        or recorded.at_ms != derived.at_ms
        or len(recorded.results) != len(derived.results)
    ):
        return [], ""
    seats = []
    for a, b in zip(recorded.results, derived.results, strict=True):
        same = (a.seat, a.account_id, a.outcome, a.points, a.cards)
        if same != (b.seat, b.account_id, b.outcome, b.points, b.cards):
            return [], ""
        if (a.melds, a.deadwood) == (b.melds, b.deadwood):
            continue
        problem = arrangement_problem(a, b, wild_rank, options)
        if problem:
            return [], problem
        seats.append(a.seat)
    return seats, ""


def equivalent_results(
    state: object, recorded: ev.HandEnded, derived: ev.HandEnded
) -> tuple[list[int], str]:
    """:func:`equivalent_seats` under the hand's wild rank and meld options (``state``: the
    Indian hand's state before the HandEnded); ``([], "")`` for a state that is not one."""
    if not isinstance(state, HandState) or state.rule_set is None:
        return [], ""
    options = indian_rules(state.rule_set).meld_options
    return equivalent_seats(recorded, derived, state.wild_rank, options)
