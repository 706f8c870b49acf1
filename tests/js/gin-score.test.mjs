// The verifier's gin scorer (web/verify/gin-score.js) on every gin case of the rules cases and on
// the worked examples of docs/rules/gin.md and docs/rules/formats.md. Run: node --test tests/js
// (tests/test_verify_gin_scorer.py runs it under pytest, so CI does).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const file = join(root, "web", "verify", "gin-score.js");
vm.runInThisContext(readFileSync(file, "utf8"), { filename: file });
const G = globalThis.BBVerify.gin;

const cases = readFileSync(join(root, "libs", "rules", "tests", "data", "rules-cases.jsonl"), "utf8")
  .split(/\r?\n/)
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
  .filter((c) => c.game.startsWith("gin-"));

test("the rules cases hold gin cases of every kind", () => {
  assert.ok(cases.length >= 18, `${cases.length} gin cases`);
  for (const g of G.GAMES) assert.ok(cases.some((c) => c.game === g), g);
});

for (const c of cases) {
  test(`rules case ${c.id} (${c.game}): ${c.why}`, () => {
    const got = G.evaluateCase(c);
    for (const [field, want] of Object.entries(c.expected)) {
      assert.deepEqual(got[field], want, `${c.id}: ${field}`);
    }
  });
}

const hand = (s) => s.split(" ");

test("deadwood: ace low only, no wrap, a five-run is one run", () => {
  assert.equal(G.deadwood(hand("QH KH AH 2C 3C 4C 5C 6C 7C 8C")), 21); // Q-K-A is no run
  assert.equal(G.deadwood(hand("KH AH 2H 2C 3C 4C 5C 6C 7C 8C")), 13); // K-A-2 wraps: no run
  assert.equal(G.deadwood(hand("AH 2H 3H 2C 3C 4C 5C 6C 7C 8C")), 0);
  assert.equal(G.deadwood(hand("4H 5H 6H 7H 8H 9S 9C KD KS QD")), 48);
});

test("eleven cards: the best discard may break the eleven's best grouping", () => {
  const e = G.eleven(hand("2H 5H 6H 2S 4S 6D 4D 5S 3D 6S 5D"));
  assert.equal(e.best_after_discard, 9);
  assert.equal(e.knockLegal(9), true);
  assert.equal(e.knockLegal(8), false);
});

test("hand points: knock, undercut on a tie, gin, big gin, Oklahoma doubling with bonuses", () => {
  const ten = G.handRules({});
  assert.deepEqual(G.handPoints("knock", 4, 20, ten), { winner: "knocker", points: 16, undercut: false });
  assert.deepEqual(G.handPoints("knock", 7, 7, ten), { winner: "defender", points: 25, undercut: true });
  assert.deepEqual(G.handPoints("knock", 11, 30, ten).winner, "illegal");
  assert.equal(G.handPoints("gin", 0, 27, ten).points, 52);
  assert.equal(G.handPoints("big_gin", 0, 27, ten).points, 58);
  const spade = G.handRules({ oklahoma_upcard: "6S" });
  assert.deepEqual([spade.knock_limit, spade.doubled], [6, true]);
  assert.equal(G.handPoints("knock", 6, 3, spade).points, 56); // (6 - 3 + 25) x 2
  assert.equal(G.handPoints("gin", 0, 10, spade).points, 70); // (10 + 25) x 2
  assert.equal(G.handPoints("big_gin", 0, 10, spade).points, 82); // (10 + 31) x 2
  assert.equal(G.handPoints("knock", 7, 30, spade).winner, "illegal");
  const ace = G.handRules({ oklahoma_upcard: "AD" });
  assert.deepEqual([ace.knock_limit, ace.doubled], [1, false]);
  assert.equal(G.handRules({ oklahoma_upcard: "KH" }).knock_limit, 10);
  assert.equal(G.handPoints("big_gin", 0, 10, G.handRules({ big_gin_allowed: false })).winner, "illegal");
});

test("lay-offs: chains at one end, the fourth of a set, never onto the knocker's deadwood", () => {
  // 4H 5H 6H takes 7H then 8H; KS KC KD takes KH; 9C (the knocker's loose card) takes nothing
  const d = G.defend(hand("7H 8H KH 10C 2D 3S 5C 9D JD QS"), [hand("4H 5H 6H"), hand("KS KC KD")]);
  assert.deepEqual(d.laid_off.sort(), ["7H", "8H", "KH"].sort());
  assert.equal(d.deadwood, 10 + 2 + 3 + 5 + 9 + 10 + 10);
  // a set of four takes nothing
  assert.equal(G.defend(hand("AH 9D 9S 4C JD 3S 5C 7D QS KD"), [hand("2C 2D 2S 2H")]).laid_off.length, 0);
  // keeping its own run 8H 9H 10H or chaining it onto 5H 6H 7H leave the same deadwood: the
  // fewest cards laid off (none) is what is shown
  const same = G.defend(hand("8H 9H 10H 2S 4D 6C QS KD 3C 5S"), [hand("5H 6H 7H")]);
  assert.deepEqual([same.deadwood, same.laid_off.length], [2 + 4 + 6 + 10 + 10 + 3 + 5, 0]);
});

test("the knocker never lays off and a gin allows no lay-offs", () => {
  const r = G.scoreHand({
    knocker: hand("2C 3C 4C 5C 9S 10S JS KH KD KC"),
    defender: hand("6C QS 7H 8H 9H 3D 4D 5D AD KS"),
    rules: {},
  });
  assert.deepEqual([r.outcome, r.points, r.laid_off], ["gin", 52, []]);
});

