"""Benchmark of the exact gin deadwood solver (``rummy_rules.gin``), optionally against OpenSpiel.

Run from the repository root:

    .venv/bin/python libs/rules/bench/bench_gin.py [--hands 200000] [--openspiel-python PATH]

Prints evaluations per CPU second of this process (``time.process_time``: one core, and figures
that hold on a busy machine), each hand evaluated once (the solver keeps no cache:
its only tables, 8,192 entries per suit mask, are built at import), for:

- 10 cards: the exact minimum deadwood (``solver.deadwood`` on the hand's bitmask; then through
  the public API from ``Card`` tuples: ``deadwood_of`` and ``best_arrangement`` with its melds);
- 11 cards: the minimum over every discard plus knock legality at 10 (``solver.after_discard``;
  ``can_knock`` from cards; ``evaluate_eleven``, which also lists every best discard by trying
  each of the eleven);

on random hands (10 or 11 of a shuffled deck) and on meld-dense hands (runs and sets crossing).
Targets (issue 27): >= 100,000/s for 10 cards, >= 20,000/s for 11.

``--openspiel-python`` names the Python of a throwaway environment with ``open-spiel`` installed
(``python3 -m venv /tmp/os && /tmp/os/bin/pip install open-spiel``; never a dependency of the
project). Then the same hands are timed there through ``GinRummyUtils(13, 4, 10).min_deadwood``
(its 11-card value is "best group minus its highest loose card", not exact), in a child process,
and the ratio is printed; the values that differ from the exact ones are counted. Without it, or
when that Python cannot import ``pyspiel``, the column is skipped.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from rummy_rules.cards import RANKS, SUITS, Card
from rummy_rules.gin import solver
from rummy_rules.gin.arrangement import (
    best_arrangement,
    can_knock,
    card_index,
    deadwood_of,
    evaluate_eleven,
    hand_mask,
)

DECK = [Card(r, s) for s in SUITS for r in RANKS]
#: OpenSpiel's card int: suit-major spades, clubs, diamonds, hearts; ace..king within a suit.
_OS_SUIT = {0: 1, 1: 2, 2: 3, 3: 0}

OPENSPIEL_CHILD = r"""
import json, sys, time, gc
import pyspiel
u = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
data = json.load(sys.stdin)
out = {}
for name, hands in data.items():
    gc.disable()
    start = time.process_time()
    if name.startswith("eleven"):
        values = [u.min_deadwood(h) for h in hands]
        legal = [v <= 10 for v in values]
    else:
        values = [u.min_deadwood(h) for h in hands]
    elapsed = time.process_time() - start
    gc.enable()
    out[name] = {"seconds": elapsed, "values": values}
