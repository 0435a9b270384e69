// Drawing the table from the model (state.js). Everything here reads the model and writes the
// DOM; what a click means is decided by the callbacks app.js passes in. Seats and the hand keep
// their elements and change only what differs (no press is lost to a redraw); the trick in the
// middle is a sequence played by stage.js; the clocks tick on their own.

import { cardFace, cardText, sortCards, suitOf } from "./cards.js";
import { clockElement, clockReading, drawClock } from "./clocks.js";
import { h, setText } from "./dom.js";
import { HandView } from "./hand.js";
import { drawLastTrick, drawResult, drawSummary } from "./overlays.js";
import { SidePanel } from "./side.js";
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
    this.summary = null; // the last hand's result, shown until the next deal
    this.summaryDismissed = false;
    this.model = null;
    this.now = () => Date.now() / 1000;
    this.seatEls = [0, 1, 2, 3].map((seat) => this._seatElement(seat));
    this.side = new SidePanel(root);
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
    drawResult($("#result", this.root), m, this.actions);
    const summary = $("#hand-summary", this.root);
    summary.hidden = !this.summary || this.summaryDismissed || m.status === "finished" || this.stage.busy;
    if (!summary.hidden) drawSummary(summary, this.summary, m);
    this._prompt(m);
    this._hand(m);
    this._actions(m);
    const last = $("#last-trick", this.root);
    last.hidden = !(this.showLastTrick && m.lastTrick);
    if (!last.hidden) drawLastTrick(last, m, m.lastTrick);
    this.side.render(m);
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
    while (fan.children.length < count) fan.append(h("span", { class: "back", style: { "--i": fan.children.length } }));
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

  /** Fair-deal results (hand -> {ok, problems, checked}) from dealcheck.js. */
  setDealResults(results) {
    this.side.setDealResults(results);
  }
}
