// Money as a person reads it on the verifier page and in cli.mjs's lines: an amount in integer
// hundredths of a House Token as tokens with two decimals (167 -> "1.67", -1300 -> "-13.00"), the
// same text as rummy_ops.money.tokens. The one home of that formatting for every variant's file;
// the bundle and --json keep integer hundredths. Classic script (file:// works); lands on
// globalThis.BBVerify.
(function (root) {
  "use strict";
  const V = (root.BBVerify = root.BBVerify || {});

  /** An amount in hundredths (a BigInt, an integer Number, or a string of decimal digits with an
   * optional minus) -> BigInt. Throws TypeError for anything else (a fraction, NaN, "1.5"). */
  function hundredthsOf(amount) {
    if (typeof amount === "bigint") return amount;
    if (typeof amount === "number" && Number.isInteger(amount)) return BigInt(amount);
    if (typeof amount === "string" && /^-?[0-9]+$/.test(amount)) return BigInt(amount);
    throw new TypeError(`not an amount in hundredths: ${JSON.stringify(String(amount))}`);
  }

  /** Hundredths of a House Token as tokens with two decimals: exact for any size (BigInt inside),
   * a minus for a negative amount; signed: a plus for any other ("+0.00", "+3.40"), as a net is
   * shown. tokens(5) === "0.05", tokens(-1300) === "-13.00", tokens(167n, true) === "+1.67". */
  function tokens(amount, signed = false) {
    const n = hundredthsOf(amount);
    const sign = n < 0n ? "-" : signed ? "+" : "";
    const a = n < 0n ? -n : n;
    return `${sign}${a / 100n}.${String(a % 100n).padStart(2, "0")}`;
  }

  /** Basis points as a percent with two decimals (500 -> "5.00%"), as rummy_ops.money's
   * commission_text. */
  function percent(bps) {
    const n = hundredthsOf(bps);
    return `${tokens(n)}%`;
  }

  Object.assign(V, { hundredthsOf, tokens, percent });
})(globalThis);
