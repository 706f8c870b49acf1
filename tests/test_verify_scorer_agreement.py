"""The verifier page's own JavaScript scorer (web/verify/indian-score.js, run by
``node web/verify/cli.mjs --score``) agrees with the rules library on every ``indian13`` rules case
and on a few thousand random, meld-dense and joker-heavy hands under every meld option of a rule
set (points and whether the hand is a valid declaration)."""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import asdict
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from rummy_rules.cards import RANKS, SUITS, Card, parse_cards, parse_rank
from rummy_rules.indian.arrangement import best_arrangement
from rummy_rules.melds import MeldOptions
from rummy_testing.tools import required_executable

ROOT = Path(__file__).resolve().parents[1]

#: integration: the verifier's scorer runs under Node, as a process (docs/testing.md#tests).
pytestmark = pytest.mark.integration
CLI = ROOT / "web" / "verify" / "cli.mjs"
CASES = ROOT / "libs" / "rules" / "tests" / "data" / "rules-cases.jsonl"
HANDS_PER_KIND = 140  # x 3 kinds x 8 option sets: 3,360 hands
JOKER = Card(None, None, 0)


def node() -> str:
    return required_executable("node", "bash deploy/local/node.sh install")


def js_scores(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    text = "".join(json.dumps(c) + "\n" for c in cases)
    done = subprocess.run(
        [node(), str(CLI), "--score"], input=text, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = [json.loads(line) for line in done.stdout.splitlines()]
    return {o["id"]: o for o in out}


def shoe(decks: int) -> list[Card]:
    return [Card(r, s, c) for c in range(decks) for s in SUITS for r in RANKS] + [
        Card(None, None, j) for j in range(decks)
    ]


def random_hand(rng: random.Random) -> list[Card]:
    return rng.sample(shoe(rng.choice((2, 3))), 13)


def meld_dense_hand(rng: random.Random) -> list[Card]:
    """Runs and sets first (some with a joker), then filler: many near-valid shows."""
    cards: list[Card] = []
    while len(cards) < 13:
        suit = rng.choice(SUITS)
        if rng.random() < 0.55:
            low = rng.randint(1, 11)
            length = min(rng.randint(3, 5), 13 - len(cards), 14 - low)
            run = [Card(RANKS[(low - 1 + k) % 13], suit, rng.randint(0, 1)) for k in range(length)]
            if rng.random() < 0.3 and len(run) > 3:
                run[rng.randrange(len(run))] = Card(None, None, rng.randint(0, 1))
            cards += run
        else:
            rank = rng.choice(RANKS)
            suits = rng.sample(SUITS, min(rng.randint(3, 4), 13 - len(cards)))
            cards += [Card(rank, s, rng.randint(0, 1)) for s in suits]
    return cards[:13]


def joker_heavy_hand(rng: random.Random) -> list[Card]:
    jokers = [Card(None, None, j) for j in range(rng.randint(1, 3))]
    rest = [c for c in shoe(3) if c.rank is not None]
    return jokers + rng.sample(rest, 13 - len(jokers))


def wild_of(rng: random.Random) -> Any:
    return None if rng.random() < 0.1 else rng.choice(RANKS)


def case(case_id: str, cards: list[Card], wild: Any, options: MeldOptions) -> dict[str, Any]:
    return {
        "id": case_id,
        "cards": [c.face for c in cards],
        "wild_rank": None if wild is None else wild.symbol,
        "meld_options": asdict(options),
    }


OPTION_SETS = [
    MeldOptions(jokers_only_group_is_sequence=a, strict_duplicate_faces=b, ace_high=c)
    for a, b, c in product((True, False), repeat=3)
]


def test_js_scorer_agrees_with_every_indian13_rules_case() -> None:
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line]
    indian = [c for c in cases if c["game"] == "indian13"]
    assert len(indian) >= 20
    got = js_scores(indian)
    for c in indian:
        wild = None if c["wild_rank"] is None else parse_rank(c["wild_rank"])
        lib = best_arrangement(parse_cards(c["cards"]), wild)
        want = {"valid": c["expected"]["valid"], "points": c["expected"]["points"]}
        assert (lib.valid, lib.points) == (want["valid"], want["points"]), c["id"]
        assert {k: got[c["id"]][k] for k in ("valid", "points")} == want, c["id"]


def test_js_scorer_agrees_with_the_rules_library_on_random_dense_and_joker_heavy_hands() -> None:
    rng = random.Random(18)
    cases: list[dict[str, Any]] = []
    expected: dict[str, tuple[bool, int]] = {}
    for n, options in enumerate(OPTION_SETS):
        for kind, make in (("random", random_hand), ("dense", meld_dense_hand)) + (
            ("jokers", joker_heavy_hand),
        ):
            for i in range(HANDS_PER_KIND):
                cards, wild = make(rng), wild_of(rng)
                c = case(f"{kind}-{n}-{i}", cards, wild, options)
                lib = best_arrangement(cards, wild, options)
                cases.append(c)
                expected[c["id"]] = (lib.valid, lib.points)
    got = js_scores(cases)
    differ = [
        (c, expected[c["id"]], got[c["id"]])
        for c in cases
        if (got[c["id"]]["valid"], got[c["id"]]["points"]) != expected[c["id"]]
    ]
    assert not differ, f"{len(differ)} of {len(cases)} hands differ, first: {differ[0]}"
    assert sum(v for v, _p in expected.values()) > 50, "too few valid shows to mean anything"
