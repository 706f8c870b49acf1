// The shuffle spec bb-shuffle-v1 (docs/rules/shuffle-spec.md) with Web Crypto only (crypto.subtle),
// written from the document, sharing no code with the server. Classic script; needs cards.js.
(function (root) {
  "use strict";
  const V = root.BBVerify;
  const SHUFFLE_VERSION = "bb-shuffle-v1";
  const TWO_POW_32 = 2 ** 32;
  const subtle = () => root.crypto.subtle;

  function hexToBytes(hex) {
    if (typeof hex !== "string" || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
      throw new Error(`not hex: ${JSON.stringify(String(hex).slice(0, 80))}`);
    }
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    return out;
  }

  function bytesToHex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function concat(parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  function u32(n) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n);
    return b;
  }

  function u64(n) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(n));
    return b;
  }

  const lp = (bytes) => concat([u32(bytes.length), bytes]);
  const ascii = (s) => new TextEncoder().encode(s); // labels are ASCII, the hand id UTF-8

  async function sha256Hex(bytes) {
    return bytesToHex(new Uint8Array(await subtle().digest("SHA-256", bytes)));
  }

  async function hmac(keyBytes, message) {
    const key = await subtle().importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    return new Uint8Array(await subtle().sign("HMAC", key, message));
  }

  /** Key material (spec section 3); clientSeeds: [{seat, seed_hex}] in any order. */
  function material(handId, clientSeeds) {
    const seeds = [...clientSeeds].sort((a, b) => a.seat - b.seat);
    const parts = [lp(ascii(SHUFFLE_VERSION)), lp(ascii(handId)), u32(seeds.length)];
    for (const s of seeds) parts.push(u32(s.seat), lp(hexToBytes(s.seed_hex)));
    return concat(parts);
  }

  async function handKey(serverSeed, mat) {
    return hmac(serverSeed, mat);
  }

  /** The labelled byte stream (spec section 4), read front to back. */
  class Stream {
    constructor(key, label) {
      this.key = key;
      this.prefix = lp(ascii(label));
      this.counter = 0;
      this.buffer = new Uint8Array(0);
    }
    async read(n) {
      while (this.buffer.length < n) {
        const block = await hmac(this.key, concat([this.prefix, u64(this.counter)]));
        this.buffer = concat([this.buffer, block]);
        this.counter += 1;
      }
      const out = this.buffer.slice(0, n);
      this.buffer = this.buffer.slice(n);
      return out;
    }
  }

  async function uniformBelow(n, stream) {
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    for (;;) {
      const w = await stream.read(4);
      const x = new DataView(w.buffer, w.byteOffset, 4).getUint32(0);
      if (x < limit) return x % n;
    }
  }

  async function fisherYates(items, stream) {
    const a = [...items];
    for (let i = a.length - 1; i > 0; i--) {
      const j = await uniformBelow(i + 1, stream);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  }

  /** Seats in dealing order: ascending, from the first seat after the dealer, the dealer last. */
  function dealOrder(seats, dealer) {
    const sorted = [...seats].sort((a, b) => a - b);
    const k = sorted.indexOf(dealer) + 1;
    return [...sorted.slice(k), ...sorted.slice(0, k)];
  }

  /**
   * The deal (spec section 7) as canonical indices: {order, hands: [{seat, indices}] in dealing
   * order, wildCut, firstOpen, stock (top first), handKey}. `shape` is the variant's deal shape
   * ({wild_cut, upcard}, both by default): a step it skips is null and the next card takes its
   * place (no cut: the first open card is the card after the hands).
   */
  async function computeDeal({ serverSeed, handId, clientSeeds, decks, printedJokers, seats, dealer, handSize, shape }) {
    const { wild_cut: cuts = true, upcard = true } = shape || {};
    const key = await handKey(serverSeed, material(handId, clientSeeds));
    const size = decks * 52 + printedJokers;
    const order = await fisherYates([...Array(size).keys()], new Stream(key, "deal"));
    const inOrder = dealOrder(seats, dealer);
    const n = inOrder.length;
    const hands = inOrder.map((seat, p) => {
      const indices = [];
      for (let k = 0; k < handSize; k++) indices.push(order[p + k * n]);
      return { seat, indices };
    });
    let next = n * handSize;
    const wildCut = cuts ? order[next++] : null;
    const firstOpen = upcard ? order[next++] : null;
    return { handKey: key, order, hands, wildCut, firstOpen, stock: order.slice(next) };
  }

  /** The number-th reshuffle (spec section 8) of the pile's indices: the new stock, top first. */
  async function computeReshuffle(key, pileIndices, number) {
    const sorted = [...pileIndices].sort((a, b) => a - b);
    return fisherYates(sorted, new Stream(key, `reshuffle/${number}`));
  }

  Object.assign(V, {
    SHUFFLE_VERSION,
    hexToBytes,
    bytesToHex,
    sha256Hex,
    material,
    handKey,
    Stream,
    dealOrder,
    computeDeal,
    computeReshuffle,
  });
})(globalThis);
