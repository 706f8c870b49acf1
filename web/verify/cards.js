// Cards for the verifier page: written from the shuffle spec (docs/rules/shuffle-spec.md, section 2) and
// the proof bundle's schema, sharing no code with the server. A classic script (no modules), so the
// page works from file://; under Node, cli.mjs loads the same file. Everything lands on
// globalThis.BBVerify.
(function (root) {
  "use strict";
  const V = (root.BBVerify = root.BBVerify || {});

  const SUITS = ["C", "D", "H", "S"]; // canonical suit positions C=0, D=1, H=2, S=3
  const RANK_SYMBOLS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
  const JOKER = 52; // face number of a printed joker; a standard face is suit*13 + rank-1

  class CardError extends Error {}

  /** "7H" -> 7, "A" -> 1, "K" -> 13; null when not a rank symbol. */
  function parseRank(symbol) {
    const i = RANK_SYMBOLS.indexOf(String(symbol).toUpperCase());
    return i < 0 ? null : i + 1;
  }

  /** A face ("7H", "10S", "JK") -> its face number (0..51, or JOKER). Throws CardError. */
  function parseFace(text) {
    if (typeof text !== "string") throw new CardError(`not a card: ${JSON.stringify(text)}`);
    const t = text.trim().toUpperCase();
    if (t === "JK") return JOKER;
    const suit = SUITS.indexOf(t.slice(-1));
    const rank = parseRank(t.slice(0, -1));
    if (suit < 0 || rank === null) throw new CardError(`not a card: ${JSON.stringify(text)}`);
    return suit * 13 + rank - 1;
  }

  /** A bundle card "7H:1" (face, colon, copy) -> {face, copy, text}. Throws CardError. */
  function parseCard(text) {
    if (typeof text !== "string" || text.split(":").length !== 2) {
      throw new CardError(`not a card: ${JSON.stringify(text)} (expected FACE:COPY such as 7H:0)`);
    }
    const [faceText, copyText] = text.split(":");
    if (!/^[0-9]+$/.test(copyText)) throw new CardError(`not a card: ${JSON.stringify(text)}`);
    return { face: parseFace(faceText), copy: Number(copyText), text };
  }

  function faceName(face) {
    if (face === JOKER) return "JK";
    return RANK_SYMBOLS[face % 13] + SUITS[Math.floor(face / 13)];
  }

  function faceRank(face) {
    return face === JOKER ? null : (face % 13) + 1;
  }

  function faceSuit(face) {
    return face === JOKER ? null : Math.floor(face / 13);
  }

  /** Canonical shoe index of a card (spec section 2); throws CardError outside the shoe. */
  function cardIndex(card, decks, printedJokers) {
    if (card.face === JOKER) {
      if (card.copy >= printedJokers) throw new CardError(`${card.text} is not in this shoe`);
      return decks * 52 + card.copy;
    }
    if (card.copy >= decks) throw new CardError(`${card.text} is not in this shoe`);
    return card.copy * 52 + card.face; // face = suit_position*13 + rank-1
  }

  /** The bundle card text ("7H:1", "JK:0") of canonical shoe index i. */
  function indexCard(i, decks, printedJokers) {
    if (!Number.isInteger(i) || i < 0 || i >= decks * 52 + printedJokers) {
      throw new CardError(`card index ${i} is outside the shoe`);
    }
    if (i >= decks * 52) return `JK:${i - decks * 52}`;
    return `${faceName(i % 52)}:${Math.floor(i / 52)}`;
  }

  /** What a card counts when loose: 0 for a printed joker or the wild rank, A/10/J/Q/K 10, else
   * its face value. wildRank: 1..13 or null (a printed joker was cut). */
  function facePoints(face, wildRank) {
    if (face === JOKER) return 0;
    const rank = (face % 13) + 1;
    if (rank === wildRank) return 0;
    return rank === 1 || rank >= 10 ? 10 : rank;
  }

  Object.assign(V, {
    SUITS,
    RANK_SYMBOLS,
    JOKER,
    CardError,
    parseRank,
    parseFace,
    parseCard,
    faceName,
    faceRank,
    faceSuit,
    cardIndex,
    indexCard,
    facePoints,
  });
})(globalThis);
