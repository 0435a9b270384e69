// The lobby: choosing a name, opening a friends' table with house rules, joining by an invite
// code, and quick play and the ladder once the server offers them (app.js finds out by trying
// their commands: an `unknown_type` answer means "not on this server yet").

import { h } from "./dom.js";
import { t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);

export class Lobby {
  /** actions: {saveName(name), openRoom(options), joinCode(code), quickPlay(target), cancelQueue()} */
  constructor(actions) {
    this.actions = actions;
    this.quick = "unknown"; // quick play: unknown | off | on | queued
    this.ladderShown = false;
    $("#name-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const name = $("#name-input").value.trim();
      if (name) this.actions.saveName(name);
    });
    $("#name-change").addEventListener("click", () => {
      $("#name-form").hidden = false;
      $("#name-current").hidden = true;
      $("#name-input").focus();
    });
    $("#room-form").addEventListener("submit", (e) => {
      e.preventDefault();
      this.actions.openRoom({
        target: Number($("#opt-target").value),
        moon: $("#opt-moon").value,
        revokes: $("#opt-revokes").value,
        tie: $("#opt-tie").value,
        pace: $("#opt-pace").value,
        hints: $("#opt-hints").checked,
        solo_clock: $("#opt-solo-clock").checked,
      });
    });
    $("#code-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const raw = $("#code-input").value.trim();
      const code = (raw.match(/\/r\/([A-Za-z0-9_-]+)/) || [null, raw])[1];
      if (/^[A-Za-z0-9_-]{4,40}$/.test(code)) this.actions.joinCode(code);
      else this.error(t("lobby.bad_code"));
    });
    $("#quick-form").addEventListener("submit", (e) => {
      e.preventDefault();
      this.actions.quickPlay(Number($("#quick-target").value));
    });
    $("#quick-cancel").addEventListener("click", () => this.actions.cancelQueue());
  }

  show(guest, { joining = null } = {}) {
    $("#lobby").hidden = false;
    const named = Boolean(guest);
    $("#name-form").hidden = named;
    $("#name-current").hidden = !named;
    $("#lobby-play").hidden = !named || Boolean(joining);
    if (named) $("#name-shown").textContent = guest.name;
    const note = $("#join-note");
    note.hidden = !joining;
    note.textContent = joining ? t("lobby.join_note", { code: joining }) : "";
    if (!named) $("#name-input").focus();
  }

  hide() {
    $("#lobby").hidden = true;
  }

  busy(flag) {
    for (const el of document.querySelectorAll("#lobby button[type=submit]")) el.disabled = flag;
    if (!flag && this.quick) this.setQuick(this.quick); // re-apply what quick play allows
  }

  error(message) {
    const el = $("#lobby-error");
    el.hidden = !message;
    el.textContent = message || "";
  }

  /** Quick play: "unknown" while checking, "off" when the server lacks it, "on", or "queued". */
  setQuick(state, text = "") {
    this.quick = state;
    const panel = $("#quick-panel");
    panel.dataset.supported = state;
    $("#quick-note").textContent = ["unknown", "off", "on", "queued"].includes(state) ? t(`lobby.quick_${state}`) : "";
    $("#quick-btn").disabled = state !== "on";
    $("#quick-btn").hidden = state === "queued";
    $("#quick-cancel").hidden = state !== "queued";
    $("#quick-target").disabled = state !== "on";
    $("#quick-status").textContent = text;
  }

  /**
   * The ladder answer ({top: [{rank, name, display, games}], size, you: {display, games,
   * provisional, rank}}), or null to hide the panel (a server without a ladder).
   */
  setLadder(ladder) {
    const panel = $("#ladder-panel");
    this.ladderShown = Boolean(ladder);
    panel.hidden = !ladder;
    if (!ladder) return;
    const rows = Array.isArray(ladder.top) ? ladder.top : [];
    const you = ladder.you;
    const parts = [];
    if (you) {
      const standing = you.provisional
        ? t("lobby.provisional", { n: you.games ?? 0 })
        : you.rank ? t("lobby.rank", { rank: you.rank, size: ladder.size ?? "?" }) : "";
      parts.push(h("p", { class: "you-rating" }, t("lobby.your_rating"), " ", h("strong", {}, you.display ?? "?"), standing ? ` · ${standing}` : ""));
    }
    parts.push(rows.length
      ? h("ol", { class: "ladder" }, rows.map((r, i) =>
          h("li", {}, h("span", { class: "rank" }, r.rank ?? i + 1), h("span", { class: "name" }, r.player_id
            ? h("a", { href: `/p/${encodeURIComponent(r.player_id)}` }, r.name ?? r.player_id) // their page: games, rating
            : r.name ?? "?"),
            h("strong", {}, r.display ?? ""))))
      : h("p", { class: "muted" }, t("lobby.ladder_empty")));
    $("#ladder").replaceChildren(...parts);
  }

}
