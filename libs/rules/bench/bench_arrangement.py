"""Benchmark of the exact arrangement solver against the brute-force oracle of the tests.

Run from the repository root:  .venv/bin/python libs/rules/bench/bench_arrangement.py [--seconds 5]

Prints evaluations per second of ``best_arrangement`` on random 13-card hands from the real 2-deck
shoe (random wild rank, or a printed-joker cut) and on meld-dense worst cases (overlapping runs and
sets with many jokers), the oracle's rate on the same hands, and the ratio. One core, stdlib only.
Targets (issue 2): >= 10,000/s random, >= 1,000/s worst case.

The solver keeps each suit's meld list (bounded caches keyed by the ranks a suit holds, never by
a whole hand). Each line gives two figures, each on hands the solver has not seen before:
"cold", with the caches emptied first (a process that just started), and "steady", after
``--warm-up`` other hands have filled them (a service that has been dealing for a while).
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rummy_rules.cards import RANKS, SUITS, Card, Rank, Suit
from rummy_rules.indian.arrangement import best_arrangement, clear_caches

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from rules_oracle import oracle_score  # noqa: E402

Hand = tuple[list[Card], Rank | None]
SHOE = [Card(r, s, d) for d in range(2) for s in SUITS for r in RANKS] + [
    Card(None, None, 0),
    Card(None, None, 1),
]


def random_hands(rng: random.Random, n: int) -> list[Hand]:
    """Hands as dealt: 13 cards of the shuffled 106-card shoe, wild rank from a cut card."""
    out: list[Hand] = []
    for _ in range(n):
        cards = rng.sample(SHOE, 14)
        cut = cards.pop()
        out.append((cards, cut.rank))
    return out


def dense_hands(rng: random.Random, n: int) -> list[Hand]:
    """Worst cases: 3-4 overlapping runs and sets in few suits, 2 printed jokers, 2-3 wild cards."""
    out: list[Hand] = []
    for _ in range(n):
        wild = rng.choice(RANKS)
        suits = rng.sample(SUITS, 2)
        wanted: list[tuple[Rank | None, Suit | None]] = [(None, None), (None, None)]
        wanted += [(wild, rng.choice(SUITS)) for _ in range(rng.randint(2, 3))]
        base = rng.randint(2, 9)
        for s in suits:
            for p in range(base, base + rng.randint(4, 6)):
                wanted.append((Rank(min(p, 13)), s))
        for r in rng.sample(range(base, min(base + 5, 14)), 2):
            wanted += [(Rank(r), s) for s in rng.sample(SUITS, 3)]
        rng.shuffle(wanted)
        taken: Counter[tuple[Rank | None, Suit | None]] = Counter()
        hand: list[Card] = []
        for rank, suit in wanted:
            if len(hand) < 13 and taken[rank, suit] < 2:
                hand.append(Card(rank, suit, taken[rank, suit]))
                taken[rank, suit] += 1
        rest = [c for c in SHOE if c.copy >= taken[c.rank, c.suit]]
        hand += rng.sample(rest, 13 - len(hand))
        out.append((hand, wild))
    return out


def rate(
    fn: Callable[[list[Card], Rank | None], object], hands: list[Hand], seconds: float
) -> float:
    """Evaluations per second of fn over the hands for about ``seconds`` of CPU time.

    The hands are taken in order (cycled only if they run out).
    """
    gc.collect()  # start from the same heap state (the oracle leaves much garbage behind)
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
    parser.add_argument("--hands", type=int, default=60_000, help="distinct random hands")
    parser.add_argument("--warm-up", type=int, default=150_000, help="hands before 'steady'")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for name, make in (("random", random_hands), ("worst-case", dense_hands)):
        share = 1 if make is random_hands else 8  # worst cases are slower: fewer of them
        hands = make(rng, args.hands // share)
        for cards, wild in hands[:200]:
            assert best_arrangement(cards, wild).points == oracle_score(cards, wild)[0]
        sample = hands[:2000]
        valid = sum(best_arrangement(c, w).valid for c, w in sample) / len(sample)
        half = len(hands) // 2
        clear_caches()
        cold = rate(best_arrangement, hands[:half], args.seconds)
        for cards, wild in make(rng, args.warm_up // share):
            best_arrangement(cards, wild)
        steady = rate(best_arrangement, hands[half:], args.seconds)
        oracle = rate(oracle_score, hands[:100], args.seconds)
        print(
            f"{name:>10}: solver {cold:7,.0f} evals/s cold, {steady:7,.0f} steady | "
            f"oracle {oracle:6,.1f} evals/s | ratio {cold / oracle:5,.0f}x cold, "
            f"{steady / oracle:5,.0f}x steady | valid shows {valid:.1%} of {len(sample)} hands"
        )


if __name__ == "__main__":
    main()
