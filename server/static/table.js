// Drawing the table from the model (state.js). Everything here reads the model and writes the
// DOM; what a click means is decided by the callbacks app.js passes in. The whole table is
// redrawn on every event (a few dozen elements), except the clocks, which tick on their own.

import { cardFace, cardText, cardWords, sortCards, SUITS, suitOf, trickLeaderIndex } from "./cards.js";
import { clockElement, clockReading, drawClock } from "./clocks.js";
import { seatName } from "./state.js";

const $ = (sel, root = document) => root.querySelector(sel);

/** A small element builder: h("p", {class: "x"}, "text", child…). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const POSITIONS = ["bottom", "left", "top", "right"]; // relative to the viewer, clockwise
const DIRECTION_WORDS = { left: "to the left", right: "to the right", across: "across", none: "no pass this hand" };
const DIRECTION_ARROWS = { left: "←", right: "→", across: "↑", none: "•" };
const PASS_SHIFT = { left: 1, right: 3, across: 2 };

/** Where seat i sits on screen: the viewer's seat (or seat 0 for a watcher) at the bottom. */
export const positionOf = (m, seat) => POSITIONS[(seat - (m.you ?? 0) + 4) % 4];

export const passTargetOf = (seat, direction) =>
  PASS_SHIFT[direction] === undefined ? null : (seat + PASS_SHIFT[direction]) % 4;

/** Whether this page may boot `seat` now (the server has the last word). */
export function canBoot(m, seat, now) {
  const s = m.seats[seat];
  if (m.status !== "playing" || m.you === null || m.you === undefined || seat === m.you) return false;
  if (!s || s.bot) return false;
  if (s.out_of_time) return true;
  const reconnect = m.options?.clocks?.reconnect ?? 30;
  return !s.connected && m.awaySince[seat] !== undefined && now >= m.awaySince[seat] + reconnect;
}

/** "1500 → 1523 (+23)" for a seat of a rated game, once the ratings are posted. */
function ratingChange(r) {
  if (!r || !r.after) return null;
  const change = Math.round(r.change ?? r.after.display - (r.before?.display ?? r.after.display));
  return h("span", { class: `rating-change ${change >= 0 ? "up" : "down"}` },
    `${r.before?.display ?? "?"} → ${r.after.display}${r.after.provisional ? "?" : ""} (${change >= 0 ? "+" : "−"}${Math.abs(change)})`);
}

export class TableView {
  /**
   * `actions`: {play(card), pass(cards), moon(choice), boot(seat), revoke(seat), hint(),
   * fillBots(level), start(), rematch(), leave(), copyLink()}.
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.selected = new Set(); // cards chosen to pass
    this.hint = null; // {cards, text} from the last hint answer
    this.showLastTrick = false;
    this.busy = false; // a play or pass is in flight: no second one
    this.dealResults = new Map();
    this.model = null;
    this.now = () => Date.now() / 1000;
    this._wire();
  }

  _wire() {
    $("#pass-btn", this.root).addEventListener("click", () => {
      if (this.selected.size === 3) this.actions.pass([...this.selected]);
    });
    $("#hint-btn", this.root).addEventListener("click", () => this.actions.hint());
    $("#last-trick-btn", this.root).addEventListener("click", () => {
      this.showLastTrick = !this.showLastTrick;
      this.render();
    });
    $("#fill-bots", this.root).addEventListener("click", () => this.actions.fillBots($("#bot-level", this.root).value));
    $("#start-btn", this.root).addEventListener("click", () => this.actions.start());
    $("#copy-link", this.root).addEventListener("click", () => this.actions.copyLink());
    $("#copy-link-small", this.root).addEventListener("click", () => this.actions.copyLink());
    $("#leave-btn", this.root).addEventListener("click", () => this.actions.leave());
    $("#moon-choice", this.root).addEventListener("click", (e) => {
      const choice = e.target.closest("button[data-choice]")?.dataset.choice;
      if (choice) this.actions.moon(choice);
    });
    // Arrow keys move between the cards that can be chosen; Enter or Space plays (buttons).
    $("#hand", this.root).addEventListener("keydown", (e) => {
      if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
      const cards = [...this.root.querySelectorAll("#hand button.card:not([disabled])")];
      if (!cards.length) return;
      const at = cards.indexOf(document.activeElement);
      let next = 0;
      if (e.key === "ArrowLeft") next = at <= 0 ? cards.length - 1 : at - 1;
      else if (e.key === "ArrowRight") next = at < 0 || at === cards.length - 1 ? 0 : at + 1;
      else if (e.key === "End") next = cards.length - 1;
      cards[next].focus();
      e.preventDefault();
    });
  }

  /** A new room or game: forget the pass selection and any hint. */
  resetTransient() {
    this.selected.clear();
    this.hint = null;
    this.busy = false;
    this.showLastTrick = false;
  }

