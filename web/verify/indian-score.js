// The Indian 13-card points scorer of the verifier page: an exact arrangement search of its own,
// written from the rules text (what a card is worth, sequences and sets, the three tiers), sharing
// no code with the server's rules library. Classic script; needs cards.js first.
//
// Points of a hand are the least, over every way of grouping its cards, of:
//   1. at least two sequences, one of them pure: the loose cards count;
//   2. a pure sequence but no second sequence: every card counts except that one run;
//   3. no pure sequence: every card counts.
// A hand is a valid declaration when some grouping puts every card in a meld with two sequences,
// one of them pure. Method: every sub-multiset of the hand's faces of 3..13 cards is classified
// (pure sequence, impure sequence, set or nothing); then a memoised search takes the first face
// left and either leaves one copy loose or puts it in a meld of the faces left, tracking whether a
// pure sequence and how many sequences (0, 1, 2+) are down, minimising (points, loose cards).
(function (root) {
  "use strict";
  const V = root.BBVerify;
  const { JOKER, facePoints } = V;
  const MAX_RUN = 13;

  /** The meld options of a rule set (defaults: the house rulings). */
  function meldOptions(o) {
    o = o || {};
    return {
      jokersOnlyGroupIsSequence: o.jokers_only_group_is_sequence !== false,
      strictDuplicateFaces: o.strict_duplicate_faces !== false,
      aceHigh: o.ace_high !== false,
    };
  }

  // Kind of a group whose natural cards are `naturals` (faces, never JOKER) and whose other
  // n - naturals.length cards stand in: "pure", "impure", "set" or null.
  function kindOfNaturals(naturals, n, opts) {
    if (naturals.length === 0) {
      return opts.jokersOnlyGroupIsSequence && n <= MAX_RUN ? "impure" : null;
    }
    const suit = Math.floor(naturals[0] / 13);
    if (n <= MAX_RUN && naturals.every((f) => Math.floor(f / 13) === suit)) {
      const low = naturals.map((f) => (f % 13) + 1).sort((a, b) => a - b);
      const tries = [low];
      if (opts.aceHigh && low[0] === 1) tries.push([...low.slice(1), 14]);
      for (const places of tries) {
        const distinct = new Set(places).size === places.length;
        if (distinct && places[places.length - 1] - places[0] < n) {
          return naturals.length === n ? "pure" : "impure";
        }
      }
    }
    if (n <= 4) {
      const rank = naturals[0] % 13;
      const suits = new Set(naturals.map((f) => Math.floor(f / 13)));
      if (naturals.every((f) => f % 13 === rank) && suits.size === naturals.length) return "set";
    }
    return null;
  }

  const KIND_ORDER = { pure: 0, impure: 1, set: 2 };

  /** The best kind of meld the faces form as one group, or null. A wild-rank card may sit in its
   * natural place or stand in; every choice is tried. */
  function classifyGroup(faces, wildRank, opts) {
    const n = faces.length;
    if (n < 3) return null;
    const plain = faces.filter((f) => f !== JOKER);
    if (opts.strictDuplicateFaces && new Set(plain).size !== plain.length) return null;
    const wild = plain.filter((f) => (f % 13) + 1 === wildRank);
    const fixed = plain.filter((f) => (f % 13) + 1 !== wildRank);
    let best = null;
    for (let roles = 0; roles < 1 << wild.length; roles++) {
      const naturals = fixed.concat(wild.filter((_, b) => (roles >> b) & 1));
      const kind = kindOfNaturals(naturals, n, opts);
      if (kind !== null && (best === null || KIND_ORDER[kind] < KIND_ORDER[best])) best = kind;
      if (best === "pure") break;
    }
    return best;
  }

  /**
   * The best arrangement of a hand. faces: face numbers (cards.js); wildRank 1..13 or null;
   * options: a rule set's meld_options (snake_case, as in the bundle). Returns
   * {points (uncapped), valid, melds: [{kind, faces}], deadwood: [faces]}.
   */
  function bestArrangement(faces, wildRank, options) {
    const opts = meldOptions(options);
    // distinct faces, naturals first (ascending), then wild-rank faces, then printed jokers:
    // the search takes the first face left, so jokers are placed last
    const counts = new Map();
    for (const f of faces) counts.set(f, (counts.get(f) || 0) + 1);
    const isWild = (f) => f === JOKER || (f % 13) + 1 === wildRank;
    const distinct = [...counts.keys()].sort((a, b) => isWild(a) - isWild(b) || a - b);
    const d = distinct.length;
    const cap = distinct.map((f) => counts.get(f));
    const radix = [];
    let r = 1;
    for (let i = 0; i < d; i++) {
      radix.push(r);
      r *= cap[i] + 1;
    }
    const full = distinct.reduce((s, _, i) => s + cap[i] * radix[i], 0);
    const total = faces.reduce((s, f) => s + facePoints(f, wildRank), 0);

    // every sub-multiset of 3..13 cards that is a meld, by its first face
    const byFirst = distinct.map(() => []);
    let bestPure = null; // the most valuable pure sequence (tier 2)
    const take = new Array(d).fill(0);
    // (a meld's natural cards share a suit or a rank, so a choice of non-wild faces that shares
    // neither is cut short: `anchor` is the first non-wild face chosen)
    const visit = (i, size, anchor, sameSuit, sameRank) => {
      if (!sameSuit && !sameRank) return;
      if (i === d) {
        if (size < 3 || size > MAX_RUN) return;
        const group = [];
        for (let k = 0; k < d; k++) for (let c = 0; c < take[k]; c++) group.push(distinct[k]);
        const kind = classifyGroup(group, wildRank, opts);
        if (kind === null) return;
        const first = take.findIndex((c) => c > 0);
        const code = take.reduce((s, c, k) => s + c * radix[k], 0);
        const value = group.reduce((s, f) => s + facePoints(f, wildRank), 0);
        const meld = { kind, code, take: take.slice(), group, value };
        byFirst[first].push(meld);
        if (kind === "pure" && (bestPure === null || value > bestPure.value)) bestPure = meld;
        return;
      }
      const f = distinct[i];
      for (let c = 0; c <= cap[i] && size + c <= MAX_RUN; c++) {
        take[i] = c;
        if (c === 0 || isWild(f)) visit(i + 1, size + c, anchor, sameSuit, sameRank);
        else if (anchor === null) visit(i + 1, size + c, f, true, true);
        else {
          const suit = sameSuit && Math.floor(f / 13) === Math.floor(anchor / 13);
          visit(i + 1, size + c, anchor, suit, sameRank && f % 13 === anchor % 13);
        }
      }
      take[i] = 0;
    };
    visit(0, 0, null, true, true);

    // tier 1: cost = points * 16 + loose cards (13 at most), least first
    const INF = Infinity;
    const memo = new Map();
    const digit = (state, i) => Math.floor(state / radix[i]) % (cap[i] + 1);
    const search = (state, pure, seqs) => {
      if (state === 0) return pure && seqs >= 2 ? 0 : INF;
      const key = state * 6 + (pure ? 3 : 0) + seqs;
      const known = memo.get(key);
      if (known !== undefined) return known;
      let i = 0;
      while (digit(state, i) === 0) i++;
      const f = distinct[i];
      let best = facePoints(f, wildRank) * 16 + 1 + search(state - radix[i], pure, seqs);
      for (const m of byFirst[i]) {
        let fits = true;
        for (let k = i; k < d && fits; k++) if (m.take[k] > digit(state, k)) fits = false;
        if (!fits) continue;
        const seq = m.kind === "set" ? 0 : 1;
        const cost = search(state - m.code, pure || m.kind === "pure", Math.min(2, seqs + seq));
        if (cost < best) best = cost;
      }
      memo.set(key, best);
      return best;
    };
    const tier1 = search(full, false, 0);

    // the arrangement itself, walked back from the memo
    const walk = () => {
      const melds = [];
      const deadwood = [];
      let state = full;
      let pure = false;
      let seqs = 0;
      while (state !== 0) {
        const goal = search(state, pure, seqs);
        let i = 0;
        while (digit(state, i) === 0) i++;
        const f = distinct[i];
        if (facePoints(f, wildRank) * 16 + 1 + search(state - radix[i], pure, seqs) === goal) {
          deadwood.push(f);
          state -= radix[i];
          continue;
        }
        const m = byFirst[i].find((m) => {
          for (let k = i; k < d; k++) if (m.take[k] > digit(state, k)) return false;
          const seq = m.kind === "set" ? 0 : 1;
          const next = search(state - m.code, pure || m.kind === "pure", Math.min(2, seqs + seq));
          return next === goal;
        });
        melds.push({ kind: m.kind, faces: m.group });
        pure = pure || m.kind === "pure";
        seqs = Math.min(2, seqs + (m.kind === "set" ? 0 : 1));
        state -= m.code;
      }
      return { melds, deadwood };
    };

    const tier2 = bestPure === null ? INF : total - bestPure.value;
    const tier1Points = tier1 === INF ? INF : Math.floor(tier1 / 16);
    if (tier1Points <= tier2 && tier1Points <= total) {
      const { melds, deadwood } = walk();
      return { points: tier1Points, valid: tier1 === 0, melds, deadwood };
    }
    if (bestPure !== null && tier2 <= total) {
      const rest = faces.slice();
      for (const f of bestPure.group) rest.splice(rest.indexOf(f), 1);
      return {
        points: tier2,
        valid: false,
        melds: [{ kind: "pure", faces: bestPure.group }],
        deadwood: rest,
      };
    }
    return { points: total, valid: false, melds: [], deadwood: faces.slice() };
  }

  Object.assign(V, { meldOptions, classifyGroup, bestArrangement });
})(globalThis);
