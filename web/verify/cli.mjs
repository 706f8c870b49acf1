#!/usr/bin/env node
// The verifier page's checks under Node: it loads the very scripts index.html loads (those marked
// data-core, in page order) and runs them with Node's Web Crypto (globalThis.crypto.subtle).
//
//   node web/verify/cli.mjs BUNDLE.json [--record RECORD.jsonl] [--json]
//       verify a hand's proof bundle (and the player's own record); prints each step's verdict,
//       the money in House Tokens (each seat's net and the commission: "+1.67", "0.08"); --json
//       prints the result (verify.js's shape) with the money in integer hundredths.
//       Exit 0 when every step passed, 1 when one failed, 2 when what ran passed but not all could
//       be checked here (a variant without a file here: its moves and scores), or bad usage or
//       input it cannot read (one line "Error: ..." naming the file).
//   node web/verify/cli.mjs --vectors [shuffle-v1.json]
//       recompute every shuffle test vector (libs/rules/vectors/shuffle-v1.json by default);
//       exit 1 on a mismatch.
//   node web/verify/cli.mjs --score < cases.jsonl
//       score 13-card hands, one JSON object a line: {"id", "cards": ["AH", "JK", ...],
//       "wild_rank": "7" | null, "meld_options": {...}} -> {"id", "valid", "points"} a line; a case
//       whose "game" a scorer file registered in BBVerify.caseScorers (gin-score.js: gin-deadwood,
//       gin-11, gin-score, gin-rule) gets that scorer's answer, in the rules CLI's field names.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const here = dirname(fileURLToPath(import.meta.url));
const page = readFileSync(join(here, "index.html"), "utf8");
for (const m of page.matchAll(/<script\s+src="([^"]+)"\s+data-core><\/script>/g)) {
  vm.runInThisContext(readFileSync(join(here, m[1]), "utf8"), { filename: join(here, m[1]) });
}
const V = globalThis.BBVerify;

function usage(message) {
  if (message) console.error(message);
  console.error("usage: node web/verify/cli.mjs BUNDLE.json [--record RECORD.jsonl] [--json]");
  console.error("       node web/verify/cli.mjs --vectors [VECTORS.json]");
  console.error("       node web/verify/cli.mjs --score < CASES.jsonl");
  console.error("In its lines: money in House Tokens with two decimals (13.00 = thirteen tokens, +1.67 a seat's");
  console.error("net gain, -1.00 its loss); --json keeps integer hundredths of a token (1300 = 13.00).");
  process.exit(2);
}

// Input the CLI cannot use (a file missing or unreadable, not JSON): one line naming the file,
// exit 2 (as bad usage), never a stack trace.
function fail(message) {
  console.error(`Error: ${message}`);
  process.exit(2);
}

