// The trick in the middle of the table, shown as a sequence rather than as the latest state: a
// played card travels from its seat to the trick; a finished trick stays for the player's pause
// (1.2 s by default; a click on it skips the rest), then sweeps to its taker. Events are queued
// so a fast burst (bots answer at once) still reads card by card; a backlog of more than one
// finished trick is played through without pauses, so the table never falls far behind.
// The model (state.js) is never held back: only this picture lags.

import { cardFace, trickLeaderIndex } from "./cards.js";
import { cardName, t } from "./i18n.js";
import { motionAllowed, settings } from "./settings.js";
import { h } from "./dom.js";

const FLY_MS = 260;
const SWEEP_MS = 380;

export class TrickStage {
  /**
   * `host`: {trickEl, infoEl, positionOf(seat), nameOf(seat), originOf(seat, card) -> DOMRect|null,
   * takerRect(seat) -> DOMRect|null, announce(text), idle()}.
   */
  constructor(host) {
    this.host = host;
    this.queue = [];
    this.shown = { leader: null, cards: [], winner: null, points: 0, number: 0 };
    this.running = false;
    this.skipHold = null;
    this.generation = 0; // bumped by reset: a running sequence from before stops
    this.hurrying = false; // the player must decide now: show the queued cards without motion
    host.trickEl.addEventListener("click", () => this.skip());
  }

  get busy() {
    return this.running || this.queue.length > 0;
  }

  /** Drop everything and show `trick` ({leader, cards}) at once (a fresh view, a new hand). */
  reset(trick = null) {
    this.generation += 1;
    this.queue = [];
    this.running = false;
    this.hurrying = false;
    if (this.skipHold) this.skipHold();
    this.shown = { leader: trick?.leader ?? null, cards: [...(trick?.cards || [])], winner: null, points: 0, number: 0 };
    this._draw();
    this._state("idle");
  }

  /** A card_played or trick_won event, in order. Call before the page re-renders. */
  push(ev) {
    const op = { ...ev };
    if (ev.event === "card_played") op.from = this.host.originOf(ev.seat, ev.card);
    this.queue.push(op);
    if (!this.running) this._run(this.generation);
  }

  /** End the pause on a finished trick now. */
  skip() {
    if (this.skipHold) this.skipHold();
  }

  /**
   * The player must decide on cards still queued: after the pause on the trick shown now
   * (which always gets its time), the queued cards appear without motion.
   */
  hurry() {
    this.hurrying = true;
  }

  async _run(gen) {
    this.running = true;
    this._state("busy");
    while (this.queue.length && gen === this.generation) {
      const op = this.queue.shift();
      // More than one finished trick still to show: catch up without pauses or motion.
      const behind = this.queue.filter((o) => o.event === "trick_won").length > (op.event === "trick_won" ? 0 : 1);
      if (op.event === "card_played") await this._card(op, behind || this.hurrying);
      else if (op.event === "trick_won") await this._won(op, behind, gen);
    }
    if (gen !== this.generation) return;
    this.running = false;
    this.hurrying = false;
    this._state("idle");
    this.host.idle();
  }

  async _card(op, fast) {
    const s = this.shown;
    if (s.winner !== null) this.shown = { leader: null, cards: [], winner: null, points: 0, number: 0 };
    if (!this.shown.cards.length) this.shown.leader = op.seat;
    this.shown.cards.push(op.card);
    const el = this._draw();
    const target = el?.querySelector(".card");
    if (!fast && motionAllowed() && target && op.from) {
      const to = target.getBoundingClientRect();
      const dx = op.from.left + op.from.width / 2 - (to.left + to.width / 2);
      const dy = op.from.top + op.from.height / 2 - (to.top + to.height / 2);
      await finished(target.animate(
        [{ transform: `translate(${dx}px, ${dy}px) scale(.85)`, opacity: 0.6 }, { transform: "none", opacity: 1 }],
        { duration: FLY_MS, easing: "cubic-bezier(.2,.7,.3,1)" },
      ));
    }
  }

  async _won(op, fast, gen) {
    this.shown = { leader: op.leader, cards: [...op.cards], winner: op.seat, points: op.points, number: op.number };
    this._draw();
    this.host.announce(t(op.points ? "announce.took_points" : "announce.took", { name: this.host.nameOf(op.seat), n: op.points }));
    if (fast) return;
    this._state("hold");
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, settings().pause * 1000);
      this.skipHold = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.skipHold = null;
    if (gen !== this.generation) return;
    this._state("sweep");
    const to = this.host.takerRect(op.seat);
    if (motionAllowed() && to && !this.hurrying) {
      // The inner cards move: the .trick-card boxes keep their own placing transform.
      for (const who of this.host.trickEl.querySelectorAll(".trick-card .who")) who.style.visibility = "hidden";
      const cards = [...this.host.trickEl.querySelectorAll(".trick-card .card")];
      await Promise.all(cards.map((el) => {
        const r = el.getBoundingClientRect();
        const dx = to.left + to.width / 2 - (r.left + r.width / 2);
        const dy = to.top + to.height / 2 - (r.top + r.height / 2);
        return finished(el.animate(
          [{ transform: "none", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px) scale(.35)`, opacity: 0 }],
          { duration: SWEEP_MS, easing: "cubic-bezier(.5,0,.75,0)", fill: "forwards" },
        ));
      }));
    }
    if (gen !== this.generation) return;
    this.shown = { leader: null, cards: [], winner: null, points: 0, number: 0 };
    this._draw();
  }

  _state(name) {
    this.host.trickEl.dataset.stage = name;
  }

  /** Draw `shown` into the trick element; returns the newest card's element. */
  _draw() {
    const { trickEl, infoEl, positionOf, nameOf } = this.host;
    const s = this.shown;
    trickEl.replaceChildren();
    infoEl.replaceChildren();
    trickEl.classList.toggle("done", s.winner !== null);
    if (!s.cards.length) {
      this.host.emptyInfo?.(infoEl);
      return null;
    }
    const best = trickLeaderIndex(s.cards);
    let last = null;
    s.cards.forEach((card, k) => {
      const seat = (s.leader + k) % 4;
      const winning = k === best;
      const state = winning ? (s.winner !== null ? t("trick.took_it") : t("trick.winning")) : "";
      last = h("div", {
        class: `trick-card pos-${positionOf(seat)}${winning ? " winning" : ""}${k === 0 ? " led" : ""}`,
        role: "img",
        "aria-label": [t("trick.played", { name: nameOf(seat), card: cardName(card) }), k === 0 ? t("trick.led") : "", state].filter(Boolean).join(", "),
      }, h("span", { class: "card static" }, cardFace(card)), h("span", { class: "who" }, nameOf(seat)));
      trickEl.append(last);
    });
    const taker = (s.leader + best) % 4;
    if (s.winner !== null) {
      infoEl.append(h("strong", {}, t("trick.took", { name: nameOf(taker) })),
        s.points ? ` (+${s.points})` : "");
    } else {
      infoEl.append(t("trick.led_by", { name: nameOf(s.leader) }), " · ", h("strong", {}, t("trick.so_far", { name: nameOf(taker) })));
    }
    return last;
  }
}

const finished = (animation) => animation.finished.catch(() => {});