test("without named melds the knocker's best grouping that leaves the defender the most", () => {
  // 7-9 of hearts, spades and diamonds are three runs or three sets (2C loose either way). As
  // runs the defender lays off 10H, 6S and 10D; as sets nothing (it holds no club 7-9): the
  // server must take the sets.
  const r = G.scoreHand({
    knocker: hand("7H 8H 9H 7S 8S 9S 7D 8D 9D 2C"),
    defender: hand("10H 6S 10D QC KC 3C 4S 5C 2D AS"),
    rules: {},
  });
  assert.equal(r.knocker_deadwood, 2);
  assert.equal(r.defender_deadwood_after_layoffs, 61);
  assert.deepEqual([r.winner, r.points, r.laid_off], ["knocker", 59, []]);
  // the same knocker naming its runs lets the defender lay off 26 points
  const named = G.scoreHand({
    knocker: hand("7H 8H 9H 7S 8S 9S 7D 8D 9D 2C"),
    defender: hand("10H 6S 10D QC KC 3C 4S 5C 2D AS"),
    knockerMelds: [hand("7H 8H 9H"), hand("7S 8S 9S"), hand("7D 8D 9D")],
    rules: {},
  });
  assert.deepEqual([named.defender_deadwood_after_layoffs, named.points], [35, 33]);
});

test("a game to 100: game bonus, shutout and boxes (formats.md#game-scoring)", () => {
  const g = G.gameSheet(["A", "B"], [["A", 40], ["B", 28], [null, 0], ["A", 38], ["A", 30]]);
  assert.equal(g.winner, "A");
  assert.deepEqual([g.players.A.total, g.players.B.total, g.net.B], [283, 53, 230]);
  const s = G.gameSheet(["A", "B"], [["A", 40], ["A", 38], ["A", 30]]);
  assert.deepEqual([s.players.A.total, s.players.A.bonus, s.net.B], [383, 200, 383]);
  const later = G.gameSheet(["A", "B"], [["A", 100], ["B", 50]]);
  assert.deepEqual([later.deals_used, later.players.B.hands], [1, 0]);
  assert.equal(G.gameSheet(["A", "B"], [["A", 99]]).ended, false);
  const t150 = G.gameSheet(["A", "B"], [["A", 100], ["B", 20], ["A", 50]], { target: 150 });
  assert.deepEqual([t150.players.A.total, t150.players.B.total], [150 + 100 + 50, 45]);
});

test("Hollywood: the n-th win in the first min(n, 3) running columns, each its own game", () => {
  const h = G.hollywood(["A", "B"], [["A", 60], ["A", 45], ["B", 10], ["A", 30]]);
  // A: 60 -> c1; 45 -> c1 (ends at 105), c2; B's first, 10 -> c2 (c1 has ended); A's third,
  // 30 -> c2 and c3 (the two still running)
  assert.deepEqual(h.columns.map((c) => c.players.A.hands), [105, 75, 30]);
  assert.deepEqual(h.columns.map((c) => c.players.B.hands), [0, 10, 0]);
  assert.deepEqual(h.columns.map((c) => c.ended), [true, false, false]);
  assert.equal(h.columns[0].players.A.total, 105 + 200 + 50); // shutout in column 1
  assert.equal(h.columns[0].players.B.total, 0);
  // column 1 ended: B's first win goes to column 2, its second to columns 2 and 3
  const h2 = G.hollywood(["A", "B"], [["A", 100], ["B", 5], ["B", 7]]);
  assert.deepEqual(h2.columns.map((c) => c.players.B.hands), [0, 12, 7]);
  // the match ends with the third column; nets capped per column, summed
  const m = G.hollywood(["A", "B"], [["A", 100], ["A", 100], ["A", 100]], { cap: 300 });
  assert.equal(m.ended, true);
  // c1: 300 + 200 + 75 = 575 -> 300 capped; c2: 200 + 200 + 50 = 450 -> 300; c3: 100 + 200 + 25 = 325 -> 300
  assert.deepEqual(m.nets.map((n) => n.net), [300, 300, 300]);
  assert.deepEqual(m.result, { winner: "A", net: 900 });
});

test("game stakes: min(diff, cap) x point value, commission rounded down (formats.md#money)", () => {
  const s = G.gameStakes({ losers: [{ id: "B", diff: 230 }], cap: 300, pointValueHundredths: 10, commissionBps: 1000 });
  assert.deepEqual(s, { pays: { B: 2300 }, paid: 2300, commission: 230, winner_receives: 2070 });
  const capped = G.gameStakes({ losers: [{ id: "B", diff: 383 }], cap: 300, pointValueHundredths: 7, commissionBps: 333 });
  assert.deepEqual(capped, { pays: { B: 2100 }, paid: 2100, commission: 69, winner_receives: 2031 });
  const atCap = G.gameStakes({ losers: [{ id: "B", diff: -40, at_cap: true }], cap: 250, pointValueHundredths: 1, commissionBps: 0 });
  assert.equal(atCap.pays.B, 250);
  // Hollywood: nets A +265, A +270, B +105 -> A +430; B pays 4,300, commission 430, A 3,870
  const h = G.hollywoodStakes({ net: 265 + 270 - 105, cap: 300, pointValueHundredths: 10, commissionBps: 1000 });
  assert.deepEqual([h.paid, h.commission, h.winner_receives], [4300, 430, 3870]);
});
