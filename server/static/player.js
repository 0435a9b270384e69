// The player page (/p/ID): the rating over time as an SVG plot (the whole rating history), every
// finished game newest first, a page at a time (GET /api/players/ID/games, "More games" asks for
// the next page by its cursor), each with its result, its rating change and a link to its page
// (/g/GAME), and the ladder rank. The numbers mean what docs/ratings.md says (the rating shown is
// the best estimate; "?" while provisional; the ladder ranks by the cautious lower edge of the band).

import { h } from "./dom.js";
import { detectLanguage, language, t, useLanguage } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const SCALE = 24; // display points per unit of mu (server/core/ratings/core.py)
const PAGE = 20; // games per page of the history
const HISTORY = 1000; // the most rating points the plot asks for
const DOTS = 60; // more rated games than this: the line alone, without a dot per game
const $ = (sel) => document.querySelector(sel);

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

const shown = (display, provisional) => `${display}${provisional ? "?" : ""}`;
const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0");

/** The plot: the rating after each game, oldest left, with a band of ±3 sigma around it. */
export function ratingPlot(history, width = 640) {
  const points = [...history].reverse(); // the API gives newest first
  // Drawn at the width it is shown at, so its labels stay readable on a phone.
  const height = Math.round(Math.min(260, Math.max(180, width * 0.4)));
  const left = 48, right = 12, top = 12, bottom = 28;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": t("player.plot_label") });
  if (points.length === 0) return root;
  const spread = points.map((p) => 3 * SCALE * p.sigma);
  const lows = points.map((p, i) => p.display - spread[i]);
  const highs = points.map((p, i) => p.display + spread[i]);
  let lo = Math.min(...points.map((p) => p.display), ...lows.slice(-Math.min(points.length, 20)));
  let hi = Math.max(...points.map((p) => p.display), ...highs.slice(-Math.min(points.length, 20)));
  if (hi - lo < 100) { lo -= 50; hi += 50; }
  const x = (i) => left + (points.length === 1 ? (width - left - right) / 2 : (i * (width - left - right)) / (points.length - 1));
  const y = (v) => top + ((hi - Math.max(lo, Math.min(hi, v))) * (height - top - bottom)) / (hi - lo);
  root.append(svg("line", { class: "axis", x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }));
  for (const v of [lo, (lo + hi) / 2, hi]) {
    const label = svg("text", { x: 4, y: y(v) + 4 });
    label.textContent = String(Math.round(v));
    root.append(label, svg("line", { class: "axis", x1: left, y1: y(v), x2: width - right, y2: y(v), "stroke-dasharray": "2 4" }));
  }
  const upper = points.map((p, i) => `${x(i)},${y(highs[i])}`);
  const lower = points.map((p, i) => `${x(i)},${y(lows[i])}`).reverse();
  root.append(svg("polygon", { class: "band", points: [...upper, ...lower].join(" ") }));
  root.append(svg("polyline", { class: "line", points: points.map((p, i) => `${x(i)},${y(p.display)}`).join(" ") }));
  if (points.length <= DOTS) {
    points.forEach((p, i) => {
      const dot = svg("circle", { class: "dot", cx: x(i), cy: y(p.display), r: 3 });
      const tip = svg("title");
      tip.textContent = t("player.plot_tip", { n: p.games, rating: p.display });
      dot.append(tip);
      root.append(dot);
    });
  }
  const caption = svg("text", { x: width - right, y: height - 8, "text-anchor": "end" });
  caption.textContent = t("player.games", { n: points.length });
  root.append(caption);
  return root;
}

function levelName(level) {
  const text = t(`level.${level}`);
  return text === `level.${level}` ? String(level) : text;
}

/** Who sat in seat i of a history row: a name, a bot (badge), or "a deleted player". */
function seatLabel(game, i) {
  const name = (game.names || [])[i] ?? null;
  const bot = (game.bots || [])[i] ?? null;
  if (name === null && bot === null) return h("span", { class: "deleted" }, t("game.deleted"));
  return h("span", {}, h("bdi", {}, name ?? levelName(bot)), bot ? h("span", { class: "badge bot" }, t("seat.bot")) : null);
}

/** One row of the history: when, place, the scores with names, the rating change, the rating
 * after, and the link to the game's page. Rows of the older answer (no names) show scores only. */
export function gameRow(game) {
  const scores = game.scores || [];
  const mine = scores[game.seat];
  const winners = game.winners || [];
  const place = 1 + scores.filter((s) => s < mine).length;
  const change = Number(game.change || 0);
  const when = game.finished_at ? new Date(game.finished_at * 1000).toLocaleDateString(language()) : "";
  const named = Array.isArray(game.names);
  const order = [0, 1, 2, 3].filter((i) => i < scores.length).sort((a, b) => scores[a] - scores[b] || a - b);
  const shownScores = h("ul", { class: "row-scores" }, order.map((i) => h("li", { class: [i === game.seat ? "me" : "", winners.includes(i) ? "won" : ""].join(" ").trim() },
    named ? seatLabel(game, i) : i === game.seat ? t("seat.you_word") : null, " ", h("strong", {}, scores[i]))));
  return h("tr", { dataset: { game: game.game } },
    h("td", { class: "hide-narrow" }, when),
    h("td", { class: "place" }, winners.includes(game.seat) ? "★ " : "", t("player.place_of", { n: place })),
    h("td", {}, shownScores),
    h("td", { class: `num change ${change > 0 ? "up" : change < 0 ? "down" : ""}` }, game.rated ? h("span", { dir: "ltr" }, signed(change)) : h("span", { class: "muted small" }, t("game.unrated"))),
    h("td", { class: "num hide-narrow" }, game.rating_after == null ? "" : String(game.rating_after)),
    h("td", { class: "num" }, game.game ? h("a", { class: "game-link", href: `/g/${encodeURIComponent(game.game)}` }, t("player.replay")) : ""));
}