  render(model = this.model) {
    if (!model) return;
    this.model = model;
    const m = model;
    if (!m.prompt || m.prompt.phase !== "passing") this.selected.clear();
    if (!m.prompt) this.hint = null;
    this._header(m);
    this._seats(m);
    this._center(m);
    this._hostControls(m);
    this._result(m);
    this._prompt(m);
    this._hand(m);
    this._actions(m);
    this._lastTrick(m);
    this._scores(m);
    this._log(m);
    this._fairDeal();
    this.tick();
  }

  // --- header -----------------------------------------------------------------------------

  _header(m) {
    const o = m.options || {};
    const rules = [
      `to ${o.target ?? "?"}`,
      { others_26: "moon: others +26", shooter_minus_26: "moon: shooter −26", shooter_chooses: "moon: shooter chooses" }[o.moon] || "",
      o.revokes === "allowed" ? "revokes allowed" : "",
      o.tie === "play_off" ? "ties play off" : "",
      o.pace === "correspondence" ? "correspondence pace" : "",
      o.hints ? "hints on" : "hints off",
      o.rated ? "rated" : "",
    ].filter(Boolean);
    $("#room-title", this.root).textContent = m.kind === "quick" ? "Quick game" : "Friends' table";
    const status = { open: "waiting to start", playing: m.game ? `hand ${m.game.handNumber || 1}` : "playing", finished: "game over" }[m.status] || m.status;
    const watchers = m.spectators ? ` · ${m.spectators} watching` : "";
    $("#room-status", this.root).textContent = `${status} · ${rules.join(" · ")}${watchers}`;
    const link = `${location.origin}/r/${m.room}`;
    const input = $("#invite-link", this.root);
    if (input.value !== link) input.value = link;
    $("#watching", this.root).hidden = m.you !== null && m.you !== undefined;
    // While the table fills, the invite sits with the host's controls; later, a small button.
    $("#copy-link-small", this.root).hidden = m.status === "open";
  }

  // --- seats ------------------------------------------------------------------------------

  _seats(m) {
    for (let seat = 0; seat < 4; seat++) {
      const slot = $(`.seat-slot.pos-${positionOf(m, seat)}`, this.root);
      slot.replaceChildren(this._seat(m, seat));
    }
  }

