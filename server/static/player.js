// The player page (/p/ID): the rating over time as an SVG plot, recent games with each game's
// rating change, and the ladder rank. Everything comes from GET /api/players/ID; the numbers
// mean what docs/ratings.md says (the rating shown is the best estimate; "?" while provisional;
// the ladder ranks by the cautious lower edge of the band).

const SVG = "http://www.w3.org/2000/svg";
const SCALE = 24; // display points per unit of mu (server/core/ratings/core.py)
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

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
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Rating after each rated game" });
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
  points.forEach((p, i) => {
    const dot = svg("circle", { class: "dot", cx: x(i), cy: y(p.display), r: 3 });
    const tip = svg("title");
    tip.textContent = `game ${p.games}: ${p.display}`;
    dot.append(tip);
    root.append(dot);
  });
  const caption = svg("text", { x: width - right, y: height - 8, "text-anchor": "end" });
  caption.textContent = `${points.length} rated game${points.length === 1 ? "" : "s"}`;
  root.append(caption);
  return root;
}

/** One row per recent game: when, place, scores, the rating change and the rating after. */
export function recentGames(player, games) {
  if (games.length === 0) return el("p", { class: "muted", text: "No finished games yet." });
  const head = el("tr", {}, el("th", { text: "When", class: "hide-narrow" }), el("th", { text: "Place" }),
    el("th", { text: "Scores" }), el("th", { text: "Change", class: "num" }), el("th", { text: "Rating", class: "num" }));
  const rows = games.map((game) => {
    const scores = game.scores || [];
    const mine = scores[game.seat];
    const place = `${1 + scores.filter((s) => s < mine).length} of 4`;
    const change = Number(game.change || 0);
    const when = game.finished_at ? new Date(game.finished_at * 1000).toLocaleDateString() : "";
    const shownScores = scores.map((s, i) => (i === game.seat ? `you ${s}` : String(s))).join(" · ");
    return el("tr", {}, el("td", { text: when, class: "hide-narrow" }), el("td", { text: place }), el("td", { text: shownScores }),
      el("td", { class: `num change ${change > 0 ? "up" : change < 0 ? "down" : ""}`, text: game.rated ? signed(change) : "" }),
      el("td", { class: "num", text: game.rating_after == null ? "" : String(game.rating_after) }));
  });
  return el("table", { class: "games" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

async function main() {
  const id = decodeURIComponent(location.pathname.replace(/^\/p\//, "").replace(/\/$/, ""));
  const status = $("#player-status");
  try {
    const [me, ladder] = await Promise.all([
      fetch(`/api/players/${encodeURIComponent(id)}`).then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`)))),
      fetch("/api/ladder?limit=1").then((r) => (r.ok ? r.json() : {})).catch(() => ({})),
    ]);
    document.title = `${me.name || "Player"} · Hearts Live`;
    $("#player-name").textContent = me.name || "A player";
    const standing = me.rank
      ? `rank ${me.rank} of ${ladder.size ?? "?"} on the ladder`
      : me.provisional
        ? `provisional: ${me.games} of 10 rated games before the ladder`
        : "not on the ladder (only accounts are listed)";
    $("#player-summary").replaceChildren(
      "Rating ", el("strong", { id: "player-rating", text: shown(me.display, me.provisional) }),
      ` · ${me.games} rated game${me.games === 1 ? "" : "s"} · `, el("span", { id: "player-rank", text: standing }));
    $("#player").hidden = false;
    const plot = $("#rating-plot");
    plot.replaceChildren(ratingPlot(me.history || [], Math.max(280, Math.round(plot.clientWidth || 640))));
    $("#recent-games").replaceChildren(recentGames(me.player, me.recent_games || []));
    status.hidden = true;
  } catch (err) {
    status.textContent = `Could not load this player: ${err.message}`;
  }
}

main();
