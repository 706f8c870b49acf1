"""Rummy 500 properties (docs/rules/rummy500.md), with hypothesis:

- a group is a meld exactly when a brute-force list of every set and run says so;
- a round's scores equal an oracle's, worked from the event log alone;
- a dig is listed and accepted exactly when a brute-force search finds a meld (any subset of the
  hand and the cards taken) or a lay-off for the deepest card taken; a refused one changes
  nothing;
- random whole rounds at 2 to 8 seats (one deck, two decks; 7 or 13 cards) through the variant:
  after every event each card of the shoe is in exactly one place (stock, pile, a hand, a meld),
  ``fold(events)`` equals the live state, and no seat's view shows another seat's hand.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from itertools import combinations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy500_rounds import Round

from rummy_rules.cards import RANKS, SUITS, Card, Rank
from rummy_rules.commands import LeaveHand, TurnTimeout
from rummy_rules.errors import RuleViolation
from rummy_rules.events import CardDrawn, Event, HandDealt, HandEnded
from rummy_rules.rummy500 import play
from rummy_rules.rummy500.melds import TableMeld, group_kind, laid_out
from rummy_rules.rummy500.play import (
    Rummy500LaidOff,
    Rummy500Melded,
    Rummy500RoundEnded,
    Rummy500TakeFromPile,
)
from rummy_rules.rummy500.rules import rummy500_rule_set
from rummy_rules.rummy500.variant import RUMMY500

DECK = tuple(Card(r, s) for s in SUITS for r in RANKS)
TWO_DECKS = DECK + tuple(replace(c, copy=1) for c in DECK)


# -- the oracles -----------------------------------------------------------------------------------


def _all_melds() -> dict[frozenset[str], str]:
    """Every set and run of one deck as a set of faces (runs: every window of the places
    A(1)..K(13) and 2..A(14))."""
    out: dict[frozenset[str], str] = {}
    for rank in RANKS:
        faces = [Card(rank, s).face for s in SUITS]
        for size in (3, 4):
            for combo in combinations(faces, size):
                out[frozenset(combo)] = "set"
    for suit in SUITS:
        places = {p: Card(Rank(p if p <= 13 else 1), suit).face for p in range(1, 15)}
        for low in range(1, 15):
            for high in range(low + 2, 15):
                if high - low + 1 > 13:
                    continue
                out[frozenset(places[p] for p in range(low, high + 1))] = "run"
    return out


MELDS = _all_melds()
THREE_CARD_MELDS = sorted((m for m in MELDS if len(m) == 3), key=sorted)


def oracle_kind(cards: tuple[Card, ...]) -> str | None:
    faces = [c.face for c in cards]
    if len(set(faces)) != len(faces):
        return None
    return MELDS.get(frozenset(faces))


def oracle_points(card: Card, meld_cards: tuple[Card, ...], low_ace_one: bool) -> int:
    assert card.rank is not None
    if card.rank is Rank.ACE:
        low = any(c.rank is Rank.TWO for c in meld_cards) and len({c.suit for c in meld_cards}) == 1
        return 1 if low_ace_one and low else 15
    return 10 if card.rank >= Rank.JACK else int(card.rank)


def oracle_scores(events: list[Event], low_ace_one: bool) -> dict[int, int]:
    """Each seat's score from the events alone: the final content of every meld, each card
    credited to who melded or laid it, minus the hands the round's end shows."""
    contents: dict[int, list[Card]] = {}
    credit: list[tuple[int, int, Card]] = []
    for e in events:
        if isinstance(e, Rummy500Melded):
            contents[e.meld_id] = list(e.cards)
            credit += [(e.seat, e.meld_id, c) for c in e.cards]
        elif isinstance(e, Rummy500LaidOff):
            contents[e.meld_id].append(e.card)
            credit.append((e.seat, e.meld_id, e.card))
    end = next(e for e in events if isinstance(e, Rummy500RoundEnded))
    out = {s.seat: 0 for s in end.scores}
    for seat, meld_id, card in credit:
        out[seat] += oracle_points(card, tuple(contents[meld_id]), low_ace_one)
    for s in end.scores:
        out[s.seat] -= sum(oracle_points(c, (), False) for c in s.cards)
    return out


def oracle_dig(
    hand: tuple[Card, ...], taken: tuple[Card, ...], melds: tuple[TableMeld, ...]
) -> bool:
    deepest = taken[0]
    pool = [c for c in (*hand, *taken) if c != deepest]
    for meld in melds:
        if oracle_kind((*meld.all_cards, deepest)) == meld.kind:
            return True
    for size in range(2, min(len(pool), 12) + 1):
        for combo in combinations(pool, size):
            if oracle_kind((deepest, *combo)) is not None:
                return True
    return False


# -- meld and dig properties -----------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TWO_DECKS), min_size=1, max_size=7, unique=True))
def test_a_group_is_a_meld_exactly_when_the_brute_force_list_says_so(group: list[Card]) -> None:
    assert group_kind(group) == oracle_kind(tuple(group))


