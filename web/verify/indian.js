// Indian 13-card points rummy for the verifier page: its moves (declare, wrong declare, drops), its
// scores (indian-score.js) and money, and its picture. Registers BBVerify.variants["indian-points"];
// a later variant adds a file of its own the same way. Classic script; needs verify.js and
// indian-score.js.
(function (root) {
  "use strict";
  const V = root.BBVerify;
  const { fail, same } = V;

  const DROP_OUTCOME = { first: "first_drop", middle: "middle_drop", leave: "left", timeout: "timed_out" };

  function wildRankOf(cut) {
    const face = V.parseCard(cut).face;
    return face === V.JOKER ? null : V.faceRank(face);
  }

  function facesOf(cards) {
    return cards.map((c) => V.parseCard(c).face);
  }

  // The Indian options of a rule set: `options` (tagged "indian.PointsRules"; a bundle written
  // before rule sets carried each variant's options under one name is upcast to it first,
  // BBVerify.upcast).
  function optionsOf(ruleSet) {
    return ruleSet.options;
  }

  function capped(points, cap) {
    return cap === null || cap === undefined ? points : Math.min(points, cap);
  }

  function showHand(e, { play, take, onTurn }, what) {
    onTurn(e, what);
    if (!play.drawn) fail(`seat ${e.seat} ${what} before drawing in turn ${e.turn_no}`);
    indian.checkLeaves(play, e.face_down, e.seat);
    take(e.seat, e.face_down, `laid face down`);
    const hand = play.hands.get(e.seat);
    if (!same([...hand].sort(), [...e.shown].sort())) {
      fail(`seat ${e.seat} showed other cards than the ${hand.length} it held in turn ${e.turn_no}`);
    }
  }

  const indian = {
    label: "Indian 13-card points rummy",
    dealShape: { wild_cut: true, upcard: true },
    checkLeaves(play, card, seat) {
      const rules = optionsOf(play.ruleSet);
      const d = play.drawn;
      if (rules.no_discard_of_card_taken_from_pile && d && d.source === "discard_pile" && d.card === card) {
        fail(`seat ${seat} let go of ${card} in the turn it took it from the discard pile`);
      }
    },
    moves: {
      "indian.PlayerDropped"(e, { play }) {
        if (play.out.has(e.seat)) fail(`seat ${e.seat} left the hand twice`);
        const rules = optionsOf(play.ruleSet);
        const drew = play.drawsBy.get(e.seat) > 0;
        if (e.kind === "first" && drew) fail(`seat ${e.seat} took a first drop after drawing`);
        if (e.kind === "middle" && !drew) fail(`seat ${e.seat} took a middle drop before its first draw`);
        if (e.kind !== "leave" && e.seat !== play.turnSeat) fail(`seat ${e.seat} dropped out of turn`);
        if (e.kind === "first" || e.kind === "middle") {
          if (play.drawn) fail(`seat ${e.seat} dropped after drawing in turn ${e.turn_no}`);
        }
        const want = e.kind === "first" ? rules.first_drop_points : rules.middle_drop_points;
        if (e.points !== want) fail(`seat ${e.seat}'s ${e.kind} drop is charged ${e.points} points; the rule set says ${want}`);
        play.out.set(e.seat, { outcome: DROP_OUTCOME[e.kind], points: e.points });
      },
      "indian.Declared"(e, helpers) {
        showHand(e, helpers, "declared");
        helpers.play.declared = e;
      },
      "indian.DeclarationRejected"(e, helpers) {
        showHand(e, helpers, "declared wrongly");
        const rules = optionsOf(helpers.play.ruleSet);
        if (e.points !== rules.wrong_declare_points) {
          fail(`seat ${e.seat}'s wrong declare is charged ${e.points} points; the rule set says ${rules.wrong_declare_points}`);
        }
        helpers.play.out.set(e.seat, { outcome: "wrong_declare", points: e.points, shown: e.shown });
      },
    },

    checkScores(step, ctx) {
      const { play, deal, started } = ctx;
      const rules = play.ruleSet;
      const wild = wildRankOf(deal.wild_cut);
      const ended = play.ended;
      const declarer = play.declared ? play.declared.seat : null;
      const active = started.seats.map((s) => s.seat).filter((s) => !play.out.has(s));
      const winner = declarer !== null ? declarer : active.length === 1 ? active[0] : null;
      if (winner === null) fail("nobody declared and more than one seat is still in: the hand has no winner");
      if (ended.winner_seat !== winner) fail(`the result names seat ${ended.winner_seat} the winner; the moves make it seat ${winner}`);
      if (play.declared) {
        const a = V.bestArrangement(facesOf(play.declared.shown), wild, optionsOf(rules).meld_options);
        if (!a.valid) fail(`seat ${declarer}'s declare is not a valid show (its best arrangement counts ${a.points} points)`);
      }
      const scored = new Map();
      for (const s of started.seats) {
        const seat = s.seat;
        const r = ended.results.find((x) => x.seat === seat);
        if (!r) fail(`the result has no line for seat ${seat}`);
        const held = play.hands.get(seat);
        if (!same([...r.cards].sort(), [...held].sort())) fail(`the result shows other cards for seat ${seat} than it held at the end`);
        const gone = play.out.get(seat);
        let outcome;
        let points;
        if (seat === winner) {
          outcome = "won";
          points = 0;
        } else if (gone) {
          outcome = gone.outcome;
          points = gone.points;
          if (gone.shown) {
            const a = V.bestArrangement(facesOf(gone.shown), wild, optionsOf(rules).meld_options);
            if (a.valid) fail(`seat ${seat}'s declare was rejected, but its cards are a valid show`);
          }
        } else {
          outcome = "counted";
          const a = V.bestArrangement(facesOf(held), wild, optionsOf(rules).meld_options);
          points = capped(a.points, optionsOf(rules).points_cap);
          scored.set(seat, a);
        }
        if (r.outcome !== outcome) fail(`seat ${seat}'s result is "${r.outcome}"; the moves make it "${outcome}"`);
        if (r.points !== points) fail(`seat ${seat} is charged ${r.points} points; its cards and the rules make it ${points}`);
        if (r.account_id !== s.account_id) fail(`seat ${seat}'s result names another account`);
      }
      // money: points x point value for each loser, commission rounded down, the rest to the winner
      V.checkPointsSettlement(ended, rules, winner, new Map(ended.results.map((r) => [r.seat, r.points])), "the result");
      step.notes.push(
        `winner seat ${winner}; ` +
          ended.results.map((r) => `seat ${r.seat} ${r.outcome} ${r.points}`).join(", "),
      );
      ctx.scored = scored;
    },

    /** What the page draws: the deal and each seat's final hand (cards as texts). */
    picture(ctx) {
      const d = ctx.deal || (ctx.events.find((e) => e.event.type === "table.HandDealt") || {}).event;
      if (!d) return null;
      const finals = ctx.play ? [...ctx.play.hands.entries()] : [];
      const results = ctx.play && ctx.play.ended ? ctx.play.ended.results : [];
      return {
        wildCut: d.wild_cut,
        firstOpen: d.first_open,
        deal: d.hands.map((h) => ({ seat: h.seat, cards: h.cards })),
        finals: finals.map(([seat, cards]) => {
          const r = results.find((x) => x.seat === seat) || {};
          const a = ctx.scored && ctx.scored.get(seat);
          return {
            seat,
            cards,
            outcome: r.outcome,
            points: r.points,
            melds: a ? a.melds.map((m) => ({ kind: m.kind, faces: m.faces.map(V.faceName) })) : null,
          };
        }),
      };
    },
  };

  V.variants = V.variants || {};
  V.variants["indian-points"] = indian;
})(globalThis);