  _seat(m, seat) {
    const s = m.seats[seat];
    const g = m.game;
    if (!s) {
      return h("div", { class: "seat empty", dataset: { seat } },
        h("div", { class: "seat-name" }, h("span", { class: "name" }, "Empty seat")),
        h("div", { class: "seat-meta" }, m.status === "open" ? "waiting for a player" : ""));
    }
    const deciding = m.deciding.includes(seat) && m.status === "playing";
    const badges = [];
    if (s.bot) badges.push(h("span", { class: "badge bot", title: `played by a bot (${s.level || "bot"})` }, "BOT", s.level ? ` · ${s.level}` : ""));
    if (seat === m.you) badges.push(h("span", { class: "badge you" }, "You"));
    if (!s.bot && !s.connected) badges.push(h("span", { class: "badge away" }, "⚠ disconnected"));
    const meta = [];
    if (g) {
      meta.push(h("span", {}, "Score ", h("strong", {}, g.scores[seat])));
      if (m.status === "playing") meta.push(h("span", {}, "this hand ", h("strong", {}, g.takenPoints[seat])));
      if (m.status === "playing" && g.handNumber) meta.push(h("span", { class: "cards-left" }, `${g.cardsLeft[seat]} cards`));
    }
    let state = "";
    if (deciding) state = g?.phase === "passing" ? "choosing cards to pass…" : g?.phase === "moon_choice" ? "choosing the moon…" : "to play";
    else if (g?.phase === "passing" && g.passesDone[seat]) state = "passed ✓";
    if (m.status === "finished" && g?.winners?.includes(seat)) state = "★ winner";
    const el = h("div", {
      class: `seat${deciding ? " active" : ""}${s.bot ? " is-bot" : ""}${seat === m.you ? " is-you" : ""}${s.out_of_time ? " out" : ""}`,
      dataset: { seat },
      role: "group",
      "aria-label": `${s.name}${s.bot ? ", bot" : ""}${seat === m.you ? ", you" : ""}`,
    },
      h("div", { class: "seat-name" }, h("span", { class: "name" }, s.name), ...badges),
      meta.length ? h("div", { class: "seat-meta" }, ...meta) : null,
      h("div", { class: "seat-state", "aria-live": "polite" }, state),
    );
    const clock = clockElement();
    clock.dataset.seat = seat;
    el.append(clock);
    el.append(h("button", {
      class: "btn danger boot", type: "button", hidden: true, dataset: { seat },
      onclick: () => this.actions.boot(seat),
    }, `Boot ${s.name}`));
    if (m.options?.revokes === "allowed" && m.status === "playing" && m.you !== null && m.you !== undefined && seat !== m.you && g?.phase === "playing") {
      el.append(h("button", { class: "btn ghost small revoke", type: "button", onclick: () => this.actions.revoke(seat) }, "Call revoke"));
    }
    return el;
  }

  /** Clocks and Boot buttons: redrawn several times a second without touching the rest. */
  tick() {
    const m = this.model;
    if (!m) return;
    const now = this.now();
    for (const el of this.root.querySelectorAll(".clock[data-seat]")) {
      const seat = Number(el.dataset.seat);
      const s = m.seats[seat];
      // Correspondence tables have no running clocks: a decision may take hours.
      const live = m.status === "playing" && m.deciding.includes(seat) && s && !s.bot && m.options?.pace !== "correspondence";
      drawClock(el, live ? clockReading(s.clock, now, s.out_of_time) : { mode: "idle", seconds: 0, fraction: 0 });
    }
    for (const btn of this.root.querySelectorAll("button.boot")) {
      btn.hidden = !canBoot(m, Number(btn.dataset.seat), now);
    }
    const mine = $("#my-clock", this.root);
    if (mine) {
      const you = m.you;
      const s = you !== null && you !== undefined ? m.seats[you] : null;
      const live = m.prompt && s && m.options?.pace !== "correspondence";
      drawClock(mine, live ? clockReading(m.prompt.clock ?? s.clock, now, s.out_of_time) : { mode: "idle", seconds: 0, fraction: 0 });
    }
  }

  // --- the middle of the table ------------------------------------------------------------

