// The game page (/g/ID): one finished game as the store of record keeps it (GET /api/games/ID,
// docs/game-format.md): the result with each player's rating change, a replay trick by trick
// with all four hands face up, and every hand's fair deal re-derived in this browser
// (fairdeal.js verifyAudit, the same check the table runs after each hand). Names and other
// texts from the server are put in the page as text, never as HTML.

import { cardFace, cardText, pointsIn, rankLabel, sortCards, SUIT_ORDER, SUITS, suitOf, trickLeaderIndex } from "./cards.js";
import { h } from "./dom.js";
import { passDirectionFor, passTarget, verifyAudit } from "./fairdeal.js";
import { cardName, detectLanguage, language, t, useLanguage } from "./i18n.js";
import { applyLook } from "./settings.js";

const $ = (sel) => document.querySelector(sel);
const SEATS = [0, 1, 2, 3];
const PLACES = ["bottom", "left", "top", "right"]; // seats clockwise from the bottom: who plays next sits on the left
const SWIPE = 40; // px a finger must travel sideways to step
const SAVING_TRIES = 20; // a game opened from its table's game-over panel: ask again this often…
const SAVING_EVERY = 1500; // …this many ms apart, while the archive takes it

// --- the game, position by position (no DOM) -----------------------------------------------------

/** The hand's audit as verifyAudit takes it; also when kept inside a hand_audit event's data. */
export function auditOf(hand) {
  const a = hand?.audit;
  if (!a || typeof a !== "object") return null;
  return a.v === undefined && a.audit && typeof a.audit === "object" ? a.audit : a;
}

function trick(leader, cards) {
  const winner = cards.length === 4 ? (leader + trickLeaderIndex(cards)) % 4 : null;
  return { leader, cards, winner, points: pointsIn(cards) };
}

/**
 * Every hand ready to replay, and the positions in order: for each hand the pass (k = 0), then
 * each trick (k = 1 … its tricks). The cards come from the audit: the deal as dealt, the passes
 * and the tricks; the summary (hand_over) gives what the hand scored and the game's scores.
 */
export function buildReplay(doc) {
  const hands = [];
  let scores = [0, 0, 0, 0];
  for (const hand of doc.hands || []) {
    const audit = auditOf(hand);
    const over = hand.over && typeof hand.over === "object" ? hand.over : null;
    const source = Array.isArray(audit?.tricks) ? audit.tricks : Array.isArray(over?.tricks) ? over.tricks : [];
    const tricks = source.map((tr) => trick(tr.leader, [...(tr.cards || [])]));
    const direction = audit?.pass_direction ?? over?.pass_direction ?? passDirectionFor(hand.number);
    const passes = direction !== "none" && Array.isArray(audit?.passes) ? audit.passes : null;
    let deal;
    if (Array.isArray(audit?.deal) && audit.deal.length === 4) {
      deal = audit.deal.map((cards) => [...cards]);
    } else {
      // No audit: each seat held what it played (and the pass is not known).
      deal = SEATS.map(() => []);
      for (const tr of tricks) tr.cards.forEach((c, m) => deal[(tr.leader + m) % 4].push(c));
    }
    const held = deal.map((cards) => [...cards]);
    const received = SEATS.map(() => []);
    if (passes) {
      SEATS.forEach((s) => (held[s] = held[s].filter((c) => !(passes[s] || []).includes(c))));
      SEATS.forEach((s) => {
        const to = passTarget(s, direction);
        if (to === null) return;
        held[to].push(...(passes[s] || []));
        received[to] = [...(passes[s] || [])];
      });
    }
    const after = Array.isArray(over?.scores) && over.scores.length === 4 ? over.scores : scores;
    hands.push({
      number: hand.number,
      audit,
      over,
      tricks,
      direction,
      passes,
      passKnown: Boolean(audit),
      deal,
      held,
      received,
      before: scores,
      after,
      points: Array.isArray(over?.points) ? over.points : null,
      shooter: over?.shooter ?? null,
      revoke: Array.isArray(over?.revoke_call) ? over.revoke_call : null,
    });
    scores = after;
  }
  const positions = [];
  hands.forEach((hd, i) => {
    for (let k = 0; k <= hd.tricks.length; k++) positions.push({ hand: i, k });
  });
  return { hands, positions };
}

