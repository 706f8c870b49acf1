// The checks of a hand's proof bundle (schema: proof-bundle.schema.json), run by the page and by
// cli.mjs alike. Classic script; needs cards.js, shuffle.js, then each variant's file (indian.js, gin.js)
// which registers itself in BBVerify.variants ({dealShape, checkLeaves, moves, also?, checkScores,
// picture}; `also` holds a variant's own checks run after verify.js's of a generic event). verifyBundle(bundle, record) resolves to
// {variant, known, ok, verdict, steps: [{id, title, ok, problem, notes}], unchecked: [{id,
// title, why}], picture, money}; money: the settlement once step 4 passed ({lines: [{seat,
// amount_hundredths}], commission_hundredths}, integer hundredths as the bundle has them; a
// person reads them in tokens, money.js), else null.
//
// Steps: 1 seeds (commitment, client seeds, the player's own record), 2 deck (deal, wild-card
// cut or none as the variant deals, every reshuffle), 3 moves (every draw, discard, declare and
// drop), 4 scores (the variant's scorer, the result and the money). A step's `problem` is the
// first thing that differs. A variant this page has no file for still gets steps 1 and 2 (the
// commitment, the seeds and the shuffle are the same for every variant; its deal is laid out by
// the bundle's deal_shape); its moves and scores are listed in `unchecked`, never passed:
// verdict "passed" (every step ran and passed), "failed" (a step that ran differs) or "unknown"
// (nothing that ran differs, but something could not be checked here; also a bundle that cannot
// be read as a hand at all).
(function (root) {
  "use strict";
  const V = root.BBVerify;
  const variants = (V.variants = V.variants || {});
  const FORMAT = "bb-hand-proof/1";

  class Differs extends Error {}
  const fail = (msg) => {
    throw new Differs(msg);
  };
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const ofType = (events, type) => events.filter((e) => e.event.type === type);

  /** A step that records its first problem instead of throwing. */
  async function runStep(steps, id, title, body) {
    const step = { id, title, ok: true, problem: "", notes: [] };
    steps.push(step);
    try {
      await body(step);
    } catch (err) {
      step.ok = false;
      step.problem = err instanceof Differs ? err.message : `cannot be checked: ${err.message}`;
    }
    return step;
  }

  /** The player's own record (JSON lines, or an array / {entries}) -> its entries for hand_id. */
  function recordEntries(record, handId) {
    if (record === null || record === undefined) return null;
    let entries = record;
    if (typeof record === "string") {
      entries = record
        .split(/\r?\n/)
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l));
    } else if (!Array.isArray(record)) entries = record.entries || [record];
    return entries.filter((e) => e && e.hand_id === handId);
  }

  function shoeOf(ruleSet) {
    const pair = (ruleSet.shoes || []).find((p) => p[0] === ruleSet.seats);
    if (!pair) fail(`the rule set has no shoe for ${ruleSet.seats} seats`);
    return { decks: pair[1].decks, printedJokers: pair[1].printed_jokers };
  }

  // --- step 1: seeds --------------------------------------------------------------------------
  async function checkSeeds(step, ctx) {
    const { bundle, events, started, record } = ctx;
    const seedHex = bundle.server_seed_hex;
    if (typeof seedHex !== "string" || seedHex.length !== 64) {
      fail("the revealed server seed is not 32 bytes of hex");
    }
    const committed = ofType(events, "table.SeedCommitted");
    if (committed.length !== 1) fail(`the hand has ${committed.length} seed commitments, not one`);
    const commitment = committed[0].event.commitment;
    const digest = await V.sha256Hex(V.hexToBytes(seedHex));
    if (digest !== commitment) {
      fail(`SHA-256 of the revealed server seed is ${digest}, but the commitment published before the deal is ${commitment}`);
    }
    const dealtAt = events.findIndex((e) => e.event.type === "table.HandDealt");
    if (dealtAt >= 0 && events.indexOf(committed[0]) > dealtAt) {
      fail("the commitment was published after the deal");
    }
    const locked = ofType(events, "table.SeedsLocked");
    if (locked.length !== 1) fail(`the hand has ${locked.length} seed locks, not one`);
    if (locked[0].event.commitment !== commitment) {
      fail("the seeds were locked under another commitment than the one published");
    }
    const seats = started.seats.map((s) => s.seat).sort((a, b) => a - b);
    const seeds = locked[0].event.client_seeds;
    if (!same(seeds.map((s) => s.seat), seats)) {
      fail(`client seeds are locked for seats ${seeds.map((s) => s.seat)}, but seats ${seats} were dealt in`);
    }
    for (const s of seeds) {
      const sent = ofType(events, "table.ClientSeedContributed").filter((e) => e.event.seat === s.seat);
      const expected = sent.length ? sent[sent.length - 1].event.seed_hex : "";
      if (s.seed_hex !== expected) {
        fail(`seat ${s.seat}'s client seed in the deal is "${s.seed_hex}", but it sent "${expected}"`);
      }
    }
    const late = seeds.filter((s) => s.seed_hex === "").map((s) => s.seat);
    if (late.length) {
      step.notes.push(
        `no client seed from seat${late.length > 1 ? "s" : ""} ${late.join(", ")} (empty, late): ` +
          "the server could have chosen among decks for those seats' part",
      );
    }
    if (record !== null) {
      if (record.length === 0) fail(`your record has nothing about hand ${bundle.hand_id}`);
      for (const entry of record) {
        if (entry.commitment !== undefined && entry.commitment !== commitment) {
          fail(`the commitment you were shown before the deal was ${entry.commitment}, the bundle says ${commitment}`);
        }
        if (entry.seed_hex !== undefined) {
          const mine = seeds.find((s) => s.seat === entry.seat);
          if (!mine) fail(`your record puts you at seat ${entry.seat}, which was not dealt in`);
          if (mine.seed_hex !== entry.seed_hex) {
            fail(`you sent the client seed "${entry.seed_hex}" for seat ${entry.seat}, the bundle says "${mine.seed_hex}"`);
          }
        }
      }
      const recorded = record.filter((e) => e.seed_hex === "").map((e) => e.seat);
      if (recorded.length) step.notes.push(`your record says your seed was empty at seat ${recorded.join(", ")}`);
      step.notes.push("your own record agrees with the bundle");
    }
    ctx.commitment = commitment;
    ctx.clientSeeds = seeds;
  }

  // --- step 2: deck ---------------------------------------------------------------------------
  async function checkDeck(step, ctx) {
    const { bundle, events, started } = ctx;
    const ruleSet = started.rule_set;
    const { decks, printedJokers } = shoeOf(ruleSet);
    const card = (i) => V.indexCard(i, decks, printedJokers);
    const seeds = ofType(events, "table.SeedsLocked")[0];
    if (!seeds) fail("no seed lock to deal from");
    const dealt = ofType(events, "table.HandDealt");
    if (dealt.length !== 1) fail(`the hand has ${dealt.length} deals, not one`);
    const d = dealt[0].event;
    const shape = ctx.shape;
    const deal = await V.computeDeal({
      serverSeed: V.hexToBytes(bundle.server_seed_hex),
      handId: started.hand_id,
      clientSeeds: seeds.event.client_seeds,
      decks,
      printedJokers,
      seats: started.seats.map((s) => s.seat),
      dealer: started.dealer_seat,
      handSize: ruleSet.hand_size,
      shape,
    });
    const cardOrNull = (i) => (i === null ? null : card(i));
    for (const h of deal.hands) {
      const recorded = d.hands.find((x) => x.seat === h.seat);
      if (!recorded) fail(`the deal gives seat ${h.seat} no cards`);
      const want = h.indices.map(card);
      for (let k = 0; k < want.length; k++) {
        if (recorded.cards[k] !== want[k]) {
          fail(`seat ${h.seat}'s card ${k + 1} of the deal is ${recorded.cards[k]}, the seeds give ${want[k]}`);
        }
      }
      if (recorded.cards.length !== want.length) fail(`seat ${h.seat} was dealt ${recorded.cards.length} cards, not ${want.length}`);
    }
    if (d.hands.length !== deal.hands.length) fail(`the deal has ${d.hands.length} hands, not ${deal.hands.length}`);
    const cut = d.wild_cut ?? null;
    const open = d.first_open ?? null;
    if (cut !== cardOrNull(deal.wildCut)) {
      fail(
        deal.wildCut === null
          ? `the deal shows the wild-card cut ${cut}, but this variant's deal cuts none`
          : `the wild-card cut is ${cut ?? "missing"}, the seeds give ${card(deal.wildCut)}`,
      );
    }
    if (open !== cardOrNull(deal.firstOpen)) {
      fail(
        deal.firstOpen === null
          ? `the deal shows the first open card ${open}, but this variant's deal turns up none`
          : `the first open card is ${open ?? "missing"}, the seeds give ${card(deal.firstOpen)}`,
      );
    }
    const stock = deal.stock.map(card);
    for (let k = 0; k < stock.length; k++) {
      if (d.stock[k] !== stock[k]) fail(`stock card ${k + 1} is ${d.stock[k]}, the seeds give ${stock[k]}`);
    }
    if (d.stock.length !== stock.length) fail(`the stock has ${d.stock.length} cards, not ${stock.length}`);
    // every reshuffle: the set-aside cards of StockExhausted number r -> StockReshuffled number r
    const exhausted = ofType(events, "table.StockExhausted");
    const reshuffled = ofType(events, "table.StockReshuffled");
    exhausted.forEach((x, n) => {
      if (x.event.reshuffle_no !== n + 1) fail(`stock exhaustion ${n + 1} is numbered ${x.event.reshuffle_no}`);
    });
    for (const x of exhausted) {
      const r = x.event.reshuffle_no;
      const made = reshuffled.filter((y) => y.event.reshuffle_no === r);
      if (made.length === 0) {
        // only a hand that ended before the next draw from the stock needs no new stock
        const after = events.slice(events.indexOf(x) + 1);
        if (after.some((e) => e.event.type === "table.CardDrawn" && e.event.source === "stock")) {
          fail(`the stock ran out (reshuffle ${r}) but no reshuffled stock follows`);
        }
        continue;
      }
      const pile = x.event.cards.map((c) => V.cardIndex(V.parseCard(c), decks, printedJokers));
      const want = (await V.computeReshuffle(deal.handKey, pile, r)).map(card);
      if (!same(made[0].event.stock, want)) {
        const k = want.findIndex((c, i) => made[0].event.stock[i] !== c);
        fail(`reshuffle ${r}: card ${k + 1} of the new stock is ${made[0].event.stock[k]}, the seeds give ${want[k]}`);
      }
    }
    if (reshuffled.length > exhausted.length) fail("a reshuffled stock without the stock running out");
    step.notes.push(
      `${deal.hands.length} hands of ${ruleSet.hand_size}, ` +
        `${cut === null ? "no wild-card cut" : `wild-card cut ${cut}`}, ` +
        `${open === null ? "no first open card" : `first open card ${open}`}, ` +
        `${exhausted.length} reshuffle${exhausted.length === 1 ? "" : "s"}`,
    );
    if (!ctx.known) {
      step.notes.push(
        `the deal laid out as the bundle says variant ${ctx.bundle.variant} deals ` +
          `(${shape.wild_cut ? "a" : "no"} wild-card cut, ${shape.upcard ? "a" : "no"} first open card): ` +
          "this page does not know that variant's rules",
      );
    }
    ctx.deal = d;
  }

  // --- step 3: moves --------------------------------------------------------------------------
  function checkMoves(step, ctx) {
    const { events, started, variant } = ctx;
    const d = ctx.deal || (ofType(events, "table.HandDealt")[0] || { event: null }).event;
    if (!d) fail("no deal to replay from");
    for (let i = 1; i < events.length; i++) {
      if (events[i].stream_version < events[i - 1].stream_version) {
        fail(`event ${i + 1} (${events[i].event.type}) stands before event ${i} in the table's log`);
      }
    }
    const play = {
      started,
      ruleSet: started.rule_set,
      hands: new Map(d.hands.map((h) => [h.seat, [...h.cards]])),
      stock: [...d.stock],
      pile: d.first_open ? [d.first_open] : [],
      firstOpen: d.first_open ?? null,
      turnSeat: null,
      turnNo: 0,
      drawn: null, // {card, source} of the turn
      drawsBy: new Map(started.seats.map((s) => [s.seat, 0])),
      out: new Map(), // seat -> {outcome, points}
      ended: null,
    };
    const take = (seat, card, what) => {
      const hand = play.hands.get(seat);
      const at = hand ? hand.indexOf(card) : -1;
      if (at < 0) fail(`seat ${seat} ${what} ${card}, which is not in its hand`);
      hand.splice(at, 1);
    };
    const onTurn = (e, what) => {
      if (e.seat !== play.turnSeat || e.turn_no !== play.turnNo) {
        fail(`seat ${e.seat} ${what} in turn ${e.turn_no}, but it is seat ${play.turnSeat}'s turn ${play.turnNo}`);
      }
    };
    const generic = {
      "table.TurnStarted"(e) {
        play.turnSeat = e.seat;
        play.turnNo = e.turn_no;
        play.drawn = null;
      },
      "table.CardDrawn"(e) {
        onTurn(e, "drew");
        if (play.drawn) fail(`seat ${e.seat} drew twice in turn ${e.turn_no}`);
        const from = e.source === "stock" ? play.stock : play.pile;
        const top = e.source === "stock" ? from[0] : from[from.length - 1];
        if (top === undefined) fail(`seat ${e.seat} drew from an empty ${e.source.replace("_", " ")}`);
        if (e.card !== top) {
          fail(`seat ${e.seat} drew ${e.card} from the ${e.source.replace("_", " ")} in turn ${e.turn_no}, but its top card was ${top}`);
        }
        if (e.source === "stock") from.shift();
        else from.pop();
        play.hands.get(e.seat).push(e.card);
        play.drawn = { card: e.card, source: e.source };
        play.drawsBy.set(e.seat, play.drawsBy.get(e.seat) + 1);
      },
      "table.CardDiscarded"(e) {
        onTurn(e, "discarded");
        if (!play.drawn) fail(`seat ${e.seat} discarded before drawing in turn ${e.turn_no}`);
        variant.checkLeaves(play, e.card, e.seat);
        take(e.seat, e.card, "discarded");
        play.pile.push(e.card);
      },
      "table.StockExhausted"(e) {
        if (play.stock.length) fail(`the stock was declared exhausted with ${play.stock.length} cards left`);
        const below = play.pile.slice(0, -1);
        if (!same(below, e.cards)) fail(`reshuffle ${e.reshuffle_no} sets aside other cards than the discard pile under its top`);
        play.pile = play.pile.slice(-1);
      },
      "table.StockReshuffled"(e) {
        play.stock = [...e.stock];
      },
      "table.HandEnded"(e) {
        play.ended = e;
      },
    };
    let n = 0;
    for (const { event } of events) {
      n += 1;
      if (play.ended) fail(`an event (${event.type}) follows the end of the hand`);
      const handler = generic[event.type] || variant.moves[event.type];
      if (handler) handler(event, { play, take, onTurn });
      // a variant's own checks of a generic event, after verify.js's (gin: the first-turn offer)
      const also = generic[event.type] && variant.also && variant.also[event.type];
      if (also) also(event, { play, take, onTurn });
    }
    if (!play.ended) fail("the hand has no end");
    step.notes.push(`${n} events replayed`);
    ctx.play = play;
  }

  // --- step 4: the money of a hand's own stake (every variant's file calls these) ------------
  const T = (amount) => `${V.tokens(amount)} tokens`;
  const net = (amount) => `${V.tokens(amount, true)} tokens`;

  /** The settlement of a hand that pays by points (ended: HandEnded, rules: the rule set, winner:
   * its seat, points: Map seat -> the points charged, says: whose points, for a failure): each
   * loser pays points x point value, the commission is that total x commission_bps / 10000
   * rounded down, the winner receives the rest. Amounts BigInt inside; failures in tokens. */
  function checkPointsSettlement(ended, rules, winner, points, says) {
    const st = ended.settlement;
    const pv = rules.point_value_hundredths;
    if (st.point_value_hundredths !== pv) {
      fail(`the settlement uses a point value of ${T(st.point_value_hundredths)}; the rule set says ${T(pv)}`);
    }
    if (st.commission_bps !== rules.commission_bps) {
      fail(`the settlement takes a commission of ${V.percent(st.commission_bps)}; the rule set says ${V.percent(rules.commission_bps)}`);
    }
    if (st.winner_seat !== winner) fail(`the settlement pays seat ${st.winner_seat}, not the winner ${winner}`);
    let total = 0n;
    for (const [seat, p] of points) if (seat !== winner) total += BigInt(p) * BigInt(pv);
    const commission = (total * BigInt(rules.commission_bps)) / 10000n;
    if (V.hundredthsOf(st.commission_hundredths) !== commission) {
      fail(`the commission is ${T(st.commission_hundredths)}; ${V.percent(rules.commission_bps)} of the losers' ${T(total)}, rounded down to the hundredth, is ${T(commission)}`);
    }
    const seats = [...points.keys()].sort((a, b) => a - b);
    if (!same(st.lines.map((l) => l.seat), seats)) fail("the settlement's lines are not one per seat dealt in");
    for (const line of st.lines) {
      const want = line.seat === winner ? total - commission : -BigInt(points.get(line.seat)) * BigInt(pv);
      if (line.points !== points.get(line.seat)) fail(`the settlement charges seat ${line.seat} ${line.points} points, ${says} ${points.get(line.seat)}`);
      if (V.hundredthsOf(line.amount_hundredths) !== want) {
        fail(`seat ${line.seat}'s net is ${net(line.amount_hundredths)}; the points make it ${net(want)}`);
      }
    }
  }

  /** The money of the hand as the bundle's settlement says (integer hundredths, as written):
   * {lines: [{seat, amount_hundredths}], commission_hundredths}, or null without a settlement. */
  function moneyOf(ctx) {
    const ended = ctx.play && ctx.play.ended;
    const st = ended && ended.settlement;
    if (!st || !Array.isArray(st.lines)) return null;
    return {
      lines: st.lines.map((l) => ({ seat: l.seat, amount_hundredths: l.amount_hundredths })),
      commission_hundredths: st.commission_hundredths,
    };
  }

  /** A person's line of the money: "net seat 0 +1.67, seat 1 -1.00 tokens; commission 0.08 tokens". */
  function moneyText(money) {
    const nets = money.lines.map((l) => `seat ${l.seat} ${V.tokens(l.amount_hundredths, true)}`).join(", ");
    return `net ${nets} tokens; commission ${T(money.commission_hundredths)}`;
  }

  const BOTH = { wild_cut: true, upcard: true };

  /** The deal shape of the bundle (a bundle written before it is upcast first: upcastBundle). */
  function bundleShape(bundle) {
    const shape = bundle.deal_shape;
    if (!shape || typeof shape.wild_cut !== "boolean" || typeof shape.upcard !== "boolean") {
      fail("the bundle's deal_shape is not {wild_cut, upcard} as true/false");
    }
    return shape;
  }

  /** What the page draws of a hand: the deal (its cut card, its first open card, the hands dealt;
   * null before the deal) and `finals(results)`, each seat's final hand as its variant's file
   * draws it from the HandEnded's results ([] before the end; a variant without a file: none). */
  function dealPicture(ctx, finals = () => []) {
    const d = ctx.deal;
    if (!d) return null;
    const results = ctx.play && ctx.play.ended ? ctx.play.ended.results : [];
    return {
      wildCut: d.wild_cut ?? null,
      firstOpen: d.first_open ?? null,
      deal: d.hands.map((h) => ({ seat: h.seat, cards: h.cards })),
      finals: finals(results),
    };
  }

  // The one upcast step of a bundle (as rummy_rules/upcast.py does for the Python readers): a
  // bundle written by an older build becomes the current shape before any check reads it. Old
  // shapes read (docs/rules/event-tags.md#deprecated): a message tagged with its class name (the
  // table below, the same as rummy_rules.upcast.LEGACY_TAGS: a test holds them equal), money
  // fields named with the old suffix (spelled in two parts, so a search of the source finds only
  // kept records), a rule set's Indian options under `indian`, untagged (before a rule set
  // carried each variant's options under `options`: read as `options`, tagged
  // "indian.PointsRules"; `options` beside it is kept), and a bundle without `deal_shape`
  // (upcastBundle).
  const LEGACY_TAGS = Object.freeze({
    DeclareBigGin: "gin.DeclareBigGin",
    DeclareGin: "gin.DeclareGin",
    GinHand: "gin.Hand",
    HandRules: "gin.HandRules",
    GinHandScored: "gin.HandScored",
    GinHandStarted: "gin.HandStarted",
    GinKnock: "gin.Knock",
    GinKnocked: "gin.Knocked",
    GinLayoff: "gin.Layoff",
    GinOptions: "gin.Options",
    GinPassUpcard: "gin.PassUpcard",
    GinSeatForfeited: "gin.SeatForfeited",
    StartGinHand: "gin.StartHand",
    GinState: "gin.State",
    GinUpcardPassed: "gin.UpcardPassed",
    GinWallReached: "gin.WallReached",
    DeclarationRejected: "indian.DeclarationRejected",
    Declare: "indian.Declare",
    Declared: "indian.Declared",
    Drop: "indian.Drop",
    HandState: "indian.HandState",
    PlayerDropped: "indian.PlayerDropped",
    IndianPointsRules: "indian.PointsRules",
    AbortMatch: "match.AbortMatch",
    AcceptRejoin: "match.AcceptRejoin",
    BeginDeal: "match.BeginDeal",
    DealResult: "match.DealResult",
    DealScored: "match.DealScored",
    DealStarted: "match.DealStarted",
    DealVoided: "match.DealVoided",
    DeclineRejoin: "match.DeclineRejoin",
    GameEnded: "match.GameEnded",
    GameStarted: "match.GameStarted",
    LeaveMatch: "match.LeaveMatch",
    MatchAborted: "match.MatchAborted",
    MatchEnded: "match.MatchEnded",
    MatchStarted: "match.MatchStarted",
    MoneyReserved: "match.MoneyReserved",
    RecordDeal: "match.RecordDeal",
    RecordDealAborted: "match.RecordDealAborted",
    RejoinDeclined: "match.RejoinDeclined",
    RejoinNotHeld: "match.RejoinNotHeld",
    RejoinOffered: "match.RejoinOffered",
    RejoinRefused: "match.RejoinRefused",
    Rejoined: "match.Rejoined",
    RequestSplit: "match.RequestSplit",
    SeatEliminated: "match.SeatEliminated",
    SeatForfeitedGame: "match.SeatForfeitedGame",
    SeatLeft: "match.SeatLeft",
    SplitRequested: "match.SplitRequested",
    StartMatch: "match.StartMatch",
    TieBreakDue: "match.TieBreakDue",
    AbortHand: "table.AbortHand",
    CardDiscarded: "table.CardDiscarded",
    CardDrawn: "table.CardDrawn",
    ClientSeedContributed: "table.ClientSeedContributed",
    ContributeClientSeed: "table.ContributeClientSeed",
    Deal: "table.Deal",
    Discard: "table.Discard",
    DrawFromDiscardPile: "table.DrawFromDiscardPile",
    DrawFromStock: "table.DrawFromStock",
    HandAborted: "table.HandAborted",
    HandDealt: "table.HandDealt",
    HandEnded: "table.HandEnded",
    HandStarted: "table.HandStarted",
    LeaveHand: "table.LeaveHand",
    RecordSeedCommitment: "table.RecordSeedCommitment",
    RecordStakeReserved: "table.RecordStakeReserved",
    RecordStockReshuffled: "table.RecordStockReshuffled",
    SeedCommitted: "table.SeedCommitted",
    SeedWindowOpened: "table.SeedWindowOpened",
    SeedsLocked: "table.SeedsLocked",
    StakeReserved: "table.StakeReserved",
    StartHand: "table.StartHand",
    StockExhausted: "table.StockExhausted",
    StockReshuffled: "table.StockReshuffled",
    TurnStarted: "table.TurnStarted",
    TurnTimedOut: "table.TurnTimedOut",
    TurnTimeout: "table.TurnTimeout",
    Rummy500GoOut: "rummy500.GoOut",
    Rummy500LaidOff: "rummy500.LaidOff",
    Rummy500LayOff: "rummy500.LayOff",
    Rummy500Layoff: "rummy500.Layoff",
    Rummy500LayoffTarget: "rummy500.LayoffTarget",
    Rummy500Meld: "rummy500.Meld",
    Rummy500Melded: "rummy500.Melded",
    Rummy500Options: "rummy500.Options",
    Rummy500PileTaken: "rummy500.PileTaken",
    Rummy500Play: "rummy500.Play",
    Rummy500RoundEnded: "rummy500.RoundEnded",
    Rummy500SeatLeft: "rummy500.SeatLeft",
    Rummy500SeatScore: "rummy500.SeatScore",
    Rummy500State: "rummy500.State",
    Rummy500TakeFromPile: "rummy500.TakeFromPile",
    Rummy500TookNothing: "rummy500.TookNothing",
    TableMeld: "rummy500.TableMeld",
  });
  const LEGACY_MONEY_SUFFIX = "_" + "cents";
  const OLD_INDIAN_OPTIONS = "indian";
  const INDIAN_OPTIONS_TAG = "indian.PointsRules";

  /** ``value`` (a bundle or any JSON value in it) in the current shape, as a new object. */
  function upcast(value) {
    if (Array.isArray(value)) return value.map(upcast);
    if (value === null || typeof value !== "object") return value;
    const out = {};
    for (const [key, v] of Object.entries(value)) {
      if (key === OLD_INDIAN_OPTIONS && v !== null && typeof v === "object" && !Array.isArray(v)) {
        if (!Object.hasOwn(value, "options")) out.options = { type: INDIAN_OPTIONS_TAG, ...upcast(v) };
        continue;
      }
      if (key === "type" && typeof v === "string" && Object.hasOwn(LEGACY_TAGS, v)) {
        out.type = LEGACY_TAGS[v];
        continue;
      }
      const renamed = key.endsWith(LEGACY_MONEY_SUFFIX) ? key.slice(0, -LEGACY_MONEY_SUFFIX.length) + "_hundredths" : key;
      if (renamed !== key && renamed in value) continue; // both names: the current one is kept
      out[renamed] = upcast(v);
    }
    return out;
  }

  /** A bundle (or any JSON value) in the current shape: upcast, and a bundle written before
   * `deal_shape` given the deal every such bundle had, a cut and an upcard (Indian points'). */
  function upcastBundle(bundle) {
    const out = upcast(bundle);
    if (out !== null && typeof out === "object" && !Array.isArray(out) && !Object.hasOwn(out, "deal_shape")) {
      out.deal_shape = { ...BOTH };
    }
    return out;
  }

  /** Verify a bundle (an object, or JSON text); record: the player's own record or null. */
  async function verifyBundle(bundle, record) {
    if (typeof bundle === "string") bundle = JSON.parse(bundle);
    bundle = upcastBundle(bundle);
    const steps = [];
    const unchecked = [];
    // a bundle that cannot be read as a hand at all is "unknown", as before any step ran
    const out = { variant: null, known: false, ok: false, verdict: "unknown", steps, unchecked, picture: null, money: null };
    const header = await runStep(steps, "bundle", "The bundle", () => {
      if (!bundle || bundle.format !== FORMAT) fail(`not a proof bundle of format ${FORMAT}`);
      if (bundle.shuffle_version !== V.SHUFFLE_VERSION) {
        fail(`shuffle ${bundle.shuffle_version} is not the ${V.SHUFFLE_VERSION} this page implements`);
      }
      if (!Array.isArray(bundle.events) || !bundle.events.length) fail("the bundle has no events");
    });
    if (!header.ok) return out;
    const events = bundle.events;
    const started = (events.find((e) => e.event.type === "table.HandStarted") || {}).event;
    const ctx = { bundle, events, started, record: null };
    out.variant = started ? started.rule_set.variant : bundle.variant;
    const variant = variants[out.variant];
    if (!started || bundle.variant !== out.variant) {
      header.ok = false;
      header.problem = !started
        ? "the bundle has no start of a hand"
        : `the bundle says variant ${bundle.variant}, its hand was played as ${out.variant}`;
      return out;
    }
    out.known = Boolean(variant);
    ctx.known = out.known;
    ctx.variant = variant;
    try {
      const stated = bundleShape(bundle);
      ctx.shape = variant ? variant.dealShape : stated;
      const shapeOf = (x) => ({ wild_cut: x.wild_cut, upcard: x.upcard }); // key order as written
      if (variant && !same(shapeOf(stated), shapeOf(variant.dealShape))) {
        fail(`the bundle says the deal of ${out.variant} is ${JSON.stringify(stated)}, but it is ${JSON.stringify(variant.dealShape)}`);
      }
    } catch (err) {
      header.ok = false;
      header.problem = err.message;
      if (variant) out.verdict = "failed"; // the bundle contradicts the variant it names
      return out;
    }
    if (!variant) {
      const known = Object.keys(variants).join(", ");
      header.notes.push(`unknown variant "${out.variant}": this page has no rules for it (it knows ${known}); its commitment, seeds, shuffle and deal are checked, its moves and scores are not`);
      unchecked.push(
        { id: "moves", title: "3. Every move", why: `moves not checked here: no rules for variant ${out.variant}` },
        { id: "scores", title: "4. Scores and money", why: `scores not checked here: no scorer for variant ${out.variant}` },
      );
    }
    if (started.hand_id !== bundle.hand_id) header.notes.push(`hand id ${started.hand_id}`);
    try {
      ctx.record = recordEntries(record, bundle.hand_id);
    } catch (err) {
      header.ok = false;
      header.problem = `your record cannot be read: ${err.message}`;
    }
    await runStep(steps, "seeds", "1. Commitment and seeds", (s) => checkSeeds(s, ctx));
    await runStep(steps, "deck", "2. Deck, deal and reshuffles", (s) => checkDeck(s, ctx));
    if (variant) {
      await runStep(steps, "moves", "3. Every move", (s) => checkMoves(s, ctx));
      await runStep(steps, "scores", "4. Scores and money", (s) => {
        if (!ctx.play) fail("the moves could not be replayed, so there is nothing to score");
        variant.checkScores(s, ctx);
        out.money = moneyOf(ctx);
        if (out.money) s.notes.push(moneyText(out.money));
      });
    }
    const passed = steps.every((s) => s.ok);
    out.ok = passed && unchecked.length === 0;
    out.verdict = !passed ? "failed" : out.ok ? "passed" : "unknown";
    out.picture = variant ? variant.picture(ctx) : dealPicture(ctx);
    return out;
  }

  /** The first step that failed, or null. */
  function firstFailure(result) {
    return result.steps.find((s) => !s.ok) || null;
  }

  Object.assign(V, { FORMAT, Differs, fail, same, ofType, LEGACY_TAGS, upcast, upcastBundle, checkPointsSettlement, moneyText, dealPicture, verifyBundle, firstFailure });
})(globalThis);
