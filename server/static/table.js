// Drawing the table from the model (state.js). Everything here reads the model and writes the
// DOM; what a click means is decided by the callbacks app.js passes in. Seats and the hand keep
// their elements and change only what differs (no press is lost to a redraw); the trick in the
// middle is a sequence played by stage.js; the clocks tick on their own.

import { cardFace, cardText, sortCards, suitOf, trickLeaderIndex } from "./cards.js";
import { clockElement, clockReading, drawClock } from "./clocks.js";
import { h, setText } from "./dom.js";
import { HandView } from "./hand.js";
import { cardName, suitName, t } from "./i18n.js";
import { TrickStage } from "./stage.js";
import { seatName } from "./state.js";

export { h };

const $ = (sel, root = document) => root.querySelector(sel);

const POSITIONS = ["bottom", "left", "top", "right"]; // relative to the viewer, clockwise
const DIRECTION_ARROWS = { left: "←", right: "→", across: "↑", none: "•" };
const PASS_SHIFT = { left: 1, right: 3, across: 2 };
const FAN_MAX = 13;

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

/** Whether a running-out clock can cost this seat its place (RULES: alone with bots, only if the host said so). */
export function clockBoots(m, seat) {
  if (m.options?.pace === "correspondence") return false;
  if (m.options?.solo_clock) return true;
  return m.seats.some((s, i) => i !== seat && s && !s.bot);
}

/** "1500 → 1523 (+23)" for a seat of a rated game, once the ratings are posted. */
function ratingChange(r) {
  if (!r || !r.after) return null;
  const change = Math.round(r.change ?? r.after.display - (r.before?.display ?? r.after.display));
  return h("span", { class: `rating-change ${change >= 0 ? "up" : "down"}` },
    `${r.before?.display ?? "?"} → ${r.after.display} (${change >= 0 ? "+" : "−"}${Math.abs(change)})`);
}

const seated = (m) => m.you !== null && m.you !== undefined;

export class TableView {
  /**
   * `actions`: {play(card), pass(cards), moon(choice), boot(seat), revoke(seat), hint(),
   * fillBots(level), start(), rematch(), leave(), copyLink(), announce(text)}.
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.selected = new Set(); // cards chosen to pass
    this.hint = null; // {cards, text} from the last hint answer
    this.showLastTrick = false;
    this.busy = false; // a play or pass is in flight: no second one
    this.dealResults = new Map();
    this.summary = null; // the last hand's result, shown until the next deal
    this.summaryDismissed = false;
    this.model = null;
    this.now = () => Date.now() / 1000;
    this.seatEls = [0, 1, 2, 3].map((seat) => this._seatElement(seat));
    this.hand = new HandView($("#hand", root), (card) => this._cardClicked(card));
    this.stage = new TrickStage({
      trickEl: $("#trick", root),
      infoEl: $("#trick-info", root),
      positionOf: (seat) => positionOf(this.model, seat),
      nameOf: (seat) => seatName(this.model, seat),
      originOf: (seat, card) => (seat === this.model?.you ? this.hand.rectOf(card) : null) || this._fanRect(seat),
      takerRect: (seat) => this._fanRect(seat),
      announce: (text) => this.actions.announce(text),
      emptyInfo: (el) => this._emptyInfo(el),
      idle: () => this.render(),
    });
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
    $("#felt", this.root).addEventListener("click", (e) => {
      if (e.target.closest("[data-close]")) {
        const which = e.target.closest("[data-close]").dataset.close;
        if (which === "summary") this.summaryDismissed = true;
        if (which === "hint") this.hint = null;
        if (which === "last") this.showLastTrick = false;
        this.render();
      }
    });
  }

  /** Before the model takes an event: the parts of the picture that are sequences. */
  onEvent(ev, m) {
    switch (ev.event) {
      case "card_played":
      case "trick_won":
        this.stage.push(ev);
        break;
      case "hand_over":
        this.summary = { ...ev, names: [0, 1, 2, 3].map((s) => seatName(m, s)) };
        this.summaryDismissed = false;
        this.showLastTrick = false;
        break;
      case "dealt":
      case "game_started":
        this.summary = null; // it stays until the next deal
        break;
      default:
    }
  }

