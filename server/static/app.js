// The web client's entry point: routes between the lobby (/) and a table (/r/CODE), owns the
// connection, and turns clicks into commands. The model lives in state.js, drawing in
// table.js and lobby.js, the fair-deal part in dealcheck.js.

import { Connection, forgetGuest, newGuest, savedGuest } from "./api.js";
import { DealCheck } from "./dealcheck.js";
import { detectLanguage, errorText, language, t, useLanguage } from "./i18n.js";
import { Lobby } from "./lobby.js";
import { MyGames } from "./mygames.js";
import { registerWorker, wirePushSettings } from "./push.js";
import { applyLook, chime, enableNotifications, notify, saveSetting, settings } from "./settings.js";
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
let wasMyTurn = false;
let myGames = null;

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
  myGames.start(); // "Your games", and their count in the title
  if (conn && conn.status === "online" && lobby.ladderShown) refreshLadder();
}

function showTable() {
  myGames.stop();
  const arriving = $("#table-view").hidden;
  lobby.hide();
  showBootMessage("");
  $("#table-view").hidden = false;
  // The lobby may have been scrolled (the account panel sits above the table form): the table
  // starts at the top, as a screen of its own.
  if (arriving) window.scrollTo(0, 0);
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
    toast(t("app.name_forgotten"), "info");
    showLobby({ joining: routeCode() });
  });
  conn.addEventListener("lost-room", () => {
    toast(t("app.room_gone"));
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
  el.textContent = ["online", "connecting", "reconnecting", "failed"].includes(status) ? t(`conn.${status}`) : status;
}

function onView(view) {
  const fresh = !model || model.room !== view.room;
  model = fromView(view, conn.serverNow());
  table.model = model;
  if (fresh) table.resetTransient(model);
  else table.stage.reset(model.game?.trick); // back in step: the sequence restarts from here
  deal.reset(model.gameId);
  deal.fromView(view);
  deal.catchUp(model.handLog.map((entry) => entry.hand));
  showTable();
  render();
}

function onEvent(ev) {
  if (!model) return;
  const wasSeat = model.you;
  table.onEvent(ev, model); // before the model moves on: a played card flies from where it was
  applyEvent(model, ev, conn.serverNow());
  deal.onEvent(ev, wasSeat);
  switch (ev.event) {
    case "game_started":
      deal.reset(ev.game);
      table.resetTransient(model);
      if (model.you !== null) window.scrollTo(0, 0); // the whole table in view as play begins
      break;
    case "hand_started":
      table.selected.clear();
      table.hint = null;
      table.showLastTrick = false;
      break;
    case "hand_over":
      announce(t("announce.hand_over", { n: ev.hand }));
      break;
    case "replaced":
      if (ev.seat === wasSeat) toast(t("app.replaced_you"), "info");
      break;
    default:
  }
  render();
}

function render() {
  table.render(model);
  const myTurn = Boolean(model?.prompt && model.status === "playing");
  document.title = myTurn ? t("app.title_turn") : "Hearts Live";
  if (myTurn && !wasMyTurn) yourTurn(model.prompt.phase);
  wasMyTurn = myTurn;
}

/** Say so in the live region; with the tab hidden, the sound and notification the player chose. */
function yourTurn(phase) {
  announce(t(phase === "passing" ? "announce.turn_pass" : phase === "moon_choice" ? "announce.turn_moon" : "announce.turn_play"));
  if (!document.hidden) return;
  if (settings().sound) chime();
  if (settings().notify) notify(t("notify.turn"));
}

function announce(text) {
  const el = $("#announce");
  el.textContent = "";
  // A new text node on the next frame: screen readers announce it even if it repeats.
  requestAnimationFrame(() => (el.textContent = text));
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
  if (typeof status.waited === "number") parts.push(t("lobby.queue_waited", { n: Math.round(status.waited) }));
  if (typeof status.low === "number" && typeof status.high === "number") {
    parts.push(t("lobby.queue_ratings", { low: Math.round(status.low), high: Math.round(status.high) }));
  }
  if (typeof status.bots_in === "number" && status.bots_in > 0) parts.push(t("lobby.queue_bots", { n: Math.ceil(status.bots_in) }));
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
  showBootMessage(t("app.joining"));
  lobby.hide();
  try {
    const reply = await conn.enter("join", { room: code });
    if (reply.seat === null || reply.seat === undefined) toast(t("app.watching_full"), "info");
  } catch (err) {
    conn.forgetRoom();
    history.replaceState({}, "", "/");
    showLobby();
    lobby.error(err.code === "room_not_found" ? t("app.no_room") : errorText(err));
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
    showBootMessage(t("app.unreachable", { error: err.message }));
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
    if (seated && model.status === "playing" && !confirm(t("app.confirm_leave"))) {
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
    await refused(err); // the hand stays locked until the room says what happened
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
    await refused(err);
    return null;
  }
}

/** Say why a command was refused. After `outcome_unknown` (the store did not confirm it) the
 * command may have been done, and then its events may not have reached this page: the room is
 * resumed, which shows which (docs/protocol.md). */
async function refused(err) {
  toast(errorText(err));
  if (err.code === "outcome_unknown") await conn.catchUp();
}

/**
 * The hint answer (docs/protocol.md: kind, cards/card, moon, reason, text, expected_points,
 * alternatives) as {cards, text, expected, alternatives}; an unexpected shape shows as JSON.
 */
function describeHint(hint) {
  if (!hint || typeof hint !== "object") return { cards: [], text: String(hint), alternatives: [] };
  const cards = Array.isArray(hint.cards) ? hint.cards : hint.card ? [hint.card] : [];
  let text = hint.text || hint.reason || "";
  if (!text && hint.moon) text = hint.moon === "others_26" ? t("app.moon_others") : t("app.moon_minus");
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
    const name = model.seats[seat]?.name ?? t("seat.fallback", { n: seat + 1 });
    if (confirm(t("app.confirm_revoke", { name }))) simple("revoke", { seat });
  },
  hint: async () => {
    try {
      const reply = await conn.request("hint");
      table.hint = describeHint(reply.hint ?? reply);
    } catch (err) {
      table.hint = null;
      toast(err.code === "hints_disabled" ? t("app.hints_off") : t("app.no_hint", { error: errorText(err) }), "info");
    }
    render();
  },
  fillBots: (level) => simple("fill_bots", { level }),
  start: () => simple("start"),
  rematch: () => simple("rematch"),
  leave: async (quiet = false) => {
    const seated = model && model.you !== null && model.you !== undefined;
    if (!quiet && seated && model.status === "playing" &&
        !confirm(t("app.confirm_leave"))) return;
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
    toast(t("app.copied"), "info");
  },
  announce: (text) => announce(text),
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
      lobby.error(errorText(err));
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
      lobby.error(errorText(err));
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
      lobby.setQuick(err.code === "unknown_type" ? "off" : "on", err.code === "unknown_type" ? "" : errorText(err));
    }
  },
  cancelQueue: async () => {
    await conn.request("unqueue").catch(() => {});
    lobby.setQuick("on");
  },
};

