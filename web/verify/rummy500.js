// Rummy 500's checks of one ended round for the verifier page (docs/rules/rummy500.md): its own
// replay of digs, melds and lay-offs on top of verify.js's draws and discards, and its own scorer
// of the round. Classic script; it reads the bundle's card strings ("7H:0": face and deck copy)
// itself. Lands on globalThis.BBVerify.variants.rummy500.
//
// The deal is verify.js's with the shape {wild_cut: false, upcard: true}: the hands one card at
// a time from the seat after the dealer, the upcard, the rest the stock (one deck at 2-4 seats,
// two at 5-8). `moves` replays Rummy500PileTaken (the top cards of the pile, in order; the
// deepest must be melded or laid off by the next event, marked from_pile), Rummy500Melded (a set
// or a run of cards the seat holds, its id the next ordinal), Rummy500LaidOff (a card that leaves
// the target meld of the same kind), TurnTimedOut (the discard that follows is the highest card),
// Rummy500SeatLeft and Rummy500RoundEnded (every seat's score recomputed: melds and lay-offs
// minus the cards in hand, ace 15, a low ace 1 under the option). `checkScores` checks the
// result lines (outcome, score, cards) and the all-zero settlement (the match holds the money).
//
// Each check throws BBVerify.Differs (via BBVerify.fail) naming the first thing that differs.
(function (root) {
  "use strict";
  const V = (root.BBVerify = root.BBVerify || {});

  const fail = (msg) => {
    if (V.fail) V.fail(msg);
    throw new Error(msg);
  };
  const RANKS = { A: 1, J: 11, Q: 12, K: 13 };
  const SUITS = "CDHS";

  /** "10H:1" -> {face: "10H", rank: 10, suit: "H", copy: 1}. */
  function card(text) {
    const [face, copy] = String(text).split(":");
    const r = face.slice(0, -1);
    const rank = RANKS[r] || Number(r);
    const suit = face.slice(-1);
    if (!(rank >= 1 && rank <= 13) || !SUITS.includes(suit)) fail(`${text} is not a card of Rummy 500's decks`);
    return { face, rank, suit, copy: Number(copy || 0) };
  }
  const value = (c) => (c.rank === 1 ? 15 : c.rank >= 11 ? 10 : c.rank);
  const faces = (list) => list.map((c) => card(c).face);

  /** "set", "run" or null for a group of card strings (rummy500.md#melds). */
  function kindOf(group) {
    const cs = group.map(card);
    if (cs.length < 3) return null;
    if (new Set(cs.map((c) => c.face)).size !== cs.length) return null; // never one face twice
    if (cs.every((c) => c.rank === cs[0].rank)) {
      return cs.length <= 4 && new Set(cs.map((c) => c.suit)).size === cs.length ? "set" : null;
    }
    if (!cs.every((c) => c.suit === cs[0].suit) || cs.length > 13) return null;
    const low = cs.map((c) => c.rank).sort((a, b) => a - b);
    const high = cs.map((c) => (c.rank === 1 ? 14 : c.rank)).sort((a, b) => a - b);
    const consecutive = (p) => p.every((x, i) => i === 0 || x === p[i - 1] + 1);
    return consecutive(low) || consecutive(high) ? "run" : null;
  }
  const isLowRun = (cards) => {
    const cs = cards.map(card);
    return cs.some((c) => c.rank === 1) && cs.some((c) => c.rank === 2);
  };
  const allCards = (m) => [...m.cards, ...m.layoffs.map((l) => l.card)];
  /** What `c` (a card of meld `m`) scores: its value, 1 for a low ace under the option. */
  const pointsIn = (c, m, lowAceOne) =>
    lowAceOne && card(c).rank === 1 && m.kind === "run" && isLowRun(allCards(m)) ? 1 : value(card(c));

  function stateOf(play) {
    if (!play.r500) {
      const opts = play.ruleSet.options || {};
      play.r500 = { melds: [], left: new Set(), dig: null, timedOut: 0, lowAceOne: Boolean(opts.low_ace_one), ending: null };
    }
    return play.r500;
  }

  /** The seats' scores of the round as it stands (rummy500.md#scores). */
  function scores(play) {
    const r = stateOf(play);
    const out = new Map();
    for (const s of play.started.seats) {
      let table = 0;
      for (const m of r.melds) {
        if (m.owner === s.seat) table += m.cards.reduce((t, c) => t + pointsIn(c, m, r.lowAceOne), 0);
        for (const l of m.layoffs) if (l.seat === s.seat) table += pointsIn(l.card, m, r.lowAceOne);
      }
      const hand = play.hands.get(s.seat).reduce((t, c) => t + value(card(c)), 0);
      out.set(s.seat, { table, hand, score: table - hand });
    }
    return out;
  }

  const sameCards = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

  function usesDig(r, e, cards) {
    if (!r.dig) {
      if (e.from_pile) fail(`seat ${e.seat}'s ${e.type} says it uses a dig's card, but nothing was taken from the pile`);
      return;
    }
    if (!e.from_pile || !cards.includes(r.dig.deepest)) {
      fail(`seat ${e.seat} took ${r.dig.deepest} from the pile but did not meld or lay it off at once`);
    }
    r.dig = null;
  }

  const rummy500 = {
    dealShape: { wild_cut: false, upcard: true },

    checkLeaves() {}, // any card may be discarded

    also: {
      "table.TurnStarted"(e, { play }) {
        const r = stateOf(play);
        if (r.dig) fail(`seat ${r.dig.seat} took ${r.dig.deepest} from the pile and never used it`);
        if (r.left.has(e.seat)) fail(`seat ${e.seat} left the round but is given turn ${e.turn_no}`);
      },
      "table.CardDiscarded"(e, { play }) {
        const r = stateOf(play);
        if (r.dig) fail(`seat ${e.seat} discarded before melding the card it took from the pile`);
        if (r.timedOut === e.turn_no) {
          const held = [...play.hands.get(e.seat), e.card].map(card);
          const key = (c) => [value(c), c.rank, SUITS.indexOf(c.suit), c.copy];
          const best = held.reduce((a, b) => (cmp(key(b), key(a)) > 0 ? b : a));
          if (best.face !== card(e.card).face || best.copy !== card(e.card).copy) {
            fail(`seat ${e.seat}'s timed-out turn ${e.turn_no} discarded ${e.card}; its highest card is ${best.face}`);
          }
        }
      },
    },

    moves: {
      "table.TurnTimedOut"(e, { play }) {
        stateOf(play).timedOut = e.turn_no;
      },
      "rummy500.PileTaken"(e, { play, onTurn }) {
        onTurn(e, "dug the pile");
        if (play.drawn) fail(`seat ${e.seat} took from the pile after drawing in turn ${e.turn_no}`);
        const n = e.cards.length;
        const top = play.pile.slice(play.pile.length - n);
        if (n < 1 || n > play.pile.length || JSON.stringify(top) !== JSON.stringify(e.cards)) {
          fail(`seat ${e.seat} took ${e.cards.join(" ")} from the pile, but its top ${n} cards were ${top.join(" ")}`);
        }
        play.pile.splice(play.pile.length - n, n);
        play.hands.get(e.seat).push(...e.cards);
        play.drawn = { card: e.cards[0], source: "discard_pile" };
        stateOf(play).dig = { seat: e.seat, deepest: e.cards[0] };
      },
      "rummy500.Melded"(e, { play, take, onTurn }) {
        const r = stateOf(play);
        onTurn(e, "melded");
        if (!play.drawn) fail(`seat ${e.seat} melded before drawing in turn ${e.turn_no}`);
        usesDig(r, e, e.cards);
        if (e.meld_id !== r.melds.length + 1) fail(`meld ${e.meld_id} should be meld ${r.melds.length + 1}, the next ordinal`);
        const kind = kindOf(e.cards);
        if (kind === null) fail(`seat ${e.seat}'s meld ${e.meld_id} (${faces(e.cards).join(" ")}) is not a set or a run`);
        if (kind !== e.kind) fail(`meld ${e.meld_id} is shown as a ${e.kind}; it is a ${kind}`);
        for (const c of e.cards) take(e.seat, c, "melded");
        r.melds.push({ id: e.meld_id, owner: e.seat, kind, cards: [...e.cards], layoffs: [] });
      },
      "rummy500.LaidOff"(e, { play, take, onTurn }) {
        const r = stateOf(play);
        onTurn(e, "laid off");
        if (!play.drawn) fail(`seat ${e.seat} laid off before drawing in turn ${e.turn_no}`);
        usesDig(r, e, [e.card]);
        const m = r.melds[e.meld_id - 1];
        if (!m) fail(`seat ${e.seat} laid ${e.card} off on meld ${e.meld_id}, which is not on the table`);
        if (kindOf([...allCards(m), e.card]) !== m.kind) fail(`${card(e.card).face} does not extend meld ${e.meld_id} (a ${m.kind})`);
        take(e.seat, e.card, "laid off");
        m.layoffs.push({ card: e.card, seat: e.seat });
      },
      "rummy500.TookNothing"(e, { play, onTurn }) {
        onTurn(e, "took nothing");
        if (play.drawn) fail(`seat ${e.seat} is said to have taken nothing after drawing in turn ${e.turn_no}`);
        if (play.stock.length) fail(`seat ${e.seat} took nothing in turn ${e.turn_no} with ${play.stock.length} stock cards left`);
        stateOf(play).tookNothing = true;
      },
      "rummy500.SeatLeft"(e, { play }) {
        stateOf(play).left.add(e.seat);
      },
      "rummy500.RoundEnded"(e, { play }) {
        const r = stateOf(play);
        if (r.dig) fail(`the round ended with ${r.dig.deepest} taken from the pile and not used`);
        const playing = play.started.seats.filter((s) => !r.left.has(s.seat));
        if (e.reason === "went_out") {
          if (play.hands.get(e.out_seat)?.length !== 0) fail(`seat ${e.out_seat} is said to have gone out holding cards`);
        } else if (e.reason === "stock_empty") {
          if (play.stock.length) fail(`the round ended on an empty stock with ${play.stock.length} stock cards left`);
          if (!r.tookNothing) fail("the round ended on the empty stock, but no seat took nothing from it");
        } else if (e.reason === "players_left") {
          if (playing.length >= 2) fail("the round ended for lack of players with two or more still in it");
        } else fail(`the round ended for an unknown reason "${e.reason}"`);
        const want = scores(play);
        for (const s of e.scores) {
          const w = want.get(s.seat);
          if (!w) fail(`the round scores seat ${s.seat}, which was not dealt in`);
          if (s.table_points !== w.table || s.hand_points !== w.hand || s.score !== w.score) {
            fail(`seat ${s.seat} is scored ${s.table_points} - ${s.hand_points} = ${s.score}; its melds, lay-offs and hand make it ${w.table} - ${w.hand} = ${w.score}`);
          }
          if (!sameCards(s.cards, play.hands.get(s.seat))) fail(`the round shows other cards in seat ${s.seat}'s hand than it held`);
        }
        if (e.scores.length !== want.size) fail("the round does not score every seat dealt in");
        r.ending = e;
      },
    },

    checkScores(step, ctx) {
      const { play, started } = ctx;
      const r = stateOf(play);
      const ended = play.ended;
      const e = r.ending;
      if (!e) fail("the round ended without its scores (Rummy500RoundEnded)");
      const want = scores(play);
      const order = started.seats.map((s) => s.seat).sort((a, b) => a - b);
      const k = order.indexOf(started.dealer_seat) + 1;
      const turns = [...order.slice(k), ...order.slice(0, k)];
      const still = turns.filter((s) => !r.left.has(s));
      const winner =
        e.out_seat ?? (still.length ? still : turns).reduce((a, b) => (want.get(b).score > want.get(a).score ? b : a));
      if (ended.winner_seat !== winner) fail(`the result names seat ${ended.winner_seat} the winner; the round makes it seat ${winner}`);
      for (const s of started.seats) {
        const line = ended.results.find((x) => x.seat === s.seat);
        if (!line) fail(`the result has no line for seat ${s.seat}`);
        const outcome = r.left.has(s.seat) ? "left" : s.seat === e.out_seat ? "went_out" : "scored";
        if (line.outcome !== outcome) fail(`seat ${s.seat}'s result is "${line.outcome}"; the round makes it "${outcome}"`);
        if ((line.score ?? 0) !== want.get(s.seat).score) fail(`seat ${s.seat}'s result scores ${line.score}; the round makes it ${want.get(s.seat).score}`);
        if (line.points !== 0) fail(`seat ${s.seat} is charged ${line.points} points; a round charges nobody`);
        if (!sameCards(line.cards, play.hands.get(s.seat))) fail(`the result shows other cards for seat ${s.seat} than it held at the end`);
      }
      const st = ended.settlement;
      if (st.commission_hundredths !== 0 || st.lines.some((l) => l.amount_hundredths !== 0)) fail("a round's settlement moves money; the match to 500 holds it");
      step.notes.push(
        `${e.reason.replace("_", " ")}${e.out_seat !== null && e.out_seat !== undefined ? ` by seat ${e.out_seat}` : ""}: ` +
          e.scores.map((s) => `seat ${s.seat} ${s.score}`).join(", "),
        `${r.melds.length} meld${r.melds.length === 1 ? "" : "s"}, ${r.melds.reduce((t, m) => t + m.layoffs.length, 0)} lay-offs`,
      );
    },

    /** What the page draws: the deal (the upcard as the first open card) and each final hand. */
    picture(ctx) {
      return V.dealPicture(ctx, (results) =>
        results.map((x) => ({
          seat: x.seat,
          cards: x.cards,
          outcome: x.outcome,
          points: x.score ?? 0,
          melds: (x.melds || []).map((m) => ({ kind: m.kind, faces: faces(m.cards) })),
        })),
      );
    },
  };

  function cmp(a, b) {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
    return 0;
  }

  V.variants = V.variants || {};
  V.variants.rummy500 = rummy500;
  V.rummy500 = { kindOf, card, value };
})(globalThis);