  /** A new room or game, or a fresh view: forget the pass selection, hints and the sequence. */
  resetTransient(m = null) {
    this.selected.clear();
    this.hint = null;
    this.busy = false;
    this.showLastTrick = false;
    this.model = m || this.model;
    this.stage.reset(m?.game?.trick);
  }

  render(model = this.model) {
    if (!model) return;
    this.model = model;
    const m = model;
    if (!m.prompt || m.prompt.phase !== "passing") this.selected.clear();
    if (!m.prompt) this.hint = null;
    this.root.dataset.phase = this.phase(m);
    this._header(m);
    this._seats(m);
    if (!this.stage.busy) this._syncStage(m);
    else if (m.prompt?.phase === "playing" && this.stage.queue.some((op) => op.event === "card_played")) this.stage.hurry();
    this._hostControls(m);
    this._result(m);
    this._summary(m);
    this._prompt(m);
    this._hand(m);
    this._actions(m);
    this._lastTrick(m);
    this._scores(m);
    this._log(m);
    this._fairDeal();
    this.tick();
  }

  /** One word for what the table is doing: open, pass, play, wait, summary, over, watch. */
  phase(m) {
    if (m.status === "open") return "open";
    if (m.status === "finished") return "over";
    if (this.summary && !this.summaryDismissed) return "summary";
    if (m.prompt) return m.prompt.phase === "passing" ? "pass" : m.prompt.phase === "moon_choice" ? "moon" : "play";
    return seated(m) ? "wait" : "watch";
  }

  // --- header -----------------------------------------------------------------------------

  _header(m) {
    const o = m.options || {};
    const rules = [
      t("rules.to", { n: o.target ?? "?" }),
      o.moon ? t(`rules.moon.${o.moon}`) : "",
      o.revokes === "allowed" ? t("rules.revokes") : "",
      o.tie === "play_off" ? t("rules.playoff") : "",
      o.pace === "correspondence" ? t("rules.correspondence") : "",
      o.hints ? t("rules.hints_on") : t("rules.hints_off"),
      o.rated ? t("rules.rated") : "",
    ].filter(Boolean);
    setText($("#room-title", this.root), m.kind === "quick" ? t("table.quick") : t("table.friends"));
    const status = m.status === "open" ? t("status.open") : m.status === "finished" ? t("status.over") : t("status.hand", { n: m.game?.handNumber || 1 });
    const watchers = m.spectators ? ` · ${t("status.watching", { n: m.spectators })}` : "";
    setText($("#room-status", this.root), `${status} · ${rules.join(" · ")}${watchers}`);
    const link = `${location.origin}/r/${m.room}`;
    const input = $("#invite-link", this.root);
    if (input.value !== link) input.value = link;
    $("#watching", this.root).hidden = seated(m);
    $("#copy-link-small", this.root).hidden = m.status === "open";
  }

  // --- seats ------------------------------------------------------------------------------

  _seatElement(seat) {
    const el = h("div", { class: "seat", dataset: { seat }, role: "group" },
      h("div", { class: "seat-name" }, h("span", { class: "name" }), h("span", { class: "badges" })),
      h("div", { class: "fan", "aria-hidden": "true" }),
      h("div", { class: "seat-meta" }),
      h("div", { class: "seat-state" }));
    const clock = clockElement();
    clock.dataset.seat = seat;
    el.append(clock);
    el.append(h("button", { class: "btn danger small boot", type: "button", hidden: true, dataset: { seat }, onclick: () => this.actions.boot(seat) }));
    el.append(h("button", { class: "btn ghost small revoke", type: "button", hidden: true, onclick: () => this.actions.revoke(seat) }));
    return el;
  }

  _seats(m) {
    for (let seat = 0; seat < 4; seat++) {
      const slot = $(`.seat-slot.pos-${positionOf(m, seat)}`, this.root);
      const el = this.seatEls[seat];
      if (el.parentNode !== slot) slot.replaceChildren(el);
      this._seat(m, seat, el);
    }
  }