/** What the table shows after k tricks of a hand (k = 0: the deal, with the pass to come). */
export function positionState(hd, k) {
  const played = new Set(hd.tricks.slice(0, k).flatMap((tr) => tr.cards));
  const cards = (k === 0 ? hd.deal : hd.held).map((c) => sortCards(c.filter((card) => !played.has(card))));
  const taken = [0, 0, 0, 0];
  for (const tr of hd.tricks.slice(0, k)) if (tr.winner !== null) taken[tr.winner] += tr.points;
  const end = k === hd.tricks.length;
  return {
    cards,
    taken: end && hd.points ? hd.points : taken,
    scores: end ? hd.after : hd.before,
    trick: k > 0 ? hd.tricks[k - 1] : null,
    end,
  };
}

/**
 * The problems with one hand, beyond verifyAudit's (the checks of docs/game-format.md, as
 * hearts-verify makes them): the audit is this game's and this hand's; the summary shows the
 * audit's tricks, each taken by the highest card of the suit led; its points are the point cards
 * each seat took, or the moon rule the table allows, or 26 to whoever lost a revoke call; its
 * scores are `before` plus its points. Each problem {text, en}: en marks the verifier's English.
 */
export async function checkHand(doc, hand, before) {
  const audit = auditOf(hand);
  if (!audit) return [{ text: t("game.no_audit"), en: false }];
  const problems = (await verifyAudit(audit)).map((text) => ({ text, en: true }));
  const say = (key, params) => problems.push({ text: t(key, params), en: false });
  if (audit.game !== doc.game) say("game.other_game", { game: String(audit.game) });
  if (audit.hand !== hand.number) say("game.other_hand", { n: String(audit.hand) });
  const over = hand.over;
  if (!over || !Array.isArray(over.tricks) || !Array.isArray(audit.tricks)) return problems;
  const same = over.tricks.length === audit.tricks.length && over.tricks.every((tr, i) =>
    tr.leader === audit.tricks[i].leader && JSON.stringify(tr.cards) === JSON.stringify(audit.tricks[i].cards));
  if (!same) {
    say("game.summary_differs");
    return problems;
  }
  const taken = [0, 0, 0, 0];
  audit.tricks.forEach((tr, i) => {
    const { winner, points } = trick(tr.leader, tr.cards);
    if (winner === null) return; // a revoke call's short last trick
    taken[winner] += points;
    if (over.tricks[i].winner !== winner) say("game.winner_differs", { n: i + 1 });
  });
  const shooter = taken.indexOf(26);
  const revoke = Array.isArray(over.revoke_call) ? over.revoke_call : null;
  const allowed = [];
  if (revoke) {
    const loser = revoke[2] ? revoke[1] : revoke[0];
    allowed.push(SEATS.map((s) => (s === loser ? 26 : 0)));
  } else if (shooter >= 0) {
    const moon = doc.options?.moon ?? "others_26";
    if (moon !== "shooter_minus_26") allowed.push(SEATS.map((s) => (s === shooter ? 0 : 26)));
    if (moon !== "others_26") allowed.push(SEATS.map((s) => (s === shooter ? -26 : 0)));
  } else {
    allowed.push(taken);
  }
  const points = Array.isArray(over.points) ? over.points : [];
  if (!allowed.some((a) => JSON.stringify(a) === JSON.stringify(points))) say("game.points_differ");
  if (!revoke && (over.shooter ?? null) !== (shooter >= 0 ? shooter : null)) say("game.shooter_differs");
  const after = SEATS.map((s) => before[s] + (points[s] ?? NaN));
  if (JSON.stringify(after) !== JSON.stringify(over.scores)) say("game.scores_differ");
  return problems;
}

