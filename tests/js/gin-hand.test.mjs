// The verifier's checks of a gin knock and its result (web/verify/gin.js) on hand-built inputs
// (not proof bundles: the gin variant's bundle events are not settled yet): a genuine result
// passes, and each tampered field is named. Run: node --test tests/js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const web = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "web", "verify");
for (const f of ["gin-score.js", "gin.js"]) {
  vm.runInThisContext(readFileSync(join(web, f), "utf8"), { filename: join(web, f) });
}
const { gin: G, ginHand: H } = globalThis.BBVerify;
const hand = (s) => s.split(" ").map((f) => `${f}:0`); // bundle cards: face and copy

// rules case GS08: the defender breaks its set of sevens to lay off 7H 8H and 7D 6D
const genuine = () => ({
  knock: {
    held: hand("4H 5H 6H 8D 9D 10D QS QC QH 10C KD"),
    faceDown: "KD:0",
    takenFromPile: "QH:0",
    melds: [hand("4H 5H 6H"), hand("8D 9D 10D"), hand("QS QC QH")],
    deadwood: 10,
    outcome: "knock",
    rules: G.handRules({}),
  },
  result: {
    defender: hand("3S 3C 3D 3H 7H 7D 7C 8H 6D AC"),
    layoffs: [
      { card: "7H:0", meld: 0 },
      { card: "8H:0", meld: 0 },
      { card: "7D:0", meld: 1 },
      { card: "6D:0", meld: 1 },
    ],
    defenderMelds: [hand("3S 3C 3D 3H")],
    defenderDeadwood: 8,
    outcome: "knock",
    winner: "defender",
    points: 27,
    rules: G.handRules({}),
  },
});

function judge(g) {
  const knock = H.checkKnock(g.knock);
  return H.checkResult({ knock, ...g.result });
}

test("a genuine knock and result pass: the undercut of rules case GS08", () => {
  assert.deepEqual(judge(genuine()), { knocker_deadwood: 10, defender_deadwood: 8, winner: "defender", points: 27, undercut: true });
});

const tampered = [
  ["points", (g) => (g.result.points = 26), /scored 26 points; the rules make it 27/],
  ["winner", (g) => (g.result.winner = "knocker"), /names the knocker the scorer/],
  ["a lay-off that is not one", (g) => (g.result.layoffs[3] = { card: "6D:0", meld: 0 }), /not a meld/],
  [
    "fewer lay-offs than the defender's best",
    (g) => {
      g.result.layoffs = [];
      g.result.defenderMelds = [hand("3S 3C 3D 3H"), hand("7H 7D 7C")];
      g.result.defenderDeadwood = 15;
    },
    /shown as 15; its best lay-offs and arrangement leave 8/,
  ],
  ["a defender's deadwood that is not its loose cards", (g) => (g.result.defenderDeadwood = 7), /loose cards count 8/],
  ["the knocker's deadwood", (g) => (g.knock.deadwood = 9), /loose cards count 10/],
  ["a face-down card taken from the pile", (g) => (g.knock.takenFromPile = "KD:0"), /took it from the discard pile/],
  ["a meld that is not one", (g) => (g.knock.melds[2] = hand("QS QC 10C")), /not a set or a run/],
  [
    "a knock above the limit (Oklahoma, upcard 8)",
    (g) => (g.knock.rules = G.handRules({ oklahoma_upcard: "8C" })),
    /above the hand's limit of 8/,
  ],
  ["a lay-off after a gin", (g) => (g.result.outcome = "gin"), /laid off after a gin/],
];
for (const [what, change, message] of tampered) {
  test(`a tampered result is named: ${what}`, () => {
    const g = genuine();
    change(g);
    assert.throws(() => judge(g), message);
  });
}

test("the server's grouping of the knocker must leave the defender the most", () => {
  // three runs or three sets of 7-9 (2C loose): as runs the defender lays off 10H 6S 10D
  const g = {
    knock: {
      held: hand("7H 8H 9H 7S 8S 9S 7D 8D 9D 2C KD"),
      faceDown: "KD:0",
      melds: [hand("7H 8H 9H"), hand("7S 8S 9S"), hand("7D 8D 9D")],
      deadwood: 2,
      outcome: "knock",
      rules: G.handRules({}),
    },
    result: {
      defender: hand("10H 6S 10D QC KC 3C 4S 5C 2D AS"),
      layoffs: [
        { card: "10H:0", meld: 0 },
        { card: "6S:0", meld: 1 },
        { card: "10D:0", meld: 2 },
      ],
      defenderMelds: [],
      defenderDeadwood: 35,
      outcome: "knock",
      winner: "knocker",
      points: 33,
      rules: G.handRules({}),
    },
  };
  assert.throws(() => judge(g), /another of its best groupings leaves 61/);
  // the same melds named by the knocker are its own choice: accepted
  const knock = H.checkKnock({ ...g.knock, named: true });
  assert.equal(H.checkResult({ knock, named: true, ...g.result }).points, 33);
});

test("gin and big gin: no lay-offs, the defender's whole deadwood plus the bonus", () => {
  const defender = hand("6C QS 7H 8H 9H 3D 4D 5D AD KS");
  const knock = H.checkKnock({
    held: hand("2C 3C 4C 5C 9S 10S JS KH KD KC 6H"),
    faceDown: "6H:0",
    melds: [hand("2C 3C 4C 5C"), hand("9S 10S JS"), hand("KH KD KC")],
    deadwood: 0,
    outcome: "gin",
    rules: G.handRules({}),
  });
  const base = { knock, defender, layoffs: [], defenderMelds: [hand("7H 8H 9H"), hand("3D 4D 5D")], defenderDeadwood: 27, outcome: "gin", winner: "knocker", rules: G.handRules({}) };
  assert.equal(H.checkResult({ ...base, points: 52 }).points, 52);
  assert.throws(() => H.checkResult({ ...base, points: 26 }), /the rules make it 52/);
  const big = H.checkKnock({
    held: hand("3D 4D 5D 6D 7D JS JH JC 9C 9H 9S"),
    faceDown: null,
    melds: [hand("3D 4D 5D 6D 7D"), hand("JS JH JC"), hand("9C 9H 9S")],
    deadwood: 0,
    outcome: "big_gin",
    rules: G.handRules({}),
  });
  assert.equal(big.ten.length, 11);
  assert.throws(
    () => H.checkKnock({ held: hand("2C 3C 4C 5C 9S 10S JS KH KD KC 6H"), faceDown: null, melds: [], deadwood: 0, outcome: "big_gin", rules: G.handRules({}) }),
    /not all melded/,
  );
});