def _small_table(draw: st.DrawFn) -> tuple[play.Rummy500Play, tuple[Card, ...]]:
    cards = draw(st.permutations(DECK))
    n_hand = draw(st.integers(0, 6))
    n_pile = draw(st.integers(1, 6))
    hand = tuple(cards[:n_hand])
    pile = tuple(cards[n_hand : n_hand + n_pile])
    rest = list(cards[n_hand + n_pile :])
    melds: list[TableMeld] = []
    for _ in range(draw(st.integers(0, 3))):
        faces = draw(st.sampled_from(THREE_CARD_MELDS))
        chosen = tuple(c for c in rest if c.face in faces)
        if len(chosen) == 3:
            rest = [c for c in rest if c not in chosen]
            kind = MELDS[faces]
            melds.append(TableMeld(len(melds) + 1, 1, kind, laid_out(kind, chosen)))
    state = play.Rummy500Play(
        phase=play.Phase.DRAW,
        seats=(0, 1),
        hands=(hand, ()),
        stock=tuple(rest),
        pile=pile,
        melds=tuple(melds),
        turn_seat=0,
        turn_no=1,
        misses=(0, 0),
    )
    return state, hand


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_dig_is_listed_exactly_when_the_brute_force_finds_a_use_for_the_deepest_card(
    data: st.DataObject,
) -> None:
    state, hand = data.draw(st.composite(_small_table)())
    listed = {c.depth for c in play.legal_commands(state, 0) if isinstance(c, Rummy500TakeFromPile)}
    for depth in range(1, len(state.pile) + 1):
        taken = state.pile[-depth:]
        assert (depth in listed) == oracle_dig(hand, taken, state.melds), depth


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_dig_is_accepted_exactly_when_its_meld_or_lay_off_uses_the_deepest_card(
    data: st.DataObject,
) -> None:
    state, hand = data.draw(st.composite(_small_table)())
    depth = data.draw(st.integers(1, len(state.pile)))
    taken = state.pile[-depth:]
    pool = (*hand, *taken)
    lay_off = bool(state.melds) and data.draw(st.booleans())
    if lay_off:
        target = data.draw(st.sampled_from(state.melds))
        command = Rummy500TakeFromPile(
            seat=0, turn_no=1, depth=depth, lay_off_on=target.meld_id, at_ms=0
        )
        ok = oracle_kind((*target.all_cards, taken[0])) == target.kind
    else:
        group = tuple(
            data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5, unique=True))
        )
        command = Rummy500TakeFromPile(seat=0, turn_no=1, depth=depth, meld=group, at_ms=0)
        ok = taken[0] in group and oracle_kind(group) is not None
    before = state
    try:
        events = play.decide(state, command)
    except RuleViolation:
        assert not ok and state == before
        return
    assert ok
    after = play.fold(events, state)
    assert len(after.pile) == len(state.pile) - depth
    assert taken[0] not in after.hand_of(0)


# -- whole rounds ----------------------------------------------------------------------------------


def _places(state: play.Rummy500Play) -> Counter[Card]:
    every: Counter[Card] = Counter(state.stock)
    every.update(state.pile)
    for hand in state.hands:
        every.update(hand)
    for meld in state.melds:
        every.update(meld.all_cards)
    return every


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seats=st.integers(2, 8),
    long_hands=st.booleans(),
    low_ace_one=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_rounds_conserve_every_card_fold_exactly_and_keep_hands_private(
    seats: int, long_hands: bool, low_ace_one: bool, seed: int
) -> None:
    hand_size = 13 if long_hands and seats not in (4, 8) and seats <= 7 and seats != 2 else 7
    rules = rummy500_rule_set(seats, hand_size=hand_size, low_ace_one=low_ace_one)
    rng = random.Random(seed)
    r = Round(rules, seats=seats, dealer=rng.randrange(seats))
    r.deal_seeded(seed.to_bytes(32, "big"))
    shoe = Counter(rules.shoe.cards)
    assert _places(r.play) == shoe
    for _ in range(2000):
        if RUMMY500.is_over(r.state):
            break
        seat = r.play.turn_seat
        assert seat is not None
        roll = rng.random()
        if roll < 0.03:
            command: object = TurnTimeout(turn_no=r.play.turn_no, at_ms=r.now)
        elif roll < 0.04:
            command = LeaveHand(seat=rng.choice(r.play.playing()), at_ms=r.now)
        else:
            legal = RUMMY500.legal_commands(r.state, seat)
            assert legal
            command = rng.choice(legal)
        for event in RUMMY500.decide(r.state, command):  # type: ignore[arg-type]
            r.state = RUMMY500.apply(r.state, event)
            r.events.append(event)
            assert _places(r.play) == shoe  # after every event
            for watcher in r.seat_nos:
                _assert_private(RUMMY500.redact(event, watcher), watcher)
    assert RUMMY500.is_over(r.state)
    assert RUMMY500.fold(r.events) == r.state
    ended = r.state.result
    assert isinstance(ended, HandEnded)
    expected = oracle_scores(r.events, low_ace_one)
    assert {x.seat: x.score for x in ended.results} == expected
    for watcher in r.seat_nos:
        assert RUMMY500.view(r.state, watcher).cards == r.play.hand_of(watcher)


def _assert_private(event: Event, watcher: int) -> None:
    """A redacted event shows no other seat's dealt hand, no stock order, no stock card drawn
    by another seat."""
    if isinstance(event, HandDealt):
        assert not event.stock
        assert all(not h.cards for h in event.hands if h.seat != watcher)
    if isinstance(event, CardDrawn) and event.seat != watcher:
        assert event.card is None
