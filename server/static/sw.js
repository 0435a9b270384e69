// The service worker (served from /sw.js, so its scope is the whole site): it shows a Web Push
// notification when a table needs the player, and a click on it focuses a tab of that table or
// opens one. The push's body is JSON from server/push/message.py: { title, body, kind, room,
// url, tag }: words and a link, never a card. Nothing here caches or intercepts requests.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function readPush(event) {
  try {
    const data = event.data ? event.data.json() : {};
    return data && typeof data === "object" ? data : {};
  } catch {
    return { title: event.data ? event.data.text() : "" };
  }
}

/** The room's path, only ever a path of this site: /r/CODE. */
function roomPath(data) {
  const room = typeof data.room === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(data.room) ? data.room : null;
  return room ? `/r/${room}` : "/";
}

self.addEventListener("push", (event) => {
  const data = readPush(event);
  const path = roomPath(data);
  const show = (async () => {
    // A visible tab of this table tells the player itself (its sound, its title).
    const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const here = tabs.some((c) => new URL(c.url).pathname === path && c.visibilityState === "visible");
    if (here && data.kind === "turn") return;
    await self.registration.showNotification(String(data.title || "Hearts Live"), {
      body: String(data.body || ""),
      tag: String(data.tag || path), // one notification per table: the newest replaces it
      renotify: true,
      data: { path, kind: data.kind || "" },
    });
  })();
  event.waitUntil(show);
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const path = (event.notification.data && event.notification.data.path) || "/";
  const open = (async () => {
    const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const tab = tabs.find((c) => new URL(c.url).pathname === path);
    if (tab) return tab.focus();
    return self.clients.openWindow(path);
  })();
  event.waitUntil(open);
});