  _seat(m, seat, el) {
    const s = m.seats[seat];
    const g = m.game;
    const playing = m.status === "playing";
    const deciding = playing && m.deciding.includes(seat);
    el.className = `seat${s ? "" : " empty"}${deciding ? " active" : ""}${s?.bot ? " is-bot" : ""}${seat === m.you ? " is-you" : ""}${s?.out_of_time ? " out" : ""}`;
    setText($(".name", el), s ? s.name : t("seat.empty"));
    const badges = [];
    if (s?.bot) badges.push(h("span", { class: "badge bot", title: t("seat.bot_title", { level: s.level || "bot" }) }, t("seat.bot")));
    if (s && seat === m.you) badges.push(h("span", { class: "badge you" }, t("seat.you")));
    if (s && !s.bot && !s.connected) badges.push(h("span", { class: "badge away", title: t("seat.away") }, "⚠"));
    const badgeBox = $(".badges", el);
    const badgeKey = badges.map((b) => b.textContent + b.className).join("|");
    if (badgeBox.dataset.key !== badgeKey) {
      badgeBox.replaceChildren(...badges);
      badgeBox.dataset.key = badgeKey;
    }
    // Opponents hold their real number of cards, face down.
    const count = playing && g?.handNumber && seat !== m.you ? Math.min(FAN_MAX, g.cardsLeft[seat]) : 0;
    const fan = $(".fan", el);
    while (fan.children.length > count) fan.lastChild.remove();
    while (fan.children.length < count) fan.append(h("span", { class: "back", style: `--i: ${fan.children.length}` }));
    fan.style.setProperty("--n", String(count));
    fan.hidden = count === 0;
    const meta = g && s ? `${t("seat.score", { n: g.scores[seat] })}${playing ? ` · ${t("seat.this_hand", { n: g.takenPoints[seat] })}` : ""}` : m.status === "open" ? t("seat.waiting") : "";
    setText($(".seat-meta", el), meta);
    let state = "";
    if (deciding) state = g?.phase === "passing" ? t("seat.choosing_pass") : g?.phase === "moon_choice" ? t("seat.choosing_moon") : t("seat.to_play");
    else if (playing && g?.phase === "passing" && g.passesDone[seat]) state = t("seat.passed");
    if (m.status === "finished" && g?.winners?.includes(seat)) state = t("seat.winner");
    setText($(".seat-state", el), state);
    const label = s
      ? [s.name, s.bot ? t("seat.bot_word") : "", seat === m.you ? t("seat.you_word") : "", count ? t("seat.cards", { n: g.cardsLeft[seat] }) : "", g ? t("seat.score", { n: g.scores[seat] }) : ""].filter(Boolean).join(", ")
      : t("seat.empty");
    if (el.getAttribute("aria-label") !== label) el.setAttribute("aria-label", label);
    const boot = $("button.boot", el);
    setText(boot, t("seat.boot", { name: s?.name ?? "" }));
    const revoke = $("button.revoke", el);
    revoke.hidden = !(m.options?.revokes === "allowed" && playing && seated(m) && seat !== m.you && g?.phase === "playing");
    setText(revoke, t("seat.revoke"));
  }

  _fanRect(seat) {
    const el = this.seatEls[seat];
    if (!el?.isConnected) return null;
    const fan = $(".fan", el);
    return (fan && !fan.hidden ? fan : el).getBoundingClientRect();
  }

  /** Clocks and Boot buttons: redrawn several times a second without touching the rest. */
  tick() {
    const m = this.model;
    if (!m) return;
    const now = this.now();
    for (const el of this.root.querySelectorAll(".clock[data-seat]")) {
      const seat = Number(el.dataset.seat);
      const s = m.seats[seat];
      // No running clock where it cannot cost anyone their seat: correspondence tables, and a
      // player alone with bots unless the host turned the clock on.
      const live = m.status === "playing" && m.deciding.includes(seat) && s && !s.bot && clockBoots(m, seat);
      drawClock(el, live ? clockReading(s.clock, now, s.out_of_time) : { mode: "idle", seconds: 0, fraction: 0 });
    }
    for (const btn of this.root.querySelectorAll("button.boot")) {
      btn.hidden = !canBoot(m, Number(btn.dataset.seat), now);
    }
    const mine = $("#my-clock", this.root);
    if (mine) {
      const s = seated(m) ? m.seats[m.you] : null;
      const live = m.prompt && s && clockBoots(m, m.you);
      drawClock(mine, live ? clockReading(m.prompt.clock ?? s.clock, now, s.out_of_time) : { mode: "idle", seconds: 0, fraction: 0 });
    }
  }

