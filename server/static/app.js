// The web client's entry point: routes between the lobby (/) and a table (/r/CODE), owns the
// connection, and turns clicks into commands. The model lives in state.js, drawing in
// table.js and lobby.js, the fair-deal part in dealcheck.js.

import { Connection, forgetGuest, newGuest, savedGuest } from "./api.js";
import { DealCheck } from "./dealcheck.js";
import { Lobby } from "./lobby.js";
import { applyEvent, fromView } from "./state.js";
import { TableView } from "./table.js";

const $ = (sel) => document.querySelector(sel);

let guest = savedGuest();
let conn = null;
let model = null;
let deal = null;
let lobby = null;
let table = null;
let toastTimer = null;

const routeCode = () => (location.pathname.match(/^\/r\/([A-Za-z0-9_-]{4,40})\/?$/) || [])[1] || null;

function toast(message, kind = "error") {
  const el = $("#toast");
  el.textContent = message;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), kind === "error" ? 6000 : 3500);
}

function showBootMessage(text) {
  const el = $("#boot-msg");
  el.hidden = !text;
  el.textContent = text || "";
}

function showLobby(options = {}) {
  $("#table-view").hidden = true;
  showBootMessage("");
  lobby.show(guest, options);
  document.title = "Hearts Live";
  if (conn && conn.status === "online" && lobby.ladderShown) refreshLadder();
}

function showTable() {
  lobby.hide();
  showBootMessage("");
  $("#table-view").hidden = false;
}

// --- the connection ---------------------------------------------------------------------------

async function connect() {
  if (conn && conn.identity && conn.status === "online") return conn;
  if (conn) conn.close();
  conn = new Connection(guest.token);
  table.now = () => conn.serverNow();
  deal = new DealCheck(conn);
  deal.addEventListener("change", () => table.setDealResults(deal.results));
  deal.addEventListener("trouble", (e) => toast(e.detail));
  conn.addEventListener("status", (e) => showStatus(e.detail));
  conn.addEventListener("view", (e) => onView(e.detail));
  conn.addEventListener("event", (e) => onEvent(e.detail));
  conn.addEventListener("frame", (e) => onFrame(e.detail));
  conn.addEventListener("auth-failed", () => {
    forgetGuest();
    guest = null;
    model = null;
    toast("The server no longer knows this name; choose it again to carry on.", "info");
    showLobby({ joining: routeCode() });
  });
  conn.addEventListener("lost-room", () => {
    toast("That table no longer exists.");
    goToLobby();
  });
  try {
    const me = await conn.connect();
    guest = { ...guest, name: me.name };
    $("#whoami").textContent = me.name;
    detectFeatures();
    return conn;
  } catch (err) {
    if (err.code === "bad_token") {
      // The server no longer knows this identity (a new signing key): pick a name again.
      conn.close();
      conn = null;
      forgetGuest();
      guest = null;
      return null;
    }
    throw err;
  }
}

function showStatus(status) {
  const el = $("#conn-status");
  el.dataset.state = status;
  el.textContent = { online: "● online", connecting: "connecting…", reconnecting: "reconnecting…", failed: "offline" }[status] || status;
}

function onView(view) {
  const fresh = !model || model.room !== view.room;
  model = fromView(view, conn.serverNow());
  if (fresh) table.resetTransient();
  deal.reset(model.gameId);
  deal.fromView(view);
  deal.catchUp(model.handLog.map((entry) => entry.hand));
  showTable();
  render();
}

function onEvent(ev) {
  if (!model) return;
  const wasSeat = model.you;
  applyEvent(model, ev, conn.serverNow());
  deal.onEvent(ev, wasSeat);
  switch (ev.event) {
    case "game_started":
      deal.reset(ev.game);
      table.resetTransient();
      break;
    case "hand_started":
      table.resetTransient();
      break;
    case "replaced":
      if (ev.seat === wasSeat) toast("A bot has taken your seat; you are watching now.", "info");
      break;
    default:
  }
  render();
}

function render() {
  table.render(model);
  const myTurn = model?.prompt && model.status === "playing";
  document.title = myTurn ? "▶ Your turn · Hearts Live" : "Hearts Live";
}

// --- lobby features the server may or may not offer yet -----------------------------------------

