// Web Push on this device (issue 54): the service worker (/sw.js), "Notify me on this device"
// in Settings (the browser's permission is asked only when the player ticks it), which pushes
// the player wants, the player's devices with a way to remove one, and forgetting this device
// on log-out. The server's side: docs/protocol.md, "Web Push".

import { t } from "./i18n.js";

const supported = () => "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

function b64urlBytes(text) {
  const pad = "=".repeat((4 - (text.length % 4)) % 4);
  const raw = atob((text + pad).replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function call(method, path, token, body) {
  const response = await fetch(path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(data.message || `HTTP ${response.status}`), { code: data.code });
  return data;
}

/** Register the service worker (it shows pushes and opens their table); harmless if refused. */
export async function registerWorker() {
  if (!("serviceWorker" in navigator)) return null;
  try {
    return await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  } catch {
    return null;
  }
}

async function currentSubscription() {
  if (!supported()) return null;
  const reg = await navigator.serviceWorker.ready;
  return reg.pushManager.getSubscription();
}

function deviceLabel() {
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrome\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const system = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return system ? `${browser} · ${system}` : browser;
}

/** Subscribe this browser and keep it for the player; false if the browser said no. */
export async function subscribeThisDevice(token, lang) {
  if (!supported()) return false;
  const answer = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
  if (answer !== "granted") return false;
  const { key } = await call("GET", "/api/push/key", token);
  const reg = await navigator.serviceWorker.ready;
  let sub = await reg.pushManager.getSubscription();
  if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64urlBytes(key) });
  await call("POST", "/api/push/subscriptions", token, { subscription: sub.toJSON(), lang, label: deviceLabel() });
  return true;
}

/** This device gets no more pushes for the player (turning it off, or logging out). */
export async function forgetThisDevice(token) {
  try {
    const sub = await currentSubscription();
    if (!sub) return;
    await call("POST", "/api/push/unsubscribe", token, { endpoint: sub.endpoint }).catch(() => null);
    await sub.unsubscribe();
  } catch {
    // Nothing to forget on this browser.
  }
}

const SWITCHES = ["turn_correspondence", "turn_live", "waited", "game_end"];

/** The Settings section: ``token()`` gives the player's token (null: not signed in yet). */
export function wirePushSettings(token, lang) {
  const box = document.querySelector("#push-settings");
  if (!box) return;
  const device = box.querySelector("#push-device");
  const list = box.querySelector("#push-devices");
  const note = box.querySelector("#push-note");
  const say = (text) => { note.textContent = text; note.hidden = !text; };

  async function refresh() {
    const tok = token();
    box.hidden = !tok;
    if (!tok) return;
    if (!supported()) {
      device.disabled = true;
      say(t("push.unsupported"));
    }
    const mine = await currentSubscription().catch(() => null);
    const data = await call("GET", "/api/push/devices", tok).catch(() => null);
    if (!data) return;
    for (const name of SWITCHES) box.querySelector(`[data-push="${name}"]`).checked = data.settings[name];
    list.replaceChildren();
    let here = false;
    for (const d of data.devices) {
      const li = document.createElement("li");
      const label = document.createElement("span");
      label.textContent = `${d.label || d.service} · ${new Date(d.created_at * 1000).toLocaleDateString(lang())}`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "btn ghost small";
      remove.textContent = t("push.remove");
      remove.addEventListener("click", async () => {
        await call("DELETE", `/api/push/devices/${encodeURIComponent(d.id)}`, tok).catch(() => null);
        refresh();
      });
      li.append(label, " ", remove);
      list.append(li);
      if (mine && d.service === new URL(mine.endpoint).hostname && d.label === deviceLabel()) here = true;
    }
    if (!data.devices.length) {
      const li = document.createElement("li");
      li.className = "muted";
      li.textContent = t("push.no_devices");
      list.append(li);
    }
    device.checked = Boolean(mine) && here && Notification.permission === "granted";
  }

  device.addEventListener("change", async () => {
    const tok = token();
    if (!tok) return;
    say("");
    if (device.checked) {
      const ok = await subscribeThisDevice(tok, lang()).catch((err) => {
        say(err.message);
        return false;
      });
      if (!ok) {
        device.checked = false;
        if (Notification.permission === "denied") say(t("settings.notify_denied"));
      }
    } else {
      await forgetThisDevice(tok);
    }
    refresh();
  });
  for (const name of SWITCHES) {
    box.querySelector(`[data-push="${name}"]`).addEventListener("change", (e) => {
      const tok = token();
      if (tok) call("PUT", "/api/push/settings", tok, { [name]: e.target.checked }).catch((err) => say(err.message));
    });
  }
  const details = document.querySelector("#settings");
  if (details) details.addEventListener("toggle", () => details.open && refresh());
  return refresh;
}