// --- who sat where --------------------------------------------------------------------------------

function levelName(level) {
  const key = `level.${level}`;
  const text = t(key);
  return text === key ? String(level) : text;
}

function seatInfo(doc, s) {
  const seat = (doc.seats || [])[s] || {};
  const player = seat.player ?? seat.participant ?? null;
  const bot = seat.bot ?? null;
  const deleted = player === null && bot === null && !seat.name;
  const name = seat.name || (deleted ? t("game.deleted") : bot ? t("seat.bot_word") : t("seat.fallback", { n: s + 1 }));
  return { seat: s, player, bot, deleted, name, before: seat.rating_before ?? null, after: seat.rating_after ?? null };
}

/** A seat's name: a link to the player's page, the bot badge, or "a deleted player". */
function nameOf(info, you, { link = true } = {}) {
  const label = info.deleted
    ? h("span", { class: "deleted" }, info.name)
    : info.player && link
      ? h("a", { href: `/p/${encodeURIComponent(info.player)}`, class: "player-link" }, h("bdi", {}, info.name))
      : h("bdi", {}, info.name);
  return h("span", { class: "who" }, label,
    info.bot ? h("span", { class: "badge bot", title: t("seat.bot_title", { level: levelName(info.bot) }) }, t("seat.bot")) : null,
    you ? h("span", { class: "badge you" }, t("seat.you_word")) : null);
}

function myPlayerId() {
  try {
    return JSON.parse(localStorage.getItem("hearts.guest") || "null")?.player ?? null;
  } catch {
    return null;
  }
}

/** A name inside a sentence, isolated (FSI … PDI) so its own direction cannot reorder the words around it. */
const iso = (text) => `\u2068${text}\u2069`;

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0");

// --- the page ---------------------------------------------------------------------------------------

class GamePage {
  constructor(doc) {
    this.doc = doc;
    this.replay = buildReplay(doc);
    this.seats = SEATS.map((s) => seatInfo(doc, s));
    const me = myPlayerId();
    this.you = me === null ? null : this.seats.findIndex((s) => s.player === me);
    if (this.you < 0) this.you = null;
    this.bottom = this.you ?? 0; // a player sees the game from their own seat
    this.at = 0;
    this.verdicts = new Map(); // hand number -> problems ([] verified), absent while checking
    this.verifyMs = null;
    this.finalDiffers = false;
  }

  name(s, options) {
    return nameOf(this.seats[s], s === this.you, options);
  }

  place(s) {
    return PLACES[(s - this.bottom + 4) % 4];
  }

  show() {
    const doc = this.doc;
    const kind = doc.kind === "quick" ? t("table.quick") : doc.kind === "friends" ? t("table.friends") : String(doc.kind || "");
    const finished = Number(doc.finished_at) ? new Date(Number(doc.finished_at) * 1000) : null;
    const when = finished ? finished.toLocaleString(language(), { dateStyle: "medium", timeStyle: "short" }) : "";
    document.title = `${t("game.page_title")} · Hearts Live`;
    $("#game-title").textContent = when ? t("game.title", { date: when }) : t("game.page_title");
    const facts = [kind];
    if (doc.options?.target) facts.push(t("rules.to", { n: doc.options.target }));
    facts.push(doc.rated ? t("rules.rated") : t("game.unrated"));
    facts.push(t("game.hands", { n: this.replay.hands.length }));
    $("#game-facts").textContent = facts.filter(Boolean).join(" · ");
    const download = $("#download");
    download.href = `/api/games/${encodeURIComponent(doc.game)}?download=1`;
    download.setAttribute("download", `hearts-game-${doc.game}.json`);
    this.drawResult();
    this.drawVerdicts();
    this.wire();
    $("#game").hidden = false;
    $("#game-status").hidden = true;
    const fromHash = this.positionFromHash();
    this.go(fromHash ?? 0, { quiet: true });
  }

