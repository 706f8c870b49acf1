"""Hypothesis strategies for hands: random draws from the real shoe and meld-dense hands."""

from __future__ import annotations

from collections import Counter

from hypothesis import strategies as st

from rummy_rules.cards import RANKS, SUITS, Card, Rank, Suit

WILD_RANKS = st.sampled_from([*RANKS, None])


def shoe(decks: int) -> list[Card]:
    """The real shoe: ``decks`` full decks plus as many printed jokers (106 or 159 cards)."""
    cards = [Card(r, s, d) for d in range(decks) for s in SUITS for r in RANKS]
    return cards + [Card(None, None, d) for d in range(decks)]


SHOES = {2: shoe(2), 3: shoe(3)}


@st.composite
def shoe_hands(draw: st.DrawFn, size: int = 13) -> tuple[list[Card], Rank | None]:
    """``size`` distinct cards of a 2-deck shoe (a 3-deck shoe one time in four) and a wild rank."""
    decks = draw(st.sampled_from([2, 2, 2, 3]))
    cards = SHOES[decks]
    picks = draw(
        st.lists(st.integers(0, len(cards) - 1), min_size=size, max_size=size, unique=True)
    )
    return [cards[i] for i in picks], draw(WILD_RANKS)


@st.composite
def dense_hands(draw: st.DrawFn, size: int = 13) -> tuple[list[Card], Rank | None]:
    """Hands built from runs and sets plus printed jokers and wild-rank cards, then topped up."""
    decks = draw(st.sampled_from([2, 2, 3]))
    wild = draw(WILD_RANKS)
    wanted: list[tuple[Rank | None, Suit | None]] = []
    for _ in range(draw(st.integers(2, 5))):
        if draw(st.booleans()):
            suit = draw(st.sampled_from(SUITS))
            start = draw(st.integers(1, 12))
            length = draw(st.integers(3, 6))
            for p in range(start, min(start + length, 15)):
                wanted.append((Rank(1 if p == 14 else p), suit))
        else:
            rank = draw(st.sampled_from(RANKS))
            suits = draw(st.lists(st.sampled_from(SUITS), min_size=3, max_size=4, unique=True))
            wanted.extend((rank, s) for s in suits)
    for _ in range(draw(st.integers(0, decks))):
        wanted.append((None, None))
    if wild is not None:
        for _ in range(draw(st.integers(0, 3))):
            wanted.append((wild, draw(st.sampled_from(SUITS))))
    wanted = draw(st.permutations(wanted))
    taken: Counter[tuple[Rank | None, Suit | None]] = Counter()
    hand: list[Card] = []
    for face in wanted:
        if len(hand) == size or taken[face] >= decks:
            continue
        hand.append(Card(*face, taken[face]))
        taken[face] += 1
    rest = [c for c in SHOES[decks] if c.copy >= taken[c.rank, c.suit]]
    if len(hand) < size:
        picks = draw(
            st.lists(
                st.sampled_from(range(len(rest))),
                min_size=size - len(hand),
                max_size=size - len(hand),
                unique=True,
            )
        )
        hand.extend(rest[i] for i in picks)
    return hand, wild