async function detectFeatures() {
  // `unqueue` when not queued is harmless: `not_in_queue` (or any answer but unknown_type)
  // means the matchmaker exists.
  conn.request("unqueue").then(
    () => lobby.setQuick("on"),
    (err) => lobby.setQuick(err.code === "unknown_type" || err.code === "offline" ? "off" : "on"),
  );
  refreshLadder();
}

function refreshLadder() {
  conn.request("ladder", { limit: 20 }).then(
    (reply) => lobby.setLadder(reply.ladder ?? null),
    () => lobby.setLadder(null),
  );
}

function onFrame(frame) {
  if (lobby.quick !== "queued") return;
  // While queued the server reports the search about four times a second…
  if (frame.type === "queue" && frame.status) showQueueStatus(frame.status);
  // …and then seats us: {"type": "matched", room, seat, view}.
  if (frame.type === "matched" && typeof frame.room === "string") matched(frame.room);
}

function showQueueStatus(status) {
  const parts = [];
  if (typeof status.waited === "number") parts.push(`waiting ${Math.round(status.waited)}s`);
  if (typeof status.low === "number" && typeof status.high === "number") {
    parts.push(`ratings ${Math.round(status.low)}–${Math.round(status.high)}`);
  }
  if (typeof status.bots_in === "number" && status.bots_in > 0) parts.push(`bots fill in after ${Math.ceil(status.bots_in)}s`);
  lobby.setQuick("queued", parts.join(" · "));
}

/** A quick-play table was found: open it. A fresh `join` gives a view with no events lost. */
function matched(room) {
  lobby.setQuick("on");
  history.pushState({}, "", `/r/${room}`);
  joinRoom(room);
}

// --- rooms ------------------------------------------------------------------------------------

async function joinRoom(code) {
  showBootMessage("Joining the table…");
  lobby.hide();
  try {
    const reply = await conn.enter("join", { room: code });
    if (reply.seat === null || reply.seat === undefined) toast("Every seat is taken: you are watching.", "info");
  } catch (err) {
    conn.forgetRoom();
    history.replaceState({}, "", "/");
    showLobby();
    lobby.error(err.code === "room_not_found" ? "No table has that code. Check the invite link." : err.message);
  }
}

function goToLobby() {
  if (conn) conn.forgetRoom();
  model = null;
  if (location.pathname !== "/") history.pushState({}, "", "/");
  showLobby();
}

async function route() {
  const code = routeCode();
  if (!guest) {
    showLobby({ joining: code });
    return;
  }
  try {
    if (!(await connect())) {
      showLobby({ joining: code });
      return;
    }
  } catch (err) {
    showBootMessage(`Cannot reach the server (${err.message}). Retrying…`);
    conn.addEventListener("status", (e) => e.detail === "online" && route(), { once: true });
    return;
  }
  if (code) {
    if (conn.room !== code) await joinRoom(code);
    else showTable();
  } else if (conn.room) {
    // Back to "/" (the browser's back button) from a table: leaving a game in progress hands
    // the seat to a bot for good, so ask first.
    const seated = model && model.you !== null && model.you !== undefined;
    if (seated && model.status === "playing" && !confirm("Leave the table? A bot takes your seat for the rest of the game.")) {
      history.pushState({}, "", `/r/${conn.room}`);
      return;
    }
    conn.request("leave").catch(() => {});
    goToLobby();
  } else {
    showLobby();
  }
}

// --- actions ------------------------------------------------------------------------------------

/** Send a move; while it is in flight the hand is locked so a double click sends nothing. */
async function move(type, fields) {
  table.busy = true;
  render();
  try {
    await conn.request(type, fields);
  } catch (err) {
    toast(err.message || err.code);
  } finally {
    table.busy = false;
    render();
  }
}

async function simple(type, fields = {}, okMessage = "") {
  try {
    const reply = await conn.request(type, fields);
    if (okMessage) toast(okMessage, "info");
    return reply;
  } catch (err) {
    toast(err.message || err.code);
    return null;
  }
}

/**
 * The hint answer (docs/protocol.md: kind, cards/card, moon, reason, text, expected_points,
 * alternatives) as {cards, text, expected, alternatives}; an unexpected shape shows as JSON.
 */