  // --- the middle of the table ------------------------------------------------------------

  /** With no sequence running, the stage shows what the model says (after a view or a gap). */
  _syncStage(m) {
    const g = m.game;
    const want = g && m.status === "playing" ? g.trick.cards : [];
    const shown = this.stage.shown;
    const same = shown.winner === null && shown.cards.length === want.length && shown.cards.every((c, i) => c === want[i]);
    // A finished trick shown until the next card, but never into the next hand.
    const heldLast = shown.winner !== null && !want.length && g?.phase === "playing" && shown.number === g.tricks.length;
    if (!same && !heldLast) this.stage.reset(g?.trick);
    else if (!shown.cards.length) this._emptyInfo($("#trick-info", this.root));
  }

  _emptyInfo(info) {
    const m = this.model;
    const g = m?.game;
    info.replaceChildren();
    if (!m) return;
    if (m.status === "open") info.append(t("center.waiting_players"));
    else if (m.status === "finished") info.append(t("center.game_over"));
    else if (g?.phase === "passing") {
      const dir = g.passDirection;
      info.append(h("span", { class: "pass-dir" }, h("span", { class: "arrow", "aria-hidden": "true" }, DIRECTION_ARROWS[dir]), " ", t(`pass.${dir}`)));
    } else if (g?.phase === "deal") info.append(t("center.shuffling"));
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
    if (box.hidden) {
      delete box.dataset.key;
      return;
    }
    const key = JSON.stringify([g.scores, g.winners, m.ratings, m.host]);
    if (box.dataset.key === key) return; // unchanged: keep focus and selection
    box.dataset.key = key;
    const winners = g.winners || [];
    const order = [0, 1, 2, 3].sort((a, b) => g.scores[a] - g.scores[b]);
    box.replaceChildren(
      h("h2", {}, t("result.title")),
      h("p", { class: "winners" }, t(winners.length > 1 ? "result.winners" : "result.winner", { names: winners.map((s) => seatName(m, s)).join(" · ") }),
        winners.includes(m.you) ? ` — ${t("result.you")}` : ""),
      h("ol", { class: "final-scores" }, order.map((s) => h("li", { class: winners.includes(s) ? "won" : "" },
        h("span", {}, seatName(m, s), m.seats[s]?.bot ? h("span", { class: "badge bot" }, t("seat.bot")) : ""),
        ratingChange(m.ratings?.[s]),
        h("strong", {}, g.scores[s])))),
      h("div", { class: "row" },
        m.host ? h("button", { class: "btn primary", type: "button", id: "rematch-btn", onclick: () => this.actions.rematch() }, t("result.rematch")) : h("p", { class: "muted" }, t("result.host_rematch")),
        h("button", { class: "btn", type: "button", onclick: () => this.actions.leave(true) }, t("result.lobby"))),
    );
  }

