"""The verifier page's own gin scorer (web/verify/gin-score.js) against the rules cases and the
rules library's CLI.

- ``node --test tests/js``: every ``gin-*`` case of ``rules-cases.jsonl`` through gin-score.js,
  compared with its ``expected``, and the worked examples of ``docs/rules/gin.md`` and
  ``docs/rules/formats.md`` (game bonus, shutout, boxes, Hollywood's columns, game-stakes money);
  web/verify/gin.js's checks of a knock and its result on genuine and tampered inputs.
- A differential test: a few thousand seeded random and meld-dense hands of 10 and 11 cards, and
  knock/defender pairs, judged by ``node web/verify/cli.mjs --score`` and by ``rummy-rules
  evaluate`` (the rules library): deadwood of ten, the best discard of eleven, big gin, gin and
  knock legality at every limit 1..10, and each knock's deadwoods, winner and points.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rummy_testing.tools import required_executable

ROOT = Path(__file__).resolve().parents[1]

#: integration: runs node and the rules CLI as processes (README.md#tests).
pytestmark = pytest.mark.integration
CLI = ROOT / "web" / "verify" / "cli.mjs"
JS_TESTS = ROOT / "tests" / "js"
RULES_CLI = Path(sys.executable).parent / "rummy-rules"
HANDS_PER_KIND = 750  # x 2 kinds (random, meld-dense) x 2 sizes (10, 11): 3,000 hands
KNOCKS = 400
SUITS = "CDHS"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
DECK = [r + s for s in SUITS for r in RANKS]


def node() -> str:
    return required_executable("node", "bash deploy/local/node.sh install")


def answers(command: list[str], cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    text = "".join(json.dumps(c) + "\n" for c in cases)
    done = subprocess.run(command, input=text, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {o["id"]: o for o in out}


def meld_dense(rng: random.Random, size: int, avoid: frozenset[str] = frozenset()) -> list[str]:
    """Runs and sets first, then filler: hands near gin, with cards that fit two melds."""
    cards: list[str] = []
    while len(cards) < size:
        suit = rng.choice(SUITS)
        if rng.random() < 0.5:
            low = rng.randint(0, 10)
            group = [RANKS[k] + suit for k in range(low, min(13, low + rng.randint(3, 5)))]
        else:
            rank = rng.choice(RANKS)
            group = [rank + s for s in rng.sample(SUITS, rng.randint(3, 4))]
        for c in group:
            if c not in cards and c not in avoid and len(cards) < size:
                cards.append(c)
        if rng.random() < 0.3 and len(cards) < size:
            free = [c for c in DECK if c not in cards and c not in avoid]
            cards.append(rng.choice(free))
    rng.shuffle(cards)
    return cards


def test_node_tests_of_the_gin_scorer_pass() -> None:
    done = subprocess.run(
        [node(), "--test", str(JS_TESTS)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
    passed = int(done.stdout.split("# pass ")[1].split()[0])
    assert passed >= 25, done.stdout[-2000:]


def test_js_gin_scorer_agrees_with_the_rules_cli_on_random_and_meld_dense_hands() -> None:
    rng = random.Random(27)
    cases: list[dict[str, Any]] = []
    for size, game in ((10, "gin-deadwood"), (11, "gin-11")):
        for i in range(HANDS_PER_KIND):
            cases.append({"id": f"r{size}-{i}", "game": game, "cards": rng.sample(DECK, size)})
            cases.append({"id": f"d{size}-{i}", "game": game, "cards": meld_dense(rng, size)})
    for i in range(KNOCKS):
        knocker = meld_dense(rng, 10)
        defender = (
            meld_dense(rng, 10, frozenset(knocker))
            if i % 2
            else rng.sample([c for c in DECK if c not in knocker], 10)
        )
        case: dict[str, Any] = {
            "id": f"k-{i}",
            "game": "gin-score",
            "knocker_hand": knocker,
            "defender_hand": defender,
        }
        if i % 5 == 0:
            case["oklahoma_upcard"] = rng.choice([c for c in DECK if c not in knocker + defender])
        cases.append(case)
    js = answers([node(), str(CLI), "--score"], cases)
    py = answers([str(RULES_CLI), "evaluate"], cases)
    fields = {
        "gin-deadwood": ("deadwood",),
        "gin-11": ("best_after_discard", "discards", "big_gin", "gin")
        + tuple(f"knock_legal_at_{n}" for n in range(1, 11)),
        "gin-score": (
            "winner",
            "points",
            "knocker_deadwood",
            "defender_deadwood_after_layoffs",
        ),
    }
    differ = []
    for c in cases:
        want = {f: py[c["id"]].get(f) for f in fields[c["game"]]}
        got = {f: js[c["id"]].get(f) for f in fields[c["game"]]}
        if want != got:
            differ.append((c, want, got))
    hands = sum(1 for c in cases if c["game"] != "gin-score")
    print(f"gin differential: {hands} hands and {KNOCKS} knocks compared, {len(differ)} differ")
    assert not differ, f"{len(differ)} of {len(cases)} cases differ, first: {differ[0]}"
    # the hands mean something: some gin, some legal knocks, some scored knocks of each kind
    legal = [c for c in cases if c["game"] == "gin-11" and py[c["id"]]["knock_legal_at_10"]]
    gins = [c for c in cases if c["game"] == "gin-deadwood" and py[c["id"]]["deadwood"] == 0]
    scored = [py[c["id"]] for c in cases if c["game"] == "gin-score"]
    assert len(legal) > 200 and len(gins) > 20, (len(legal), len(gins))
    for kind in ("knocker", "defender", "illegal"):
        assert sum(1 for s in scored if s["winner"] == kind) > 10, kind