  drawResult() {
    const doc = this.doc;
    const scores = Array.isArray(doc.scores) ? doc.scores : [0, 0, 0, 0];
    const winners = Array.isArray(doc.winners) ? doc.winners : [];
    const order = [...SEATS].sort((a, b) => scores[a] - scores[b] || a - b);
    const names = winners.map((s) => iso(this.seats[s]?.name ?? "?")).join(" · ");
    $("#result-box").replaceChildren(
      h("p", { class: "winners" }, "★ ", t(winners.length > 1 ? "result.winners" : "result.winner", { names })),
      h("ol", { class: "final-scores game-final" }, order.map((s) => {
        const info = this.seats[s];
        const rated = info.before !== null && info.after !== null;
        const change = rated ? info.after - info.before : 0;
        return h("li", { class: winners.includes(s) ? "won" : "", dataset: { seat: s } },
          this.name(s),
          rated ? h("span", { class: `rating-change ${change >= 0 ? "up" : "down"}`, dir: "ltr" }, `${info.before} → ${info.after} (${signed(change)})`) : h("span", {}),
          h("strong", { class: "final-score" }, scores[s]));
      })),
      ...(doc.departures || []).map((d) => {
        const who = this.seats[d.seat]?.name ?? t("seat.fallback", { n: Number(d.seat) + 1 });
        const key = ["left", "booted", "silent"].includes(d.reason) ? d.reason : "left";
        return h("p", { class: "muted small departure" }, t(`game.departed_${key}`, { name: iso(who), n: d.hand ?? "?" }));
      }),
    );
  }

  // --- stepping ---

  go(index, { quiet = false } = {}) {
    const last = this.replay.positions.length - 1;
    this.at = Math.max(0, Math.min(last, index));
    this.drawPosition();
    if (!quiet) this.saveHash();
  }

  step(delta) {
    this.go(this.at + delta);
  }

  goHand(i) {
    const at = this.replay.positions.findIndex((p) => p.hand === i);
    if (at >= 0) this.go(at);
  }

  saveHash() {
    const p = this.replay.positions[this.at];
    if (!p) return;
    const hd = this.replay.hands[p.hand];
    history.replaceState(null, "", `${location.pathname}${location.search}#hand=${hd.number}&trick=${p.k}`);
  }