json.dump(out, sys.stdout)
"""


def random_hands(rng: random.Random, n: int, size: int) -> list[list[Card]]:
    return [rng.sample(DECK, size) for _ in range(n)]


def dense_hands(rng: random.Random, n: int, size: int) -> list[list[Card]]:
    """Hands made of overlapping runs and sets (4-7 card runs in two suits crossed by sets)."""
    out = []
    for _ in range(n):
        chosen: list[Card] = []
        base = rng.randint(0, 7)
        for s in rng.sample(SUITS, 2):
            for r in range(base, min(13, base + rng.randint(4, 6))):
                chosen.append(Card(RANKS[r], s))
        for _ in range(2):
            rank = RANKS[rng.randint(base, min(12, base + 5))]
            chosen += [Card(rank, s) for s in rng.sample(SUITS, rng.randint(3, 4))]
        unique = list(dict.fromkeys(chosen))
        rng.shuffle(unique)
        unique = unique[:size]
        rest = [c for c in DECK if c not in unique]
        unique += rng.sample(rest, size - len(unique))
        out.append(unique)
    return out


def rate(fn: Callable[[Any], object], items: Sequence[Any]) -> tuple[float, float]:
    """Evaluations per CPU second and per wall second of ``fn`` over ``items``, each once, the
    collector off."""
    gc.collect()
    gc.disable()
    start, wall = time.process_time(), time.perf_counter()
    for item in items:
        fn(item)
    elapsed, walled = time.process_time() - start, time.perf_counter() - wall
    gc.enable()
    return len(items) / elapsed, len(items) / walled


def eleven_core(mask: int) -> bool:
    best, _full = solver.after_discard(mask)
    return best <= 10


def os_ints(cards: list[Card]) -> list[int]:
    out = []
    for c in cards:
        i = card_index(c)
        out.append(_OS_SUIT[i // 13] * 13 + i % 13)
    return out


def openspiel(python: str, sets: dict[str, list[list[Card]]]) -> dict[str, Any] | None:
    payload = json.dumps({k: [os_ints(h) for h in v] for k, v in sets.items()})
    try:
        done = subprocess.run(
            [python, "-c", OPENSPIEL_CHILD],
            input=payload,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    except OSError as exc:
        print(f"OpenSpiel: skipped ({exc})")
        return None
    if done.returncode != 0:
        print(f"OpenSpiel: skipped ({done.stderr.strip().splitlines()[-1:]})")
        return None
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000, help="hands per random set")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--openspiel-python", help="a Python with open-spiel installed")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    n = args.hands
    start = time.perf_counter()
    sets = {
        "ten random": random_hands(rng, n, 10),
        "ten dense": dense_hands(rng, max(1, n // 4), 10),
        "eleven random": random_hands(rng, n, 11),
        "eleven dense": dense_hands(rng, max(1, n // 4), 11),
    }
    masks = {k: [hand_mask(h) for h in v] for k, v in sets.items()}
    print(f"{sum(map(len, sets.values())):,} hands made in {time.perf_counter() - start:.1f} s")
    print(
        f"python {sys.version.split()[0]}, one core, each hand once; load {os.getloadavg()[0]:.1f}"
    )
    print("evaluations per CPU second of this process (per wall second)\n")

    rows: list[tuple[str, str, tuple[float, float]]] = []
    for name in ("ten random", "ten dense"):
        hands, ms = sets[name], masks[name]
        few = hands[: max(1, len(hands) // 10)]
        rows += [
            (name, "solver.deadwood(mask)", rate(solver.deadwood, ms)),
            (name, "deadwood_of(cards)", rate(deadwood_of, hands)),
            (name, "best_arrangement(cards)", rate(best_arrangement, few)),
        ]
    for name in ("eleven random", "eleven dense"):
        hands, ms = sets[name], masks[name]
        few = hands[: max(1, len(hands) // 10)]
        rows += [
            (name, "after_discard(mask) + legal at 10", rate(eleven_core, ms)),
            (name, "can_knock(cards, 10)", rate(can_knock, hands)),
            (name, "evaluate_eleven(cards) (+ every discard)", rate(evaluate_eleven, few)),
        ]
    targets = {"ten": 100_000, "eleven": 20_000}
    for name, what, (per_s, per_wall) in rows:
        target = targets[name.split()[0]]
        mark = "ok" if per_s >= target else "below"
        print(
            f"{name:14} {what:42} {per_s:>11,.0f}/s ({per_wall:>9,.0f})  target {target:,}: {mark}"
        )

    if args.openspiel_python:
        print()
        found = openspiel(args.openspiel_python, sets)
        if found is not None:
            for name in sets:
                per_s = len(sets[name]) / found[name]["seconds"]
                if name.startswith("ten"):
                    ours = [solver.deadwood(m) for m in masks[name]]
                    mask_row, cards_row = "solver", "deadwood_of"
                else:
                    ours = [solver.after_discard(m)[0] for m in masks[name]]
                    mask_row, cards_row = "after", "can_knock"
                mine = {
                    w.split("(")[0]: r[0] for nm, w, r in rows if nm == name
                }  # by the function's name
                from_mask = next(v for k, v in mine.items() if k.startswith(mask_row))
                from_cards = next(v for k, v in mine.items() if k.startswith(cards_row))
                values = found[name]["values"]
                differ = sum(a != b for a, b in zip(ours, values, strict=True))
                refused = sum(a <= 10 < b for a, b in zip(ours, values, strict=True))
                print(
                    f"{name:14} OpenSpiel min_deadwood {per_s:>12,.0f}/s; ours/OpenSpiel "
                    f"{from_mask / per_s:.2f} from masks, {from_cards / per_s:.2f} from cards; "
                    f"values that differ {differ:,} of {len(ours):,}"
                    + (f" (legal knocks at 10 it refuses: {refused:,})" if refused else "")
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
