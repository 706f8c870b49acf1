// web/verify/cli.mjs on input it cannot read: one line "Error: ..." naming the file, exit 2, no
// Node stack trace. Run: node --test tests/js (under pytest by tests/test_verify_gin_scorer.py).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const cli = join(root, "web", "verify", "cli.mjs");
const folder = mkdtempSync(join(tmpdir(), "verify-cli-"));
const missing = join(folder, "missing.json");
const notJson = join(folder, "not-json.json");
writeFileSync(notJson, "not json\n");

function run(...args) {
  const done = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8" });
  return { status: done.status, out: done.stdout, err: done.stderr };
}

function refusedNaming(result, file) {
  assert.equal(result.status, 2, result.err);
  assert.equal(result.out, "");
  const lines = result.err.trimEnd().split("\n");
  assert.equal(lines.length, 1, result.err);
  assert.match(lines[0], /^Error: /);
  assert.ok(lines[0].includes(file), lines[0]);
}

test("a missing bundle is one error line naming it", () => {
  refusedNaming(run(missing), missing);
});

test("a bundle that is not JSON is one error line naming it", () => {
  refusedNaming(run(notJson), notJson);
});

test("a missing record is one error line naming it", () => {
  const record = join(folder, "missing.jsonl");
  refusedNaming(run(notJson, "--record", record), record);
});

test("missing vectors are one error line naming them", () => {
  refusedNaming(run("--vectors", missing), missing);
});