function gamesTable(rows) {
  const head = h("tr", {},
    h("th", { class: "hide-narrow", scope: "col" }, t("player.when")),
    h("th", { scope: "col" }, t("player.place")),
    h("th", { scope: "col" }, t("player.scores")),
    h("th", { class: "num", scope: "col" }, t("player.change")),
    h("th", { class: "num hide-narrow", scope: "col" }, t("player.rating")),
    h("th", { class: "num", scope: "col" }, h("span", { class: "visually-hidden" }, t("player.game"))));
  return h("table", { class: "games" }, h("thead", {}, head), h("tbody", {}, rows));
}

/** The history, a page at a time; without the games endpoint, the answer's latest games. */
class GameHistory {
  constructor(box, player, recent) {
    this.box = box;
    this.player = player;
    this.recent = recent;
    this.next = null;
    this.count = 0;
    this.body = null;
    this.more = h("button", { class: "btn", type: "button", id: "more-games", hidden: true, onclick: () => this.load() }, t("player.more"));
    this.status = h("p", { class: "muted small", role: "status", id: "games-status" });
  }

  async start() {
    const ok = await this.load(true);
    if (!ok && this.count === 0) this.show(this.recent || [], null);
  }

  async load(first = false) {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (!first && this.next) query.set("before", this.next);
    this.more.disabled = true;
    this.status.textContent = first ? "" : t("loading");
    try {
      const response = await fetch(`/api/players/${encodeURIComponent(this.player)}/games?${query}`);
      const page = response.ok ? await response.json() : null;
      if (!page || !Array.isArray(page.games)) throw new Error(page?.message || `HTTP ${response.status}`);
      this.show(page.games, page.next ?? null);
      this.status.textContent = "";
      return true;
    } catch (err) {
      if (!first) this.status.textContent = t("player.more_failed", { error: err.message || String(err) });
      return false;
    } finally {
      this.more.disabled = false;
    }
  }

  show(games, next) {
    this.next = next;
    if (!this.body) {
      if (games.length === 0) {
        this.box.replaceChildren(h("p", { class: "muted" }, t("player.no_games")));
        return;
      }
      this.body = h("tbody", {});
      const table = gamesTable([]);
      table.querySelector("tbody").replaceWith(this.body);
      this.box.replaceChildren(table, h("div", { class: "row more-row" }, this.more), this.status);
    }
    this.body.append(...games.map(gameRow));
    this.count += games.length;
    this.more.hidden = !next;
  }
}

/**
 * Every rated game's rating, newest first, for the plot: the player's answer holds them all (up
 * to 1,000); should it hold fewer than the player's rated games, they are asked for
 * (GET /api/players/ID/ratings), and the answer's own points are drawn if that fails.
 */
async function fullHistory(me) {
  const history = Array.isArray(me.history) ? me.history : [];
  if (!(Number(me.games) > history.length && history.length < HISTORY)) return history;
  try {
    const response = await fetch(`/api/players/${encodeURIComponent(me.player)}/ratings?limit=${HISTORY}`);
    const answer = response.ok ? await response.json() : null;
    return Array.isArray(answer?.history) && answer.history.length > history.length ? answer.history : history;
  } catch {
    return history;
  }
}

async function main() {
  useLanguage(detectLanguage()); // also translates the page's [data-i18n] texts
  const id = decodeURIComponent(location.pathname.replace(/^\/p\//, "").replace(/\/$/, ""));
  const status = $("#player-status");
  try {
    const [me, ladder] = await Promise.all([
      fetch(`/api/players/${encodeURIComponent(id)}`).then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`)))),
      fetch("/api/ladder?limit=1").then((r) => (r.ok ? r.json() : {})).catch(() => ({})),
    ]);
    document.title = `${me.name || t("player.page_title")} · Hearts Live`;
    $("#player-name").textContent = me.name || t("player.anonymous");
    const standing = me.rank
      ? t("player.rank", { rank: me.rank, size: ladder.size ?? "?" })
      : me.provisional
        ? t("player.provisional", { n: me.games })
        : t("player.not_ranked");
    $("#player-summary").replaceChildren(
      t("player.rating"), " ", h("strong", { id: "player-rating" }, shown(me.display, me.provisional)),
      ` · ${t("player.games", { n: me.games })} · `, h("span", { id: "player-rank" }, standing));
    $("#player").hidden = false;
    const plot = $("#rating-plot");
    const history = await fullHistory(me);
    plot.replaceChildren(history.length
      ? ratingPlot(history, Math.max(280, Math.round(plot.clientWidth || 640)))
      : h("p", { class: "muted" }, t("player.no_rated")));
    status.hidden = true;
    await new GameHistory($("#recent-games"), me.player || id, me.recent_games || []).start();
  } catch (err) {
    status.textContent = t("player.failed", { error: err.message });
  }
}

main();