  _center(m) {
    const g = m.game;
    const trickEl = $("#trick", this.root);
    const info = $("#trick-info", this.root);
    trickEl.replaceChildren();
    info.replaceChildren();
    trickEl.classList.remove("done");
    if (!g || m.status === "open") {
      info.append(m.status === "open" ? "Waiting for four players." : "");
      return;
    }
    if (g.phase === "passing") {
      const dir = g.passDirection;
      info.append(h("span", { class: "pass-dir" }, h("span", { class: "arrow", "aria-hidden": "true" }, DIRECTION_ARROWS[dir]), ` Passing ${DIRECTION_WORDS[dir]}`));
      return;
    }
    let cards = g.trick.cards;
    let leader = g.trick.leader;
    let done = false;
    // Right after a trick is taken, keep showing it (dimmed) until the next card is played.
    if (!cards.length && m.lastTrick && g.phase !== "passing") {
      cards = m.lastTrick.cards;
      leader = m.lastTrick.leader;
      done = true;
    }
    if (!cards.length) {
      info.append(m.status === "finished" ? "Game over." : g.phase === "deal" ? "Shuffling the next hand…" : "");
      return;
    }
    const best = trickLeaderIndex(cards);
    cards.forEach((card, k) => {
      const seat = (leader + k) % 4;
      const winning = k === best;
      trickEl.append(h("div", {
        class: `trick-card pos-${positionOf(m, seat)}${winning ? " winning" : ""}${k === 0 ? " led" : ""}`,
        role: "img",
        "aria-label": `${seatName(m, seat)} played the ${cardWords(card)}${k === 0 ? " (led)" : ""}${winning ? done ? ", took the trick" : ", winning so far" : ""}`,
      }, h("span", { class: "card static" }, cardFace(card)), h("span", { class: "who" }, seatName(m, seat), k === 0 ? " · led" : "")));
    });
    if (done) trickEl.classList.add("done");
    const takerSeat = (leader + best) % 4;
    const led = `${seatName(m, leader)} led ${SUITS[suitOf(cards[0])].symbol} ${SUITS[suitOf(cards[0])].name}`;
    if (done) {
      const pts = m.lastTrick.points;
      info.append(`Trick ${m.lastTrick.number}: ${led}; `, h("strong", {}, `${seatName(m, takerSeat)} took it`), pts ? ` (+${pts} point${pts === 1 ? "" : "s"})` : "");
    } else {
      info.append(`${led}; `, h("strong", {}, `${seatName(m, takerSeat)} takes it so far`));
    }
  }

  // --- controls around the hand -----------------------------------------------------------

  _hostControls(m) {
    const box = $("#host-controls", this.root);
    const open = m.status === "open";
    box.hidden = !open;
    if (!open) return;
    const full = m.seats.every(Boolean);
    $("#host-only", this.root).hidden = !m.host;
    $("#guest-wait", this.root).hidden = m.host;
    $("#start-btn", this.root).disabled = !full;
    $("#fill-bots", this.root).disabled = full;
  }

  _result(m) {
    const box = $("#result", this.root);
    const g = m.game;
    box.hidden = m.status !== "finished" || !g;
    if (box.hidden) return;
    const winners = g.winners || [];
    const order = [0, 1, 2, 3].sort((a, b) => g.scores[a] - g.scores[b]);
    box.replaceChildren(
      h("h2", {}, "Game over"),
      h("p", { class: "winners" }, winners.length > 1 ? "Winners: " : "Winner: ", h("strong", {}, winners.map((s) => seatName(m, s)).join(" and ")),
        winners.includes(m.you) ? " — that's you!" : ""),
      h("ol", { class: "final-scores" }, order.map((s) => h("li", { class: winners.includes(s) ? "won" : "" },
        h("span", {}, seatName(m, s), m.seats[s]?.bot ? h("span", { class: "badge bot" }, "BOT") : ""),
        ratingChange(m.ratings?.[s]),
        h("strong", {}, g.scores[s])))),
      h("div", { class: "row" },
        m.host ? h("button", { class: "btn primary", type: "button", id: "rematch-btn", onclick: () => this.actions.rematch() }, "Rematch") : h("p", { class: "muted" }, "The host can start a rematch."),
        h("button", { class: "btn", type: "button", onclick: () => this.actions.leave(true) }, "Back to the lobby")),
    );
  }

