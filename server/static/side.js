// The side panel: the score table, the fair-deal results and the game log. Each part redraws
// only when what it shows has changed (a key of its inputs), so an open <details> in the log
// or a scrolled score table stays as the player left it.

import { cardText, suitOf } from "./cards.js";
import { h, setText } from "./dom.js";
import { t } from "./i18n.js";
import { seatName } from "./state.js";

const $ = (sel, root = document) => root.querySelector(sel);

export class SidePanel {
  constructor(root) {
    this.root = root;
    this.dealResults = new Map();
  }

  render(m) {
    this._scores(m);
    this._log(m);
    this._fairDeal();
  }

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
      const tricks = (entry.tricks || []).map((tr, k) => trickLine(tr.leader, tr.cards, tr.winner, k));
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
