// The player's hand, drawn by diffing: each card keeps its own button from the deal until it is
// played, and a render only changes the attributes that differ. A press held while an event
// arrives therefore lands on the same button and is not lost; a click is read from the button
// under the pointer when it ends (one listener on the hand, not one per card).

import { cardFace } from "./cards.js";
import { motionAllowed } from "./settings.js";

export class HandView {
  /** `onCard(card)`: a card button was clicked (or pressed with Enter or Space). */
  constructor(el, onCard) {
    this.el = el;
    this.buttons = new Map(); // card -> its button
    el.addEventListener("click", (e) => {
      const btn = e.target.closest("button.card");
      if (btn && !btn.disabled && el.contains(btn)) onCard(btn.dataset.card);
    });
    // Arrow keys move between the cards that can be chosen; Enter or Space plays (buttons).
    el.addEventListener("keydown", (e) => {
      if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
      const cards = [...el.querySelectorAll("button.card:not([disabled])")];
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

  /** The rectangle a card's button has now (null when not in the hand): a played card flies from it. */
  rectOf(card) {
    const btn = this.buttons.get(card);
    return btn && btn.isConnected ? btn.getBoundingClientRect() : null;
  }

  /**
   * Show `cards` (in display order), each with `look(card)` = {cls, disabled, pressed, label}.
   * `arriving`: cards that slide in (received in the pass) if they are new here.
   */
  update(cards, look, arriving = new Set()) {
    const keep = new Set(cards);
    const hadFocus = this.el.contains(document.activeElement) ? document.activeElement.dataset.card : null;
    for (const [card, btn] of this.buttons) {
      if (!keep.has(card)) {
        btn.remove();
        this.buttons.delete(card);
      }
    }
    const fresh = [];
    cards.forEach((card, i) => {
      let btn = this.buttons.get(card);
      if (!btn) {
        btn = document.createElement("button");
        btn.type = "button";
        btn.dataset.card = card;
        btn.append(cardFace(card));
        this.buttons.set(card, btn);
        fresh.push(card);
      }
      const want = look(card);
      const cls = `card ${want.cls}`.trim();
      if (btn.className !== cls) btn.className = cls;
      if (btn.disabled !== want.disabled) btn.disabled = want.disabled;
      setAttr(btn, "aria-pressed", want.pressed);
      setAttr(btn, "aria-label", want.label);
      if (this.el.children[i] !== btn) this.el.insertBefore(btn, this.el.children[i] || null);
    });
    this.el.style.setProperty("--n", String(Math.max(1, cards.length)));
    if (hadFocus && !this.buttons.has(hadFocus)) {
      // The focused card was played: keep the keyboard in the hand.
      this.el.querySelector("button.card:not([disabled])")?.focus({ preventScroll: true });
    }
    if (motionAllowed()) {
      for (const card of fresh) {
        if (!arriving.has(card)) continue;
        this.buttons.get(card).animate(
          [{ transform: "translateY(-3rem) scale(.9)", opacity: 0 }, { transform: "none", opacity: 1 }],
          { duration: 450, easing: "cubic-bezier(.2,.8,.2,1)", delay: 80 * fresh.indexOf(card) },
        );
      }
    }
  }

  clear() {
    this.el.replaceChildren();
    this.buttons.clear();
  }
}

function setAttr(el, name, value) {
  if (value === null || value === undefined) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== String(value)) {
    el.setAttribute(name, String(value));
  }
}