function describeHint(hint) {
  if (!hint || typeof hint !== "object") return { cards: [], text: String(hint), alternatives: [] };
  const cards = Array.isArray(hint.cards) ? hint.cards : hint.card ? [hint.card] : [];
  let text = hint.text || hint.reason || "";
  if (!text && hint.moon) text = hint.moon === "others_26" ? "Add 26 to each other player." : "Take 26 off your own score.";
  if (!text) text = JSON.stringify(hint);
  const alternatives = (Array.isArray(hint.alternatives) ? hint.alternatives : [])
    .filter((a) => Array.isArray(a.cards) && typeof a.expected_points === "number")
    .slice(0, 3)
    .map((a) => ({ cards: a.cards, expected: a.expected_points }));
  const expected = typeof hint.expected_points === "number" ? hint.expected_points : null;
  return { cards, text, expected, alternatives };
}

const tableActions = {
  play: (card) => move("play", { card }),
  pass: (cards) => move("pass", { cards }),
  moon: (choice) => move("moon", { choice }),
  boot: (seat) => simple("boot", { seat }),
  revoke: (seat) => {
    const name = model.seats[seat]?.name ?? `seat ${seat + 1}`;
    if (confirm(`Call a revoke on ${name}? If they did not revoke, you take 26.`)) simple("revoke", { seat });
  },
  hint: async () => {
    try {
      const reply = await conn.request("hint");
      table.hint = describeHint(reply.hint ?? reply);
    } catch (err) {
      table.hint = null;
      toast(err.code === "hints_disabled" ? "Hints are off at this table." : `No hint available right now (${err.message || err.code}).`, "info");
    }
    render();
  },
  fillBots: (level) => simple("fill_bots", { level }),
  start: () => simple("start"),
  rematch: () => simple("rematch"),
  leave: async (quiet = false) => {
    const seated = model && model.you !== null && model.you !== undefined;
    if (!quiet && seated && model.status === "playing" &&
        !confirm("Leave the table? A bot takes your seat for the rest of the game.")) return;
    await conn.request("leave").catch(() => {});
    goToLobby();
  },
  copyLink: async () => {
    const input = $("#invite-link");
    try {
      await navigator.clipboard.writeText(input.value);
    } catch {
      input.select(); // no clipboard API on plain http: select it for Ctrl+C
      document.execCommand?.("copy");
    }
    toast("Invite link copied.", "info");
  },
};

const lobbyActions = {
  saveName: async (name) => {
    lobby.busy(true);
    try {
      if (conn) conn.close();
      conn = null;
      guest = await newGuest(name);
      await route();
    } catch (err) {
      lobby.error(err.message);
    } finally {
      lobby.busy(false);
    }
  },
  openRoom: async (options) => {
    lobby.busy(true);
    lobby.error("");
    try {
      const reply = await conn.enter("open_room", { options });
      history.pushState({}, "", `/r/${reply.room}`);
    } catch (err) {
      lobby.error(err.message);
    } finally {
      lobby.busy(false);
    }
  },
  joinCode: (code) => {
    history.pushState({}, "", `/r/${code}`);
    route();
  },
  quickPlay: async (target) => {
    try {
      const reply = await conn.request("queue", { target });
      if (reply.matched?.room) {
        matched(reply.matched.room); // a table was already waiting for us
        return;
      }
      lobby.setQuick("queued");
      if (reply.status) showQueueStatus(reply.status);
    } catch (err) {
      lobby.setQuick(err.code === "unknown_type" ? "off" : "on", err.code === "unknown_type" ? "" : err.message);
    }
  },
  cancelQueue: async () => {
    await conn.request("unqueue").catch(() => {});
    lobby.setQuick("on");
  },
};

function main() {
  // A handle for the browser console and the browser tests (to drop the socket, read the model).
  window.hearts = { get conn() { return conn; }, get model() { return model; } };
  lobby = new Lobby(lobbyActions);
  table = new TableView($("#table-view"), tableActions);
  setInterval(() => table.tick(), 200);
  window.addEventListener("popstate", () => route());
  $("#home-link").addEventListener("click", (e) => {
    e.preventDefault();
    if (model && model.status === "playing" && model.you !== null) {
      tableActions.leave();
    } else {
      goToLobby();
    }
  });
  route();
}

main();