  /** The end of a hand: points taken, a moon banner, the running totals. Stays until the next deal. */
  _summary(m) {
    const box = $("#hand-summary", this.root);
    const s = this.summary;
    box.hidden = !s || this.summaryDismissed || m.status === "finished" || this.stage.busy;
    if (box.hidden) return;
    const key = JSON.stringify([s.hand, s.points, s.scores]);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    const low = Math.min(...s.scores);
    box.replaceChildren(...h("div", {},
      h("h2", {}, t("summary.title", { n: s.hand })),
      s.shooter !== null && s.shooter !== undefined ? h("p", { class: "moon-banner" }, h("span", { "aria-hidden": "true" }, "☾ "), t("summary.moon", { name: s.names[s.shooter] })) : null,
      h("table", { class: "summary-table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("summary.player")), h("th", { scope: "col" }, t("summary.hand")), h("th", { scope: "col" }, t("summary.total")))),
        h("tbody", {}, [0, 1, 2, 3].map((seat) => h("tr", { class: seat === m.you ? "you" : "" },
          h("th", { scope: "row" }, s.names[seat]),
          h("td", {}, s.points[seat] ? `+${s.points[seat]}` : "0"),
          h("td", { class: s.scores[seat] === low ? "lowest" : "" }, s.scores[seat]))))),
      h("p", { class: "muted small" }, t("summary.next")),
      h("button", { class: "close", type: "button", "aria-label": t("common.close"), dataset: { close: "summary" } }, "×"),
    ).childNodes);
  }

  _prompt(m) {
    const el = $("#prompt-text", this.root);
    const g = m.game;
    const p = m.prompt;
    $("#moon-choice", this.root).hidden = !(p && p.phase === "moon_choice");
    let text = "";
    if (m.status === "playing" && g && seated(m)) {
      const target = passTargetOf(m.you, g.passDirection);
      if (p?.phase === "passing") {
        text = t("prompt.pass", { name: seatName(m, target), n: this.selected.size, dir: t(`dir.${g.passDirection}`) });
      } else if (p?.phase === "playing") {
        text = g.trick.cards.length ? t("prompt.follow", { suit: suitName(suitOf(g.trick.cards[0])) }) : t("prompt.lead");
      } else if (p?.phase === "moon_choice") {
        text = t("prompt.moon");
      } else if (g.phase === "passing" && g.passed) {
        text = t("prompt.passed", { cards: g.passed.map(cardText).join(" "), name: seatName(m, target) });
      } else if (g.phase === "playing" && g.turn !== null) {
        text = t("prompt.waiting", { name: seatName(m, g.turn) });
        if (g.received && g.tricks.length === 0) text = `${t("prompt.received", { cards: g.received.map(cardText).join(" ") })} ${text}`;
      } else if (g.phase === "deal") {
        text = t("prompt.next_hand");
      }
    }
    setText(el, text);
  }

  _hand(m) {
    const handEl = $("#hand", this.root);
    const g = m.game;
    handEl.hidden = !seated(m) || !g || m.status === "open";
    if (handEl.hidden) {
      this.hand.clear();
      return;
    }
    const p = m.prompt;
    const legal = new Set(p?.phase === "playing" ? p.legal : []);
    const hinted = new Set(this.hint?.cards || []);
    const received = new Set(g.tricks.length === 0 && g.received ? g.received : []);
    this.hand.update(sortCards(g.hand), (card) => {
      let cls = "";
      let disabled = true;
      let state = t("card.waiting");
      let pressed = null;
      if (p?.phase === "playing") {
        const ok = legal.has(card);
        disabled = !ok || this.busy;
        cls = ok ? "legal" : "illegal";
        state = ok ? t("card.playable") : t("card.not_playable");
      } else if (p?.phase === "passing") {
        disabled = this.busy;
        pressed = String(this.selected.has(card));
        if (this.selected.has(card)) cls = "selected";
        state = this.selected.has(card) ? t("card.chosen") : t("card.can_choose");
      } else {
        cls = "waiting";
      }
      if (hinted.has(card)) cls += " hinted";
      if (received.has(card)) cls += " received";
      const extra = [received.has(card) ? t("card.received") : "", hinted.has(card) ? t("card.suggested") : ""].filter(Boolean);
      return { cls, disabled, pressed, label: [cardName(card), state, ...extra].join(", ") };
    }, received);
    handEl.setAttribute("aria-label", t("hand.label", { n: g.hand.length }));
    // When it becomes this seat's turn and nothing else has focus, put it on the first playable card.
    const idle = document.activeElement === document.body || document.activeElement === null;
    if (p && idle) handEl.querySelector("button.card:not([disabled])")?.focus({ preventScroll: true });
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
      setText(passBtn, `${this.selected.size === 3 ? t("pass.button_ready") : t("pass.button", { n: this.selected.size })} ${DIRECTION_ARROWS[m.game.passDirection]}`);
      passBtn.disabled = this.selected.size !== 3 || this.busy;
    }
    const hintBtn = $("#hint-btn", this.root);
    hintBtn.hidden = !(m.options?.hints && p && seated(m));
    setText(hintBtn, t("hint.button"));
    const hintBox = $("#hint-box", this.root);
    hintBox.hidden = !this.hint || !p;
    if (!hintBox.hidden && hintBox.dataset.key !== JSON.stringify(this.hint)) {
      hintBox.dataset.key = JSON.stringify(this.hint);
      const minis = (cards) => h("span", { class: "hint-cards", role: "img", "aria-label": cards.map(cardName).join(", ") },
        cards.map((c) => h("span", { class: "card mini static" }, cardFace(c, { small: true }))));
      const pts = (x) => t("hint.points", { n: x.toFixed(1) });
      const { cards, text, expected, alternatives = [] } = this.hint;
      // Through h(): it drops null children, where replaceChildren would print "null".
      hintBox.replaceChildren(...h("div", {},
        // The server writes hints in English: marked so, for screen readers and right-to-left pages.
        h("p", {}, h("strong", {}, t("hint.title")), " ", cards?.length ? minis(cards) : null, " ", h("span", { lang: "en", dir: "ltr" }, text)),
        expected !== null && expected !== undefined ? h("p", { class: "small" }, t("hint.expected", { pts: pts(expected) })) : null,
        alternatives.length ? h("p", { class: "small" }, t("hint.instead"), " ",
          alternatives.map((a, i) => h("span", { class: "alt" }, i ? " · " : "", minis(a.cards), ` ${pts(a.expected)}`))) : null,
        h("button", { class: "close", type: "button", "aria-label": t("common.close"), dataset: { close: "hint" } }, "×"),
      ).childNodes);
    }
    const lastBtn = $("#last-trick-btn", this.root);
    lastBtn.disabled = !m.lastTrick;
    lastBtn.setAttribute("aria-expanded", String(this.showLastTrick && Boolean(m.lastTrick)));
    setText(lastBtn, this.showLastTrick ? t("last.hide") : t("last.show"));
    $("#hand-actions", this.root).hidden = m.status !== "playing";
  }

