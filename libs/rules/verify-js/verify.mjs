#!/usr/bin/env node
// Independent implementation of the shuffle spec bb-shuffle-v1 (docs/rules/shuffle-spec.md),
// written from the document, using only Node's built-in modules. It recomputes every test vector
// in libs/rules/vectors/shuffle-v1.json (or the file given as the first argument) and exits 1 on
// any mismatch, 0 when all match. Usage: node libs/rules/verify-js/verify.mjs [vectors.json]
//
// This file is also the seed of the in-browser verifier: only createHmac/createHash are needed.

import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "bb-shuffle-v1";
const SUITS = ["C", "D", "H", "S"];
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const TWO_POW_32 = 2 ** 32;

// --- canonical shoe -----------------------------------------------------------------------------
function cardFace(index, decks, printedJokers) {
  const standard = decks * 52;
  if (index < 0 || index >= standard + printedJokers) throw new Error(`index ${index} out of shoe`);
  if (index >= standard) return "JK";
  const rest = index % 52;
  return RANKS[rest % 13] + SUITS[Math.floor(rest / 13)];
}

// --- encoding -------------------------------------------------------------------------------------
function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
function u64(n) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}
function lp(bytes) {
  return Buffer.concat([u32(bytes.length), bytes]);
}

function material(handId, clientSeeds) {
  const seeds = [...clientSeeds].sort((a, b) => a.seat - b.seat);
  const parts = [lp(Buffer.from(VERSION, "ascii")), lp(Buffer.from(handId, "utf8")), u32(seeds.length)];
  for (const { seat, seed_hex } of seeds) parts.push(u32(seat), lp(Buffer.from(seed_hex, "hex")));
  return Buffer.concat(parts);
}

function handKey(serverSeed, mat) {
  return createHmac("sha256", serverSeed).update(mat).digest();
}

// --- stream, uniform integers, Fisher-Yates -------------------------------------------------------
class Stream {
  constructor(key, label) {
    this.key = key;
    this.prefix = lp(Buffer.from(label, "ascii"));
    this.counter = 0;
    this.buffer = Buffer.alloc(0);
  }
  read(n) {
    while (this.buffer.length < n) {
      const block = createHmac("sha256", this.key).update(Buffer.concat([this.prefix, u64(this.counter)])).digest();
      this.buffer = Buffer.concat([this.buffer, block]);
      this.counter += 1;
    }
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }
}

function uniformBelow(n, stream) {
  const limit = TWO_POW_32 - (TWO_POW_32 % n);
  for (;;) {
    const x = stream.read(4).readUInt32BE(0);
    if (x < limit) return x % n;
  }
}

function fisherYates(items, stream) {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = uniformBelow(i + 1, stream);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

// --- deal and reshuffle ---------------------------------------------------------------------------
function dealOrder(seats, dealer) {
  const sorted = [...seats].sort((a, b) => a - b);
  const k = sorted.indexOf(dealer) + 1;
  return [...sorted.slice(k), ...sorted.slice(0, k)];
}

function computeDeal(v) {
  const serverSeed = Buffer.from(v.server_seed_hex, "hex");
  const mat = material(v.hand_id, v.client_seeds);
  const key = handKey(serverSeed, mat);
  const size = v.decks * 52 + v.printed_jokers;
  const order = fisherYates([...Array(size).keys()], new Stream(key, "deal"));
  const face = (i) => cardFace(i, v.decks, v.printed_jokers);
  const seats = dealOrder(v.seats, v.dealer);
  const hands = seats.map((seat, pos) => {
    const indices = [];
    for (let k = 0; k < v.hand_size; k++) indices.push(order[pos + k * seats.length]);
    return { seat, indices, cards: indices.map(face) };
  });
  const dealt = seats.length * v.hand_size;
  const cut = face(order[dealt]);
  return {
    commitment_hex: createHash("sha256").update(serverSeed).digest("hex"),
    material_hex: mat.toString("hex"),
    hand_key_hex: key.toString("hex"),
    deal_stream_prefix_hex: new Stream(key, "deal").read(64).toString("hex"),
    order_indices: order,
    order_cards: order.map(face),
    hands,
    wild_cut: { index: order[dealt], card: cut },
    wild_rank: cut === "JK" ? null : cut.slice(0, -1),
    first_open: { index: order[dealt + 1], card: face(order[dealt + 1]) },
    stock_top: { index: order[dealt + 2], card: face(order[dealt + 2]) },
    stock_size: size - dealt - 2,
  };
}

function computeReshuffle(v) {
  const key = handKey(Buffer.from(v.server_seed_hex, "hex"), material(v.hand_id, v.client_seeds));
  const sorted = [...v.pile_indices].sort((a, b) => a - b);
  const order = fisherYates(sorted, new Stream(key, `reshuffle/${v.number}`));
  return {
    hand_key_hex: key.toString("hex"),
    order_indices: order,
    order_cards: order.map((i) => cardFace(i, v.decks, v.printed_jokers)),
  };
}

// --- compare ----------------------------------------------------------------------------------------
function compare(kind, v, computed) {
  const problems = [];
  for (const [field, expected] of Object.entries(v.expected)) {
    const got = JSON.stringify(computed[field]);
    if (got !== JSON.stringify(expected)) problems.push(`${kind} ${v.name}: ${field} differs`);
  }
  for (const field of Object.keys(computed)) {
    if (!(field in v.expected)) problems.push(`${kind} ${v.name}: vector lacks ${field}`);
  }
  return problems;
}

const here = dirname(fileURLToPath(import.meta.url));
const path = process.argv[2] ?? join(here, "..", "vectors", "shuffle-v1.json");
const vectors = JSON.parse(readFileSync(path, "utf8"));
if (vectors.spec !== VERSION) {
  console.error(`unexpected spec ${vectors.spec}, this verifier implements ${VERSION}`);
  process.exit(1);
}
const problems = [
  ...vectors.deals.flatMap((v) => compare("deal", v, computeDeal(v))),
  ...vectors.reshuffles.flatMap((v) => compare("reshuffle", v, computeReshuffle(v))),
];
const total = vectors.deals.length + vectors.reshuffles.length;
if (total === 0) problems.push("no vectors found");
for (const p of problems) console.error(`MISMATCH ${p}`);
console.log(`${VERSION}: ${total} vectors, ${problems.length} mismatches`);
process.exit(problems.length === 0 ? 0 : 1);
