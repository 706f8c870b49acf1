// The verifier page's DOM: reads the two inputs (drop, file or paste), runs BBVerify.verifyBundle
// and shows each step's verdict and the cards. No network: everything is local.
(function () {
  "use strict";
  const V = globalThis.BBVerify;
  const $ = (id) => document.getElementById(id);
  const SUIT_SIGNS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function cardEl(text, wildRank) {
    const face = text.split(":")[0];
    if (face === "JK") return el("span", "card joker", "JK");
    const suit = face.slice(-1);
    const rank = face.slice(0, -1);
    const wild = wildRank !== null && V.parseRank(rank) === wildRank;
    return el("span", `card${suit === "D" || suit === "H" ? " red" : ""}${wild ? " wild" : ""}`, rank + SUIT_SIGNS[suit]);
  }

  function cardsEl(cards, wildRank) {
    const row = el("div", "cards");
    for (const c of cards) row.appendChild(cardEl(c, wildRank));
    return row;
  }

  function wire(dropId, fileId, textId) {
    const zone = $(dropId);
    zone.addEventListener("dragover", (e) => {
      e.preventDefault();
      zone.classList.add("over");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", async (e) => {
      e.preventDefault();
      zone.classList.remove("over");
      const file = e.dataTransfer.files[0];
      if (file) $(textId).value = await file.text();
    });
    $(fileId).addEventListener("change", async (e) => {
      const file = e.target.files[0];
      if (file) $(textId).value = await file.text();
    });
  }

  function verdictText(result) {
    const first = V.firstFailure(result);
    if (result.verdict === "passed") return "Verified: every step passed.";
    if (result.verdict === "failed") return `Not verified: ${first.title} differs.`;
    if (first) return `Not verified: ${first.problem}`;
    // every step that ran passed, but not everything could be checked here: say what was not
    const checked = result.steps.filter((s) => s.id !== "bundle").map((s) => s.title);
    return (
      `Not fully verified: unknown variant "${result.variant}"; ` +
      result.unchecked.map((u) => u.why).join("; ") +
      `. Checked here and passed: ${checked.join(", ")}.`
    );
  }

  function show(result) {
    const verdict = $("verdict");
    const kind = result.verdict || (result.known ? "failed" : "unknown");
    verdict.className = kind;
    verdict.textContent = verdictText({ unchecked: [], ...result, verdict: kind });
    verdict.dataset.verdict = kind;
    const steps = $("steps");
    steps.replaceChildren();
    for (const s of result.steps) {
      const box = el("div", `step ${s.ok ? "passed" : "failed"}`);
      box.dataset.step = s.id;
      box.dataset.ok = String(s.ok);
      box.appendChild(el("b", "", `${s.ok ? "\u2714 passed" : "\u2718 differs"} \u2014 ${s.title}`));
      if (!s.ok) box.appendChild(el("div", "problem", s.problem));
      for (const n of s.notes) box.appendChild(el("div", "note", n));
      steps.appendChild(box);
    }
    for (const u of result.unchecked || []) {
      const box = el("div", "step unchecked");
      box.dataset.step = u.id;
      box.dataset.ok = "unchecked";
      box.appendChild(el("b", "", `? not checked here \u2014 ${u.title}`));
      box.appendChild(el("div", "problem", u.why));
      steps.appendChild(box);
    }
    showMoney(result.money);
    const pic = $("picture");
    pic.replaceChildren();
    const p = result.picture;
    if (!p) return;
    const cut = p.wildCut ? V.parseCard(p.wildCut).face : null;
    const wildRank = cut === null || cut === V.JOKER ? null : V.faceRank(cut);
    pic.appendChild(el("h2", "", "The deal"));
    const top = el("div", "seat");
    const turned = [p.wildCut, p.firstOpen].filter((c) => c);
    const cutText = !p.wildCut
      ? "No wild-card cut"
      : `Wild-card cut (${wildRank === null ? "printed joker: only jokers are wild" : "its rank is wild"})`;
    top.appendChild(el("h3", "", `${cutText}${p.firstOpen ? " and first open card" : ""}`));
    top.appendChild(cardsEl(turned, wildRank));
    pic.appendChild(top);
    for (const h of p.deal) {
      const box = el("div", "seat");
      box.appendChild(el("h3", "", `Seat ${h.seat} was dealt`));
      box.appendChild(cardsEl(h.cards, wildRank));
      pic.appendChild(box);
    }
    pic.appendChild(el("h2", "", "The end of the hand"));
    for (const f of p.finals) {
      const box = el("div", "seat");
      box.appendChild(el("h3", "", `Seat ${f.seat}: ${f.outcome || "?"}, ${f.points ?? "?"} points`));
      box.appendChild(cardsEl(f.cards, wildRank));
      if (f.melds && f.melds.length) {
        const melds = el("div", "cards");
        for (const m of f.melds) {
          const g = el("span", "meld");
          g.title = m.kind;
          for (const face of m.faces) g.appendChild(cardEl(face, wildRank));
          melds.appendChild(g);
        }
        box.appendChild(el("div", "note", "best arrangement found here:"));
        box.appendChild(melds);
      }
      pic.appendChild(box);
    }
  }

  /** The hand's money once step 4 passed: each seat's net and the commission, in tokens. */
  function showMoney(money) {
    const box = $("money");
    box.replaceChildren();
    if (!money) return;
    box.appendChild(el("h2", "", "The money (House Tokens)"));
    const table = el("table");
    const row = (cls, label, amount, signed) => {
      const tr = el("tr", cls);
      tr.appendChild(el("th", "", label));
      tr.appendChild(el("td", "amount", V.tokens(amount, signed)));
      table.appendChild(tr);
      return tr;
    };
    for (const l of money.lines) row("net", `Seat ${l.seat}'s net`, l.amount_hundredths, true).dataset.seat = String(l.seat);
    row("commission", "Commission to the house", money.commission_hundredths, false);
    box.appendChild(table);
  }

  async function run() {
    const text = $("bundle-text").value.trim();
    const record = $("record-text").value.trim() || null;
    const verdict = $("verdict");
    verdict.textContent = "Checking...";
    verdict.dataset.verdict = "";
    let result;
    try {
      result = await V.verifyBundle(JSON.parse(text), record);
    } catch (err) {
      result = { ok: false, known: false, verdict: "unknown", unchecked: [], steps: [{ id: "bundle", title: "The bundle", ok: false, problem: `cannot be read: ${err.message}`, notes: [] }], picture: null };
    }
    show(result);
    document.body.dataset.done = "true";
  }

  wire("bundle-drop", "bundle-file", "bundle-text");
  wire("record-drop", "record-file", "record-text");
  $("verify").addEventListener("click", run);
  globalThis.BBVerifyPage = { run };
})();