function readInput(what, path) {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    return fail(`cannot read ${what} ${path}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
  }
}

function parseInput(what, path, text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    return fail(`${what} ${path} is not JSON (${err.message.replace(/\s+/g, " ")})`);
  }
}

async function vectors(path) {
  const data = parseInput("vectors", path, readInput("vectors", path));
  if (data.spec !== V.SHUFFLE_VERSION) {
    console.error(`unexpected spec ${data.spec}, this verifier implements ${V.SHUFFLE_VERSION}`);
    return 1;
  }
  const problems = [];
  const check = (kind, v, got) => {
    for (const [field, value] of Object.entries(got)) {
      if (field in v.expected && JSON.stringify(value) !== JSON.stringify(v.expected[field])) {
        problems.push(`${kind} ${v.name}: ${field} differs`);
      }
    }
  };
  for (const v of data.deals) {
    const seed = V.hexToBytes(v.server_seed_hex);
    const mat = V.material(v.hand_id, v.client_seeds);
    const d = await V.computeDeal({
      serverSeed: seed,
      handId: v.hand_id,
      clientSeeds: v.client_seeds,
      decks: v.decks,
      printedJokers: v.printed_jokers,
      seats: v.seats,
      dealer: v.dealer,
      handSize: v.hand_size,
      shape: v.deal_shape, // {wild_cut, upcard}: gin's deal cuts no wild card
    });
    const face = (i) => V.indexCard(i, v.decks, v.printed_jokers).split(":")[0];
    const cut = d.wildCut === null ? null : face(d.wildCut);
    const turned = (i) => (i === null ? null : { index: i, card: face(i) });
    check("deal", v, {
      commitment_hex: await V.sha256Hex(seed),
      material_hex: V.bytesToHex(mat),
      hand_key_hex: V.bytesToHex(d.handKey),
      deal_stream_prefix_hex: V.bytesToHex(await new V.Stream(d.handKey, "deal").read(64)),
      order_indices: d.order,
      order_cards: d.order.map(face),
      hands: d.hands.map((h) => ({ seat: h.seat, indices: h.indices, cards: h.indices.map(face) })),
      wild_cut: turned(d.wildCut),
      wild_rank: cut === null || cut === "JK" ? null : cut.slice(0, -1),
      first_open: turned(d.firstOpen),
      stock_top: { index: d.stock[0], card: face(d.stock[0]) },
      stock_size: d.stock.length,
    });
  }
  for (const v of data.reshuffles) {
    const key = await V.handKey(V.hexToBytes(v.server_seed_hex), V.material(v.hand_id, v.client_seeds));
    const order = await V.computeReshuffle(key, v.pile_indices, v.number);
    const face = (i) => V.indexCard(i, v.decks, v.printed_jokers).split(":")[0];
    check("reshuffle", v, { hand_key_hex: V.bytesToHex(key), order_indices: order, order_cards: order.map(face) });
  }
  const total = data.deals.length + data.reshuffles.length;
  if (total === 0) problems.push("no vectors found");
  for (const p of problems) console.error(`MISMATCH ${p}`);
  console.log(`${V.SHUFFLE_VERSION}: ${total} vectors, ${problems.length} mismatches`);
  return problems.length === 0 ? 0 : 1;
}

function score() {
  let status = 0;
  for (const line of readFileSync(0, "utf8").split(/\r?\n/)) {
    if (!line.trim()) continue;
    let c;
    try {
      c = JSON.parse(line);
      const byGame = V.caseScorers && V.caseScorers[c.game]; // another variant's cases (gin-score.js)
      if (byGame) {
        console.log(JSON.stringify(byGame(c)));
        continue;
      }
      const faces = c.cards.map(V.parseFace);
      const wild = c.wild_rank === null ? null : V.parseRank(c.wild_rank);
      const a = V.bestArrangement(faces, wild, c.meld_options || {});
      console.log(JSON.stringify({ id: c.id, valid: a.valid, points: a.points }));
    } catch (err) {
      console.log(JSON.stringify({ id: c ? c.id : null, error: err.message }));
      status = 2;
    }
  }
  return status;
}

async function bundle(args) {
  const json = args.includes("--json");
  const rest = args.filter((a) => a !== "--json");
  let record = null;
  const r = rest.indexOf("--record");
  if (r >= 0) {
    if (!rest[r + 1]) usage("--record needs a file");
    record = readInput("record", rest[r + 1]);
    rest.splice(r, 2);
  }
  if (rest.length !== 1) usage();
  const text = readInput("bundle", rest[0]);
  const handId = parseInput("bundle", rest[0], text).hand_id;
  const result = await V.verifyBundle(text, record);
  if (json) {
    console.log(JSON.stringify(result));
  } else {
    for (const s of result.steps) {
      console.log(`${s.ok ? "PASSED" : "FAILED"}  ${s.title}${s.ok ? "" : `: ${s.problem}`}`);
      for (const n of s.notes) console.log(`        ${n}`);
    }
    for (const u of result.unchecked) console.log(`NOT CHECKED  ${u.title}: ${u.why}`);
    const verdict =
      { passed: "VERIFIED", failed: "NOT VERIFIED" }[result.verdict] ??
      (V.firstFailure(result) ? "NOT VERIFIED (cannot be checked)" : "NOT FULLY VERIFIED (unknown variant)");
    console.log(`${verdict}: hand ${handId ?? "?"}`);
  }
  return { passed: 0, failed: 1 }[result.verdict] ?? 2;
}

const args = process.argv.slice(2);
let status;
if (args[0] === "--vectors") {
  status = await vectors(args[1] ?? join(here, "..", "..", "libs", "rules", "vectors", "shuffle-v1.json"));
} else if (args[0] === "--score") {
  status = score();
} else if (args.length === 0 || args[0] === "--help") {
  usage();
} else {
  status = await bundle(args);
}
// not process.exit(): output still queued on a full pipe would be cut off (a reader slower than
// --score's thousands of lines got part of them, with status 0)
process.exitCode = status;
