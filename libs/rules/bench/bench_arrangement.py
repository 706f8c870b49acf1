"""Benchmark of the exact arrangement solver against the brute-force oracle of the tests.

Run from the repository root:  .venv/bin/python libs/rules/bench/bench_arrangement.py [--seconds 5]

Prints evaluations per second of ``best_arrangement`` on random 13-card hands from the real 2-deck
shoe (random wild rank, or a printed-joker cut) and on meld-dense worst cases (overlapping runs and
sets with many jokers), the oracle's rate on the same hands, and the ratio. One core, stdlib only.
Targets (issue 2): >= 10,000/s random, >= 1,000/s worst case.

The solver keeps each suit's meld list (a small, bounded cache); so that repeated hands don't
flatter it, every measurement starts with an empty cache and walks a long list of distinct hands
(``--hands``), seeing each hand once unless it runs out.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rummy_rules import arrangement
from rummy_rules.arrangement import best_arrangement
from rummy_rules.cards import RANKS, SUITS, Card, Rank

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from rules_oracle import oracle_score  # noqa: E402

Hand = tuple[list[Card], Rank | None]
SHOE = [Card(r, s, d) for d in range(2) for s in SUITS for r in RANKS] + [
    Card(None, None, 0),
    Card(None, None, 1),
]


def random_hands(rng: random.Random, n: int) -> list[Hand]:
    """Hands as dealt: 13 cards of the shuffled 106-card shoe, wild rank from a cut card."""
    out = []
    for _ in range(n):
        cards = rng.sample(SHOE, 14)
        cut = cards.pop()
        out.append((cards, cut.rank))
    return out


def dense_hands(rng: random.Random, n: int) -> list[Hand]:
    """Worst cases: 3-4 overlapping runs and sets in few suits, 2 printed jokers, 2-3 wild cards."""
    out = []
    for _ in range(n):
        wild = rng.choice(RANKS)
        suits = rng.sample(SUITS, 2)
        wanted: list[tuple[Rank | None, object]] = [(None, None), (None, None)]
        wanted += [(wild, rng.choice(SUITS)) for _ in range(rng.randint(2, 3))]
        base = rng.randint(2, 9)
        for s in suits:
            for p in range(base, base + rng.randint(4, 6)):
                wanted.append((Rank(min(p, 13)), s))
        for r in rng.sample(range(base, min(base + 5, 14)), 2):
            wanted += [(Rank(r), s) for s in rng.sample(SUITS, 3)]
        rng.shuffle(wanted)
        taken: Counter[tuple[Rank | None, object]] = Counter()
        hand: list[Card] = []
        for rank, suit in wanted:
            if len(hand) < 13 and taken[rank, suit] < 2:
                hand.append(Card(rank, suit, taken[rank, suit]))  # type: ignore[arg-type]
                taken[rank, suit] += 1
        rest = [c for c in SHOE if c.copy >= taken[c.rank, c.suit]]
        hand += rng.sample(rest, 13 - len(hand))
        out.append((hand, wild))
    return out


def rate(
    fn: Callable[[list[Card], Rank | None], object], hands: list[Hand], seconds: float
) -> float:
    """Evaluations per second of fn over the hands (cycled) for about ``seconds`` of CPU time."""
    for cached in (
        arrangement._first_suit_runs,
        arrangement._suit_runs,
        arrangement._rank_sets,
        arrangement._layout,
    ):
        cached.cache_clear()  # the solver's meld lists start empty
    done = 0
    start = time.process_time()
    while True:
        for at in range(0, len(hands), 500):
            for cards, wild in hands[at : at + 500]:
                fn(cards, wild)
            done += len(hands[at : at + 500])
            elapsed = time.process_time() - start
            if elapsed >= seconds:
                return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--hands", type=int, default=40_000, help="distinct random hands")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    random_set = random_hands(rng, args.hands)
    dense_set = dense_hands(rng, args.hands // 8)
    for name, hands in (("random", random_set), ("worst-case", dense_set)):
        for cards, wild in hands[:200]:
            assert best_arrangement(cards, wild).points == oracle_score(cards, wild)[0]
        solver = rate(best_arrangement, hands, args.seconds)
        oracle = rate(oracle_score, hands[:100], args.seconds)
        sample = hands[:2000]
        valid = sum(best_arrangement(c, w).valid for c, w in sample) / len(sample)
        print(
            f"{name:>10}: solver {solver:10,.0f} evals/s | oracle {oracle:8,.1f} evals/s | "
            f"ratio {solver / oracle:7,.0f}x | valid shows {valid:.1%} of {len(sample)} hands"
        )


if __name__ == "__main__":
    main()
