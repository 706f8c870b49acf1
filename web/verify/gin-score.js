// The gin family's scorer for the verifier page (docs/rules/gin.md, docs/rules/formats.md
// "Game to N", "Hollywood", "Money by format"), written from the rules text and sharing no code
// with the server's rules library. No dependencies. A classic script like the page's others (an
// ES module cannot be loaded from file://, where the page must work); under Node it is loaded the
// same way (cli.mjs, tests). Everything lands on globalThis.BBVerify.gin.
//
// Cards: faces "7H", "10S", "AC" (or bundle cards "7H:0"), a card is its canonical index
// suit*13 + rank-1 (suits C D H S, ace 1 .. king 13). Points everywhere; money in integer
// hundredths (BigInt inside, Number out when safe).
//
// Method: the melds a hand can make are listed as bitmasks over the hand's positions (every set of
// three or four of a rank, every same-suit stretch of three or more consecutive ranks, ace low, no
// wrap); the least deadwood of any subset of the hand is a memoised search over subsets (take the
// lowest card left: loose, or in one of its melds that lies in the subset). The 11-card values
// reuse the same table: the ten cards left by each discard are subsets of the eleven. Lay-offs:
// every subset of the defender's cards that can go onto the knocker's melds (a three-set's fourth
// card; a chain of same-suit cards from a run's end) is tried, the rest valued by the same search.
(function (root) {
  "use strict";
  const V = (root.BBVerify = root.BBVerify || {});

  const SUITS = "CDHS";
  const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
  const KNOCK_LIMIT = 10;
  const GIN_BONUS = 25;
  const UNDERCUT_BONUS = 25;
  const BIG_GIN_BONUS = 31;
  const GAME = { target: 100, bonus: 100, shutout: 200, box: 25 };

  class GinError extends Error {}

  /** "7H" / "7H:0" -> 0..51; throws GinError. */
  function card(text) {
    if (typeof text === "number" && Number.isInteger(text) && text >= 0 && text < 52) return text;
    if (typeof text !== "string") throw new GinError(`not a card: ${JSON.stringify(text)}`);
    const face = text.split(":")[0].trim().toUpperCase();
    const suit = SUITS.indexOf(face.slice(-1));
    const rank = RANKS.indexOf(face.slice(0, -1));
    if (suit < 0 || rank < 0 || face.length < 2) throw new GinError(`not a card of the gin deck: ${JSON.stringify(text)}`);
    return suit * 13 + rank;
  }
  const rankOf = (c) => (c % 13) + 1;
  const suitOf = (c) => Math.floor(c / 13);
  const name = (c) => RANKS[c % 13] + SUITS[suitOf(c)];
  /** What a card counts loose: ace 1, J/Q/K 10, else its face value (gin.md#deck). */
  const value = (c) => Math.min(rankOf(c), 10);

  function cardsOf(list) {
    const cs = list.map(card);
    if (new Set(cs).size !== cs.length) throw new GinError("a card appears twice in one hand");
    return cs;
  }

  /** Is `cs` (indices) one valid meld: a set of 3-4 of a rank or a run of 3+ of a suit, ace low. */
  function isMeld(cs) {
    if (cs.length < 3 || new Set(cs).size !== cs.length) return false;
    if (cs.length <= 4 && cs.every((c) => rankOf(c) === rankOf(cs[0]))) return true;
    if (!cs.every((c) => suitOf(c) === suitOf(cs[0]))) return false;
    const r = cs.map(rankOf).sort((a, b) => a - b);
    return r[r.length - 1] - r[0] === r.length - 1;
  }

  /** A solver over one hand (indices, any size up to 20 or so): every meld as a position mask
   * and a memo of the least deadwood of each subset. */
  function solver(cs) {
    const n = cs.length;
    const pos = new Map(cs.map((c, i) => [c, i]));
    const melds = [];
    // sets: every 3- and 4-subset of one rank
    for (let r = 0; r < 13; r++) {
      const have = [0, 1, 2, 3].map((s) => pos.get(s * 13 + r)).filter((p) => p !== undefined);
      if (have.length >= 3) {
        for (let drop = -1; drop < have.length; drop++) {
          if (have.length === 3 && drop >= 0) break;
          const m = have.filter((_p, k) => k !== drop).reduce((a, p) => a | (1 << p), 0);
          melds.push(m);
        }
      }
    }
    // runs: every stretch of 3+ consecutive ranks of one suit
    for (let s = 0; s < 4; s++) {
      for (let lo = 0; lo < 13; lo++) {
        let m = 0;
        for (let r = lo; r < 13 && pos.has(s * 13 + r); r++) {
          m |= 1 << pos.get(s * 13 + r);
          if (r - lo >= 2) melds.push(m);
        }
      }
    }
    const byLow = Array.from({ length: n }, () => []);
    for (const m of melds) byLow[31 - Math.clz32(m & -m)].push(m);
    const values = cs.map(value);
    const memo = new Int16Array(1 << n).fill(-1);
    memo[0] = 0;
    function best(mask) {
      if (memo[mask] >= 0) return memo[mask];
      const i = 31 - Math.clz32(mask & -mask);
      const rest = mask & ~(1 << i);
      let low = values[i] + best(rest);
      for (const m of byLow[i]) {
        if (low === 0) break;
        // a meld whose lowest position is i lies in `mask` when all its bits are there
        if ((m & mask) === m) low = Math.min(low, best(mask & ~m));
      }
      memo[mask] = low;
      return low;
    }
    /** Every arrangement (list of meld masks) of `mask` whose deadwood is best(mask). */
    function arrangements(mask) {
      const out = [];
      const want = best(mask);
      (function walk(left, chosen, loose) {
        if (left === 0) {
          if (loose === want) out.push(chosen.slice());
          return;
        }
        if (loose + best(left) > want) return;
        const i = 31 - Math.clz32(left & -left);
        walk(left & ~(1 << i), chosen, loose + values[i]);
        for (const m of byLow[i]) {
          // melds holding i whose lowest position is i: the others were decided earlier
          if ((m & left) === m) {
            chosen.push(m);
            walk(left & ~m, chosen, loose);
            chosen.pop();
          }
        }
      })(mask, [], 0);
      return out;
    }
    const full = n >= 31 ? -1 : (1 << n) - 1;
    const at = (mask) => cs.filter((_c, i) => mask & (1 << i));
    return { cs, n, full, best, arrangements, at, pos };
  }

  /** The least deadwood of a hand (gin.md#deadwood), points. */
  function deadwood(list) {
    const s = solver(cardsOf(list));
    return s.best(s.full);
  }

  /** Eleven cards (gin.md#eleven-cards): {best_after_discard, discards (faces), big_gin, gin,
   * knockLegal(limit)}. */
  function eleven(list) {
    const cs = cardsOf(list);
    if (cs.length !== 11) throw new GinError(`eleven cards are needed, got ${cs.length}`);
    const s = solver(cs);
    const after = cs.map((_c, i) => s.best(s.full & ~(1 << i)));
    const low = Math.min(...after);
    const discards = cs.filter((_c, i) => after[i] === low).sort((a, b) => a - b);
    return {
      best_after_discard: low,
      discards: discards.map(name),
      big_gin: s.best(s.full) === 0,
      gin: low === 0,
      knockLegal: (limit) => low <= limit || low === 0,
    };
  }

  /** The knock limit and doubling of a hand: {knock_limit, doubled, big_gin} from a rules object
   * ({knock_limit} or {oklahoma_upcard}) (gin.md#knock, gin.md#oklahoma). */
  function handRules(o) {
    o = o || {};
    const bigGin = o.big_gin_allowed !== false && o.big_gin_option !== false;
    if (o.oklahoma_upcard !== undefined && o.oklahoma_upcard !== null) {
      const up = card(o.oklahoma_upcard);
      return { knock_limit: value(up), doubled: suitOf(up) === 3, big_gin: bigGin };
    }
    const limit = o.knock_limit === undefined || o.knock_limit === null ? KNOCK_LIMIT : o.knock_limit;
    if (!Number.isInteger(limit) || limit < 0) throw new GinError("the knock limit must be a whole number of points");
    return { knock_limit: limit, doubled: false, big_gin: bigGin };
  }

  /** The hand's score from its deadwoods (gin.md#hand-score, #oklahoma): outcome "knock" | "gin"
   * | "big_gin"; -> {winner: "knocker" | "defender" | "illegal", points, undercut}. */
  function handPoints(outcome, knockerDeadwood, defenderDeadwood, rules) {
    rules = rules || handRules();
    let winner;
    let points;
    let undercut = false;
    if (outcome === "big_gin") {
      if (!rules.big_gin) return { winner: "illegal", points: null, undercut };
      winner = "knocker";
      points = defenderDeadwood + BIG_GIN_BONUS;
    } else if (outcome === "gin" || knockerDeadwood === 0) {
      winner = "knocker";
      points = defenderDeadwood + GIN_BONUS;
    } else if (knockerDeadwood > rules.knock_limit) {
      return { winner: "illegal", points: null, undercut };
    } else if (knockerDeadwood < defenderDeadwood) {
      winner = "knocker";
      points = defenderDeadwood - knockerDeadwood;
    } else {
      winner = "defender";
      undercut = true;
      points = knockerDeadwood - defenderDeadwood + UNDERCUT_BONUS;
    }
    return { winner, points: rules.doubled ? points * 2 : points, undercut };
  }

  /** Which of the defender's cards can go onto the knocker's melds (lists of indices) together:
   * returns a test of a set of defender cards (gin.md#layoffs). */
  function layoffTest(knockerMelds) {
    const fourth = new Set(); // the one card that makes a three-set four
    const runCards = new Set(); // every card of a knocker's run
    for (const m of knockerMelds) {
      if (m.length === 3 && m.every((c) => rankOf(c) === rankOf(m[0]))) {
        const suits = new Set(m.map(suitOf));
        for (let s = 0; s < 4; s++) if (!suits.has(s)) fourth.add(s * 13 + (m[0] % 13));
      } else if (!m.every((c) => rankOf(c) === rankOf(m[0]))) {
        for (const c of m) runCards.add(c);
      }
    }
    const below = (c) => (c % 13 === 0 ? null : c - 1);
    const above = (c) => (c % 13 === 12 ? null : c + 1);
    return function fits(laid) {
      // a laid card goes onto a run when a chain of laid cards of its suit links it to a run's end
      const onRun = new Set(runCards);
      let grew = true;
      const left = new Set(laid);
      while (grew) {
        grew = false;
        for (const c of left) {
          if (onRun.has(below(c)) || onRun.has(above(c))) {
            onRun.add(c);
            left.delete(c);
            grew = true;
          }
        }
      }
      for (const c of left) if (!fourth.has(c)) return false;
      return true;
    };
  }

  /** The defender's best after lay-offs onto `knockerMelds`: {deadwood, laid_off (faces)}; the
   * fewest cards, then the first in canonical order, among the least deadwood. */
  function defend(defenderCs, knockerMelds) {
    const s = solver(defenderCs);
    const fits = layoffTest(knockerMelds);
    const kr = new Set(knockerMelds.flat());
    // only cards of a suit or rank the knocker's melds touch can ever be laid off
    const candidates = defenderCs
      .map((c, i) => ({ c, i }))
      .filter(({ c }) => knockerMelds.some((m) => m.some((k) => suitOf(k) === suitOf(c) || rankOf(k) === rankOf(c))) && !kr.has(c));
    let bestD = s.best(s.full);
    let bestLaid = [];
    const k = candidates.length;
    for (let sub = 1; sub < 1 << k; sub++) {
      const laid = [];
      let mask = s.full;
      for (let j = 0; j < k; j++) {
        if (sub & (1 << j)) {
          laid.push(candidates[j].c);
          mask &= ~(1 << candidates[j].i);
        }
      }
      const d = s.best(mask);
      if (d > bestD) continue;
      const sorted = laid.slice().sort((a, b) => a - b);
      if (d === bestD) {
        if (sorted.length > bestLaid.length) continue;
        if (sorted.length === bestLaid.length && !lexLess(sorted, bestLaid)) continue;
      }
      if (!fits(laid)) continue;
      bestD = d;
      bestLaid = sorted;
    }
    return { deadwood: bestD, laid_off: bestLaid.map(name) };
  }

  function lexLess(a, b) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i];
    return a.length < b.length;
  }

  /** Score one knock (gin.md#hand-score): knocker's ten cards (or eleven: big gin when all are
   * melded, else `discard` or its best discard), the defender's ten, optional named melds (lists
   * of faces), rules ({knock_limit} | {oklahoma_upcard}) ->
   * {outcome, winner, points, knocker_deadwood, defender_deadwood_after_layoffs, laid_off,
   * undercut, gin, big_gin}. An illegal knock: winner "illegal", points null. */
  function scoreHand({ knocker, defender, knockerMelds = null, discard = null, rules = null }) {
    const r = rules && "knock_limit" in rules && "doubled" in rules ? rules : handRules(rules);
    let kc = cardsOf(knocker);
    const dc = cardsOf(defender);
    if (kc.some((c) => dc.includes(c))) throw new GinError("the two hands share a card");
    if (kc.length === 11) {
      const s = solver(kc);
      if (discard === null && r.big_gin && s.best(s.full) === 0) {
        const d = deadwood(defender);
        const p = handPoints("big_gin", 0, d, r);
        return result("big_gin", p, 0, d, []);
      }
      if (discard === null) {
        // the best discard; among several, the highest card, then the last in canonical order
        const e = eleven(knocker);
        discard = e.discards.map(card).sort((a, b) => value(a) - value(b) || a - b).pop();
      }
      const out = card(discard);
      if (!kc.includes(out)) throw new GinError(`the discard ${name(out)} is not in the knocker's hand`);
      kc = kc.filter((c) => c !== out);
    }
    if (kc.length !== 10 || dc.length !== 10) throw new GinError("a knock scores ten cards against ten");
    const ks = solver(kc);
    let K;
    let choices; // the knocker's arrangements to choose from (lists of index lists)
    if (knockerMelds) {
      const named = knockerMelds.map(cardsOf);
      const used = named.flat();
      if (new Set(used).size !== used.length || used.some((c) => !kc.includes(c)) || !named.every(isMeld)) {
        throw new GinError("the knocker's named melds are not valid melds of distinct cards of its hand");
      }
      K = kc.filter((c) => !used.includes(c)).reduce((a, c) => a + value(c), 0);
      choices = [named];
    } else {
      K = ks.best(ks.full);
      choices = ks.arrangements(ks.full).map((a) => a.map(ks.at));
    }
    if (K > r.knock_limit && K !== 0) return result(null, { winner: "illegal", points: null, undercut: false }, K, null, []);
    if (K === 0) {
      const d = deadwood(defender);
      return result("gin", handPoints("gin", 0, d, r), 0, d, []);
    }
    // the knocker's arrangement that leaves the defender the most deadwood (gin.md#knocker-melds)
    let best = null;
    for (const melds of choices) {
      const d = defend(dc, melds);
      if (best === null || d.deadwood > best.deadwood) best = d;
    }
    return result("knock", handPoints("knock", K, best.deadwood, r), K, best.deadwood, best.laid_off);
  }

  function result(outcome, p, K, D, laid) {
    return {
      outcome,
      winner: p.winner,
      points: p.points,
      knocker_deadwood: K,
      defender_deadwood_after_layoffs: p.winner === "illegal" ? null : D,
      laid_off: laid,
      undercut: p.undercut,
      gin: outcome === "gin",
      big_gin: outcome === "big_gin",
    };
  }

  // --- the game above the hand (formats.md#game-to, #game-scoring) ---------------------------

  /** A game to `target` between players (names or seats): deals [[winner, points], ...] (a drawn
   * deal: winner null). -> {ended, winner, players: {p: {hands, boxes, bonus, total}}, net,
   * deals_used}. The game ends on the deal where a player reaches the target; later deals are not
   * counted (deals_used says how many were). With opts.whole every deal counts and the winner is
   * the highest total at or past the target (none when level at the top). */
  function gameSheet(players, deals, opts) {
    const o = { ...GAME, ...(opts || {}) };
    const sheet = {};
    for (const p of players) sheet[p] = { hands: 0, wins: 0, boxes: 0, bonus: 0, total: 0 };
    let used = 0;
    let winner = null;
    for (const [who, points] of deals) {
      if (winner !== null) break;
      used += 1;
      if (who === null || who === undefined) continue; // the wall: nobody scores
      if (!(who in sheet)) throw new GinError(`deal ${used} is won by ${who}, who is not in the game`);
      sheet[who].hands += points;
      sheet[who].wins += 1;
      if (sheet[who].hands >= o.target && !o.whole) winner = who;
    }
    if (o.whole) {
      const top = Math.max(...players.map((p) => sheet[p].hands));
      const at = players.filter((p) => sheet[p].hands === top);
      if (top >= o.target && at.length === 1) winner = at[0];
    }
    return endGame(sheet, winner, o, used);
  }

  function endGame(sheet, winner, o, used) {
    for (const p of Object.keys(sheet)) {
      const s = sheet[p];
      s.boxes = winner === null ? 0 : s.wins * o.box;
      s.bonus = 0;
      s.total = s.hands + s.boxes;
    }
    let net = null;
    if (winner !== null) {
      const shutout = Object.keys(sheet).every((p) => p === winner || sheet[p].hands === 0);
      sheet[winner].bonus = shutout ? o.shutout : o.bonus;
      sheet[winner].total += sheet[winner].bonus;
      net = {};
      for (const p of Object.keys(sheet)) if (p !== winner) net[p] = sheet[winner].total - sheet[p].total;
    }
    return { ended: winner !== null, winner, players: sheet, net, deals_used: used };
  }

  /** Hollywood (formats.md#hollywood): two players, deals [[winner, points], ...] -> {columns:
   * [gameSheet-like x3, each with `entries`], ended, nets: [{winner, net}], result: {winner,
   * net}}. A player's n-th win goes to the first min(n, 3) columns still running. */
  function hollywood(players, deals, opts) {
    const o = { ...GAME, ...(opts || {}) };
    const cols = [0, 1, 2].map(() => ({ sheet: Object.fromEntries(players.map((p) => [p, { hands: 0, wins: 0 }])), winner: null }));
    const wins = Object.fromEntries(players.map((p) => [p, 0]));
    let used = 0;
    for (const [who, points] of deals) {
      if (cols.every((c) => c.winner !== null)) break;
      used += 1;
      if (who === null || who === undefined) continue;
      if (!(who in wins)) throw new GinError(`deal ${used} is won by ${who}, who is not in the match`);
      wins[who] += 1;
      const running = cols.filter((c) => c.winner === null).slice(0, Math.min(wins[who], 3));
      for (const c of running) {
        c.sheet[who].hands += points;
        c.sheet[who].wins += 1;
      }
      for (const c of running) if (c.sheet[who].hands >= o.target) c.winner = who;
    }
    const columns = cols.map((c) => endGame(c.sheet, c.winner, o, used));
    let total = 0; // + for players[0]
    const nets = columns.map((c) => {
      if (!c.ended) return null;
      const loser = players.find((p) => p !== c.winner);
      const net = o.cap === undefined ? c.net[loser] : Math.min(c.net[loser], o.cap);
      total += c.winner === players[0] ? net : -net;
      return { winner: c.winner, net };
    });
    const ended = columns.every((c) => c.ended);
    // the winner: ahead on the columns' nets; level, the one who won more columns
    const won = columns.filter((c) => c.winner === players[0]).length;
    const first = total > 0 || (total === 0 && won >= 2);
    return {
      columns,
      ended,
      nets,
      result: ended ? { winner: first ? players[0] : players[1], net: Math.abs(total) } : null,
      deals_used: used,
    };
  }

  // --- money (docs/rules/formats.md#money) --------------------------------------------------

  const big = (x) => BigInt(x);
  const out = (x) => (x >= BigInt(Number.MIN_SAFE_INTEGER) && x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x);

  /** Game stakes: each loser pays min(diff, cap) x point value (a loser at the cap: the cap), the
   * commission floor(paid x bps / 10000), the winner receives the rest. losers: [{id, diff,
   * at_cap}] -> {pays: {id: hundredths}, paid, commission, winner_receives}. */
  function gameStakes({ losers, cap, pointValueHundredths, commissionBps }) {
    const pays = {};
    let paid = 0n;
    for (const l of losers) {
      const pts = l.at_cap ? cap : Math.max(0, Math.min(l.diff, cap));
      const amount = big(pts) * big(pointValueHundredths);
      pays[l.id] = out(amount);
      paid += amount;
    }
    const commission = (paid * big(commissionBps)) / 10000n;
    return { pays, paid: out(paid), commission: out(commission), winner_receives: out(paid - commission) };
  }

  /** Hollywood's money: the sum of the three columns' capped nets, paid by the player below 0. */
  function hollywoodStakes({ net, cap, pointValueHundredths, commissionBps }) {
    void cap; // the cap is already in each column's net (hollywood(..., {cap}))
    return gameStakes({ losers: [{ id: "loser", diff: net, at_cap: false }], cap: Number.MAX_SAFE_INTEGER, pointValueHundredths, commissionBps });
  }

  // --- the rules cases (libs/rules/tests/data/rules-cases.jsonl): the same answers ------------

  const GAMES = ["gin-deadwood", "gin-11", "gin-score", "gin-rule"];

  function evaluateCase(c) {
    if (c.game === "gin-deadwood") return { id: c.id, deadwood: deadwood(c.cards) };
    if (c.game === "gin-11") {
      const e = eleven(c.cards);
      const o = { id: c.id, best_after_discard: e.best_after_discard, discards: e.discards, big_gin: e.big_gin, gin: e.gin };
      for (let n = 1; n <= KNOCK_LIMIT; n++) o[`knock_legal_at_${n}`] = e.knockLegal(n);
      if ("knock_limit" in c || "oklahoma_upcard" in c) {
        const r = handRules(c);
        Object.assign(o, { knock_limit: r.knock_limit, knock_legal: e.knockLegal(r.knock_limit) });
      }
      return o;
    }
    if (c.game === "gin-score") {
      return {
        id: c.id,
        ...scoreHand({
          knocker: c.knocker_hand,
          defender: c.defender_hand,
          knockerMelds: c.knocker_melds || null,
          discard: c.discard || null,
          rules: c,
        }),
      };
    }
    if (c.game === "gin-rule") return { id: c.id, ...rule(c.input || {}) };
    throw new GinError(`not a gin case: ${c.game}`);
  }

  function rule(f) {
    const target = f.target === undefined ? GAME.target : f.target;
    if (f.hollywood_sequence) {
      const h = hollywood(["A", "B"], f.hollywood_sequence, { target });
      const points = { A: h.columns.map((c) => c.players.A.hands), B: h.columns.map((c) => c.players.B.hands) };
      return { result: "columns", points };
    }
    const won = f.hands_won || { A: f.hands_won_A, B: f.hands_won_B };
    if (won.A !== undefined || won.B !== undefined) {
      // every hand listed is of the game, in no particular order: the highest total at or past
      // the target wins (formats.md#game-to; level at the top: the game plays on)
      const deals = [...(won.A || []).map((p) => ["A", p]), ...(won.B || []).map((p) => ["B", p])];
      const g = gameSheet(["A", "B"], deals, { target, whole: true });
      if (!g.ended) return { result: "unfinished", points: null };
      const loser = g.winner === "A" ? "B" : "A";
      return { result: g.winner, points: g.net[loser] };
    }
    const r = handRules(f);
    const D = f.defender_deadwood ?? f.defender_deadwood_after_layoffs ?? null;
    const outcome = f.big_gin === true ? "big_gin" : f.gin === true ? "gin" : "knock";
    const K = outcome === "knock" ? f.knocker_deadwood : 0;
    if (outcome === "knock" && !Number.isInteger(K)) throw new GinError("a hand rule needs knocker_deadwood, gin or big_gin");
    const legal = outcome === "big_gin" ? r.big_gin : K === 0 || K <= r.knock_limit;
    if (!legal) return { result: "illegal", points: null };
    if (D === null) return { result: "legal", points: null };
    const p = handPoints(outcome, K, D, r);
    return { result: p.winner, points: p.points };
  }

  // the rules-case games this file answers, for `cli.mjs --score` (keyed by the case's game)
  V.caseScorers = V.caseScorers || {};
  for (const g of GAMES) V.caseScorers[g] = evaluateCase;

  V.gin = {
    GinError,
    KNOCK_LIMIT,
    GAME,
    GAMES,
    card,
    name,
    value,
    isMeld,
    deadwood,
    eleven,
    handRules,
    handPoints,
    defend: (defender, melds) => defend(cardsOf(defender), melds.map(cardsOf)),
    scoreHand,
    gameSheet,
    hollywood,
    gameStakes,
    hollywoodStakes,
    evaluateCase,
  };
})(globalThis);