  _prompt(m) {
    const el = $("#prompt-text", this.root);
    const g = m.game;
    const p = m.prompt;
    const moon = $("#moon-choice", this.root);
    moon.hidden = !(p && p.phase === "moon_choice");
    let text = "";
    if (m.status === "playing" && g && m.you !== null && m.you !== undefined) {
      const target = passTargetOf(m.you, g.passDirection);
      if (p?.phase === "passing") {
        text = `Choose three cards to pass ${DIRECTION_WORDS[g.passDirection]} to ${seatName(m, target)} (${this.selected.size} of 3 chosen).`;
      } else if (p?.phase === "playing") {
        text = g.trick.cards.length ? `Your turn: follow ${SUITS[suitOf(g.trick.cards[0])].name} if you can.` : "Your turn: lead a card.";
      } else if (p?.phase === "moon_choice") {
        text = "You shot the moon! Choose how it scores:";
      } else if (g.phase === "passing" && g.passed) {
        text = `You passed ${g.passed.map(cardText).join(" ")} to ${seatName(m, target)}; waiting for the others…`;
      } else if (g.phase === "playing" && g.turn !== null) {
        text = `Waiting for ${seatName(m, g.turn)}…`;
        if (g.received && g.tricks.length === 0) text = `You received ${g.received.map(cardText).join(" ")}. ${text}`;
      } else if (g.phase === "deal") {
        text = "Next hand coming up…";
      }
    }
    el.textContent = text;
  }

  _hand(m) {
    const handEl = $("#hand", this.root);
    const g = m.game;
    const seated = m.you !== null && m.you !== undefined;
    handEl.hidden = !seated || !g || m.status === "open";
    if (handEl.hidden) {
      handEl.replaceChildren();
      return;
    }
    const focused = handEl.contains(document.activeElement) ? document.activeElement.dataset.card : null;
    const p = m.prompt;
    const legal = new Set(p?.phase === "playing" ? p.legal : []);
    const hinted = new Set(this.hint?.cards || []);
    const received = new Set(g.tricks.length === 0 && g.received ? g.received : []);
    const buttons = sortCards(g.hand).map((card) => {
      let cls = "card";
      let disabled = true;
      let state = "";
      if (p?.phase === "playing") {
        disabled = !legal.has(card) || this.busy;
        cls += legal.has(card) ? " legal" : " illegal";
        state = legal.has(card) ? "" : ", cannot be played now";
      } else if (p?.phase === "passing") {
        disabled = this.busy;
        if (this.selected.has(card)) cls += " selected";
      } else {
        cls += " waiting";
      }
      if (hinted.has(card)) cls += " hinted";
      if (received.has(card)) cls += " received";
      const btn = h("button", {
        class: cls,
        type: "button",
        dataset: { card },
        disabled,
        "aria-pressed": p?.phase === "passing" ? String(this.selected.has(card)) : null,
        "aria-label": `${cardWords(card)}${state}${received.has(card) ? ", received in the pass" : ""}${hinted.has(card) ? ", suggested" : ""}`,
        onclick: () => this._cardClicked(card),
      }, cardFace(card));
      return btn;
    });
    handEl.replaceChildren(...buttons);
    handEl.setAttribute("aria-label", `Your hand, ${g.hand.length} cards`);
    // Keep keyboard focus on the same card across redraws; when it becomes this seat's turn
    // and nothing else has focus, put it on the first playable card.
    let target = focused ? handEl.querySelector(`button[data-card="${focused}"]:not([disabled])`) : null;
    const idle = document.activeElement === document.body || document.activeElement === null;
    if (!target && p && (focused || idle)) target = handEl.querySelector("button.card:not([disabled])");
    if (target && target !== document.activeElement) target.focus({ preventScroll: true });
  }

  _cardClicked(card) {
    const p = this.model?.prompt;
    if (!p || this.busy) return;
    if (p.phase === "playing") {
      if (p.legal.includes(card)) this.actions.play(card);
      return;
    }
    if (p.phase === "passing") {
      if (this.selected.has(card)) this.selected.delete(card);
      else if (this.selected.size < 3) this.selected.add(card);
      this.render();
    }
  }