  positionFromHash() {
    const m = location.hash.match(/^#hand=(\d+)&trick=(\d+)$/);
    if (!m) return null;
    const i = this.replay.hands.findIndex((hd) => hd.number === Number(m[1]));
    const at = this.replay.positions.findIndex((p) => p.hand === i && p.k === Number(m[2]));
    return at >= 0 ? at : null;
  }

  /** Buttons, keys (←/→ in the reading direction, Home, End) and a sideways swipe on the felt. */
  wire() {
    $("#first-btn").addEventListener("click", () => this.go(0));
    $("#back-btn").addEventListener("click", () => this.step(-1));
    $("#forward-btn").addEventListener("click", () => this.step(1));
    $("#last-btn").addEventListener("click", () => this.go(Infinity));
    document.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
      if (e.target.closest?.("input, select, textarea, [contenteditable]")) return;
      const rtl = document.documentElement.dir === "rtl";
      const moves = {
        ArrowRight: rtl ? -1 : 1,
        ArrowLeft: rtl ? 1 : -1,
      };
      if (e.key in moves) this.step(moves[e.key]);
      else if (e.key === "Home") this.go(0);
      else if (e.key === "End") this.go(Infinity);
      else return;
      e.preventDefault();
    });
    const board = $("#board");
    let start = null;
    board.addEventListener("pointerdown", (e) => {
      if (e.pointerType === "mouse") return; // a mouse steps with the buttons; a drag selects
      start = { id: e.pointerId, x: e.clientX, y: e.clientY };
    });
    const end = (e) => {
      if (!start || e.pointerId !== start.id) return;
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      start = null;
      if (Math.abs(dx) < SWIPE || Math.abs(dx) < 1.5 * Math.abs(dy)) return;
      // Turning a page: the next one comes from where the reading goes (from the right in
      // English, from the left in Arabic), so the finger swipes the other way.
      const rtl = document.documentElement.dir === "rtl";
      this.step((dx < 0) !== rtl ? 1 : -1);
    };
    board.addEventListener("pointerup", end);
    board.addEventListener("pointercancel", () => (start = null));
  }

  // --- drawing one position ---

  drawPosition() {
    const { hands, positions } = this.replay;
    const p = positions[this.at];
    if (!p) {
      $("#position").textContent = t("game.no_hands");
      return;
    }
    const hd = hands[p.hand];
    const state = positionState(hd, p.k);
    const label = p.k === 0
      ? t("game.position_pass", { hand: hd.number, hands: hands.length })
      : t("game.position_trick", { hand: hd.number, hands: hands.length, trick: p.k, tricks: hd.tricks.length });
    $("#position").textContent = label;
    $("#replay").dataset.hand = hd.number;
    $("#replay").dataset.trick = p.k;
    $("#first-btn").disabled = $("#back-btn").disabled = this.at === 0;
    $("#forward-btn").disabled = $("#last-btn").disabled = this.at === positions.length - 1;
    const board = $("#board");
    const seats = SEATS.map((s) => this.drawSeat(s, hd, p.k, state));
    board.replaceChildren(...seats, h("div", { class: "board-center" }, p.k === 0 ? this.drawPass(hd) : this.drawTrick(hd, state)));
    this.drawHandVerdict(hd.number);
    for (const li of document.querySelectorAll("#verdicts > li")) li.classList.toggle("current", Number(li.dataset.hand) === hd.number);
  }

  drawSeat(s, hd, k, state) {
    const cards = state.cards[s];
    const passing = k === 0 && hd.passes ? hd.passes[s] || [] : [];
    const received = k > 0 ? hd.received[s] : [];
    const won = state.trick && state.trick.winner === s;
    const handPoints = state.taken[s];
    const rows = SUIT_ORDER.split("").map((suit) => {
      const ofSuit = cards.filter((c) => suitOf(c) === suit);
      return h("div", { class: "suit-row" },
        h("span", { class: `suit-sym suit-${suit}`, "aria-hidden": "true" }, SUITS[suit].symbol),
        ofSuit.length
          ? ofSuit.map((c) => h("span", {
              class: `chip suit-${suit}${passing.includes(c) ? " passing" : ""}${received.includes(c) ? " received" : ""}`,
              dataset: { card: c },
            }, rankLabel(c)))
          : h("span", { class: "void" }, "—"));
    });
    const spoken = cards.length ? cards.map(cardName).join(", ") : t("game.no_cards");
    return h("section", {
      class: `replay-seat pos-${this.place(s)}${won ? " took" : ""}`,
      dataset: { seat: s, cards: cards.length },
      "aria-label": this.seats[s].name,
    },
      h("div", { class: "seat-head" }, this.name(s)),
      h("div", { class: "seat-points" },
        h("span", { class: "seat-hand", dataset: { points: handPoints } }, t("seat.this_hand", { n: handPoints })),
        h("span", { class: "seat-game", dataset: { score: state.scores[s] } }, t("seat.score", { n: state.scores[s] }))),
      h("div", { class: "replay-hand", "aria-hidden": "true" }, rows),
      h("p", { class: "visually-hidden" }, t("seat.cards", { n: cards.length }), ": ", spoken));
  }

  drawPass(hd) {
    const title = h("p", { class: "center-title" }, t(`pass.${hd.direction}`) || hd.direction);
    if (hd.direction === "none") return [title];
    if (!hd.passes) return [title, h("p", { class: "small" }, t("game.pass_unknown"))];
    const rtl = document.documentElement.dir === "rtl";
    return [
      title,
      h("ul", { class: "pass-list" }, SEATS.map((s) => {
        const to = passTarget(s, hd.direction);
        return h("li", { dataset: { seat: s } },
          h("span", { class: "pass-who" }, this.name(s, { link: false }), h("span", { class: "pass-arrow", "aria-hidden": "true" }, rtl ? "←" : "→"), h("span", { class: "visually-hidden" }, ` ${t("game.passes_to")} `), this.name(to, { link: false })),
          h("span", { class: "pass-cards" }, sortCards(hd.passes[s] || []).map((c) =>
            h("span", { class: `chip suit-${suitOf(c)}`, role: "img", "aria-label": cardName(c), dir: "ltr" }, cardText(c)))));
      })),
    ];
  }

  drawTrick(hd, state) {
    const tr = state.trick;
    const slots = tr.cards.map((card, m) => {
      const seat = (tr.leader + m) % 4;
      return h("div", { class: `trick-slot pos-${this.place(seat)}${seat === tr.winner ? " winning" : ""}`, dataset: { seat, card } },
        h("span", { class: "card", role: "img", "aria-label": `${this.seats[seat].name}: ${cardName(card)}` }, cardFace(card)),
        m === 0 ? h("span", { class: "led" }, t("trick.led")) : null);
    });
    const parts = [h("div", { class: "replay-trick", dir: "ltr" }, slots)];
    const note = tr.winner !== null
      ? [h("strong", {}, t("trick.took", { name: iso(this.seats[tr.winner].name) })), " ",
          tr.points ? h("span", { dir: "ltr" }, `(+${tr.points})`) : `(${t("last.no_points")})`]
      : [t("game.trick_cut")];
    parts.push(h("p", { class: "trick-note" }, note));
    if (state.end) parts.push(this.drawHandEnd(hd));
    return parts;
  }

  drawHandEnd(hd) {
    const lines = [h("strong", {}, t("summary.title", { n: hd.number }))];
    if (hd.shooter !== null && hd.shooter !== undefined) {
      lines.push(h("p", { class: "moon-banner" }, h("span", { "aria-hidden": "true" }, "☾ "), t("summary.moon", { name: iso(this.seats[hd.shooter]?.name ?? "?") })));
    }
    if (hd.revoke) {
      const [accuser, accused, guilty] = hd.revoke;
      lines.push(h("p", { class: "small" }, t(guilty ? "note.revoke_guilty" : "note.revoke_innocent",
        { accuser: iso(this.seats[accuser]?.name ?? "?"), accused: iso(this.seats[accused]?.name ?? "?") })));
    }
    const lastHand = hd === this.replay.hands[this.replay.hands.length - 1];
    if (lastHand) {
      const winners = (this.doc.winners || []).map((s) => iso(this.seats[s]?.name ?? "?")).join(" · ");
      lines.push(h("p", { class: "game-over-line" }, `${t("result.title")} · ${t((this.doc.winners || []).length > 1 ? "result.winners" : "result.winner", { names: winners })}`));
    }
    return h("div", { class: "hand-end" }, lines);
  }

  // --- the fair deal ---

  drawVerdicts() {
    $("#verdicts").replaceChildren(...this.replay.hands.map((hd, i) =>
      h("li", { dataset: { hand: hd.number, state: "checking" } },
        h("button", { type: "button", class: "linkish", onclick: () => this.goHand(i) }, t("game.verdict_hand", { n: hd.number })),
        " ",
        h("span", { class: "verdict" }, t("game.checking")))));
    this.drawSummary();
  }

  drawHandVerdict(number) {
    const problems = this.verdicts.get(number);
    const el = $("#hand-verdict");
    el.dataset.state = problems === undefined ? "checking" : problems.length ? "failed" : "verified";
    el.replaceChildren(problems === undefined ? t("game.checking") : verdictText(problems));
  }

  drawSummary() {
    const el = $("#deal-summary");
    const total = this.replay.hands.length;
    const failed = [...this.verdicts.values()].filter((p) => p.length).length;
    if (this.verdicts.size < total) {
      el.dataset.state = "checking";
      el.textContent = t("game.checking_all");
    } else if (failed || this.finalDiffers) {
      el.dataset.state = "failed";
      el.textContent = [failed ? t("game.some_failed", { n: failed }) : "", this.finalDiffers ? t("game.final_differs") : ""]
        .filter(Boolean).join(" ");
    } else {
      el.dataset.state = "verified";
      el.textContent = t("game.all_verified", { n: total });
    }
  }

  /** Every hand's check, one after the other, in this browser; the time it took is kept. */
  async verifyAll() {
    const started = performance.now();
    let before = [0, 0, 0, 0];
    let last = null;
    for (const hand of this.doc.hands || []) {
      let problems;
      try {
        problems = await checkHand(this.doc, hand, before);
      } catch (err) {
        problems = [{ text: String(err?.message || err), en: true }];
      }
      if (Array.isArray(hand.over?.scores)) before = last = hand.over.scores;
      this.verdicts.set(hand.number, problems);
      const li = document.querySelector(`#verdicts > li[data-hand="${hand.number}"]`);
      if (li) {
        li.dataset.state = problems.length ? "failed" : "verified";
        li.querySelector(".verdict").replaceChildren(verdictText(problems));
      }
      const p = this.replay.positions[this.at];
      if (p && this.replay.hands[p.hand].number === hand.number) this.drawHandVerdict(hand.number);
      this.drawSummary();
    }
    // The game's final scores are its last summary's.
    this.finalDiffers = last !== null && JSON.stringify(last) !== JSON.stringify(this.doc.scores);
    this.drawSummary();
    this.verifyMs = performance.now() - started;
    document.body.dataset.verifyMs = this.verifyMs.toFixed(1);
  }
}