// --- the settings menu: this screen only ------------------------------------------------------

function wireSettings() {
  const s = settings();
  const lang = $("#set-lang");
  lang.value = detectLanguage();
  lang.addEventListener("change", () => {
    saveSetting("lang", lang.value);
    useLanguage(lang.value);
    lobby.setQuick(lobby.quick);
    if (model) render();
  });
  for (const name of ["back", "face"]) {
    const box = $(`#set-${name}`);
    box.querySelector(`input[value="${s[name]}"]`).checked = true;
    box.addEventListener("change", (e) => saveSetting(name, e.target.value));
  }
  const pause = $("#set-pause");
  pause.value = String(s.pause);
  pause.addEventListener("change", () => saveSetting("pause", Number(pause.value)));
  const sound = $("#set-sound");
  sound.checked = s.sound;
  sound.addEventListener("change", () => {
    saveSetting("sound", sound.checked);
    if (sound.checked) chime(); // a sample, and browsers start audio only after a gesture
  });
  const note = $("#set-notify");
  note.checked = s.notify;
  note.addEventListener("change", async () => {
    // Permission is asked for only here, when the player turns notifications on.
    const ok = note.checked ? await enableNotifications() : false;
    if (note.checked && !ok) {
      note.checked = false;
      toast(t("settings.notify_denied"), "info");
    }
    saveSetting("notify", note.checked && ok);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && $("#settings").open) $("#settings").open = false;
  });
}

function main() {
  // A handle for the browser console and the browser tests (to drop the socket, read the model).
  window.hearts = { get conn() { return conn; }, get model() { return model; }, get table() { return table; } };
  applyLook();
  useLanguage(detectLanguage());
  lobby = new Lobby(lobbyActions);
  lobby.setQuick("unknown");
  table = new TableView($("#table-view"), tableActions);
  wireSettings();
  registerWorker();
  wirePushSettings(() => guest && guest.token, language);
  myGames = new MyGames($("#my-games"), () => guest && guest.token);
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
