// "Your games" in the lobby (issue 54): every room where the player holds a seat, live and
// correspondence, whose turn it is and how long it has waited, the player's turn first
// (GET /api/me/games), and that count in the page's title: "(2) Hearts Live".

import { language, t } from "./i18n.js";

const TITLE = "Hearts Live";

function ago(seconds) {
  const rtf = new Intl.RelativeTimeFormat(language(), { numeric: "auto", style: "short" });
  if (seconds < 3600) return rtf.format(-Math.max(1, Math.round(seconds / 60)), "minute");
  if (seconds < 2 * 86400) return rtf.format(-Math.round(seconds / 3600), "hour");
  return rtf.format(-Math.round(seconds / 86400), "day");
}

export class MyGames {
  constructor(panel, token) {
    this.panel = panel;
    this.token = token;
    this.timer = null;
  }

  start() {
    this.stop();
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 30_000);
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh() {
    const token = this.token();
    if (!token) return this.render([]);
    try {
      const response = await fetch("/api/me/games", { headers: { authorization: `Bearer ${token}` } });
      if (!response.ok) return this.render([]);
      this.render((await response.json()).games);
    } catch {
      // Offline for a moment: the list stays as it was.
    }
  }

  render(games) {
    const mine = games.filter((g) => g.your_turn).length;
    document.title = mine ? `(${mine}) ${TITLE}` : TITLE;
    this.panel.hidden = !games.length;
    const list = this.panel.querySelector("#my-games-list");
    list.replaceChildren();
    for (const g of games) {
      const li = document.createElement("li");
      li.className = "my-game";
      li.dataset.room = g.room;
      li.dataset.yourTurn = String(g.your_turn);
      const link = document.createElement("a");
      link.href = g.link;
      link.className = "my-game-table";
      link.textContent = g.table ? t("games.table", { name: g.table }) : t("games.quick");
      const pace = document.createElement("span");
      pace.className = "badge";
      pace.textContent = t(g.pace === "correspondence" ? "games.correspondence" : "games.live");
      const state = document.createElement("span");
      state.className = g.your_turn ? "my-game-state turn" : "my-game-state muted";
      if (g.status !== "playing") state.textContent = t("games.not_started");
      else if (g.your_turn) state.textContent = t("games.your_turn");
      else {
        const names = g.waiting_on.map((s) => g.seats[s] && g.seats[s].name).filter(Boolean);
        state.textContent = names.length ? t("games.waiting_on", { names: names.join(", ") }) : "";
      }
      const waited = document.createElement("span");
      waited.className = "muted my-game-waited";
      waited.textContent = g.waited != null && g.status === "playing" ? ago(g.waited) : "";
      li.append(link, " ", pace, " ", state, " ", waited);
      list.append(li);
    }
  }
}
