// The verifier's one money formatter (web/verify/money.js): integer hundredths of a House Token
// as tokens with two decimals, exact at any size. Run: node --test tests/js (run under pytest by
// tests/test_verify_gin_scorer.py, so CI does; tests/test_verify_money.py holds it to
// rummy_ops.money.tokens).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const file = join(root, "web", "verify", "money.js");
vm.runInThisContext(readFileSync(file, "utf8"), { filename: file });
const { tokens, percent } = globalThis.BBVerify;

test("small amounts keep two decimals", () => {
  assert.equal(tokens(0), "0.00");
  assert.equal(tokens(5), "0.05");
  assert.equal(tokens(-5), "-0.05");
  assert.equal(tokens(100), "1.00");
  assert.equal(tokens(167), "1.67");
  assert.equal(tokens(-1300), "-13.00");
  assert.equal(tokens(-100), "-1.00");
  assert.equal(tokens(99), "0.99");
});

test("a signed amount (a net) shows its plus, a minus stays a minus", () => {
  assert.equal(tokens(167, true), "+1.67");
  assert.equal(tokens(0, true), "+0.00");
  assert.equal(tokens(-5, true), "-0.05");
});

test("a BigInt, a Number and a string of digits give the same text", () => {
  for (const n of [0, 5, -5, 100, 167, -1300, 123456789]) {
    assert.equal(tokens(BigInt(n)), tokens(n));
    assert.equal(tokens(String(n)), tokens(n));
  }
});

test("huge amounts are exact (no float rounding past 2^53)", () => {
  const huge = 123456789012345678901234567890123n;
  assert.equal(tokens(huge), "1234567890123456789012345678901.23");
  assert.equal(tokens(-huge), "-1234567890123456789012345678901.23");
  const past = 2n ** 53n + 1n; // 9007199254740993: not a Number
  assert.equal(tokens(past), "90071992547409.93");
  assert.equal(tokens(String(past)), "90071992547409.93");
  assert.equal(tokens(Number.MAX_SAFE_INTEGER), "90071992547409.91");
});

test("anything but an integer amount is refused, never rounded", () => {
  for (const bad of [1.5, NaN, Infinity, "1.5", "", "12a", null, undefined, {}]) {
    assert.throws(() => tokens(bad), TypeError, String(bad));
  }
});

test("basis points read as a percent", () => {
  assert.equal(percent(500), "5.00%");
  assert.equal(percent(0), "0.00%");
  assert.equal(percent(1250), "12.50%");
  assert.equal(percent(5), "0.05%");
});