/** "Deal verified", or "Deal check failed: …" with every problem (the verifier's are English). */
function verdictText(problems) {
  if (!problems.length) return h("span", { class: "ok" }, "✓ ", t("game.verified"));
  const said = (p) => (p.en ? h("span", { lang: "en" }, p.text) : p.text);
  const [first, ...more] = problems;
  return h("span", { class: "bad" }, "✗ ", t("game.check_failed"), " ", said(first),
    more.length ? h("details", { class: "more-problems" }, h("summary", {}, t("game.more_problems", { n: more.length })),
      h("ul", {}, more.map((p) => h("li", {}, said(p))))) : null);
}

// --- loading ----------------------------------------------------------------------------------------

async function fetchGame(id) {
  const response = await fetch(`/api/games/${encodeURIComponent(id)}`, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return { status: response.status, body };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  applyLook();
  useLanguage(detectLanguage()); // translates the page's [data-i18n] texts too
  const status = $("#game-status");
  const id = decodeURIComponent(location.pathname.replace(/^\/g\//, "").replace(/\/$/, ""));
  // Opened from the table just as the game ended: the archive may not have it yet.
  const fresh = new URLSearchParams(location.search).has("new");
  let answer;
  try {
    for (let tries = 0; ; tries++) {
      answer = await fetchGame(id);
      const waiting = answer.status === 409 || answer.status === 404;
      if (!(fresh && waiting && tries < SAVING_TRIES)) break;
      status.textContent = t("game.saving");
      await sleep(SAVING_EVERY);
    }
  } catch (err) {
    status.textContent = t("game.failed", { error: err.message || String(err) });
    return;
  }
  const code = answer.body?.code;
  if (answer.status === 409 && (code === "game_in_play" || !code)) {
    status.textContent = t("game.in_play");
    status.dataset.state = "in-play";
    return;
  }
  if (answer.status === 404) {
    status.textContent = t("game.not_found");
    status.dataset.state = "not-found";
    return;
  }
  if (answer.status !== 200 || !answer.body || typeof answer.body !== "object") {
    status.textContent = t("game.failed", { error: answer.body?.message || `HTTP ${answer.status}` });
    status.dataset.state = "error";
    return;
  }
  if (fresh) history.replaceState(null, "", `${location.pathname}${location.hash}`);
  const page = new GamePage(answer.body);
  window.gamePage = page; // for the browser console and the browser tests
  page.show();
  await page.verifyAll();
}

main();
