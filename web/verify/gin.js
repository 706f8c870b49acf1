// The gin family's checks of one ended hand for the verifier page (docs/rules/gin.md): what a
// knock and its result must be, judged by the page's own scorer (gin-score.js). Classic script;
// needs gin-score.js first. Lands on globalThis.BBVerify.ginHand.
//
// Registered as BBVerify.variants.gin (the variant libs/rules rummy_rules.gin.variant names "gin";
// Gin Rummy and Oklahoma Gin are its rule sets): one 52-card deck, no cut, ten cards each from
// the non-dealer (verify.js's deal with the shape {wild_cut: false, upcard: true}), the upcard
// as the first open card, the rest the stock. Its `moves` replay the first-turn offer
// (GinUpcardPassed), the pile-card rule, timeouts (TurnTimedOut, GinSeatForfeited), the wall
// (GinWallReached) and the knock (GinKnocked) on top of verify.js's draws and discards;
// `checkScores` runs checkKnock and checkResult on the knock and the score (GinHandScored), then
// the result lines and the money. The game's sheet across deals is BBVerify.gin.gameSheet /
// hollywood; a hand's bundle holds one deal, so the page checks the deal.
//
// Each check throws BBVerify.Differs (via BBVerify.fail, when verify.js is loaded; a plain Error
// otherwise) naming the first thing that differs.
(function (root) {
  "use strict";
  const V = (root.BBVerify = root.BBVerify || {});
  const G = V.gin;

  const fail = (msg) => {
    if (V.fail) V.fail(msg);
    throw new Error(msg);
  };
  const faces = (list) => list.map((c) => G.name(G.card(c)));
  const sortedFaces = (list) =>
    list
      .map(G.card)
      .sort((a, b) => a - b)
      .map(G.name);
  const sameSet = (a, b) => JSON.stringify(sortedFaces(a)) === JSON.stringify(sortedFaces(b));
  const points = (list) => list.reduce((t, c) => t + G.value(G.card(c)), 0);

  /** Melds (lists of cards) that must be valid, disjoint and all within `hand`; -> the loose
   * cards of `hand` (faces). `who`: "the knocker" / "the defender" for the message. */
  function looseOf(hand, melds, who) {
    const have = new Set(faces(hand));
    const used = new Set();
    melds.forEach((m, i) => {
      if (!G.isMeld(m.map(G.card))) fail(`${who}'s meld ${i + 1} (${faces(m).join(" ")}) is not a set or a run`);
      for (const f of faces(m)) {
        if (!have.has(f)) fail(`${who}'s meld ${i + 1} holds ${f}, which is not in its hand`);
        if (used.has(f)) fail(`${who}'s melds use ${f} twice`);
        used.add(f);
      }
    });
    return [...have].filter((f) => !used.has(f));
  }

  /** A knock (gin.md#knock, #pile-card, #knocker-melds): the eleven cards held (`held`), the
   * face-down card (null: big gin), the card taken from the pile this turn (or null), the melds
   * and deadwood the result shows, whether the knocker named them, the hand's rules
   * (gin-score.js handRules) and the outcome shown ("knock" | "gin" | "big_gin"). -> {ten, melds,
   * deadwood}. */
  function checkKnock({ held, faceDown, takenFromPile = null, melds, deadwood, named = false, rules, outcome }) {
    if (held.length !== 11) fail(`the knocker held ${held.length} cards, not eleven`);
    let ten = faces(held);
    if (outcome === "big_gin") {
      if (faceDown !== null && faceDown !== undefined) fail("a big gin lays no card face down");
      if (!rules.big_gin) fail("big gin is not allowed at this table");
      if (G.deadwood(held) !== 0) fail(`a big gin whose eleven cards are not all melded (best deadwood ${G.deadwood(held)})`);
    } else {
      const down = G.name(G.card(faceDown));
      if (!ten.includes(down)) fail(`the knocker laid ${down} face down, which is not in its hand`);
      if (takenFromPile !== null && G.name(G.card(takenFromPile)) === down) {
        fail(`the knocker laid ${down} face down in the turn it took it from the discard pile`);
      }
      ten = ten.filter((f) => f !== down);
    }
    const loose = looseOf(ten, melds, "the knocker");
    const shown = points(loose);
    if (shown !== deadwood) fail(`the knocker's deadwood is shown as ${deadwood}; its loose cards count ${shown}`);
    const best = G.deadwood(ten);
    if (!named && deadwood !== best) fail(`the knocker's deadwood is shown as ${deadwood}; its best arrangement leaves ${best}`);
    const want = outcome === "big_gin" ? "big_gin" : deadwood === 0 ? "gin" : "knock";
    if (outcome !== want) fail(`the knock is shown as ${outcome}; with ${deadwood} deadwood it is ${want}`);
    if (want === "knock" && deadwood > rules.knock_limit) {
      fail(`a knock with ${deadwood} deadwood, above the hand's limit of ${rules.knock_limit}`);
    }
    return { ten, melds: melds.map(faces), deadwood };
  }

  /** The hand's result after a knock (gin.md#layoffs, #hand-score): the knocker's ten cards and
   * shown melds (from checkKnock), whether it named them, the defender's ten cards, the lay-offs
   * shown ([{card, meld}], meld: an index into the knocker's melds), the defender's melds and
   * deadwood shown, and the outcome, winner ("knocker" | "defender") and points shown. */
  function checkResult({ knock, named = false, defender, layoffs, defenderMelds, defenderDeadwood, outcome, winner, points: shownPoints, rules }) {
    const dc = faces(defender);
    if (dc.length !== 10) fail(`the defender holds ${dc.length} cards, not ten`);
    if (dc.some((f) => knock.ten.includes(f))) fail("the knocker and the defender hold the same card");
    const laid = layoffs.map((l) => G.name(G.card(l.card)));
    if (outcome !== "knock" && laid.length) fail(`the defender laid off after ${outcome === "gin" ? "a gin" : "a big gin"}`);
    // every lay-off onto a meld of the knocker's: the meld and what went onto it is one meld
    const onto = knock.melds.map((m) => [...m]);
    layoffs.forEach((l, i) => {
      if (!dc.includes(laid[i])) fail(`the defender laid off ${laid[i]}, which is not in its hand`);
      if (laid.indexOf(laid[i]) !== i) fail(`the defender laid off ${laid[i]} twice`);
      if (!Number.isInteger(l.meld) || !onto[l.meld]) fail(`${laid[i]} is laid off onto meld ${l.meld}, which the knocker has not`);
      onto[l.meld].push(laid[i]);
    });
    onto.forEach((m, i) => {
      if (m.length > knock.melds[i].length && !G.isMeld(m.map(G.card))) {
        fail(`the lay-offs onto the knocker's meld ${i + 1} (${knock.melds[i].join(" ")}) make ${m.join(" ")}, not a meld`);
      }
    });
    const kept = dc.filter((f) => !laid.includes(f));
    const loose = looseOf(kept, defenderMelds, "the defender");
    if (points(loose) !== defenderDeadwood) {
      fail(`the defender's deadwood is shown as ${defenderDeadwood}; its loose cards count ${points(loose)}`);
    }
    // the defender's best: the least deadwood over every lay-off and arrangement
    let best;
    if (outcome !== "knock") best = G.deadwood(dc);
    else if (named) best = G.defend(dc, knock.melds).deadwood;
    else {
      // the server's grouping of the knocker: the best one that leaves the defender the most
      const s = G.scoreHand({ knocker: knock.ten, defender: dc, rules });
      const mine = G.defend(dc, knock.melds).deadwood;
      if (mine !== s.defender_deadwood_after_layoffs) {
        fail(
          `the knocker's melds leave the defender ${mine} after lay-offs, but another of its best groupings ` +
            `leaves ${s.defender_deadwood_after_layoffs}: the server must show the one that leaves the most`,
        );
      }
      best = mine;
    }
    if (defenderDeadwood !== best) fail(`the defender's deadwood is shown as ${defenderDeadwood}; its best lay-offs and arrangement leave ${best}`);
    const p = G.handPoints(outcome, knock.deadwood, best, rules);
    if (winner !== p.winner) fail(`the result names the ${winner} the scorer; the deadwoods (${knock.deadwood} v ${best}) make it the ${p.winner}`);
    if (shownPoints !== p.points) fail(`the hand is scored ${shownPoints} points; the rules make it ${p.points}`);
    return { knocker_deadwood: knock.deadwood, defender_deadwood: best, winner: p.winner, points: p.points, undercut: p.undercut };
  }

  V.ginHand = { checkKnock, checkResult };

  // --- the variant "gin" on the page (verify.js's BBVerify.variants) ----------------------------

  const cardsOf = (groups) => groups.map((g) => g.cards);
  const sameCards = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  const optionsOf = (ruleSet) => ruleSet.options || {};
  /** The hand's rules (gin.md#knock, #oklahoma): the upcard sets Oklahoma's limit. */
  const rulesOf = (ruleSet, upcard) => {
    const o = optionsOf(ruleSet);
    return G.handRules({ oklahoma_upcard: o.oklahoma ? upcard : null, big_gin_option: o.big_gin !== false });
  };
  const ginOf = (play) => {
    if (!play.gin) {
      const dealer = play.started.dealer_seat;
      const other = play.started.seats.map((s) => s.seat).find((s) => s !== dealer);
      play.ginRules = rulesOf(play.ruleSet, play.firstOpen);
      play.gin = { dealer, nonDealer: other, offers: 0, prevSeat: null, timedOut: false, misses: new Map(), knocked: null, ending: null };
    }
    return play.gin;
  };
  const notAfterKnock = (play, what) => {
    const g = ginOf(play);
    if (g.knocked) fail(`seat ${g.knocked.seat} knocked, but a ${what} follows`);
    if (g.ending) fail(`the hand was over (${g.ending.type}), but a ${what} follows`);
  };
  const inOffer = (g, turnNo) => turnNo <= 2 && g.offers === turnNo - 1;

  const gin = {
    dealShape: { wild_cut: false, upcard: true },

    /** The pile-card rule (gin.md#pile-card): the card taken from the pile stays this turn. */
    checkLeaves(play, card, seat) {
      notAfterKnock(play, "discard");
      if (play.drawn && play.drawn.source === "discard_pile" && play.drawn.card === card) {
        fail(`seat ${seat} discarded ${card} in the turn it took it from the discard pile`);
      }
    },

    also: {
      "table.TurnStarted"(e, { play }) {
        notAfterKnock(play, "new turn");
        const g = ginOf(play);
        if (g.prevSeat !== null && !g.timedOut) g.misses.set(g.prevSeat, 0);
        const want = e.turn_no % 2 === 1 ? g.nonDealer : g.dealer;
        if (e.seat !== want) fail(`turn ${e.turn_no} is given to seat ${e.seat}; the non-dealer plays the odd turns, so it is seat ${want}'s`);
        if (e.turn_no > 1 && play.stock.length <= 2) {
          fail(`turn ${e.turn_no} starts with ${play.stock.length} stock cards: the hand ended at the wall`);
        }
        g.prevSeat = e.seat;
        g.timedOut = false;
      },
      "table.CardDrawn"(e, { play }) {
        notAfterKnock(play, "draw");
        const g = ginOf(play);
        if (inOffer(g, e.turn_no) && e.source === "stock") {
          fail(`seat ${e.seat} drew from the stock in turn ${e.turn_no}, the first-turn offer of the upcard (take it or pass)`);
        }
        if (e.turn_no === 3 && g.offers === 2 && e.source === "discard_pile") {
          fail(`both seats passed the upcard, but seat ${e.seat} took it in turn 3 instead of drawing from the stock`);
        }
      },
      "table.CardDiscarded"(e, { play }) {
        if (play.stock.length <= 2) play.gin.wallDue = e.turn_no;
      },
    },

    moves: {
      "gin.UpcardPassed"(e, { play, onTurn }) {
        onTurn(e, "passed the upcard");
        const g = ginOf(play);
        if (!inOffer(g, e.turn_no) || play.drawn) fail(`seat ${e.seat} passed the upcard in turn ${e.turn_no}, which is not the first-turn offer`);
        g.offers += 1;
      },
      "table.TurnTimedOut"(e, { play, onTurn }) {
        onTurn(e, "timed out");
        const g = ginOf(play);
        const want = (g.misses.get(e.seat) || 0) + 1;
        if (e.misses_in_a_row !== want) fail(`seat ${e.seat}'s timeout in turn ${e.turn_no} is counted miss ${e.misses_in_a_row} in a row; it is ${want}`);
        g.misses.set(e.seat, want);
        g.timedOut = true;
      },
      "gin.SeatForfeited"(e, { play, onTurn }) {
        onTurn(e, "forfeited");
        const g = ginOf(play);
        notAfterKnock(play, "forfeit");
        const limit = optionsOf(play.ruleSet).missed_turns_forfeit === false ? 0 : play.ruleSet.max_missed_turns;
        if (!limit) fail(`seat ${e.seat} forfeited on missed turns at a table where missed turns do not forfeit`);
        if (e.misses !== g.misses.get(e.seat) || e.misses < limit) {
          fail(`seat ${e.seat} forfeited after ${g.misses.get(e.seat) || 0} missed turns in a row (shown ${e.misses}); the rule set's limit is ${limit}`);
        }
        g.ending = e;
      },
      "gin.WallReached"(e, { play }) {
        const g = ginOf(play);
        notAfterKnock(play, "wall");
        if (g.wallDue !== e.turn_no) fail(`the wall is called in turn ${e.turn_no}, but no discard of that turn left two stock cards`);
        const seats = [g.nonDealer, g.dealer];
        seats.forEach((s, i) => {
          if (!sameCards(e.hands[i], play.hands.get(s))) fail(`the wall shows other cards for seat ${s} than it held`);
        });
        g.ending = e;
      },
      "gin.Knocked"(e, { play, onTurn }) {
        onTurn(e, "knocked");
        notAfterKnock(play, "knock");
        if (!play.drawn) fail(`seat ${e.seat} knocked before drawing in turn ${e.turn_no}`);
        const held = play.hands.get(e.seat);
        const melds = cardsOf(e.melds);
        const ten = e.outcome === "big_gin" ? held : held.filter((c) => c !== e.face_down);
        // the knocker may name its melds (gin.md#knocker-melds), and then the defender lays off
        // onto those: the knock says so (melds_named); in bundles written before the flag, melds
        // shown leaving more than its best deadwood are taken as named
        if ("melds_named" in e && typeof e.melds_named !== "boolean") fail("the knock's melds_named is not true or false");
        if (e.melds_named && ten.length !== 10) fail("a big gin names no melds");
        const named = "melds_named" in e ? e.melds_named : ten.length === 10 && G.deadwood(ten) !== e.deadwood;
        const knock = checkKnock({
          held,
          faceDown: e.face_down,
          takenFromPile: play.drawn.source === "discard_pile" ? play.drawn.card : null,
          melds,
          deadwood: e.deadwood,
          named,
          rules: play.ginRules,
          outcome: e.outcome,
        });
        if (!sameCards(faces(e.deadwood_cards), knock.ten.filter((f) => !melds.flat().map((c) => G.name(G.card(c))).includes(f)))) {
          fail(`the knocker's deadwood cards shown (${faces(e.deadwood_cards).join(" ")}) are not its cards outside its melds`);
        }
        ginOf(play).knocked = { event: e, knock, named };
      },
      "gin.HandScored"(e, { play }) {
        const g = ginOf(play);
        if (!g.knocked) fail("the hand is scored without a knock");
        if (g.ending) fail(`the hand was over (${g.ending.type}), but it is scored again`);
        const k = g.knocked.event;
        if (e.knocker_seat !== k.seat) fail(`the score names seat ${e.knocker_seat} the knocker; seat ${k.seat} knocked`);
        const defender = k.seat === g.dealer ? g.nonDealer : g.dealer;
        if (e.defender_seat !== defender) fail(`the score names seat ${e.defender_seat} the defender; it is seat ${defender}`);
        if (e.outcome !== (k.outcome === "knock" ? e.outcome : k.outcome)) fail(`the score is a ${e.outcome}, the knock a ${k.outcome}`);
        if (!sameCards(e.defender_cards, play.hands.get(defender))) fail(`the score shows other cards for the defender (seat ${defender}) than it held`);
        if (e.knocker_deadwood !== k.deadwood) fail(`the score gives the knocker ${e.knocker_deadwood} deadwood; its knock showed ${k.deadwood}`);
        const outcome = k.outcome; // knock | gin | big_gin; the score may be an undercut of a knock
        const r = checkResult({
          knock: g.knocked.knock,
          named: g.knocked.named,
          defender: e.defender_cards,
          layoffs: e.layoffs,
          defenderMelds: cardsOf(e.defender_melds),
          defenderDeadwood: e.defender_deadwood,
          outcome,
          winner: e.winner_seat === k.seat ? "knocker" : "defender",
          points: e.points,
          rules: play.ginRules,
        });
        const want = r.undercut ? "undercut" : outcome;
        if (e.outcome !== want) fail(`the score is shown as ${e.outcome}; the deadwoods (${r.knocker_deadwood} v ${r.defender_deadwood}) make it ${want}`);
        const laid = e.layoffs.map((l) => l.card);
        const kept = e.defender_cards.filter((c) => !laid.includes(c));
        const melded = new Set(cardsOf(e.defender_melds).flat());
        if (!sameCards(e.defender_deadwood_cards, kept.filter((c) => !melded.has(c)))) {
          fail("the defender's deadwood cards shown are not its cards outside its melds and lay-offs");
        }
        g.ending = e;
        g.result = r;
      },
    },

    checkScores(step, ctx) {
      const { play, started } = ctx;
      const g = ginOf(play);
      const ended = play.ended;
      const seats = started.seats.map((s) => s.seat);
      const e = g.ending;
      if (!e && !(ended.results || []).some((r) => r.outcome === "left")) fail("the hand ended without a score, a wall, a forfeit or a seat leaving");
      let winner;
      const outcomes = new Map();
      const points = new Map(seats.map((s) => [s, 0]));
      if (!e) {
        const left = ended.results.find((r) => r.outcome === "left").seat;
        winner = seats.find((s) => s !== left);
        outcomes.set(left, "left").set(winner, "won");
      } else if (e.type === "gin.HandScored") {
        winner = e.winner_seat;
        const loser = seats.find((s) => s !== winner);
        outcomes.set(winner, e.outcome).set(loser, "lost");
        points.set(loser, e.points);
      } else if (e.type === "gin.WallReached") {
        winner = g.dealer;
        seats.forEach((s) => outcomes.set(s, "drawn"));
      } else {
        winner = seats.find((s) => s !== e.seat);
        outcomes.set(e.seat, "timed_out").set(winner, "won");
      }
      if (ended.winner_seat !== winner) fail(`the result names seat ${ended.winner_seat} the winner; the moves make it seat ${winner}`);
      for (const s of started.seats) {
        const r = ended.results.find((x) => x.seat === s.seat);
        if (!r) fail(`the result has no line for seat ${s.seat}`);
        if (r.account_id !== s.account_id) fail(`seat ${s.seat}'s result names another account`);
        if (r.outcome !== outcomes.get(s.seat)) fail(`seat ${s.seat}'s result is "${r.outcome}"; the moves make it "${outcomes.get(s.seat)}"`);
        if (r.points !== points.get(s.seat)) fail(`seat ${s.seat} is charged ${r.points} points; the score makes it ${points.get(s.seat)}`);
        if (!sameCards(r.cards, play.hands.get(s.seat))) fail(`the result shows other cards for seat ${s.seat} than it held at the end`);
      }
      // money (a hand's own stake; a gin table's hands are free and its game format holds the
      // money): the loser's points x the point value, commission rounded down, the rest to the winner
      V.checkPointsSettlement(ended, play.ruleSet, winner, points, "the score");
      const r = g.result;
      step.notes.push(
        r
          ? `${e.outcome} by seat ${e.knocker_seat}: deadwood ${r.knocker_deadwood} v ${r.defender_deadwood} after ${e.layoffs.length} lay-off${e.layoffs.length === 1 ? "" : "s"}, ${r.points} points to seat ${winner}`
          : !e
            ? `seat ${seats.find((s) => s !== winner)} left; seat ${winner} won, no score`
            : e.type === "gin.WallReached"
              ? "the wall: a drawn deal, no score"
              : `seat ${e.seat} forfeited after ${e.misses} missed turns in a row; seat ${winner} won, no score`,
      );
    },

    /** What the page draws: the deal (the upcard as the first open card) and each final hand. */
    picture(ctx) {
      return V.dealPicture(ctx, (results) =>
        results.map((r) => ({
          seat: r.seat,
          cards: r.cards,
          outcome: r.outcome,
          points: r.points,
          melds: (r.melds || []).map((m) => ({ kind: m.kind, faces: m.cards.map((c) => G.name(G.card(c))) })),
        })),
      );
    },
  };

  V.variants = V.variants || {};
  V.variants.gin = gin;
})(globalThis);
