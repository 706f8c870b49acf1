// The verifier's Indian scorer (web/verify/indian-score.js) on the rule that no group holds the
// same face twice, even when one copy stands in as a wild joker (docs/rules/melds.md#same-face-twice,
// the option strict_duplicate_faces, on at the house), with the three hands the rules library's
// regression test holds (libs/rules/tests/test_arrangement.py,
// test_a_wild_copy_never_stands_in_beside_its_own_face_in_place). Run: node --test tests/js
// (tests/test_verify_gin_scorer.py runs it under pytest, so CI does).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const web = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "web", "verify");
for (const f of ["cards.js", "indian-score.js"]) {
  vm.runInThisContext(readFileSync(join(web, f), "utf8"), { filename: join(web, f) });
}
const V = globalThis.BBVerify;
const faces = (s) => s.split(" ").map(V.parseFace);
const names = (fs) => fs.map(V.faceName).sort().join(" ");

// a rule set's meld_options as the bundle writes them; the jokers-only group is off, as in the
// rules library's test, so that AC JK AC cannot pass as three stand-ins
// (docs/rules/melds.md#jokers-only-group)
const STRICT = { jokers_only_group_is_sequence: false };
const LENIENT = { jokers_only_group_is_sequence: false, strict_duplicate_faces: false };
const EIGHT = 8;
const ACE = 1;
const FOUR = 4;

const group = (cards, wild, options) => V.classifyGroup(faces(cards), wild, V.meldOptions(options));

test("strict duplicates is the house ruling when a rule set says nothing", () => {
  assert.equal(V.meldOptions({}).strictDuplicateFaces, true);
  assert.equal(group("8H JK 8H", EIGHT, {}), null);
});

test("the docs' examples: 7S 7S 7H is no set, and with fours wild 3S 4S 4S is no run", () => {
  assert.equal(group("7S 7S 7H", null, STRICT), null);
  assert.equal(group("3S 4S 4S", FOUR, STRICT), null);
  // with the option off only the cards in their natural places must differ: the second 4S stands
  // in for the five, while two natural 7S still make no set
  assert.equal(group("3S 4S 4S", FOUR, LENIENT), "impure");
  assert.equal(group("7S 7S 7H", null, LENIENT), null);
});

// each group a wild copy would make beside a natural copy of its own face in the three hands
for (const [cards, wild] of [
  ["8H JK 8H", EIGHT], // 5H 6H 7H 8H JK 8H, eights wild
  ["AC JK AC", ACE], // AC AD 2D 3D JK AC, aces wild
  ["AD JK AD", ACE], // AD 3D AD JK 4D 5D, aces wild
]) {
  test(`${cards} is no meld under the strict rule, an impure sequence under the lenient one`, () => {
    assert.equal(group(cards, wild, STRICT), null);
    assert.equal(group(cards, wild, LENIENT), "impure");
  });
}

test("a wild copy beside another face of its suit, or in its own place, is still a meld", () => {
  assert.equal(group("5H 8H JK", EIGHT, STRICT), "impure"); // the 8H for the six, the joker the seven
  assert.equal(group("6H 7H 8H", EIGHT, STRICT), "pure"); // the 8H in its own place
  assert.equal(group("AD 2D 3D", ACE, STRICT), "pure");
});

for (const [cards, wild, valid] of [
  // a show, but never as 5H 6H 7H + 8H JK 8H: the second sequence is 5H 8H JK (8H for the six)
  ["5H 6H 7H 8H JK 8H", EIGHT, true],
  // AD 2D 3D is pure; AC JK AC would need the second AC standing in beside the first
  ["AC AD 2D 3D JK AC", ACE, false],
  ["AD 3D AD JK 4D 5D", ACE, false],
]) {
  test(`${cards}: ${valid ? "a show" : "no show"} under the strict rule, a show under the lenient one`, () => {
    const strict = V.bestArrangement(faces(cards), wild, STRICT);
    // every card left over is a wild card or a joker: 0 points either way
    // (docs/rules/declaration.md#valid-declaration: without a second sequence it is no show)
    assert.deepEqual([strict.points, strict.valid], [0, valid]);
    const opts = V.meldOptions(STRICT);
    for (const meld of strict.melds) {
      const plain = meld.faces.filter((f) => f !== V.JOKER);
      assert.equal(new Set(plain).size, plain.length, `${names(meld.faces)} holds a face twice`);
      assert.equal(V.classifyGroup(meld.faces, wild, opts), meld.kind, names(meld.faces));
    }
    const lenient = V.bestArrangement(faces(cards), wild, LENIENT);
    assert.deepEqual([lenient.points, lenient.valid], [0, true]);
  });
}

test("5H 6H 7H 8H JK 8H shows as 6H 7H 8H and 5H 8H JK under the strict rule", () => {
  const a = V.bestArrangement(faces("5H 6H 7H 8H JK 8H"), EIGHT, STRICT);
  const melds = a.melds.map((m) => [m.kind, names(m.faces)]).sort();
  assert.deepEqual(melds, [
    ["impure", names(faces("5H 8H JK"))],
    ["pure", names(faces("6H 7H 8H"))],
  ]);
  assert.deepEqual(a.deadwood, []);
});
