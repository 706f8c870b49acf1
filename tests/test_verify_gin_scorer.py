"""The verifier page's own gin scorer (web/verify/gin-score.js) against the rules cases and the
rules library's CLI.

- ``node --test tests/js``: every ``gin-*`` case of ``rules-cases.jsonl`` through gin-score.js,
  compared with its ``expected``, and the worked examples of ``docs/rules/gin.md`` and
  ``docs/rules/formats.md`` (game bonus, shutout, boxes, Hollywood's columns, game-stakes money);
  web/verify/gin.js's checks of a knock and its result on genuine and tampered inputs.
  (The same run takes the other files there: cli.mjs's errors, money.js and indian-score.js's
  same-face-twice rule.)
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

#: integration: runs node and the rules CLI as processes (docs/testing.md#tests).
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
        knocker = meld_dense(rng, 11 if i % 4 == 3 else 10)  # eleven: big gin or its best discard
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
    py = answers([str(RULES_CLI), "evaluate"], cases)
    # the same legal knocks again with the knocker naming the melds the rules library chose
    for c in [c for c in cases if c["game"] == "gin-score"]:
        if len(c["knocker_hand"]) == 10 and py[c["id"]]["winner"] != "illegal":
            named = {**c, "id": c["id"] + "-named", "knocker_melds": py[c["id"]]["knocker_melds"]}
            cases.append(named)
    py |= answers([str(RULES_CLI), "evaluate"], [c for c in cases if "knocker_melds" in c])
    js = answers([node(), str(CLI), "--score"], cases)
    fields = {
        "gin-deadwood": ("deadwood",),
        "gin-11": ("best_after_discard", "discards", "big_gin", "gin")
        + tuple(f"knock_legal_at_{n}" for n in range(1, 11)),
        "gin-score": (
            "winner",
            "points",
            "knocker_deadwood",
            "defender_deadwood_after_layoffs",
            "laid_off",
            "big_gin",
        ),
    }
    differ = []
    for c in cases:
        # an illegal knock has no lay-offs to compare (the rules CLI leaves them out)
        compared = [f for f in fields[c["game"]] if f in py[c["id"]]]
        want = {f: py[c["id"]][f] for f in compared}
        got = {f: js[c["id"]].get(f) for f in compared}
        if want != got or not compared:
            differ.append((c, want, got))
    hands = sum(1 for c in cases if c["game"] != "gin-score")
    knocks = len(cases) - hands
    print(f"gin differential: {hands} hands and {knocks} knocks compared, {len(differ)} differ")
    assert not differ, f"{len(differ)} of {len(cases)} cases differ, first: {differ[:3]}"
    # the hands mean something: some gin, some legal knocks, some scored knocks of each kind
    legal = [c for c in cases if c["game"] == "gin-11" and py[c["id"]]["knock_legal_at_10"]]
    gins = [c for c in cases if c["game"] == "gin-deadwood" and py[c["id"]]["deadwood"] == 0]
    scored = [py[c["id"]] for c in cases if c["game"] == "gin-score"]
    assert len(legal) > 200 and len(gins) > 20, (len(legal), len(gins))
    for kind in ("knocker", "defender", "illegal"):
        assert sum(1 for s in scored if s["winner"] == kind) > 10, kind
    assert sum(1 for s in scored if s.get("laid_off")) > 20
    assert sum(1 for c in cases if "knocker_melds" in c) > 100


# The page's game sheets and money, fed JSON lines on stdin: {"id", "kind": "game" | "hollywood",
# "deals": [[player, points] | [null, 0]...], "target", "cap", "pv", "bps"}.
SHEETS_JS = """
import { readFileSync } from "node:fs";
import vm from "node:vm";
const file = process.argv[1];
vm.runInThisContext(readFileSync(file, "utf8"), { filename: file });
const G = globalThis.BBVerify.gin;
for (const line of readFileSync(0, "utf8").split("\\n")) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  const money = { cap: c.cap, pointValueHundredths: c.pv, commissionBps: c.bps };
  if (c.kind === "game") {
    const g = G.gameSheet(["A", "B"], c.deals, { target: c.target });
    const out = { id: c.id, winner: g.winner, totals: [g.players.A.total, g.players.B.total] };
    if (g.ended) {
      const loser = g.winner === "A" ? "B" : "A";
      const s = G.gameStakes({ losers: [{ id: loser, diff: g.net[loser] }], ...money });
      out.money = [s.pays[loser], s.commission, s.winner_receives];
    }
    console.log(JSON.stringify(out));
  } else {
    const h = G.hollywood(["A", "B"], c.deals, { target: c.target, cap: c.cap });
    const out = {
      id: c.id,
      winners: h.columns.map((col) => col.winner),
      points: h.columns.map((col) => [col.players.A.hands, col.players.B.hands]),
      totals: h.columns.map((col) => [col.players.A.total, col.players.B.total]),
      winner: h.result && h.result.winner,
    };
    if (h.ended) {
      const s = G.hollywoodStakes({ net: h.result.net, ...money });
      out.money = [s.paid, s.commission, s.winner_receives];
    }
    console.log(JSON.stringify(out));
  }
}
"""


def python_sheet(c: dict[str, Any]) -> dict[str, Any]:
    """The same answers from the formats library (rummy_rules.formats)."""
    from rummy_rules.formats.hollywood import column_nets, enter_win
    from rummy_rules.formats.money import settle_game, settle_nets
    from rummy_rules.formats.scoring import GameScoring, game_end_totals
    from rummy_rules.formats.state import new_sheet

    scoring = GameScoring(100, 200, 25)
    seat = {"A": 0, "B": 1}
    name = {0: "A", 1: "B"}
    money = {"point_value_hundredths": c["pv"], "commission_bps": c["bps"]}
    if c["kind"] == "game":
        points, boxes = {0: 0, 1: 0}, {0: 0, 1: 0}
        for who, pts in c["deals"]:
            if who is None:
                continue
            points[seat[who]] += pts
            boxes[seat[who]] += 1
            if points[seat[who]] >= c["target"]:
                won = seat[who]
                totals = game_end_totals(scoring, points, boxes, won)
                s = settle_game(totals, won, max_game_points=c["cap"], **money)
                loser = 1 - won
                pay = -next(line.amount_hundredths for line in s.lines if line.seat == loser)
                return {
                    "id": c["id"],
                    "winner": who,
                    "totals": [totals[0], totals[1]],
                    "money": [pay, s.commission_hundredths, pay - s.commission_hundredths],
                }
        return {"id": c["id"], "winner": None, "totals": [points[0], points[1]]}
    sheets = tuple(new_sheet(n, (0, 1)) for n in (1, 2, 3))
    wins = {0: 0, 1: 0}
    for who, pts in c["deals"]:
        if all(not s.running for s in sheets):
            break
        if who is None:
            continue
        wins[seat[who]] += 1
        sheets = enter_win(
            sheets, seat[who], pts, wins[seat[who]], target=c["target"], scoring=scoring
        )
    out: dict[str, Any] = {
        "id": c["id"],
        "winners": [None if s.winner is None else name[s.winner] for s in sheets],
        "points": [[s.points_of(0), s.points_of(1)] for s in sheets],
        "totals": [[s.total_of(0), s.total_of(1)] for s in sheets],
        "winner": None,
    }
    if all(not s.running for s in sheets):
        nets = column_nets(sheets, c["cap"])
        columns_won = sum(1 for s in sheets if s.winner == 0)
        top = 0 if nets[0] > 0 or (nets[0] == 0 and columns_won >= 2) else 1
        s = settle_nets(nets, top, held_hundredths=3 * c["cap"] * c["pv"], **money)
        out["winner"] = name[top]
        out["money"] = [
            s.pool_hundredths,
            s.commission_hundredths,
            s.pool_hundredths - s.commission_hundredths,
        ]
    return out


def test_js_game_sheets_and_money_agree_with_the_formats_library() -> None:
    rng = random.Random(2027)
    cases: list[dict[str, Any]] = []
    for i in range(600):
        kind = "game" if i % 2 else "hollywood"
        strong = rng.random()  # how often A wins: shutouts and close games both occur
        deals: list[list[Any]] = []
        for _ in range(rng.randint(3, 40)):
            r = rng.random()
            who = None if r < 0.05 else "A" if r < 0.05 + 0.95 * strong else "B"
            deals.append([who, 0 if who is None else rng.choice([rng.randint(1, 40), 25, 52])])
        cases.append(
            {
                "id": f"{kind}-{i}",
                "kind": kind,
                "deals": deals,
                "target": rng.choice([100, 100, 150, 250]),
                "cap": rng.choice([50, 150, 300, 1000]),
                "pv": rng.choice([1, 7, 10, 125]),
                "bps": rng.choice([0, 333, 500, 1000]),
            }
        )
    text = "".join(json.dumps(c) + "\n" for c in cases)
    script = [node(), "--input-type=module", "-e", SHEETS_JS, str(ROOT / "web/verify/gin-score.js")]
    done = subprocess.run(script, input=text, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    js = {o["id"]: o for o in map(json.loads, done.stdout.splitlines())}
    differ = [(c, python_sheet(c), js[c["id"]]) for c in cases if python_sheet(c) != js[c["id"]]]
    print(f"gin sheets differential: {len(cases)} games and matches compared, {len(differ)} differ")
    assert not differ, f"{len(differ)} of {len(cases)} differ, first: {differ[0]}"
    ended = [c for c in cases if "money" in js[c["id"]]]
    assert len(ended) > 300, len(ended)
    shutouts = [c for c in ended if c["kind"] == "game" and 0 in js[c["id"]]["totals"]]
    assert len(shutouts) > 10, len(shutouts)


def test_js_gin_rule_answers_agree_with_the_rules_cli() -> None:
    """The ``gin-rule`` shapes but Hollywood's (see the sheets test above): hand scores from
    deadwoods (limits, Oklahoma upcards, gin, big gin, legality questions) and games to N."""
    rng = random.Random(5)
    cases: list[dict[str, Any]] = []
    for i in range(900):
        fields: dict[str, Any]
        if i % 3 == 0:
            fields = {
                "hands_won_A": [rng.randint(1, 60) for _ in range(rng.randint(0, 5))],
                "hands_won_B": [rng.randint(1, 60) for _ in range(rng.randint(0, 5))],
                "target": rng.choice([100, 150, 250]),
            }
        elif i % 3 == 1:
            fields = {
                "knocker_deadwood": rng.randint(0, 14),
                "defender_deadwood": rng.randint(0, 60),
            }
            if rng.random() < 0.5:
                fields["oklahoma_upcard"] = rng.choice(["AS", "5H", "9S", "KD", "10S", "3C"])
            elif rng.random() < 0.5:
                fields["knock_limit"] = rng.randint(0, 10)
            if rng.random() < 0.1:
                del fields["defender_deadwood"]
        else:
            fields = {rng.choice(["gin", "big_gin"]): True, "defender_deadwood": rng.randint(0, 60)}
            if rng.random() < 0.5:
                fields["oklahoma_upcard"] = rng.choice(["AS", "5H", "9S", "KD"])
            if rng.random() < 0.2:
                fields["big_gin_allowed"] = False
        cases.append({"id": f"rule-{i}", "game": "gin-rule", "input": fields})
    js = answers([node(), str(CLI), "--score"], cases)
    py = answers([str(RULES_CLI), "evaluate"], cases)
    key = ("result", "points")
    differ = [
        (c, py[c["id"]], js[c["id"]])
        for c in cases
        if [py[c["id"]][k] for k in key] != [js[c["id"]].get(k) for k in key]
    ]
    print(f"gin rule differential: {len(cases)} cases compared, {len(differ)} differ")
    assert not differ, f"{len(differ)} of {len(cases)} differ, first: {differ[:3]}"
    results = {py[c["id"]]["result"] for c in cases}
    assert {"A", "B", "unfinished", "knocker", "defender", "illegal", "legal"} <= results