  _lastTrick(m) {
    const box = $("#last-trick", this.root);
    const tr = m.lastTrick;
    box.hidden = !(this.showLastTrick && tr);
    if (box.hidden) return;
    box.replaceChildren(
      h("h3", {}, t("last.title", { n: tr.number })),
      h("ol", { class: "trick-list" }, tr.cards.map((card, k) => {
        const seat = (tr.leader + k) % 4;
        return h("li", { class: seat === tr.winner ? "won" : "" }, h("span", { class: "who" }, seatName(m, seat), k === 0 ? ` (${t("trick.led")})` : ""),
          h("span", { class: "card mini static", role: "img", "aria-label": cardName(card) }, cardFace(card, { small: true })));
      })),
      h("p", {}, h("strong", {}, t("trick.took", { name: seatName(m, tr.winner) })), tr.points ? ` (+${tr.points})` : ` (${t("last.no_points")})`),
      h("button", { class: "close", type: "button", "aria-label": t("common.close"), dataset: { close: "last" } }, "×"),
    );
  }

  // --- side panel -------------------------------------------------------------------------

  _scores(m) {
    const table = $("#scores", this.root);
    const g = m.game;
    const seats = [0, 1, 2, 3];
    const key = JSON.stringify([m.seats.map((s) => s && [s.name, s.bot]), g?.history, g?.takenPoints, g?.scores, m.status, m.you]);
    if (table.dataset.key === key) return;
    table.dataset.key = key;
    const head = h("tr", {}, h("th", { scope: "col" }, t("scores.hand")), seats.map((s) => h("th", { scope: "col", class: s === m.you ? "you" : "", title: seatName(m, s) },
      h("span", { class: "th-name" }, seatName(m, s)), m.seats[s]?.bot ? h("span", { class: "badge bot" }, t("seat.bot")) : "")));
    const rows = [];
    if (g) {
      g.history.forEach((pts, k) => rows.push(h("tr", {}, h("th", { scope: "row" }, k + 1), pts.map((p) => h("td", {}, p)))));
      if (m.status === "playing" && g.handNumber > g.history.length) {
        rows.push(h("tr", { class: "current" }, h("th", { scope: "row" }, t("scores.now")), g.takenPoints.map((p) => h("td", {}, p))));
      }
      const low = Math.min(...g.scores);
      rows.push(h("tr", { class: "total" }, h("th", { scope: "row" }, t("scores.total")), g.scores.map((p) => h("td", { class: p === low ? "lowest" : "" }, p))));
    }
    table.replaceChildren(h("thead", {}, head), h("tbody", {}, rows));
    setText($("#scores-target", this.root), m.options?.target ? t("scores.target", { n: m.options.target }) : "");
  }

