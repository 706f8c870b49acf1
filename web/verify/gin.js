// The gin family's checks of one ended hand for the verifier page (docs/rules/gin.md): what a
// knock and its result must be, judged by the page's own scorer (gin-score.js). Classic script;
// needs gin-score.js first. Lands on globalThis.BBVerify.ginHand.
//
// Not yet registered in BBVerify.variants: the gin variant's name and its events in a proof bundle
// are not settled, and a file registered under a name whose events it misreads would fail genuine
// bundles (an unknown variant is reported "not fully verified" instead, which is honest). When the
// bundle's events exist, the variant file's `moves` replay the first-turn offer and the knock into
// these checks' inputs and `checkScores` calls checkKnock and checkResult; the game's sheet is
// BBVerify.gin.gameSheet / hollywood over the deals' winners and points.
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
})(globalThis);