  _actions(m) {
    const p = m.prompt;
    const passBtn = $("#pass-btn", this.root);
    passBtn.hidden = p?.phase !== "passing";
    if (!passBtn.hidden) {
      const g = m.game;
      passBtn.textContent = `Pass ${this.selected.size === 3 ? "these 3 cards" : `3 cards (${this.selected.size} chosen)`} ${DIRECTION_ARROWS[g.passDirection]}`;
      passBtn.disabled = this.selected.size !== 3 || this.busy;
    }
    const hintBtn = $("#hint-btn", this.root);
    hintBtn.hidden = !(m.options?.hints && p && m.you !== null && m.you !== undefined);
    const hintBox = $("#hint-box", this.root);
    hintBox.hidden = !this.hint || !p;
    if (!hintBox.hidden) {
      const minis = (cards) => h("span", { class: "hint-cards", "aria-label": cards.map(cardWords).join(", ") },
        cards.map((c) => h("span", { class: "card mini static" }, cardFace(c, { small: true }))));
      const pts = (x) => `${x.toFixed(1)} point${x === 1 ? "" : "s"}`;
      const { cards, text, expected, alternatives = [] } = this.hint;
      // Through h(): it drops null children, where replaceChildren would print "null".
      hintBox.replaceChildren(...h("div", {},
        h("p", {}, h("strong", {}, "Hint: "), cards?.length ? minis(cards) : null, " ", text),
        expected !== null && expected !== undefined ? h("p", { class: "small" }, `Expected this hand: about ${pts(expected)}.`) : null,
        alternatives.length ? h("p", { class: "small" }, "Instead: ",
          alternatives.map((a, i) => h("span", { class: "alt" }, i ? " · " : "", minis(a.cards), ` ${pts(a.expected)}`))) : null,
      ).childNodes);
    }
    const lastBtn = $("#last-trick-btn", this.root);
    lastBtn.disabled = !m.lastTrick;
    lastBtn.setAttribute("aria-expanded", String(this.showLastTrick && Boolean(m.lastTrick)));
    lastBtn.textContent = this.showLastTrick ? "Hide last trick" : "Last trick";
    $("#hand-actions", this.root).hidden = m.status !== "playing";
  }

  _lastTrick(m) {
    const box = $("#last-trick", this.root);
    const t = m.lastTrick;
    box.hidden = !(this.showLastTrick && t);
    if (box.hidden) return;
    box.replaceChildren(
      h("h3", {}, `Trick ${t.number}`),
      h("ol", { class: "trick-list" }, t.cards.map((card, k) => {
        const seat = (t.leader + k) % 4;
        return h("li", { class: seat === t.winner ? "won" : "" }, h("span", { class: "who" }, seatName(m, seat), k === 0 ? " (led)" : ""),
          h("span", { class: "card mini static" }, cardFace(card, { small: true })));
      })),
      h("p", {}, h("strong", {}, `${seatName(m, t.winner)} took it`), t.points ? ` (+${t.points})` : " (no points)"),
    );
  }

  // --- side panel -------------------------------------------------------------------------

  _scores(m) {
    const table = $("#scores", this.root);
    const g = m.game;
    const seats = [0, 1, 2, 3];
    const head = h("tr", {}, h("th", { scope: "col" }, "Hand"), seats.map((s) => h("th", { scope: "col", class: s === m.you ? "you" : "", title: seatName(m, s) }, h("span", { class: "th-name" }, seatName(m, s)), m.seats[s]?.bot ? h("span", { class: "badge bot" }, "BOT") : "")));
    const rows = [];
    if (g) {
      g.history.forEach((pts, k) => rows.push(h("tr", {}, h("th", { scope: "row" }, k + 1), pts.map((p) => h("td", {}, p)))));
      if (m.status === "playing" && g.handNumber > g.history.length) {
        rows.push(h("tr", { class: "current" }, h("th", { scope: "row" }, "now"), g.takenPoints.map((p) => h("td", {}, p))));
      }
      const low = Math.min(...g.scores);
      rows.push(h("tr", { class: "total" }, h("th", { scope: "row" }, "Total"), g.scores.map((p) => h("td", { class: p === low ? "lowest" : "" }, p))));
    }
    table.replaceChildren(h("thead", {}, head), h("tbody", {}, rows));
    $("#scores-target", this.root).textContent = m.options?.target ? `game to ${m.options.target}` : "";
  }