  _log(m) {
    const box = $("#log", this.root);
    const g = m.game;
    const key = JSON.stringify([m.handLog.length, g?.tricks.length, g?.handNumber, m.notes.length, m.seats.map((s) => s?.name)]);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.hand));
    const items = [];
    const trickLine = (leader, cards, winner, k) =>
      h("li", { value: k + 1 }, `${t("log.led", { name: seatName(m, leader) })} `,
        cards.map((c, i) => h("span", { class: `log-card suit-${suitOf(c)}`, title: seatName(m, (leader + i) % 4) }, cardText(c), " ")),
        winner !== null && winner !== undefined ? ["→ ", h("strong", {}, seatName(m, winner))] : "");
    const notesFor = (hand) => m.notes.filter((n) => n.hand === hand).map((n) => h("li", { class: `note ${n.kind}` }, n.text));
    for (const entry of m.handLog) {
      const tricks = (entry.tricks || []).map((tr, k) => {
        const [leader, ...cards] = tr;
        const best = trickLeaderIndex(cards);
        return trickLine(leader, cards, cards.length === 4 ? (leader + best) % 4 : null, k);
      });
      const pts = entry.points.map((p, s) => `${seatName(m, s)} ${p}`).join(", ");
      const d = h("details", { dataset: { hand: entry.hand } },
        h("summary", {}, `${t("log.hand", { n: entry.hand, dir: t(`dir.${entry.pass_direction}`) })}: ${pts}`),
        h("ol", { class: "log-tricks" }, tricks), h("ul", { class: "log-notes" }, notesFor(entry.hand)));
      if (open.has(String(entry.hand))) d.open = true;
      items.push(d);
    }
    if (g && m.status === "playing" && g.handNumber > m.handLog.length) {
      const tricks = g.tricks.map((tr, k) => trickLine(tr.leader, tr.cards, tr.winner, k));
      const d = h("details", { dataset: { hand: "current" }, open: true },
        h("summary", {}, t("log.hand_now", { n: g.handNumber, dir: t(`dir.${g.passDirection ?? "none"}`) })),
        tricks.length ? h("ol", { class: "log-tricks" }, tricks) : h("p", { class: "muted" }, t("log.no_tricks")),
        h("ul", { class: "log-notes" }, notesFor(g.handNumber)));
      items.push(d);
    }
    const early = m.notes.filter((n) => n.hand === 0).map((n) => h("p", { class: `note ${n.kind}` }, n.text));
    box.replaceChildren(...items, ...early);
    if (!items.length && !early.length) box.append(h("p", { class: "muted" }, t("log.empty")));
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
      r.ok ? `✔ ${t(r.checked === "own" ? "deal.ok_own" : "deal.ok_record", { n: hand })}` : `✖ ${t("deal.bad", { n: hand })}`,
      r.ok ? null : h("ul", { lang: "en" }, r.problems.map((p) => h("li", {}, p))))));
    if (!results.length) list.append(h("li", { class: "muted" }, t("deal.none")));
    const last = results[results.length - 1];
    mark.replaceChildren();
    mark.className = "deal-status";
    if (last) {
      const [hand, r] = last;
      mark.classList.add(r.ok ? "verified" : "failed");
      mark.append(r.ok ? `✔ ${t("deal.mark_ok", { n: hand })}` : `✖ ${t("deal.mark_bad", { n: hand })}`);
    }
    const bad = results.filter(([, r]) => !r.ok);
    warning.hidden = !bad.length;
    if (bad.length) {
      warning.replaceChildren(h("strong", {}, t("deal.warning_title")), " ",
        t("deal.warning", { hands: bad.map(([k]) => k).join(", "), problem: bad[bad.length - 1][1].problems[0] }));
    }
  }
}
