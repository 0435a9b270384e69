// The panels that open over the felt: the game's result, the end-of-hand summary and the last
// trick. Each draws into its box and leaves it alone while what it shows is unchanged, so focus
// and selection inside it survive redraws.

import { cardFace } from "./cards.js";
import { h } from "./dom.js";
import { cardName, t } from "./i18n.js";
import { seatName } from "./state.js";

const SAVING_SHOWN = 4000; // ms the game-over panel says the game is being saved (unrated games)

/** "1500 → 1523 (+23)" for a seat of a rated game, once the ratings are posted. */
function ratingChange(r) {
  if (!r || !r.after) return null;
  const change = Math.round(r.change ?? r.after.display - (r.before?.display ?? r.after.display));
  return h("span", { class: `rating-change ${change >= 0 ? "up" : "down"}` },
    `${r.before?.display ?? "?"} → ${r.after.display}${r.after.provisional ? "?" : ""} (${change >= 0 ? "+" : "−"}${Math.abs(change)})`);
}

/** The end of the game: winners, final scores (and rating changes), rematch, back to the lobby. */
export function drawResult(box, m, actions) {
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
    replayLink(m),
    h("div", { class: "row" },
      m.host ? h("button", { class: "btn primary", type: "button", id: "rematch-btn", onclick: () => actions.rematch() }, t("result.rematch")) : h("p", { class: "muted" }, t("result.host_rematch")),
      h("button", { class: "btn", type: "button", onclick: () => actions.leave(true) }, t("result.lobby"))),
  );
}

/**
 * The finished game's own page (/g/ID: the replay and every hand's deal check), in a new tab so
 * the table stays. The store of record takes the game a moment after its end: until a rated
 * game's ratings are posted (they come from the archive), or for a few seconds, the link says
 * the game is being saved, and the page it opens waits for the archive (`?new`).
 */
function replayLink(m) {
  if (!m.gameId) return null;
  const saving = m.ratings ? null : h("span", { class: "muted small saving" }, ` ${t("game.saving_note")}`);
  if (saving) setTimeout(() => saving.remove(), SAVING_SHOWN);
  return h("p", { class: "replay-link" },
    h("a", { href: `/g/${encodeURIComponent(m.gameId)}?new`, id: "replay-link", target: "_blank", rel: "noopener" }, t("game.replay_link")),
    saving);
}

/** The end of a hand (`s`: the hand_over event and the seats' names then). Stays until the next deal. */
export function drawSummary(box, s, m) {
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

export function drawLastTrick(box, m, tr) {
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