  _log(m) {
    const box = $("#log", this.root);
    const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.hand));
    const items = [];
    const trickLine = (leader, cards, winner, k) =>
      h("li", { value: k + 1 }, `${seatName(m, leader)} led: `,
        cards.map((c, i) => h("span", { class: `log-card suit-${suitOf(c)}`, title: `${seatName(m, (leader + i) % 4)}` }, cardText(c), " ")),
        winner !== null && winner !== undefined ? ["→ ", h("strong", {}, seatName(m, winner))] : "");
    const notesFor = (hand) => m.notes.filter((n) => n.hand === hand).map((n) => h("li", { class: `note ${n.kind}` }, n.text));
    for (const entry of m.handLog) {
      const tricks = (entry.tricks || []).map((t, k) => trickLine(t.leader, t.cards, t.winner, k));
      const pts = entry.points.map((p, s) => `${seatName(m, s)} ${p}`).join(", ");
      const d = h("details", { dataset: { hand: entry.hand } },
        h("summary", {}, `Hand ${entry.hand} (pass ${entry.pass_direction}): ${pts}`),
        h("ol", { class: "log-tricks" }, tricks), h("ul", { class: "log-notes" }, notesFor(entry.hand)));
      if (open.has(String(entry.hand))) d.open = true;
      items.push(d);
    }
    const g = m.game;
    if (g && m.status === "playing" && g.handNumber > m.handLog.length) {
      const tricks = g.tricks.map((t, k) => trickLine(t.leader, t.cards, t.winner, k));
      const d = h("details", { dataset: { hand: "current" }, open: true },
        h("summary", {}, `Hand ${g.handNumber} (now, pass ${g.passDirection ?? "?"})`),
        tricks.length ? h("ol", { class: "log-tricks" }, tricks) : h("p", { class: "muted" }, "No tricks yet."),
        h("ul", { class: "log-notes" }, notesFor(g.handNumber)));
      items.push(d);
    }
    const early = m.notes.filter((n) => n.hand === 0).map((n) => h("p", { class: `note ${n.kind}` }, n.text));
    box.replaceChildren(...items, ...early);
    if (!items.length && !early.length) box.append(h("p", { class: "muted" }, "Nothing played yet."));
  }

  /** Fair-deal results (hand -> {ok, problems, checked}) from dealcheck.js. */
  setDealResults(results) {
    this.dealResults = results;
    this._fairDeal();
  }

  _fairDeal() {
    const list = $("#deal-list", this.root);
    const mark = $("#deal-status", this.root);
    const warning = $("#deal-warning", this.root);
    const results = [...this.dealResults.entries()].sort((a, b) => a[0] - b[0]);
    list.replaceChildren(...results.map(([hand, r]) => h("li", { class: r.ok ? "ok" : "bad" },
      r.ok ? `✔ Hand ${hand}: deal verified${r.checked === "own" ? " (with your secret)" : " (record consistent)"}` : `✖ Hand ${hand}: deal NOT verified`,
      r.ok ? null : h("ul", {}, r.problems.map((p) => h("li", {}, p))))));
    if (!results.length) list.append(h("li", { class: "muted" }, "Each hand's deal is checked here after the hand."));
    const last = results[results.length - 1];
    mark.replaceChildren();
    mark.className = "deal-status";
    if (last) {
      const [hand, r] = last;
      mark.classList.add(r.ok ? "verified" : "failed");
      mark.append(r.ok ? `✔ Deal verified (hand ${hand})` : `✖ Deal NOT verified (hand ${hand})`);
    }
    const bad = results.filter(([, r]) => !r.ok);
    warning.hidden = !bad.length;
    if (bad.length) {
      warning.replaceChildren(h("strong", {}, "Warning: a deal did not verify. "),
        `Hand ${bad.map(([k]) => k).join(", ")}: ${bad[bad.length - 1][1].problems[0]}. `,
        "The server may not have dealt fairly; see the Fair deal panel for details.");
    }
  }
}
